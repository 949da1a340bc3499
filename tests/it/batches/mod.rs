//! The agent's batch verbs over HTTP, on a real database: claim-next with a `limit`,
//! complete and fail of many, create of many. Each answers per item as the single verb
//! would, in one transaction; a bad item never fails the others; racing batches and
//! single verbs never deadlock or answer 5xx; and the same operations batched or not
//! leave the same rows, attempts, outbox records and signals (`equivalence`, a property
//! test at the store).

mod claim;
mod complete;
mod create;
mod equivalence;
mod fail;
mod lean;
mod metrics;
mod race;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::ids::TodoId;

use crate::harness::{Ep, TestApp};

/// Claim-next with `body`; must answer 200.
pub async fn claim_next(app: &TestApp, ep: &Ep, body: Value) -> Value {
    let (status, answer) = app.post("/api/v1/agent/todos/claim-next", &ep.token, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

/// Claim-next of up to `limit` todos; answers the claims (todo id, lease token).
pub async fn claim_many(app: &TestApp, ep: &Ep, limit: i32) -> Vec<(TodoId, String)> {
    let answer = claim_next(app, ep, json!({"limit": limit})).await;
    claims_of(&answer)
}

/// The (todo id, lease token) of each claim of a batch answer (or of today's answer,
/// which a `limit` of 1 gets).
pub fn claims_of(answer: &Value) -> Vec<(TodoId, String)> {
    if answer.get("claims").is_none() && answer["empty"].is_boolean() {
        let one = answer["todo"]["id"]
            .as_str()
            .map(|id| (id.parse().unwrap(), answer["lease_token"].as_str().unwrap().to_owned()));
        return one.into_iter().collect();
    }
    answer["claims"]
        .as_array()
        .unwrap_or_else(|| panic!("not a batch answer: {answer}"))
        .iter()
        .map(|c| (c["todo"]["id"].as_str().unwrap().parse().unwrap(), c["lease_token"].as_str().unwrap().to_owned()))
        .collect()
}

/// `POST /api/v1/agent/todos/{verb}` (`complete` or `fail`) with `items`; must answer
/// 200; answers the results.
pub async fn finish_many(app: &TestApp, ep: &Ep, verb: &str, items: Value) -> Vec<Value> {
    let (status, answer) = app.post(&format!("/api/v1/agent/todos/{verb}"), &ep.token, json!({"items": items})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["results"].as_array().unwrap().clone()
}

/// `POST /api/v1/agent/todos/batch` with `items`; must answer 200; answers the results.
pub async fn create_many(app: &TestApp, ep: &Ep, items: Value) -> Vec<Value> {
    let (status, answer) = app.post("/api/v1/agent/todos/batch", &ep.token, json!({"items": items})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["results"].as_array().unwrap().clone()
}

/// Each result's `ok`, or its error code.
pub fn outcomes(results: &[Value]) -> Vec<String> {
    results
        .iter()
        .map(|r| if r["ok"] == true { "ok".to_owned() } else { r["error"]["code"].as_str().unwrap().to_owned() })
        .collect()
}

/// A todo as its endpoint sees it, with its attempts.
pub async fn todo(app: &TestApp, ep: &Ep, id: TodoId) -> Value {
    let (status, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(status, StatusCode::OK, "{t}");
    t
}
