//! Values out of range or of the wrong form: artifacts, lengths, fields, queues, limits (422).

use awc::http::StatusCode;
use serde_json::json;

use super::{CLAIM_NEXT, Snapshot, TODOS, claimed, expect_error, interrupted, state_of, todo_path};
use crate::harness::TestApp;

// ---------------------------------------------------------------------------------
// 422: values out of range or of the wrong form
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn invalid_artifacts_are_invalid_argument_and_leave_the_attempt_open() {
    let (app, _, ep) = TestApp::with_worker().await;
    let (id, lease) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let too_long = format!("https://ci.example.com/{}", "a".repeat(512));
    let artifacts = [
        "http://ci.example.com/run/1",
        "javascript:alert(1)",
        "mcp://cairn/",
        "mcp://cairn/has space",
        "mcp://cairn/semi;colon",
        "mcp://cairn/../../etc/passwd",
        "mcp://other/abc",
        "https://",
        "https://user@host/x",
        "https://host/line\nbreak",
        "ftp://host/x",
        "",
        too_long.as_str(),
    ];
    for artifact in artifacts {
        for verb in ["complete", "fail", "release"] {
            let got =
                app.post(&todo_path(id, verb), &ep.token, json!({"artifact": artifact, "lease_token": lease})).await;
            expect_error(
                &got,
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_argument",
                &format!("{verb} with {artifact:?}"),
            );
        }
    }
    before.assert_unchanged(&app, "invalid artifacts").await;
    let (_, t) = app.get(&format!("{TODOS}/{id}"), &ep.token).await;
    assert_eq!(t["state"], "claimed");
    assert!(t["attempts"][0]["ended_at"].is_null(), "{t}");
}

#[actix_web::test]
async fn lease_and_wait_lengths_out_of_range_are_invalid_argument_and_change_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let (claimed_id, lease) = claimed(&app, &ep).await;
    let (interrupted_id, _) = interrupted(&app, &ep).await;
    let pending = app.create_todo(&ep, "q", "pending").await;
    let before = Snapshot::take(&app).await;
    for ttl in [0, -1, 86_401, i32::MAX, i32::MIN] {
        for (path, body) in [
            (CLAIM_NEXT.to_owned(), json!({"lease_ttl_seconds": ttl})),
            (todo_path(pending, "claim"), json!({"lease_ttl_seconds": ttl})),
            (todo_path(claimed_id, "heartbeat"), json!({"lease_ttl_seconds": ttl, "lease_token": lease})),
            (todo_path(interrupted_id, "heartbeat"), json!({"lease_ttl_seconds": ttl})),
            (todo_path(interrupted_id, "resume"), json!({"lease_ttl_seconds": ttl})),
        ] {
            let got = app.post(&path, &ep.token, body.clone()).await;
            expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
        }
    }
    for wait in [0, -5, 604_801, i32::MAX] {
        let body = json!({"state": "auth_required", "wait_seconds": wait, "lease_token": lease});
        let got = app.post(&todo_path(claimed_id, "interrupt"), &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("interrupt {body}"));
    }
    before.assert_unchanged(&app, "out-of-range lengths").await;
    assert_eq!(state_of(&app, pending).await, "pending");
    assert_eq!(state_of(&app, claimed_id).await, "claimed");
    assert_eq!(state_of(&app, interrupted_id).await, "input_required");
}

#[actix_web::test]
async fn create_todo_with_out_of_range_or_malformed_fields_is_invalid_argument_and_creates_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let before = Snapshot::take(&app).await;
    let long_queue = "q".repeat(65);
    let bodies = [
        json!({"queue": "q", "title": "t", "max_attempts": 0}),
        json!({"queue": "q", "title": "t", "max_attempts": 101}),
        json!({"queue": "q", "title": "t", "max_attempts": -1}),
        json!({"queue": "quarantine", "title": "t"}),
        json!({"queue": "Builds", "title": "t"}),
        json!({"queue": "", "title": "t"}),
        json!({"queue": ".hidden", "title": "t"}),
        json!({"queue": "a b", "title": "t"}),
        json!({"queue": "a/b", "title": "t"}),
        json!({"queue": "ünï", "title": "t"}),
        json!({"queue": long_queue, "title": "t"}),
        json!({"queue": "q", "title": ""}),
        json!({"queue": "q", "title": "   "}),
        json!({"queue": "q", "title": "t".repeat(1025)}),
        json!({"queue": "q", "title": "t", "kind": ""}),
        json!({"queue": "q", "title": "t", "kind": "k".repeat(129)}),
        json!({"queue": "q", "title": "t", "idempotency_key": ""}),
        json!({"queue": "q", "title": "t", "idempotency_key": "k".repeat(257)}),
    ];
    for body in &bodies {
        let got = app.post(TODOS, &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &body.to_string());
    }
    before.assert_unchanged(&app, "invalid creates").await;
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}

#[actix_web::test]
async fn claiming_from_a_bad_or_reserved_queue_is_invalid_argument_and_claims_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let pending = app.create_todo(&ep, "q", "t").await;
    let before = Snapshot::take(&app).await;
    for queue in ["quarantine", "Q", "", " q", "q q", ".q", &"q".repeat(65)] {
        let got = app.post(CLAIM_NEXT, &ep.token, json!({"queue": queue})).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("claim-next from {queue:?}"));
    }
    // Claim by id takes no queue at all.
    let got = app.post(&todo_path(pending, "claim"), &ep.token, json!({"queue": "q"})).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "claim by id with a queue");
    before.assert_unchanged(&app, "bad queues").await;
    assert_eq!(state_of(&app, pending).await, "pending");
}

#[actix_web::test]
async fn list_limits_and_states_out_of_range_are_invalid_argument() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "q", "t").await;
    for query in ["?limit=0", "?limit=201", "?limit=-1", "?state=done", "?state=canceled"] {
        let got = app.get(&format!("{TODOS}{query}"), &ep.token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", query);
    }
    for query in ["?limit=1", "?limit=200"] {
        let (s, b) = app.get(&format!("{TODOS}{query}"), &ep.token).await;
        assert_eq!(s, StatusCode::OK, "{query}: {b}");
    }
}
