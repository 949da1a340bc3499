//! Claim-next with a `limit`.

use std::collections::BTreeSet;

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;

use super::{claim_many, claim_next, claims_of, finish_many, outcomes, todo};
use crate::admission::set_admission;
use crate::harness::TestApp;

#[actix_web::test]
async fn without_a_limit_or_with_a_limit_of_one_claim_next_answers_exactly_as_before() {
    let (app, _, ep) = TestApp::with_worker().await;
    assert_eq!(claim_next(&app, &ep, json!({})).await, json!({"empty": true}));
    assert_eq!(claim_next(&app, &ep, json!({"limit": 1})).await, json!({"empty": true}));
    for _ in 0..2 {
        app.create_todo(&ep, "q", "t").await;
    }
    for body in [json!({}), json!({"limit": 1})] {
        let answer = claim_next(&app, &ep, body).await;
        let mut keys: Vec<&str> = answer.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["attempt_seq", "attempts_total", "empty", "lease_token", "prior_attempts", "todo"],
            "{answer}"
        );
        assert_eq!(answer["empty"], false);
    }
}

#[actix_web::test]
async fn a_batch_claim_takes_the_oldest_pending_first_each_under_its_own_lease_with_its_own_attempt() {
    let (app, _, ep) = TestApp::with_worker().await;
    let mut created = Vec::new();
    for i in 0..5 {
        created.push(app.create_todo(&ep, "q", &format!("t{i}")).await);
    }
    let answer = claim_next(&app, &ep, json!({"limit": 3, "claimant": "batcher", "lease_ttl_seconds": 120})).await;
    assert_eq!(answer["empty"], false);
    let claims = claims_of(&answer);
    assert_eq!(claims.iter().map(|c| c.0).collect::<Vec<_>>(), created[..3], "the three oldest, oldest first");
    let tokens: BTreeSet<&str> = claims.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(tokens.len(), 3, "each claim has a lease token of its own");
    for (i, c) in answer["claims"].as_array().unwrap().iter().enumerate() {
        assert_eq!(c["attempt_seq"], 1, "{c}");
        assert_eq!(c["attempts_total"], 1, "{c}");
        assert_eq!(c["todo"]["state"], "claimed");
        assert_eq!(c["todo"]["attempt"], 1);
        assert_eq!(c["todo"]["title"], format!("t{i}"));
        assert!(c.get("prior_attempts").is_none(), "{c}");
        let t = todo(&app, &ep, claims[i].0).await;
        let attempts = t["attempts"].as_array().unwrap();
        assert_eq!(attempts.len(), 1, "{t}");
        assert_eq!(attempts[0]["claimant"], "batcher");
        assert!(attempts[0]["ended_at"].is_null());
        let lease = chrono::DateTime::parse_from_rfc3339(t["lease_expires_at"].as_str().unwrap()).unwrap()
            - chrono::DateTime::parse_from_rfc3339(t["updated_at"].as_str().unwrap()).unwrap();
        assert!((119..=120).contains(&lease.num_seconds()), "lease {lease}");
    }
    let rest = claim_many(&app, &ep, 3).await;
    assert_eq!(rest.iter().map(|c| c.0).collect::<Vec<_>>(), created[3..]);
    assert_eq!(claim_next(&app, &ep, json!({"limit": 3})).await, json!({"claims": [], "empty": true}));
}

#[actix_web::test]
async fn each_lease_token_of_a_batch_fences_only_its_own_todo() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "a").await;
    app.create_todo(&ep, "q", "b").await;
    let claims = claim_many(&app, &ep, 2).await;
    let swapped = json!([
        {"id": claims[0].0.to_string(), "lease_token": claims[1].1},
        {"id": claims[1].0.to_string(), "lease_token": claims[0].1},
    ]);
    assert_eq!(outcomes(&finish_many(&app, &ep, "complete", swapped).await), ["conflict", "conflict"]);
    let right = json!([
        {"id": claims[0].0.to_string(), "lease_token": claims[0].1},
        {"id": claims[1].0.to_string(), "lease_token": claims[1].1},
    ]);
    assert_eq!(outcomes(&finish_many(&app, &ep, "complete", right).await), ["ok", "ok"]);
}

#[actix_web::test]
async fn a_limit_outside_1_to_100_is_refused_and_claims_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    for limit in [0, -1, 101, 1000] {
        let (status, answer) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"limit": limit})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{limit}: {answer}");
        assert_eq!(answer["error"]["code"], "invalid_argument");
    }
    assert_eq!(todo(&app, &ep, id).await["state"], "pending");
    assert_eq!(claim_many(&app, &ep, 100).await.len(), 1, "100 is allowed");
}

#[actix_web::test]
async fn a_limit_is_not_accepted_when_claiming_by_id() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let (status, answer) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({"limit": 2})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_eq!(todo(&app, &ep, id).await["state"], "pending");
}

#[actix_web::test]
async fn a_batch_claim_on_one_queue_takes_only_that_queue() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "a", "in a").await;
    let b1 = app.create_todo(&ep, "b", "in b").await;
    let b2 = app.create_todo(&ep, "b", "in b too").await;
    let claims = claims_of(&claim_next(&app, &ep, json!({"limit": 10, "queue": "b"})).await);
    assert_eq!(claims.iter().map(|c| c.0).collect::<Vec<TodoId>>(), [b1, b2]);
}

#[actix_web::test]
async fn a_batch_claim_stops_at_max_in_flight_and_reports_and_counts_the_deferral() {
    let (app, owner, ep) = TestApp::with_worker().await;
    set_admission(&app, &owner.token, ep.id, "q", json!({"max_in_flight": 2})).await;
    for i in 0..4 {
        app.create_todo(&ep, "q", &format!("t{i}")).await;
    }
    let answer = claim_next(&app, &ep, json!({"limit": 5})).await;
    assert_eq!(claims_of(&answer).len(), 2, "{answer}");
    assert_eq!(answer["deferred"], "in_flight_full");
    assert_eq!(answer["empty"], false);
    let counted = app.db.count("SELECT coalesce(sum(count), 0)::bigint FROM queue_deferrals").await;
    assert_eq!(counted, 1, "the refusal that stopped the batch is counted once");
    let answer = claim_next(&app, &ep, json!({"limit": 5, "queue": "q"})).await;
    assert_eq!(answer, json!({"claims": [], "empty": true, "deferred": "in_flight_full"}));
}

#[actix_web::test]
async fn a_batch_claim_on_any_queue_takes_around_a_paused_queue_oldest_first() {
    let (app, owner, ep) = TestApp::with_worker().await;
    set_admission(&app, &owner.token, ep.id, "held", json!({"paused": true})).await;
    let a1 = app.create_todo(&ep, "a", "a1").await;
    app.create_todo(&ep, "held", "h1").await;
    let b1 = app.create_todo(&ep, "b", "b1").await;
    let a2 = app.create_todo(&ep, "a", "a2").await;
    let answer = claim_next(&app, &ep, json!({"limit": 10})).await;
    assert_eq!(claims_of(&answer).iter().map(|c| c.0).collect::<Vec<_>>(), [a1, b1, a2], "{answer}");
    assert_eq!(answer["deferred"], "paused", "the held work was there to claim");
}
