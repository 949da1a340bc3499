//! Unknown, malformed and out-of-reach ids, and unknown routes (404).

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;

use super::{Snapshot, TODOS, claimed, expect_error, state_of, todo_path};
use crate::harness::TestApp;

// ---------------------------------------------------------------------------------
// 404: unknown, malformed and out-of-reach ids; unknown routes
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_and_malformed_todo_ids_are_not_found_and_change_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (real, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let unknown = TodoId::new().to_string();
    let bare_uuid = real.0.simple().to_string();
    let hyphenated = format!("td_{}", real.0.hyphenated());
    let endpoint_id = ep.id.to_string();
    let ids = [
        unknown.as_str(),
        "td_xyz",
        &bare_uuid,
        &hyphenated,
        &endpoint_id,
        "td_",
        "TD_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a",
        "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a0",
        "%00",
        "..",
        "%F0%9F%92%A5",
    ];
    let reference = app.get(&format!("{TODOS}/{unknown}"), &ep.token).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown id");
    for id in ids {
        let got = app.get(&format!("{TODOS}/{id}"), &ep.token).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("get {id}"));
        assert_eq!(got.1, reference.1, "{id}: a malformed id answers exactly like an unknown one");
        for verb in ["claim", "heartbeat", "complete", "fail", "release", "resume"] {
            let got = app.post(&todo_path(id, verb), &ep.token, json!({})).await;
            expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{verb} {id}"));
            assert_eq!(got.1, reference.1, "{verb} {id}");
        }
        let got = app.post(&todo_path(id, "interrupt"), &ep.token, json!({"state": "auth_required"})).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("interrupt {id}"));
        for (method, path) in [
            ("GET", format!("/api/v1/todos/{id}")),
            ("POST", format!("/api/v1/todos/{id}/fail")),
            ("POST", format!("/api/v1/todos/{id}/retry")),
        ] {
            let got = app.call(method, &path, Some(&o.token), None).await;
            expect_error(&got, StatusCode::NOT_FOUND, "not_found", &path);
            assert_eq!(got.1, reference.1, "{path}");
        }
    }
    for id in [TodoId::new().to_string(), "ep_xyz".into(), real.to_string(), ep.id.0.simple().to_string()] {
        let got = app.call("POST", &format!("/api/v1/endpoints/{id}/revoke"), Some(&o.token), None).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("revoke {id}"));
        assert_eq!(got.1, reference.1, "revoke {id}");
    }
    before.assert_unchanged(&app, "unknown ids").await;
    assert_eq!(state_of(&app, real).await, "claimed");
}

#[actix_web::test]
async fn another_endpoints_todo_answers_exactly_like_an_unknown_one_and_is_untouched() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let mine = app.agent(o.scope, "mine").await;
    let sibling = app.agent(o.scope, "sibling").await;
    let stranger_owner = app.owner("b@example.com").await;
    let stranger = app.agent(stranger_owner.scope, "stranger").await;
    let pending = app.create_todo(&sibling, "q", "pending").await;
    let (theirs, lease) = claimed(&app, &stranger).await;
    let before = Snapshot::take(&app).await;
    let reference = app.get(&format!("{TODOS}/{}", TodoId::new()), &mine.token).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown id");
    for id in [pending, theirs] {
        let got = app.get(&format!("{TODOS}/{id}"), &mine.token).await;
        assert_eq!(got, reference, "get {id}");
        let got = app.post(&todo_path(id, "claim"), &mine.token, json!({})).await;
        assert_eq!(got, reference, "claim {id}");
        for verb in ["heartbeat", "complete", "fail", "release", "resume"] {
            let got = app.post(&todo_path(id, verb), &mine.token, json!({"lease_token": lease})).await;
            assert_eq!(got, reference, "{verb} {id}");
        }
        let got = app.post(&todo_path(id, "interrupt"), &mine.token, json!({"state": "input_required"})).await;
        assert_eq!(got, reference, "interrupt {id}");
    }
    // Claim-next never reaches another endpoint's work.
    assert_eq!(app.claim_next(&mine).await, json!({"empty": true}));
    before.assert_unchanged(&app, "foreign todos").await;
    assert_eq!(state_of(&app, pending).await, "pending");
    assert_eq!(state_of(&app, theirs).await, "claimed");
}

#[actix_web::test]
async fn another_owners_todos_and_endpoints_are_not_found_on_the_operator_api() {
    let app = TestApp::spawn().await;
    let me = app.owner("a@example.com").await;
    let other = app.owner("b@example.com").await;
    let their_ep = app.agent(other.scope, "theirs").await;
    let pending = app.create_todo(&their_ep, "q", "pending").await;
    let (claimed_id, _) = claimed(&app, &their_ep).await;
    let (failed, _) = claimed(&app, &their_ep).await;
    let (s, b) = app.post(&todo_path(failed, "fail"), &their_ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let before = Snapshot::take(&app).await;
    let reference = app.call("POST", &format!("/api/v1/todos/{}/fail", TodoId::new()), Some(&me.token), None).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown id");
    for id in [pending, claimed_id, failed] {
        for (method, path) in [
            ("GET", format!("/api/v1/todos/{id}")),
            ("POST", format!("/api/v1/todos/{id}/fail")),
            ("POST", format!("/api/v1/todos/{id}/retry")),
        ] {
            let got = app.call(method, &path, Some(&me.token), Some(&json!({"summary": "mine now"}))).await;
            assert_eq!(got, reference, "{method} {path}");
        }
    }
    let got = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", their_ep.id), Some(&me.token), None).await;
    assert_eq!(got, reference, "revoke another owner's endpoint");
    // Their dead letters and endpoints are not listed either.
    let (_, l) = app.get("/api/v1/dead-letters", &me.token).await;
    assert_eq!(l, json!({"dead_letters": []}));
    let (_, l) = app.get("/api/v1/endpoints", &me.token).await;
    assert_eq!(l, json!({"endpoints": []}));
    before.assert_unchanged(&app, "another owner's resources").await;
    // Their endpoint still works.
    let (s, _) = app.get(TODOS, &their_ep.token).await;
    assert_eq!(s, StatusCode::OK);
}

#[actix_web::test]
async fn unknown_routes_answer_not_found_in_the_envelope() {
    let (app, o, ep) = TestApp::with_worker().await;
    // `GET /` is the Board's entry (a redirect to sign-in); `POST /` is a method it does
    // not take (`bad_input::methods`).
    let got = app.call("POST", "/", None, None).await;
    expect_error(&got, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", "POST /");
    let paths = [
        "/nope",
        "/api",
        "/api/v1",
        "/api/v2/agent/todos",
        "/api/v1/agent",
        "/api/v1/agent/nope",
        "/api/v1/agent/todos/claim-next/extra",
        "/api/v1/agent/todos/td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a/explode",
        "/api/v1/nope",
        "/api/v1/webhooks/nope",
        "/healthz/deeper",
    ];
    for path in paths {
        for token in [None, Some(ep.token.as_str()), Some(o.token.as_str())] {
            for method in ["GET", "POST"] {
                let got = app.call(method, path, token, None).await;
                expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{method} {path}"));
            }
        }
    }
}
