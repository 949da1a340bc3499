//! `switchboard_dead_letters_total{reason}` counts each dead letter once, a revocation's
//! by the todos it dead-lettered; `switchboard_dead_letters_unreached_total{why}` counts a
//! dead letter no hook and no sink heard of (none subscribed, or every attempt failed),
//! and not one a sink or a hook took, nor a revocation's.

use serde_json::json;
use testkit::receiver::Reply;

use super::*;
use crate::harness::wait::{wait_count, wait_metric};
use crate::rings::{generic, hook};

const EXHAUSTED: &str = r#"switchboard_dead_letters_total{reason="attempts_exhausted"}"#;
const REVOKED: &str = r#"switchboard_dead_letters_total{reason="endpoint_revoked"}"#;
const NO_SUBSCRIBER: &str = r#"switchboard_dead_letters_unreached_total{why="no_subscriber"}"#;
const ALL_FAILED: &str = r#"switchboard_dead_letters_unreached_total{why="all_failed"}"#;

#[actix_web::test]
async fn dead_letters_count_by_reason_and_one_nobody_subscribed_to_reached_no_one() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    dead_letter(&app, &ep, "builds").await;
    wait_metric(&app, METRICS_TOKEN, EXHAUSTED, 1).await;
    wait_metric(&app, METRICS_TOKEN, NO_SUBSCRIBER, 1).await;

    // A revocation dead-letters the endpoint's live todos at once: counted by reason,
    // told once per cascade (so not among those that reached no one).
    let doomed = app.agent(o.scope, "doomed").await;
    for title in ["a", "b"] {
        let (s, b) = app.post("/api/v1/agent/todos", &doomed.token, json!({"queue": "q", "title": title})).await;
        assert_eq!(s, 201, "{b}");
    }
    let (s, b) = app.post(&format!("/api/v1/endpoints/{}/revoke", doomed.id), &o.token, json!({})).await;
    assert_eq!(s, 200, "{b}");
    wait_metric(&app, METRICS_TOKEN, REVOKED, 2).await;

    // The control: one more dead letter nobody hears, counted after the revocation.
    dead_letter(&app, &ep, "builds").await;
    wait_metric(&app, METRICS_TOKEN, NO_SUBSCRIBER, 2).await;
    let text = scrape(&app).await;
    assert_eq!(value(&text, EXHAUSTED), 2);
    assert_eq!(value(&text, REVOKED), 2);
    assert_eq!(value(&text, ALL_FAILED), 0);
}

#[actix_web::test]
async fn a_dead_letter_every_sink_refused_reached_no_one_and_one_a_sink_took_did_not() {
    let app = spawn_with(|_| {}).await;
    let (told, refused, nobody) =
        (app.owner("told@example.com").await, app.owner("refused@example.com").await, app.owner("n@example.com").await);
    let ok = Receiver::scripted(vec![], Reply::Gotify).await;
    let down = Receiver::scripted(vec![], Reply::Status(500)).await;
    sink_to(&app, &told, &ok).await;
    sink_to(&app, &refused, &down).await;

    dead_letter(&app, &app.agent(told.scope, "told").await, "builds").await;
    ok.wait_for(1).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;

    dead_letter(&app, &app.agent(refused.scope, "refused").await, "builds").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'undeliverable'", 1).await;
    wait_metric(&app, METRICS_TOKEN, ALL_FAILED, 1).await;
    assert_eq!(down.count(), 3, "every attempt was made");

    // The control, after both: a dead letter of an owner with no sink.
    dead_letter(&app, &app.agent(nobody.scope, "nobody").await, "builds").await;
    wait_metric(&app, METRICS_TOKEN, NO_SUBSCRIBER, 1).await;
    let text = scrape(&app).await;
    assert_eq!(value(&text, ALL_FAILED), 1, "the dead letter a sink took is not counted");
    assert_eq!(value(&text, EXHAUSTED), 3);
}

#[actix_web::test]
async fn a_dead_letter_a_hook_took_did_not_go_unheard_and_one_whose_hook_refused_it_did() {
    let app = crate::rings::spawn_with(|s| s.metrics_token = Some(METRICS_TOKEN.into())).await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let (ok, refusing) = (Receiver::start().await, Receiver::scripted(vec![], Reply::Status(400)).await);
    hook(&app, &o, &ep, &ok.url(), &["heard"]).await;
    hook(&app, &o, &ep, &refusing.url(), &["refused"]).await;
    let heard = generic(&app, &o, &ep, "heard", 1).await;
    let refused = generic(&app, &o, &ep, "refused", 1).await;

    let id = refused.deliver(&app, "build", json!({})).await;
    claim_and_fail(&app, &ep, &id.to_string()).await;
    wait_metric(&app, METRICS_TOKEN, ALL_FAILED, 1).await;

    let id = heard.deliver(&app, "build", json!({})).await;
    claim_and_fail(&app, &ep, &id.to_string()).await;
    ok.wait_for(2).await;
    // Its rings have ended (and with them what it knew of them).
    wait_metric(&app, METRICS_TOKEN, "switchboard_notify_hook_notifications_in_flight", 0).await;

    // The control: a dead letter nothing matches (an agent's todo rings no hook).
    dead_letter(&app, &ep, "heard").await;
    wait_metric(&app, METRICS_TOKEN, NO_SUBSCRIBER, 1).await;
    assert_eq!(value(&scrape(&app).await, ALL_FAILED), 1, "the dead letter a hook took is not counted");
}
