//! Doorbell rings: every delivered `todo.ready` is recorded once per todo (in batches,
//! by the endpoint's supervisor); a ring whose todo nobody claimed within
//! `SWITCHBOARD_DOORBELL_ACK_SECONDS` is an unheard doorbell in the owner's digest, and
//! one claimed in time is not. Each ring is decided once after its window (heard:
//! deleted; unheard: marked) and counted the same before and after. Retention prunes
//! old rings.

use std::time::Duration;

use awc::http::StatusCode;
use serde_json::json;

use super::*;
use testkit::receiver::Receiver;

/// Waits until `todo` has a recorded ring.
async fn rung(app: &TestApp, todo: TodoId) {
    let sql = format!("SELECT count(*) FROM doorbell_rings WHERE todo_id = '{}'", todo.0);
    wait_count_within(&app.db, &sql, 1, DEADLINE).await;
}

/// A digest of `owner` to preview (its sink posts to `rx`); its id.
async fn digest_of(app: &TestApp, owner: &Owner, rx: &Receiver) -> String {
    let body = json!({"name": "c", "kind": "gotify", "secret": "t", "base_url": rx.base()});
    let (_, c) = app.post("/api/v1/connections", &owner.token, body).await;
    let body = json!({"name": "s", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (_, sink) = app.post("/api/v1/sinks", &owner.token, body).await;
    let (s, d) = app
        .post("/api/v1/digests", &owner.token, json!({"name": "d", "schedule": "Mon 09:00", "sink_ids": [sink["id"]]}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{d}");
    d["id"].as_str().unwrap().to_owned()
}

/// The unheard-doorbell sections a preview of `digest` reports.
async fn unheard(app: &TestApp, owner: &Owner, digest: &str) -> serde_json::Value {
    let (s, p) = app.call("POST", &format!("/api/v1/digests/{digest}/preview"), Some(&owner.token), None).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let sections: Vec<serde_json::Value> =
        p["sections"].as_array().unwrap().iter().filter(|s| s["name"] == "unheard_doorbells").cloned().collect();
    json!(sections)
}

#[actix_web::test]
async fn a_ring_nobody_answered_within_the_window_is_an_unheard_doorbell_of_its_endpoint() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    let todo = intake.deliver(&app, "push", json!({"n": 1})).await;
    rx.wait_for(2).await;
    rung(&app, todo).await;
    assert_eq!(app.db.count("SELECT count(*) FROM doorbell_rings").await, 1, "two hooks, one ring per todo");
    // Twenty minutes pass (the window is 15) and nobody claims it.
    app.db.exec("UPDATE doorbell_rings SET rung_at = rung_at - interval '20 minutes'").await;
    let digest = digest_of(&app, &owner, &rx).await;
    let want = json!([{"name": "unheard_doorbells", "status": "ok", "endpoint": "worker", "unheard": 1}]);
    assert_eq!(unheard(&app, &owner, &digest).await, want, "counted before the ring is decided");
    // The scheduler decides it once: kept, marked unheard; the digest counts it alike.
    assert_eq!(app.store.decide_doorbells(900, 100).await.unwrap(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM doorbell_rings WHERE unheard").await, 1);
    assert_eq!(app.store.decide_doorbells(900, 100).await.unwrap(), 0, "decided once");
    assert_eq!(unheard(&app, &owner, &digest).await, want, "counted after it is decided");
}

#[actix_web::test]
async fn a_ring_claimed_within_the_window_was_heard() {
    a_ring_claimed_in_time_is_heard(false).await;
}

/// A completion keeps its attempt on the todo row (no history row): the ring is still
/// answered by that attempt's claim.
#[actix_web::test]
async fn a_ring_claimed_within_the_window_and_since_completed_was_heard() {
    a_ring_claimed_in_time_is_heard(true).await;
}

/// A ring whose todo was claimed (and, with `then_completed`, completed) a minute after
/// it rang, twenty minutes ago: reported by no digest, and decided heard.
async fn a_ring_claimed_in_time_is_heard(then_completed: bool) {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    let todo = intake.deliver(&app, "push", json!({"n": 1})).await;
    rung(&app, todo).await;
    claim(&app, &ep, todo).await;
    if then_completed {
        let (s, b) = app.post(&format!("/api/v1/agent/todos/{todo}/complete"), &ep.token, json!({})).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        assert_eq!(app.db.count("SELECT count(*) FROM todo_attempts").await, 0, "the attempt stays on the todo row");
    }
    // The ring and the claim both twenty minutes ago, a minute apart. The todo row holds
    // the claim's start, open or completed.
    app.db.exec("UPDATE doorbell_rings SET rung_at = now() - interval '20 minutes'").await;
    app.db.exec("UPDATE todos SET claimed_at = now() - interval '19 minutes'").await;
    let none = json!([{"name": "unheard_doorbells", "status": "ok", "count": 0}]);
    let digest = digest_of(&app, &owner, &rx).await;
    assert_eq!(unheard(&app, &owner, &digest).await, none);
    // Decided heard, the ring is gone: the table keeps only what a digest reports.
    assert_eq!(app.store.decide_doorbells(900, 100).await.unwrap(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM doorbell_rings").await, 0);
}

#[actix_web::test]
async fn retention_prunes_rings_older_than_its_age() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    let old = intake.deliver(&app, "push", json!({"n": 1})).await;
    let recent = intake.deliver(&app, "push", json!({"n": 2})).await;
    rung(&app, old).await;
    rung(&app, recent).await;
    app.db
        .exec(&format!("UPDATE doorbell_rings SET rung_at = now() - interval '40 days' WHERE todo_id = '{}'", old.0))
        .await;
    let report = app.store.prune_expired(Duration::from_secs(30 * 86_400)).await.unwrap();
    assert_eq!(report.records, 1, "{report:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM doorbell_rings").await, 1);
}
