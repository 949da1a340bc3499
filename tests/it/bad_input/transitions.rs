//! Lease-token mismatches and transitions the state does not allow (409).

use awc::http::StatusCode;
use serde_json::json;

use super::{Snapshot, claimed, expect_error, interrupted, state_of, todo_path};
use crate::harness::TestApp;

// ---------------------------------------------------------------------------------
// 409: lease-token mismatches and transitions the state does not allow
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_lease_token_mismatch_is_a_conflict_on_every_verb_and_changes_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let (claimed_id, _) = claimed(&app, &ep).await;
    let (interrupted_id, _) = interrupted(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    for token in ["AAAAAAAAAAAAAAAAAAAAAA", "", "not even base64 ✓"] {
        for verb in ["heartbeat", "complete", "fail", "release"] {
            let got = app.post(&todo_path(claimed_id, verb), &ep.token, json!({"lease_token": token})).await;
            expect_error(&got, StatusCode::CONFLICT, "conflict", &format!("{verb} with {token:?}"));
        }
        let got = app
            .post(
                &todo_path(claimed_id, "interrupt"),
                &ep.token,
                json!({"state": "input_required", "lease_token": token}),
            )
            .await;
        expect_error(&got, StatusCode::CONFLICT, "conflict", &format!("interrupt with {token:?}"));
        for verb in ["heartbeat", "resume"] {
            let got = app.post(&todo_path(interrupted_id, verb), &ep.token, json!({"lease_token": token})).await;
            expect_error(
                &got,
                StatusCode::CONFLICT,
                "conflict",
                &format!("{verb} of an interrupted todo with {token:?}"),
            );
        }
    }
    before.assert_unchanged(&app, "lease token mismatch").await;
    assert_eq!(state_of(&app, claimed_id).await, "claimed");
    assert_eq!(state_of(&app, interrupted_id).await, "input_required");
}

#[actix_web::test]
async fn transitions_the_state_does_not_allow_are_conflicts_and_change_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (done, _) = claimed(&app, &ep).await;
    let (s, b) = app.post(&todo_path(done, "complete"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let (claimed_id, _) = claimed(&app, &ep).await;
    let (interrupted_id, _) = interrupted(&app, &ep).await;
    let pending = app.create_todo(&ep, "q", "pending").await;
    let before = Snapshot::take(&app).await;
    let refused = [
        (pending, "complete", json!({})),
        (pending, "fail", json!({})),
        (pending, "release", json!({})),
        (pending, "heartbeat", json!({})),
        (pending, "resume", json!({})),
        (pending, "interrupt", json!({"state": "input_required"})),
        (claimed_id, "resume", json!({})),
        (claimed_id, "claim", json!({})),
        (interrupted_id, "complete", json!({})),
        (interrupted_id, "fail", json!({})),
        (interrupted_id, "release", json!({})),
        (interrupted_id, "claim", json!({})),
        (interrupted_id, "interrupt", json!({"state": "auth_required"})),
        (done, "complete", json!({})),
        (done, "fail", json!({})),
        (done, "release", json!({})),
        (done, "heartbeat", json!({})),
        (done, "resume", json!({})),
        (done, "claim", json!({})),
        (done, "interrupt", json!({"state": "input_required"})),
    ];
    for (id, verb, body) in &refused {
        let got = app.post(&todo_path(id, verb), &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::CONFLICT, "conflict", &format!("{verb} of {}", state_of(&app, *id).await));
    }
    for (id, verb) in [(done, "fail"), (pending, "retry"), (claimed_id, "retry"), (done, "retry")] {
        let got = app.call("POST", &format!("/api/v1/todos/{id}/{verb}"), Some(&o.token), None).await;
        expect_error(
            &got,
            StatusCode::CONFLICT,
            "conflict",
            &format!("operator {verb} of {}", state_of(&app, id).await),
        );
    }
    before.assert_unchanged(&app, "refused transitions").await;
    assert_eq!(state_of(&app, pending).await, "pending");
    assert_eq!(state_of(&app, claimed_id).await, "claimed");
    assert_eq!(state_of(&app, interrupted_id).await, "input_required");
    assert_eq!(state_of(&app, done).await, "done");
}
