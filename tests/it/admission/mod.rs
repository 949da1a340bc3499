//! Admission budgets per (endpoint, queue) over HTTP, on a real database: a paused
//! queue defers every claim, `max_in_flight` holds under racing agents (on one server
//! and across two), `per_hour` defers past its window, a resume of an interrupted todo
//! is judged as a claim, every deferral is counted (per queue, hour and reason, and in
//! the metrics), bad input changes nothing, and claims racing budget changes never see a
//! 5xx.

mod any_queue;
mod bad_input;
mod board;
mod counted;
mod paused;
mod race;
mod resume;
mod window;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::ids::{EndpointId, TodoId};

use crate::harness::{Ep, TestApp};

/// The metrics token the tests that read metrics start the app with.
pub const METRICS_TOKEN: &str = "admission-metrics-token-0123456789abcdef";

/// `PUT /api/v1/endpoints/{endpoint}/queues/{queue}/admission` with `body` as `token`.
pub async fn put_admission(
    app: &TestApp,
    token: &str,
    endpoint: EndpointId,
    queue: &str,
    body: Value,
) -> (StatusCode, Value) {
    let path = format!("/api/v1/endpoints/{endpoint}/queues/{queue}/admission");
    app.call("PUT", &path, Some(token), Some(&body)).await
}

/// As [`put_admission`], which must succeed; answers the settings.
pub async fn set_admission(app: &TestApp, token: &str, endpoint: EndpointId, queue: &str, body: Value) -> Value {
    let (status, answer) = put_admission(app, token, endpoint, queue, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// Claim-next on `queue` (none: any queue); the answer must be a 200.
pub async fn claim_on(app: &TestApp, ep: &Ep, queue: Option<&str>) -> Value {
    let body = queue.map_or_else(|| json!({}), |q| json!({"queue": q}));
    let (status, answer) = app.post("/api/v1/agent/todos/claim-next", &ep.token, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// Claim of one todo by id; the answer must be a 200.
pub async fn claim_id(app: &TestApp, ep: &Ep, id: TodoId) -> Value {
    let (status, answer) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// Completes a claim answer's todo with its lease token.
pub async fn complete(app: &TestApp, ep: &Ep, claim: &Value) {
    let id = claim["todo"]["id"].as_str().unwrap();
    let body = json!({"lease_token": claim["lease_token"]});
    let (status, answer) = app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
}

/// The reason a claim answer was deferred for, if it was.
pub fn deferred(answer: &Value) -> Option<&str> {
    answer["deferred"].as_str()
}

/// Asserts the answer is a claim (not empty).
pub fn claimed(answer: &Value) -> &str {
    assert_eq!(answer["empty"], false, "expected a claim: {answer}");
    answer["todo"]["id"].as_str().unwrap()
}
