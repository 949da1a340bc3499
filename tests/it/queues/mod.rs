//! The Queues overview (SPEC 13): `GET /api/v1/queues` and the Board's `/queues` agree
//! with the store's own counts for every column, count each completion once across
//! censuses, page with a cursor, and show members what admins may change.

mod access;
mod counts;

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::wait::wait_count_within;
use crate::harness::{Ep, TestApp};

/// A census every 50 ms: tests wait for one taken after what they did.
pub async fn app() -> TestApp {
    TestApp::spawn_with(|s| s.queue_census_interval_ms = 50).await
}

/// Creates a todo on `queue`; its id.
pub async fn todo(app: &TestApp, ep: &Ep, queue: &str, max_attempts: i32) -> String {
    let (s, b) = app
        .post("/api/v1/agent/todos", &ep.token, json!({"queue": queue, "title": "t", "max_attempts": max_attempts}))
        .await;
    assert_eq!(s.as_u16(), 201, "{b}");
    b["id"].as_str().unwrap().to_owned()
}

/// Claims todo `id`; its lease token.
pub async fn claim(app: &TestApp, ep: &Ep, id: &str) -> Value {
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s.as_u16(), 200, "{b}");
    b["lease_token"].clone()
}

/// Calls agent verb `verb` on todo `id` with its lease token.
pub async fn verb(app: &TestApp, ep: &Ep, id: &str, verb: &str, lease: &Value, extra: Value) {
    let mut body = json!({"lease_token": lease});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/{verb}"), &ep.token, body).await;
    assert_eq!(s.as_u16(), 200, "{verb}: {b}");
}

/// Waits until a census has been taken after everything done so far.
pub async fn next_census(app: &TestApp) {
    let now = app.db.count("SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::int8").await;
    wait_count_within(
        &app.db,
        &format!("SELECT count(*) FROM queue_census_runs WHERE measured_at > to_timestamp({now} / 1000000.0)"),
        1,
        Duration::from_secs(20),
    )
    .await;
}

/// The overview's rows for `token`, keyed `slug/queue`.
pub async fn overview(app: &TestApp, token: &str) -> Vec<Value> {
    let (s, b) = app.get("/api/v1/queues", token).await;
    assert_eq!(s.as_u16(), 200, "{b}");
    b["queues"].as_array().unwrap().clone()
}

/// The row of `slug/queue` in `rows`.
pub fn row<'a>(rows: &'a [Value], slug: &str, queue: &str) -> Option<&'a Value> {
    rows.iter().find(|r| r["endpoint_slug"] == slug && r["queue"] == queue)
}
