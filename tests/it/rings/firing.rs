//! Every way a todo becomes a dead letter rings, end to end through the running server
//! (its own sweepers included) to a local receiver: the agent's fail at the cap, the
//! operator's, the lease reaper's and the interrupt reaper's. Below the cap nothing
//! dead rings, and a revocation cascade rings nothing at all.

use serde_json::{Value, json};

use super::*;
use testkit::receiver::{Received, Receiver};

/// The app with its sweeps running every 50 ms (the tests make things due by SQL).
async fn with_fast_sweeps() -> (TestApp, Owner, Ep) {
    let app = spawn_with(|s| {
        s.lease_reaper_interval_ms = 50;
        s.interrupt_reaper_interval_ms = 50;
        s.retry_scheduler_interval_ms = 50;
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, owner, ep)
}

fn kinds_and_reasons(seen: &[Received]) -> Vec<(String, String)> {
    seen.iter().map(|r| (r.kind(), r.json()["reason"].as_str().unwrap_or_default().to_owned())).collect()
}

/// The one dead letter among `seen`, checked against the hook's secret.
fn dead_letter(seen: &[Received], secret: &str) -> Value {
    let dead: Vec<&Received> = seen.iter().filter(|r| r.kind() == "todo.dead_lettered").collect();
    assert_eq!(dead.len(), 1, "{:?}", kinds_and_reasons(seen));
    dead[0].verify(secret).unwrap();
    dead[0].json()
}

#[actix_web::test]
async fn an_agent_fail_at_the_cap_announces_attempts_exhausted_and_one_below_the_cap_only_a_requeue() {
    let (app, owner, ep) = with_fast_sweeps().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &["builds"]).await;
    let id = generic(&app, &owner, &ep, "builds", 2).await.deliver(&app, "build", json!({})).await;
    rx.wait_for(1).await;

    claim(&app, &ep, id).await;
    let row = agent_fail(&app, &ep, id, json!({"summary": "first try"})).await;
    assert_eq!(row["dead_letter"], false, "{row}");
    // The control after the fail below the cap: the retry comes due and rings as a requeue.
    app.make_retry_due(id).await;
    let seen = rx.wait_for(2).await;
    assert_eq!(
        kinds_and_reasons(&seen),
        [("todo.ready".into(), "created".into()), ("todo.ready".into(), "requeued".into())],
        "no dead letter below the cap"
    );
    assert_eq!(seen[1].json()["attempt"], 1);

    claim(&app, &ep, id).await;
    let row = agent_fail(&app, &ep, id, json!({"summary": "second try"})).await;
    assert_eq!(row["dead_letter"], true, "{row}");
    let seen = rx.wait_for(3).await;
    let dead = dead_letter(&seen, &hook.secret);
    assert_eq!(dead["todo_id"], id.to_string());
    assert_eq!(dead["reason"], "attempts_exhausted");
    assert_eq!(dead["attempts_total"], 2);
    assert_eq!(dead["final_attempt"]["seq"], 2);
    assert_eq!(dead["final_attempt"]["outcome"], "failed");
    assert_eq!(dead["final_attempt"]["summary"], "second try");
}

#[actix_web::test]
async fn an_operator_fail_at_the_cap_announces_attempts_exhausted_and_one_below_the_cap_only_a_requeue() {
    let (app, owner, ep) = with_fast_sweeps().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let id = generic(&app, &owner, &ep, "builds", 2).await.deliver(&app, "build", json!({})).await;
    rx.wait_for(1).await;
    let operator_fail = async |summary: &str| {
        let (s, row) = app.post(&format!("/api/v1/todos/{id}/fail"), &owner.token, json!({"summary": summary})).await;
        assert_eq!(s, StatusCode::OK, "{row}");
        row
    };

    claim(&app, &ep, id).await;
    assert_eq!(operator_fail("not this way").await["dead_letter"], false);
    app.make_retry_due(id).await;
    let seen = rx.wait_for(2).await;
    assert_eq!(seen[1].json()["reason"], "requeued", "{:?}", kinds_and_reasons(&seen));

    claim(&app, &ep, id).await;
    assert_eq!(operator_fail("stop").await["dead_letter"], true);
    let seen = rx.wait_for(3).await;
    let dead = dead_letter(&seen, &hook.secret);
    assert_eq!(dead["reason"], "attempts_exhausted");
    assert_eq!(dead["attempts_total"], 2);
    assert_eq!(dead["final_attempt"]["outcome"], "failed");
    assert_eq!(dead["final_attempt"]["summary"], "stop");
}

#[actix_web::test]
async fn the_lease_reaper_at_the_cap_announces_lease_expired_and_below_the_cap_only_a_requeue() {
    let (app, owner, ep) = with_fast_sweeps().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let id = generic(&app, &owner, &ep, "builds", 2).await.deliver(&app, "build", json!({})).await;
    rx.wait_for(1).await;

    claim(&app, &ep, id).await;
    app.lapse_lease(id).await;
    let seen = rx.wait_for(2).await;
    assert_eq!(seen[1].json()["reason"], "requeued", "{:?}", kinds_and_reasons(&seen));

    claim(&app, &ep, id).await;
    app.lapse_lease(id).await;
    let seen = rx.wait_for(3).await;
    let dead = dead_letter(&seen, &hook.secret);
    assert_eq!(dead["todo_id"], id.to_string());
    assert_eq!(dead["reason"], "lease_expired");
    assert_eq!(dead["attempts_total"], 2);
    assert_eq!(dead["final_attempt"]["seq"], 2);
    assert_eq!(dead["final_attempt"]["outcome"], "lease_expired");
    assert_eq!(dead["final_attempt"]["summary"], Value::Null);
}

#[actix_web::test]
async fn the_interrupt_reaper_at_the_cap_announces_interrupt_expired_and_below_the_cap_only_a_requeue() {
    let (app, owner, ep) = with_fast_sweeps().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let id = generic(&app, &owner, &ep, "builds", 2).await.deliver(&app, "build", json!({})).await;
    rx.wait_for(1).await;
    let interrupt = async || {
        claim(&app, &ep, id).await;
        let (s, b) = app
            .post(&format!("/api/v1/agent/todos/{id}/interrupt"), &ep.token, json!({"state": "input_required"}))
            .await;
        assert_eq!(s, StatusCode::OK, "{b}");
        app.lapse_interrupt(id).await;
    };

    interrupt().await;
    let seen = rx.wait_for(2).await;
    assert_eq!(seen[1].json()["reason"], "requeued", "{:?}", kinds_and_reasons(&seen));

    interrupt().await;
    let seen = rx.wait_for(3).await;
    let dead = dead_letter(&seen, &hook.secret);
    assert_eq!(dead["reason"], "interrupt_expired");
    assert_eq!(dead["attempts_total"], 2);
    assert_eq!(dead["final_attempt"]["outcome"], "interrupt_expired");
}

#[actix_web::test]
async fn a_revocation_cascade_dead_letters_live_work_without_a_single_notification() {
    let (app, owner, ep) = with_worker().await;
    let other = app.agent(owner.scope, "other").await;
    let (rx, rx_other) = (Receiver::start().await, Receiver::start().await);
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    hook(&app, &owner, &other, &rx_other.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    let pending = intake.deliver(&app, "pending", json!({})).await;
    let claimed = intake.deliver(&app, "claimed", json!({})).await;
    let interrupted = intake.deliver(&app, "interrupted", json!({})).await;
    claim(&app, &ep, claimed).await;
    claim(&app, &ep, interrupted).await;
    let (s, _) = app
        .post(&format!("/api/v1/agent/todos/{interrupted}/interrupt"), &ep.token, json!({"state": "auth_required"}))
        .await;
    assert_eq!(s, StatusCode::OK);
    rx.wait_for(3).await;
    app.signals.take().await;

    let (s, r) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["dead_lettered"], 3, "every todo was at its cap, and all died");

    // The control: another endpoint's todo rings after the revocation.
    let control = generic(&app, &owner, &other, "builds", 1).await.deliver(&app, "control", json!({})).await;
    assert_eq!(rx_other.wait_for(1).await[0].todo_id(), control.to_string());
    quiet(&app).await;
    let seen = rx.seen();
    assert_eq!(seen.len(), 3, "{:?}", kinds_and_reasons(&seen));
    assert!(seen.iter().all(|r| r.kind() == "todo.ready"));
    let mut ids: Vec<String> = seen.iter().map(Received::todo_id).collect();
    ids.sort();
    let mut expected = vec![pending.to_string(), claimed.to_string(), interrupted.to_string()];
    expected.sort();
    assert_eq!(ids, expected);
    assert!(app.signals.take_dead().await.is_empty(), "the store announced no dead letter either");
}
