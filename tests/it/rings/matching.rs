//! A ready todo and a dead letter travel through the same matching: a hook on another
//! queue, a disabled hook, a revoked endpoint and a failed sender gate silence both.

use serde_json::json;
use switchboard::store::signals::Signal;

use super::*;
use crate::harness::tcp_gate::TcpGate;
use testkit::receiver::{Received, Receiver, Reply};

/// The types of what arrived, sorted: a todo's ready and its dead letter are separate
/// deliveries and may arrive in either order.
fn sorted_kinds(seen: &[Received]) -> Vec<String> {
    let mut kinds: Vec<String> = seen.iter().map(Received::kind).collect();
    kinds.sort();
    kinds
}

#[actix_web::test]
async fn a_hook_on_another_queue_stays_silent_for_ready_and_dead_letter_alike() {
    let (app, owner, ep) = with_worker().await;
    let (rx_builds, rx_deploys) = (Receiver::start().await, Receiver::start().await);
    hook(&app, &owner, &ep, &rx_builds.url(), &["builds"]).await;
    hook(&app, &owner, &ep, &rx_deploys.url(), &["deploys"]).await;
    let builds = generic(&app, &owner, &ep, "builds", 1).await;
    let deploys = generic(&app, &owner, &ep, "deploys", 1).await;

    let build = builds.deliver(&app, "build", json!({})).await;
    fail_to_dead_letter(&app, &ep, build).await;
    let got = rx_builds.wait_for(2).await;
    assert_eq!(sorted_kinds(&got), ["todo.dead_lettered", "todo.ready"]);
    assert!(got.iter().all(|r| r.todo_id() == build.to_string()));

    // The control: a deploy rings the deploys hook, after the build's two notifications.
    let deploy = deploys.deliver(&app, "deploy", json!({})).await;
    let got = rx_deploys.wait_for(1).await;
    quiet(&app).await;
    let got_deploys = rx_deploys.seen();
    assert_eq!(got_deploys.len(), 1, "only the deploy: {:?}", got_deploys.iter().map(|r| r.kind()).collect::<Vec<_>>());
    assert_eq!((got[0].todo_id(), got[0].json()["queue"].clone()), (deploy.to_string(), json!("deploys")));
    assert_eq!(rx_builds.count(), 2, "the builds hook heard nothing of the deploy");
}

#[actix_web::test]
async fn a_disabled_hook_stays_silent_for_ready_and_dead_letter_until_enabled_again() {
    let (app, owner, ep) = with_worker().await;
    let (rx_off, rx_on) = (Receiver::start().await, Receiver::start().await);
    let off = hook(&app, &owner, &ep, &rx_off.url(), &[]).await;
    hook(&app, &owner, &ep, &rx_on.url(), &[]).await;
    let (s, b) = app.post(&format!("/api/v1/hooks/{}/disable", off.id), &owner.token, json!({})).await;
    assert_eq!((s, b["enabled"].clone()), (StatusCode::OK, json!(false)), "{b}");
    let intake = generic(&app, &owner, &ep, "builds", 1).await;

    let silenced = intake.deliver(&app, "first", json!({})).await;
    fail_to_dead_letter(&app, &ep, silenced).await;
    assert_eq!(
        sorted_kinds(&rx_on.wait_for(2).await),
        ["todo.dead_lettered", "todo.ready"],
        "the enabled hook heard both"
    );

    // The control, on the very hook: switched on again, it hears the next todo.
    let (s, _) = app.post(&format!("/api/v1/hooks/{}/enable", off.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK);
    let control = intake.deliver(&app, "second", json!({})).await;
    let got = rx_off.wait_for(1).await;
    quiet(&app).await;
    assert_eq!(rx_off.count(), 1, "{:?}", rx_off.seen().iter().map(|r| r.todo_id()).collect::<Vec<_>>());
    assert_eq!(got[0].todo_id(), control.to_string(), "nothing about the todo from while it was off");
    got[0].verify(&off.secret).unwrap();
}

#[actix_web::test]
async fn revoking_the_endpoint_silences_retries_of_both_types_already_under_way() {
    let (app, owner, ep) = with_worker().await;
    // Both first attempts are held open until the endpoint is revoked, then fail with a
    // retryable status; the retries would succeed.
    let rx = Receiver::scripted(vec![Reply::HeldThen(503), Reply::HeldThen(503)], Reply::Status(204)).await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    let id = intake.deliver(&app, "build", json!({})).await;
    fail_to_dead_letter(&app, &ep, id).await;
    let got = rx.wait_for(2).await;
    assert_eq!(sorted_kinds(&got), ["todo.dead_lettered", "todo.ready"]);

    // Revoked while both first attempts are still open, so before either retry is due.
    let (s, r) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    rx.open();
    // Each delivery ends when its re-check before the retry finds the endpoint revoked.
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "dropped"), 1).await;
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.dead_lettered", "dropped"), 1).await;
    assert_eq!(rx.count(), 2, "no retry reached the receiver");
    assert_eq!(metric(&app, &notifications("todo.ready", "delivered")).await, 0);
    assert_eq!(metric(&app, &attempts("5xx")).await, 2);
}

#[actix_web::test]
async fn an_unverified_senders_todo_stays_silent_when_ready_and_when_dead_lettered() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    // A signed source that cannot sign: routed (everyone trusted), in open trust.
    let (unverified, _) = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "builds", "max_attempts": 1, "unverified": true,
               "trusted_actors": {"allow_all": true}}),
    )
    .await;
    let headers = [("X-GitHub-Event", "push".to_owned()), ("X-GitHub-Delivery", "d-1".to_owned())];
    let (s, answer) = unverified.post(&app, &headers, br#"{"sender":{"login":"anyone"}}"#).await;
    let silenced = routed_todo(s, &answer);
    fail_to_dead_letter(&app, &ep, silenced).await;

    let control = generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "control", json!({})).await;
    let got = rx.wait_for(1).await;
    quiet(&app).await;
    assert_eq!(rx.count(), 1, "{:?}", rx.seen().iter().map(|r| r.todo_id()).collect::<Vec<_>>());
    assert_eq!(got[0].todo_id(), control.to_string());
    // The store did announce both; the gate held them back.
    let gated: Vec<bool> = app
        .signals
        .take()
        .await
        .iter()
        .filter_map(|s| match s {
            Signal::Ready(r) if r.todo.id == silenced => Some(r.todo.sender_gate),
            Signal::DeadLettered(d) if d.todo.id == silenced => Some(d.todo.sender_gate),
            _ => None,
        })
        .collect();
    assert_eq!(gated, [false, false]);
}

#[actix_web::test]
async fn an_agent_made_todo_stays_silent_when_ready_and_when_dead_lettered() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let (s, b) = app
        .post("/api/v1/agent/todos", &ep.token, json!({"queue": "builds", "title": "mine", "max_attempts": 1}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let silenced: TodoId = b["id"].as_str().unwrap().parse().unwrap();
    fail_to_dead_letter(&app, &ep, silenced).await;

    let control = generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "control", json!({})).await;
    let got = rx.wait_for(1).await;
    quiet(&app).await;
    assert_eq!(rx.count(), 1, "{:?}", rx.seen().iter().map(|r| r.todo_id()).collect::<Vec<_>>());
    assert_eq!(got[0].todo_id(), control.to_string());
    let signals = app.signals.take().await;
    assert!(
        signals.iter().any(|s| matches!(s, Signal::DeadLettered(d) if d.todo.id == silenced && !d.todo.sender_gate)),
        "the dead letter was announced by the store and gated: {signals:?}"
    );
}

#[actix_web::test]
async fn a_hook_changed_behind_this_instance_gets_no_first_attempt_even_while_its_match_is_cached() {
    let (app, owner, ep) = with_worker().await;
    // From here on every change is noticed, and counted: three hooks created.
    wait_until_listening(&app).await;
    let (rx_gone, rx_off, rx_kept) = (Receiver::start().await, Receiver::start().await, Receiver::start().await);
    let gone = hook(&app, &owner, &ep, &rx_gone.url(), &[]).await;
    let off = hook(&app, &owner, &ep, &rx_off.url(), &[]).await;
    hook(&app, &owner, &ep, &rx_kept.url(), &[]).await;
    wait_metric(&app, METRICS_TOKEN, CHANGE_NOTICES, 3).await;
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    // The first todo fills the dispatcher's cache of this queue's hooks.
    intake.deliver(&app, "first", json!({})).await;
    for rx in [&rx_gone, &rx_off, &rx_kept] {
        rx.wait_for(1).await;
    }

    // Another instance (or an operator in psql) deletes one hook and disables another:
    // this instance's cache is not told, and still lists both.
    app.db.exec(&format!("DELETE FROM notify_hooks WHERE id = '{}'", gone.id.0)).await;
    app.db
        .exec(&format!(
            "UPDATE notify_hooks SET enabled = false, disabled_reason = 'operator' WHERE id = '{}'",
            off.id.0
        ))
        .await;
    // The database announces each change at commit; both notices are applied before
    // the next todo (whether or not the cached entry had expired by then, the
    // evictions themselves are what this counts).
    wait_metric(&app, METRICS_TOKEN, CHANGE_NOTICES, 5).await;
    let second = intake.deliver(&app, "second", json!({})).await;

    // The control hears the second todo; the other two were evicted from the cache.
    let got = rx_kept.wait_for(2).await;
    assert_eq!(got[1].todo_id(), second.to_string());
    quiet(&app).await;
    assert_eq!((rx_gone.count(), rx_off.count()), (1, 1), "no attempt reached a deleted or disabled hook");
    // Evicted by the NOTIFY, not caught by a re-check: a cache that were never current
    // (no listener) would have sent both through the re-check and dropped them there.
    assert_eq!(metric(&app, &notifications("todo.ready", "dropped")).await, 0);
}

#[actix_web::test]
async fn the_hook_change_listener_reconnects_after_its_connection_is_killed() {
    let (app, _owner, _ep) = with_worker().await;
    let first = wait_for_listener(&app.db, HOOK_LISTENER_NAME, 0).await;
    app.db.exec(&format!("SELECT pg_terminate_backend({first})")).await;
    let second = wait_for_listener(&app.db, HOOK_LISTENER_NAME, first).await;
    assert_ne!(second, first);
}

/// While the hook change listener is away nothing evicts the cache, so what it holds may
/// not be trusted: a hook deleted by another instance (or by hand) in that time gets
/// nothing, even right after a todo whose lookup matched it. The listener alone is sent
/// away: it connects through a gate the test shuts (`SWITCHBOARD_DIRECT_DATABASE_URL`),
/// and the server's pool keeps reaching the database as before.
#[actix_web::test]
async fn a_hook_deleted_while_the_change_listener_is_away_gets_no_attempt() {
    let gate = TcpGate::to_database_of(&crate::harness::admin_url()).await;
    let app = spawn_with(|s| s.direct_database_url = s.database_url.as_deref().map(|url| gate.url_through(url))).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    wait_until_listening(&app).await;
    wait_metric(&app, METRICS_TOKEN, LISTENING, 1).await;
    let (rx_gone, rx_kept) = (Receiver::start().await, Receiver::start().await);
    let gone = hook(&app, &owner, &ep, &rx_gone.url(), &[]).await;
    hook(&app, &owner, &ep, &rx_kept.url(), &[]).await;
    wait_metric(&app, METRICS_TOKEN, CHANGE_NOTICES, 2).await;
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    intake.deliver(&app, "first", json!({})).await;
    rx_gone.wait_for(1).await;
    rx_kept.wait_for(1).await;

    // The listener's connection is cut and it cannot connect again.
    gate.shut();
    wait_metric(&app, METRICS_TOKEN, LISTENING, 0).await;

    // A todo while the listener is away: its lookup may fill the cache again, but what it
    // holds is not known current.
    let away = intake.deliver(&app, "while away", json!({})).await.to_string();
    rx_gone.wait_for(2).await;
    assert_eq!(rx_kept.wait_for(2).await[1].todo_id(), away);
    app.db.exec(&format!("DELETE FROM notify_hooks WHERE id = '{}'", gone.id.0)).await;
    let after = intake.deliver(&app, "after the delete", json!({})).await.to_string();
    assert_eq!(rx_kept.wait_for(3).await[2].todo_id(), after);
    quiet(&app).await;
    assert_eq!(rx_gone.count(), 2, "no attempt reached the hook deleted while nobody listened");
    // (A ring to it from a match cached before the delete is re-checked in the database
    // and dropped there, uncounted as an attempt: the match was not known current.)
    assert_eq!(metric(&app, LISTENING).await, 0, "the listener is still away");

    gate.open();
    wait_metric(&app, METRICS_TOKEN, LISTENING, 1).await;
}
