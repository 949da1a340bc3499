//! Doorbell rings: every delivered `todo.ready` is recorded once per todo (in batches,
//! by the endpoint's supervisor); a ring whose todo nobody claimed within
//! `SWITCHBOARD_DOORBELL_ACK_SECONDS` is an unheard doorbell in the owner's digest, and
//! one claimed in time is not. Retention prunes old rings.

use std::time::{Duration, Instant};

use awc::http::StatusCode;
use serde_json::json;

use super::*;
use crate::notify::receiver::Receiver;

/// Waits until `todo` has a recorded ring.
async fn rung(app: &TestApp, todo: TodoId) {
    let sql = format!("SELECT count(*) FROM doorbell_rings WHERE todo_id = '{}'", todo.0);
    let started = Instant::now();
    while app.db.count(&sql).await != 1 {
        assert!(started.elapsed() < DEADLINE, "the ring of {todo} was never recorded");
        actix_rt::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The unheard doorbells a preview of a fresh digest of `owner` reports.
async fn unheard(app: &TestApp, owner: &Owner, rx: &Receiver) -> serde_json::Value {
    let (_, c) =
        app.post("/api/v1/connections", &owner.token, json!({"name": "c", "kind": "gotify", "secret": "t"})).await;
    let body = json!({"name": "s", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (_, sink) = app.post("/api/v1/sinks", &owner.token, body).await;
    let (s, d) = app
        .post("/api/v1/digests", &owner.token, json!({"name": "d", "schedule": "Mon 09:00", "sink_ids": [sink["id"]]}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{d}");
    let path = format!("/api/v1/digests/{}/preview", d["id"].as_str().unwrap());
    let (s, p) = app.call("POST", &path, Some(&owner.token), None).await;
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
    let sections = unheard(&app, &owner, &rx).await;
    assert_eq!(sections, json!([{"name": "unheard_doorbells", "status": "ok", "endpoint": "worker", "unheard": 1}]));
}

#[actix_web::test]
async fn a_ring_claimed_within_the_window_was_heard() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    let todo = intake.deliver(&app, "push", json!({"n": 1})).await;
    rung(&app, todo).await;
    claim(&app, &ep, todo).await;
    // The ring and the claim both twenty minutes ago, a minute apart.
    app.db.exec("UPDATE doorbell_rings SET rung_at = now() - interval '20 minutes'").await;
    app.db.exec("UPDATE todo_attempts SET claimed_at = now() - interval '19 minutes'").await;
    let sections = unheard(&app, &owner, &rx).await;
    assert_eq!(sections, json!([{"name": "unheard_doorbells", "status": "ok", "count": 0}]));
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
