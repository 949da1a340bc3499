//! Fuzz-ish input: never a 5xx, the server keeps answering, and no detail leaks.

use awc::http::StatusCode;
use serde_json::{Value, json};

use super::{
    CLAIM_NEXT, JSON, Snapshot, TODOS, assert_alive, assert_envelope, claimed, expect_error, interrupted, state_of,
    todo_path,
};
use crate::harness::TestApp;

/// Asserts a fuzz answer is a client error (never 5xx) in the envelope.
#[track_caller]
fn expect_client_error(got: &(StatusCode, Value), what: &str) {
    let (s, body) = got;
    assert!(s.is_client_error(), "{what}: answered {s}: {body}");
    assert_envelope(body, what);
}

// ---------------------------------------------------------------------------------
// Fuzz-ish bodies: never a 5xx, and the server keeps answering
// ---------------------------------------------------------------------------------

fn nested_arrays(depth: usize) -> Vec<u8> {
    let mut v = vec![b'['; depth];
    v.extend(std::iter::repeat_n(b']', depth));
    v
}

fn nested_objects(depth: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(depth * 8);
    for _ in 0..depth {
        v.extend_from_slice(br#"{"a":"#);
    }
    v.extend_from_slice(b"1");
    v.extend(std::iter::repeat_n(b'}', depth));
    v
}

#[actix_web::test]
async fn fuzzed_bodies_are_client_errors_never_server_errors_and_the_server_stays_up() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let (interrupted_id, _) = interrupted(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let mut deep_payload = br#"{"queue": "q", "title": "t", "payload": "#.to_vec();
    deep_payload.extend(nested_arrays(10_000));
    deep_payload.push(b'}');
    let mut deep_result = br#"{"result": "#.to_vec();
    deep_result.extend(nested_objects(10_000));
    deep_result.push(b'}');
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("empty array", b"[]".to_vec()),
        ("null", b"null".to_vec()),
        ("true", b"true".to_vec()),
        ("a number", b"42".to_vec()),
        ("a huge number", b"1e999999".to_vec()),
        ("a JSON string", br#""{\"queue\": \"q\", \"title\": \"t\"}""#.to_vec()),
        ("nested arrays", nested_arrays(10_000)),
        ("nested objects", nested_objects(10_000)),
        ("deep payload", deep_payload),
        ("deep result", deep_result),
        ("invalid UTF-8", b"{\"queue\": \"\xff\xfe\", \"title\": \"\xc3\x28\"}".to_vec()),
        ("raw bytes", vec![0x00, 0x9f, 0x92, 0x96, 0xff, 0x00]),
        ("a BOM", b"\xef\xbb\xbf{}".to_vec()),
        ("lone surrogate", br#"{"queue": "q", "title": "\ud800"}"#.to_vec()),
        ("duplicate keys", br#"{"queue": "q", "queue": "r", "title": "t"}"#.to_vec()),
        ("trailing garbage", br#"{"queue": "q", "title": "t"} {}"#.to_vec()),
        ("NaN", br#"{"queue": "q", "title": "t", "max_attempts": NaN}"#.to_vec()),
        ("raw control char", b"{\"queue\": \"q\", \"title\": \"a\x01b\"}".to_vec()),
    ];
    let agent_routes = [
        TODOS.to_owned(),
        CLAIM_NEXT.to_owned(),
        todo_path(id, "claim"),
        todo_path(id, "heartbeat"),
        todo_path(id, "complete"),
        todo_path(id, "fail"),
        todo_path(id, "release"),
        todo_path(id, "interrupt"),
        todo_path(interrupted_id, "resume"),
    ];
    let operator_routes = [
        "/api/v1/endpoints".to_owned(),
        format!("/api/v1/todos/{id}/fail"),
        format!("/api/v1/todos/{interrupted_id}/retry"),
    ];
    for (name, body) in &bodies {
        for path in &agent_routes {
            let got = app.call_raw("POST", path, Some(&ep.token), JSON, body.clone()).await;
            expect_client_error(&got, &format!("{name} to {path}"));
        }
        for path in &operator_routes {
            let got = app.call_raw("POST", path, Some(&o.token), JSON, body.clone()).await;
            expect_client_error(&got, &format!("{name} to {path}"));
        }
        assert_alive(&app).await;
    }
    before.assert_unchanged(&app, "fuzzed bodies").await;
    assert_eq!(state_of(&app, id).await, "claimed");
    assert_eq!(state_of(&app, interrupted_id).await, "input_required");
    // And it still does real work.
    let (s, b) = app.post(&todo_path(id, "complete"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

#[actix_web::test]
async fn fuzzed_paths_methods_and_queries_are_client_errors_never_server_errors() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let long = "a".repeat(4000);
    let paths = [
        format!("{TODOS}?limit=%FF"),
        format!("{TODOS}?queue=%FF%FE"),
        format!("{TODOS}?queue={long}"),
        format!("{TODOS}?state="),
        format!("{TODOS}?limit="),
        format!("{TODOS}?%%%"),
        format!("{TODOS}/{long}"),
        format!("{TODOS}/%E0%A4%A"),
        format!("{TODOS}/{id}%20"),
        format!("/api/v1/dead-letters?q={long}"),
        "/api/v1/dead-letters?limit=%00".to_owned(),
        format!("/api/v1/todos/{long}/fail"),
    ];
    for path in &paths {
        for (method, token) in [("GET", &ep.token), ("POST", &ep.token), ("GET", &o.token), ("POST", &o.token)] {
            let (s, b) = app.call(method, path, Some(token), None).await;
            assert!(!s.is_server_error(), "{method} {path}: {s} {b}");
            if s.is_client_error() {
                assert_envelope(&b, &format!("{method} {path}"));
            }
        }
    }
    // A method a known path does not take is 405 in the envelope (`bad_input::methods`);
    // a path that is not known stays the 404 envelope.
    for (method, path) in [
        ("DELETE", TODOS.to_owned()),
        ("PUT", format!("{TODOS}/{id}")),
        ("GET", todo_path(id, "complete")),
        ("PATCH", "/api/v1/endpoints".to_owned()),
        ("POST", "/healthz".to_owned()),
    ] {
        let got = app.call(method, &path, Some(&ep.token), None).await;
        expect_error(&got, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed", &format!("{method} {path}"));
    }
    let got = app.call("GET", "/api/v1/dead-letters/x", Some(&ep.token), None).await;
    expect_error(&got, StatusCode::NOT_FOUND, "not_found", "GET /api/v1/dead-letters/x");
    before.assert_unchanged(&app, "fuzzed paths").await;
    assert_alive(&app).await;
}

#[actix_web::test]
async fn nul_characters_in_text_fields_are_refused_not_a_server_error() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, lease) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let agent_cases = [
        (TODOS.to_owned(), json!({"queue": "q", "title": "a\u{0}b"})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "kind": "k\u{0}"})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "idempotency_key": "\u{0}"})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "payload": {"k": "v\u{0}"}})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "payload": {"k\u{0}": 1}})),
        (todo_path(id, "complete"), json!({"summary": "s\u{0}", "lease_token": lease})),
        (todo_path(id, "complete"), json!({"result": "\u{0}", "lease_token": lease})),
        (todo_path(id, "fail"), json!({"summary": "\u{0}", "lease_token": lease})),
        (todo_path(id, "release"), json!({"summary": "\u{0}", "lease_token": lease})),
    ];
    for (path, body) in &agent_cases {
        let got = app.post(path, &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
    }
    let got = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({"summary": "x\u{0}"})).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "operator fail summary");
    let got = app.post("/api/v1/endpoints", &o.token, json!({"slug": "ok", "owner": "team:a\u{0}"})).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "vend owner");
    let got = app.get(&format!("{TODOS}?queue=a%00b"), &ep.token).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "list queue");
    let got = app.get("/api/v1/dead-letters?q=a%00b", &o.token).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "dead-letter query");
    before.assert_unchanged(&app, "NUL characters").await;
    assert_eq!(state_of(&app, id).await, "claimed");
    assert_alive(&app).await;
    // An escaped backslash followed by "u0000" is ordinary text.
    let raw = br#"{"queue": "q", "title": "a\\u0000b", "payload": {"k": "\\u0000"}}"#.to_vec();
    let (s, b) = app.call_raw("POST", TODOS, Some(&ep.token), JSON, raw).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    assert_eq!(b["title"], "a\\u0000b");
    assert_eq!(b["payload"], json!({"k": "\\u0000"}));
}

#[actix_web::test]
async fn internal_errors_never_leak_detail_in_the_envelope() {
    // No input above produced a 500; this pins the shape one would take, so that a
    // future regression cannot leak a database message to the caller.
    let e = switchboard::error::Error::internal("database: relation \"todos\" secret detail");
    let resp = actix_web::ResponseError::error_response(&e);
    assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = actix_web::body::to_bytes(resp.into_body()).await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body, json!({"error": {"code": "internal", "message": "internal error"}}));
}
