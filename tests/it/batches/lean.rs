//! Claim-next's lean answer (`?answer=lean`): one list of only what an agent needs to
//! work and finish, for any `limit`; the claims themselves are the full answer's.

use std::collections::BTreeSet;

use awc::http::StatusCode;
use serde_json::json;

use super::{claim_next, finish_many, outcomes, todo};
use crate::admission::set_admission;
use crate::harness::{Ep, TestApp};

const LEAN: &str = "/api/v1/agent/todos/claim-next?answer=lean";

/// The keys every lean item carries, no more.
const LEAN_KEYS: [&str; 9] =
    ["attempt_seq", "id", "kind", "lease_expires_at", "lease_token", "payload", "queue", "title", "work_order"];

async fn lean(app: &TestApp, ep: &Ep, body: serde_json::Value) -> serde_json::Value {
    let (status, answer) = app.post(LEAN, &ep.token, body).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer
}

#[actix_web::test]
async fn a_lean_claim_answers_only_what_an_agent_needs_for_one_todo_or_many() {
    let (app, _, ep) = TestApp::with_worker().await;
    for i in 0..4 {
        let body = json!({"queue": "q", "title": format!("t{i}"), "kind": "build", "payload": {"n": i}});
        let (status, created) = app.post("/api/v1/agent/todos", &ep.token, body).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
    }
    let one = lean(&app, &ep, json!({})).await;
    let many = lean(&app, &ep, json!({"limit": 3, "lease_ttl_seconds": 120})).await;
    for (answer, n) in [(&one, 1), (&many, 3)] {
        let mut keys: Vec<&str> = answer.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["empty", "todos"], "{answer}");
        assert_eq!(answer["empty"], false);
        assert_eq!(answer["todos"].as_array().unwrap().len(), n, "{answer}");
    }
    let items: Vec<&serde_json::Value> =
        one["todos"].as_array().unwrap().iter().chain(many["todos"].as_array().unwrap()).collect();
    for (i, item) in items.iter().enumerate() {
        let mut keys: Vec<&str> = item.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, LEAN_KEYS, "{item}");
        assert_eq!(item["title"], format!("t{i}"), "oldest first");
        assert_eq!(item["payload"], json!({"n": i}));
        assert_eq!(
            (&item["queue"], &item["kind"], item["attempt_seq"].as_i64()),
            (&json!("q"), &json!("build"), Some(1))
        );
        // The claim is the full answer's: the todo is claimed under this lease, with
        // its attempt opened.
        let t = todo(&app, &ep, item["id"].as_str().unwrap().parse().unwrap()).await;
        assert_eq!(t["state"], "claimed");
        assert_eq!(t["lease_expires_at"], item["lease_expires_at"]);
        assert_eq!(t["attempts"].as_array().unwrap().len(), 1, "{t}");
    }
    let tokens: BTreeSet<&str> = items.iter().map(|i| i["lease_token"].as_str().unwrap()).collect();
    assert_eq!(tokens.len(), 4, "each claim has a lease token of its own");
    // What came in the lean answer is all an agent needs to finish.
    let finish: Vec<serde_json::Value> =
        items.iter().map(|i| json!({"id": i["id"], "lease_token": i["lease_token"]})).collect();
    assert_eq!(outcomes(&finish_many(&app, &ep, "complete", json!(finish)).await), ["ok"; 4]);
    assert_eq!(lean(&app, &ep, json!({"limit": 5})).await, json!({"todos": [], "empty": true}));
    assert_eq!(lean(&app, &ep, json!({})).await, json!({"todos": [], "empty": true}));
}

#[actix_web::test]
async fn a_lean_claim_that_a_budget_held_back_says_so() {
    let (app, owner, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "t").await;
    set_admission(&app, &owner.token, ep.id, "q", json!({"paused": true})).await;
    let held = json!({"todos": [], "empty": true, "deferred": "paused"});
    assert_eq!(lean(&app, &ep, json!({"queue": "q"})).await, held);
    assert_eq!(lean(&app, &ep, json!({"queue": "q", "limit": 10})).await, held);
}

#[actix_web::test]
async fn without_the_query_the_answers_are_the_full_ones_and_a_bad_form_claims_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "t").await;
    for path in ["/api/v1/agent/todos/claim-next?answer=thin", "/api/v1/agent/todos/claim-next?answer=lean&x=1"] {
        let (status, answer) = app.post(path, &ep.token, json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_argument", "{answer}");
    }
    // The form is the route's query, not a body field (MCP's claim_next reads the body).
    let (status, answer) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"answer": "lean"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'pending'").await, 1, "nothing claimed");
    let full = claim_next(&app, &ep, json!({})).await;
    assert!(full["todo"]["id"].is_string() && full.get("todos").is_none(), "{full}");
    let (status, full) = app.post("/api/v1/agent/todos/claim-next?answer=full", &ep.token, json!({"limit": 2})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(full, json!({"claims": [], "empty": true}));
}

#[actix_web::test]
async fn a_lean_batch_answer_is_under_half_the_bytes_of_the_full_one() {
    let (app, _, ep) = TestApp::with_worker().await;
    for i in 0..20 {
        let body =
            json!({"queue": "q", "title": format!("build {i}"), "kind": "build", "payload": {"sha": "a1b2c3", "n": i}});
        let (status, created) = app.post("/api/v1/agent/todos", &ep.token, body).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
    }
    let full = claim_next(&app, &ep, json!({"limit": 10})).await;
    let lean = lean(&app, &ep, json!({"limit": 10})).await;
    let (full, lean) = (full.to_string().len(), lean.to_string().len());
    println!("10 claims: full answer {full} bytes, lean {lean} bytes ({:.0} %)", 100.0 * lean as f64 / full as f64);
    assert!(lean * 2 < full, "full {full} bytes, lean {lean}");
}
