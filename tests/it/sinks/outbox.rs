//! The outbox, end to end against real Gotify-contract receivers on loopback: a dead
//! letter reaches the right owner's sink once, a revocation cascade once per sink, the
//! budget holds a flood to burst + 1 messages, an unreachable sink is retried on
//! schedule and then recorded undeliverable, and a rolled-back change queues nothing.

use std::time::Duration;

use serde_json::json;
use switchboard::config::CidrList;
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};

use super::*;
use crate::harness::Ep;
use testkit::receiver::{Receiver, Reply};

/// Loopback allowed; the worker polls often and retries fast.
async fn spawn_outbox() -> TestApp {
    spawn_with(|s| {
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        s.outbox_poll_ms = 50;
        s.outbox_retry_base_ms = 50;
        s.outbox_max_attempts = 3;
    })
    .await
}

/// A gotify sink of `o` posting to `rx`, subscribed as `subscriptions` says; its id.
async fn subscribed_sink(app: &TestApp, o: &Owner, rx: &Receiver, subscriptions: serde_json::Value) -> String {
    let c = connection_at(app, o, &format!("c-{}", rx.port()), "gotify", "token", &rx.base()).await;
    let body =
        json!({"name": format!("s-{}", rx.port()), "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let id = sink["id"].as_str().unwrap().to_owned();
    let (s, b) = app
        .call(
            "PUT",
            &format!("/api/v1/sinks/{id}/subscriptions"),
            Some(&o.token),
            Some(&json!({"subscriptions": subscriptions})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    id
}

/// An endpoint of `o` that may create, claim and fail its todos.
async fn worker(app: &TestApp, o: &Owner, slug: &str) -> Ep {
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.push(Verb::CreateTodo);
    app.endpoint(o.scope, slug, &grants).await
}

/// Creates a one-attempt todo on `queue`, claims it and fails it: a dead letter.
async fn dead_letter(app: &TestApp, ep: &Ep, queue: &str, title: &str, payload: serde_json::Value) -> String {
    let body = json!({"queue": queue, "title": title, "max_attempts": 1, "payload": payload});
    let (s, created) = app.post("/api/v1/agent/todos", &ep.token, body).await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "build broke"})).await;
    assert_eq!(s, 200, "{b}");
    id
}

#[actix_web::test]
async fn a_dead_letter_reaches_the_subscribed_sink_once_with_queue_cause_and_link_and_no_payload() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let other_queue = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"], "queues": ["builds"]}])).await;
    subscribed_sink(&app, &o, &other_queue, json!([{"events": ["todo.dead_lettered"], "queues": ["deploys"]}])).await;
    let ep = worker(&app, &o, "builder").await;
    let id = dead_letter(&app, &ep, "builds", "nightly build", json!({"token": "PAYLOAD-SECRET-42"})).await;
    let got = rx.wait_for(1).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let body = got[0].json();
    let title = body["title"].as_str().unwrap();
    let message = body["message"].as_str().unwrap();
    assert!(title.contains("Dead letter") && title.contains("builds"), "{title}");
    assert!(message.contains("attempts_exhausted") || message.contains("attempt"), "{message}");
    assert!(message.contains(&format!("/todos/{id}")), "a Board link: {message}");
    assert!(message.contains("build broke"), "the closing summary: {message}");
    assert!(!String::from_utf8_lossy(&got[0].body).contains("PAYLOAD-SECRET"), "no payload text: {message}");
    assert_eq!(body["priority"], 8, "a dead letter is high");
    assert_eq!(rx.count(), 1, "exactly one message");
    assert_eq!(other_queue.count(), 0, "another queue's subscription hears nothing");
}

#[actix_web::test]
async fn a_dead_letter_tells_the_todos_owner_and_nobody_else() {
    let app = spawn_outbox().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let (rx_a, rx_b) = (Receiver::start().await, Receiver::start().await);
    let all = json!([{"events": ["todo.dead_lettered"]}]);
    subscribed_sink(&app, &a, &rx_a, all.clone()).await;
    subscribed_sink(&app, &b, &rx_b, all).await;
    let ep_b = worker(&app, &b, "b-worker").await;
    dead_letter(&app, &ep_b, "inbox", "b's todo", json!({})).await;
    rx_b.wait_for(1).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    assert_eq!(rx_a.count(), 0, "another owner's sink is never told");
}

#[actix_web::test]
async fn revoking_an_endpoint_with_200_live_todos_sends_each_sink_one_message_with_the_count() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let (rx1, rx2) = (Receiver::start().await, Receiver::start().await);
    let all = json!([{"events": ["todo.dead_lettered"]}]);
    subscribed_sink(&app, &o, &rx1, all.clone()).await;
    subscribed_sink(&app, &o, &rx2, all).await;
    let ep = worker(&app, &o, "doomed").await;
    for i in 0..200 {
        app.create_todo(&ep, "inbox", &format!("todo {i}")).await;
    }
    let (s, b) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &o.token, json!({})).await;
    assert_eq!((s.as_u16(), b["dead_lettered"].clone()), (200, json!(200)), "{b}");
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 2).await;
    for rx in [&rx1, &rx2] {
        let got = rx.wait_for(1).await;
        assert_eq!(got.len(), 1, "one message per sink for the whole cascade");
        let text = String::from_utf8_lossy(&got[0].body);
        assert!(text.contains("doomed") && text.contains("200"), "{text}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 2, "never one row per todo");
}

#[actix_web::test]
async fn fifty_dead_letters_produce_at_most_burst_plus_one_messages_the_last_counting_the_rest() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "flood").await;
    for i in 0..50 {
        dead_letter(&app, &ep, "inbox", &format!("flood {i}"), json!({})).await;
    }
    // The burst (10) goes out; the other 40 are held by the budget (30 an hour).
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 10).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'held'", 40).await;
    assert_eq!(rx.wait_for(10).await.len(), 10);
    // Two minutes pass for the bucket: one token returns, and every held row goes out as
    // one coalesced message.
    app.db.exec("UPDATE sinks SET tokens_at = tokens_at - interval '125 seconds'").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'coalesced'", 40).await;
    let got = rx.wait_for(11).await;
    assert_eq!(got.len(), 11, "burst + 1");
    let last = String::from_utf8_lossy(&got[10].body).into_owned();
    assert!(last.contains("40"), "the coalesced message counts the rest exactly: {last}");
}

#[actix_web::test]
async fn an_unreachable_sink_is_retried_on_schedule_then_recorded_undeliverable() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(503)).await;
    let sink = subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "unlucky").await;
    dead_letter(&app, &ep, "inbox", "never heard", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'undeliverable' AND attempts = 3", 1).await;
    let got = rx.seen();
    assert_eq!(got.len(), 3, "SWITCHBOARD_OUTBOX_MAX_ATTEMPTS attempts, no more");
    let (first, second, third) = (got[0].at, got[1].at, got[2].at);
    assert!(
        second - first >= Duration::from_millis(50) && third - second >= Duration::from_millis(100),
        "doubling waits"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE last_error = 'server_error'").await, 1);
    let _ = sink;
}

#[actix_web::test]
async fn a_dead_letter_whose_transaction_rolls_back_queues_nothing() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "w").await;
    app.create_todo(&ep, "inbox", "rolled back").await;
    // The dead letter and the check that the trigger recorded it run in one transaction,
    // which then fails: the todo and its record for the outbox go together.
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    let failed = client
        .batch_execute(
            "DO $$ BEGIN \
               UPDATE todos SET state = 'failed', next_retry_at = NULL, dead_reason = 'attempts_exhausted', \
                 dead_lettered_at = now(), dead_letter_count = dead_letter_count + 1; \
               IF (SELECT count(*) FROM outbox_events) <> 1 THEN RAISE EXCEPTION 'the trigger recorded nothing'; END IF; \
               RAISE EXCEPTION 'roll back'; \
             END $$",
        )
        .await
        .unwrap_err();
    assert!(failed.to_string().contains("roll back") || format!("{failed:?}").contains("roll back"), "{failed:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0);
}

#[actix_web::test]
async fn the_delivery_log_and_the_metrics_show_what_was_sent_and_what_could_not_be() {
    const METRICS: &str = "sinks-tests-metrics-token-0123456789abcdef";
    let app = spawn_with(|s| {
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        s.outbox_poll_ms = 50;
        s.outbox_retry_base_ms = 50;
        s.outbox_max_attempts = 2;
        s.metrics_token = Some(METRICS.into());
    })
    .await;
    let o = app.owner("a@example.com").await;
    let member = app.owner("m@example.com").await;
    let rx = Receiver::scripted(vec![Reply::Status(200)], Reply::Status(500)).await;
    let sink = subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "logged").await;
    let first = dead_letter(&app, &ep, "inbox", "first", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let second = dead_letter(&app, &ep, "inbox", "second", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'undeliverable'", 1).await;
    let (s, log) = app.get(&format!("/api/v1/sinks/{sink}/deliveries"), &o.token).await;
    assert_eq!(s, 200, "{log}");
    let rows = log["deliveries"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{log}");
    assert_eq!(
        (rows[0]["subject"].as_str(), rows[0]["status"].as_str()),
        (Some(second.as_str()), Some("undeliverable"))
    );
    assert_eq!((rows[0]["attempts"].clone(), rows[0]["last_error"].clone()), (json!(2), json!("server_error")));
    assert_eq!((rows[1]["subject"].as_str(), rows[1]["status"].as_str()), (Some(first.as_str()), Some("sent")));
    assert!(rows[1]["sent_at"].is_string());
    let (s, _) = app.get(&format!("/api/v1/sinks/{sink}/deliveries"), &member.token).await;
    assert_eq!(s, 404, "another owner's sink's log is not found");
    assert_eq!(
        app.metric(METRICS, r#"switchboard_sink_deliveries_total{event="todo.dead_lettered",outcome="sent"}"#).await,
        1
    );
    assert_eq!(
        app.metric(METRICS, r#"switchboard_sink_deliveries_total{event="todo.dead_lettered",outcome="retried"}"#).await,
        1
    );
    assert_eq!(
        app.metric(METRICS, r#"switchboard_sink_deliveries_total{event="todo.dead_lettered",outcome="undeliverable"}"#)
            .await,
        1
    );
    assert_eq!(app.metric(METRICS, "switchboard_outbox_depth").await, 0, "nothing left open");
}

#[actix_web::test]
async fn a_quarantined_delivery_tells_the_webhooks_owner_once_with_the_reason_and_no_payload() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let dead_only = Receiver::start().await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["delivery.quarantined"]}])).await;
    subscribed_sink(&app, &o, &dead_only, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = app.agent(o.scope, "held").await;
    let (s, w) = app
        .post(
            "/api/v1/webhooks",
            &o.token,
            json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"}),
        )
        .await;
    assert_eq!(s, 201, "{w}");
    let id = w["id"].as_str().unwrap();
    let rules =
        json!({"rules": [{"id": "hold", "match": {"pointer": "", "exists": true}, "action": {"quarantine": true}}]});
    assert_eq!(app.call("PUT", &format!("/api/v1/webhooks/{id}/rules"), Some(&o.token), Some(&rules)).await.0, 200);
    let ingest = format!("/webhooks/w/{}", w["ingest_token"].as_str().unwrap());
    let (s, held) =
        app.call_raw("POST", &ingest, None, "application/json", br#"{"card": "PAYLOAD-4242"}"#.to_vec()).await;
    assert_eq!((s.as_u16(), held["disposition"].as_str()), (202, Some("quarantined")), "{held}");
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let got = rx.wait_for(1).await;
    let body = got[0].json();
    assert!(body["title"].as_str().unwrap().starts_with("Quarantined"), "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains(id) && message.contains("rule_action"), "the webhook and the reason: {message}");
    assert!(!String::from_utf8_lossy(&got[0].body).contains("PAYLOAD-4242"), "no payload text");
    assert_eq!(body["priority"], 5, "normal");
    assert_eq!(dead_only.count(), 0, "a sink not subscribed to quarantine hears nothing");
}

#[actix_web::test]
async fn the_todos_page_says_which_sinks_were_told_and_how_that_went() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let hash = switchboard::domain::passwords::hash_password(crate::board::PASSWORD).unwrap();
    app.store.set_password(o.id, &hash).await.unwrap();
    let (ok, down) = (Receiver::start().await, Receiver::scripted(vec![], Reply::Status(401)).await);
    subscribed_sink(&app, &o, &ok, json!([{"events": ["todo.dead_lettered"]}])).await;
    subscribed_sink(&app, &o, &down, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "told").await;
    let id = dead_letter(&app, &ep, "inbox", "who hears this", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status IN ('sent', 'undeliverable')", 2).await;
    let session = crate::board::sign_in(&app, "a@example.com").await;
    let page = crate::board::get(&app, &format!("/todos/{id}"), Some(&session.cookie)).await;
    assert_eq!(page.status.as_u16(), 200);
    assert!(page.body.contains("Who was told"), "{}", page.body);
    assert!(page.body.contains(&format!("s-{}", ok.port())) && page.body.contains(">sent<"), "{}", page.body);
    assert!(
        page.body.contains(&format!("s-{}", down.port())) && page.body.contains(">undeliverable<"),
        "{}",
        page.body
    );
    assert!(page.body.contains("<code>auth</code>"), "the error class: {}", page.body);
}

#[actix_web::test]
async fn a_rule_notifies_its_own_owners_sink_and_one_naming_another_owners_sink_is_refused_at_save() {
    let app = spawn_outbox().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let rx = Receiver::start().await;
    let theirs = Receiver::start().await;
    subscribed_sink(&app, &a, &rx, json!([])).await;
    let their_sink = subscribed_sink(&app, &b, &theirs, json!([])).await;
    let ep = app.agent(a.scope, "deploys").await;
    let (_, w) = app
        .post(
            "/api/v1/webhooks",
            &a.token,
            json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"}),
        )
        .await;
    let rules_path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    let foreign = json!({"rules": [{"id": "tell-b", "match": {"pointer": "/deploy", "exists": true},
                                     "action": {"queue": "deploys", "notify": their_sink}}]});
    let (s, refused) = app.call("PUT", &rules_path, Some(&a.token), Some(&foreign)).await;
    assert_eq!((s.as_u16(), refused["error"]["code"].clone()), (422, json!("reference_out_of_scope")), "{refused}");
    let unknown = json!({"rules": [{"id": "tell-nobody", "match": {"pointer": "/deploy", "exists": true},
                                     "action": {"queue": "deploys", "notify": "no-such-sink"}}]});
    let (_, refused) = app.call("PUT", &rules_path, Some(&a.token), Some(&unknown)).await;
    assert_eq!(refused["error"]["code"], "reference_out_of_scope", "{refused}");
    // A rule naming the owner's own sink, by name, fires on a match: no subscription needed.
    let own = json!({"rules": [{"id": "tell-me", "match": {"pointer": "/deploy", "exists": true},
                                 "action": {"queue": "deploys", "notify": format!("s-{}", rx.port()), "notify_severity": "high"}}]});
    let (s, saved) = app.call("PUT", &rules_path, Some(&a.token), Some(&own)).await;
    assert_eq!(s.as_u16(), 200, "{saved}");
    let ingest = format!("/webhooks/w/{}", w["ingest_token"].as_str().unwrap());
    let (s, routed) = app.call_raw("POST", &ingest, None, "application/json", br#"{"deploy": "prod"}"#.to_vec()).await;
    assert_eq!(s.as_u16(), 202, "{routed}");
    let (s, _) = app.call_raw("POST", &ingest, None, "application/json", br#"{"other": 1}"#.to_vec()).await;
    assert_eq!(s.as_u16(), 202);
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent' AND event = 'rule.notify'", 1).await;
    let got = rx.wait_for(1).await;
    let body = got[0].json();
    assert!(body["title"].as_str().unwrap().contains("tell-me"), "{body}");
    assert_eq!(body["priority"], 8, "the rule's severity");
    assert_eq!(rx.count(), 1, "only the matching delivery notifies");
    assert_eq!(theirs.count(), 0);
}

#[actix_web::test]
async fn the_cli_lists_an_owners_sinks_and_a_sinks_delivery_log_without_secrets() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "cli").await;
    let id = dead_letter(&app, &ep, "inbox", "seen from the cli", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let admin = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .env("SWITCHBOARD_DATABASE_URL", &app.db.url)
            .env_remove("SWITCHBOARD_SECRET_ENCRYPTION_KEY")
            .arg("admin")
            .args(args)
            .arg("--json")
            .output()
            .expect("run the cli");
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(!stdout.contains("token"), "no secret in {stdout}");
        serde_json::from_str::<serde_json::Value>(stdout.trim()).expect("one JSON object")
    };
    let sinks = admin(&["list-sinks", "--owner", "a@example.com"]);
    assert_eq!(sinks["sinks"][0]["id"], sink, "{sinks}");
    let log = admin(&["sink-deliveries", "--sink", &sink]);
    assert_eq!(
        (log["deliveries"][0]["status"].as_str(), log["deliveries"][0]["todo_id"].as_str()),
        (Some("sent"), Some(id.as_str())),
        "{log}"
    );
}

#[actix_web::test]
async fn a_subscription_that_opts_into_the_excerpt_gets_the_start_of_the_payload_labelled() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"], "include_excerpt": true}])).await;
    let ep = worker(&app, &o, "excerpted").await;
    let long = format!("build-log-start {}", "x".repeat(1000));
    dead_letter(&app, &ep, "inbox", "with an excerpt", json!({"log": long, "ctl": "a\u{7}b"})).await;
    let got = rx.wait_for(1).await;
    let message = got[0].json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("Excerpt (sender-written)") && message.contains("build-log-start"), "{message}");
    assert!(!message.contains('\u{7}'), "control characters are stripped");
    assert!(!message.contains(&"x".repeat(400)), "at most 280 characters of it");
}

#[actix_web::test]
async fn retention_prunes_ended_outbox_rows_and_keeps_open_ones_however_old() {
    let app = spawn_outbox().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "old").await;
    dead_letter(&app, &ep, "inbox", "sent long ago", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    // An old held row and an old sent row; the held one is still news. The server
    // stops first, so no worker sends the held row.
    super::instances::stop_and_wait(&app).await;
    app.db.exec("UPDATE outbox SET created_at = now() - interval '40 days'").await;
    app.db
        .exec(
            "INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, status, created_at) \
             SELECT sink_id, scope_id, event, severity, 'held-long', 'held', now() - interval '40 days' FROM outbox",
        )
        .await;
    let pruned = app.store.prune_expired_outbox(Duration::from_secs(30 * 86_400)).await.unwrap();
    assert_eq!(pruned, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE status = 'held'").await, 1, "open rows stay");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 1);
}

#[actix_web::test]
async fn a_dead_letter_wakes_the_worker_at_once_without_waiting_for_the_poll() {
    // The poll is ten minutes: only the NOTIFY of the outbox insert can wake the worker.
    let app = spawn_with(|s| {
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        s.outbox_poll_ms = 600_000;
    })
    .await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    subscribed_sink(&app, &o, &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let ep = worker(&app, &o, "woken").await;
    // The worker's listener is in place once its session shows in the database.
    wait_count(
        &app.db,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'switchboard listener'",
        1,
    )
    .await;
    dead_letter(&app, &ep, "inbox", "rings at once", json!({})).await;
    assert_eq!(rx.wait_for(1).await.len(), 1);
}
