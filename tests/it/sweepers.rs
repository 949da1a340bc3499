//! The actors run their sweeps on their own, on the configured intervals, in the
//! running server; and endpoints past their expiry are revoked with the cascade.

use std::time::Duration;

use serde_json::json;
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::TodoId;
use switchboard::store::endpoints::VendEndpoint;

use crate::harness::TestApp;
use crate::harness::wait::wait_until_every;

/// Waits (up to 5 s) until `check` holds.
async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let every = Duration::from_millis(50);
    wait_until_every(
        what,
        Duration::from_secs(5),
        every,
        async || {
            if check().await { Ok(()) } else { Err("not yet".into()) }
        },
    )
    .await;
}

#[actix_web::test]
async fn the_running_server_reaps_leases_requeues_retries_and_reaps_interrupts_on_its_own() {
    let app = TestApp::spawn_with(|s| {
        s.lease_reaper_interval_ms = 50;
        s.interrupt_reaper_interval_ms = 50;
        s.retry_scheduler_interval_ms = 50;
    })
    .await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let leased = app.create_todo(&ep, "q", "leased").await;
    let retried = app.create_todo(&ep, "q", "retried").await;
    let waiting = app.create_todo(&ep, "q", "waiting").await;
    for id in [leased, retried, waiting] {
        app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    }
    app.post(&format!("/api/v1/agent/todos/{retried}/fail"), &ep.token, json!({})).await;
    app.post(&format!("/api/v1/agent/todos/{waiting}/interrupt"), &ep.token, json!({"state": "input_required"})).await;
    app.lapse_lease(leased).await;
    app.make_retry_due(retried).await;
    app.lapse_interrupt(waiting).await;
    let state = async |id: TodoId| {
        app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await.1["state"].as_str().unwrap().to_owned()
    };
    for id in [leased, retried, waiting] {
        eventually("a sweep to requeue the todo", async || state(id).await == "pending").await;
    }
}

#[actix_web::test]
async fn an_endpoint_past_its_expiry_is_revoked_with_the_silent_cascade() {
    let app = TestApp::spawn_with(|s| s.endpoint_expiry_interval_ms = 200).await;
    let o = app.owner("a@example.com").await;
    let v = app
        .store
        .vend_endpoint(VendEndpoint {
            scope: o.scope,
            slug: "short-lived".into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: Some(chrono::Utc::now() + chrono::Duration::milliseconds(1500)),
        })
        .await
        .unwrap();
    let ep = crate::harness::Ep { id: v.endpoint.id, token: v.token };
    let id = app.create_todo(&ep, "q", "t").await;
    app.signals.take().await;
    eventually("the endpoint's expiry to pass", async || {
        app.db.count("SELECT count(*) FROM endpoints WHERE expires_at <= now()").await == 1
    })
    .await;
    // Expired tokens stop authenticating at once (even when cached), before any sweep.
    let (s, _) = app.get("/api/v1/agent/todos", &ep.token).await;
    assert_eq!(s, 401);
    eventually("the expiry sweep", async || {
        app.db.count("SELECT count(*) FROM endpoints WHERE state = 'revoked'").await == 1
    })
    .await;
    let dead = app.store.list_dead_letters(&[o.scope], None, 10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].id, id);
    assert_eq!(dead[0].reason.as_str(), "endpoint_revoked");
    assert!(app.signals.take_dead().await.is_empty());
}
