//! Bodies that are not the JSON the route takes (422) or are too large (413).

use std::io::{Read, Write};
use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};

use super::{CLAIM_NEXT, JSON, Snapshot, TODOS, assert_alive, claimed, expect_error, state_of, todo_path};
use crate::harness::TestApp;

/// Sends a raw HTTP/1.1 request over TCP (for headers a client library will not lie in)
/// and returns the status and JSON body of the answer.
async fn raw_http(app: &TestApp, head: String, body: Vec<u8>) -> (StatusCode, Value) {
    let addr = app.base.strip_prefix("http://").unwrap().to_owned();
    actix_rt::task::spawn_blocking(move || {
        let mut sock = std::net::TcpStream::connect(addr).expect("connect");
        sock.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        sock.write_all(head.as_bytes()).expect("write head");
        // The server may answer (and close) before reading the body; that is the point.
        let _ = sock.write_all(&body);
        let mut answer = Vec::new();
        let _ = sock.read_to_end(&mut answer);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status_line = text.lines().next().unwrap_or_else(|| panic!("no answer at all"));
        let code: u16 = status_line
            .split(' ')
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        let json = serde_json::Deserializer::from_str(body)
            .into_iter::<Value>()
            .next()
            .and_then(Result::ok)
            .unwrap_or(Value::Null);
        (StatusCode::from_u16(code).unwrap(), json)
    })
    .await
    .expect("raw request thread")
}

// ---------------------------------------------------------------------------------
// 422: bodies that are not the JSON the route takes
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn malformed_json_is_invalid_argument_and_changes_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let broken: &[&[u8]] =
        &[b"{", b"{\"queue\": \"q\", \"title\": ", b"{queue: 'q'}", b"{\"queue\": \"q\",}", b"nope", b"{\"a\":1}}"];
    let routes = [
        ("POST", TODOS.to_owned()),
        ("POST", CLAIM_NEXT.to_owned()),
        ("POST", todo_path(id, "claim")),
        ("POST", todo_path(id, "heartbeat")),
        ("POST", todo_path(id, "complete")),
        ("POST", todo_path(id, "fail")),
        ("POST", todo_path(id, "release")),
        ("POST", todo_path(id, "interrupt")),
        ("POST", todo_path(id, "resume")),
    ];
    for (method, path) in &routes {
        for body in broken {
            let got = app.call_raw(method, path, Some(&ep.token), JSON, body.to_vec()).await;
            expect_error(
                &got,
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_argument",
                &format!("{path} {:?}", String::from_utf8_lossy(body)),
            );
        }
    }
    for path in
        ["/api/v1/endpoints".to_owned(), format!("/api/v1/todos/{id}/fail"), format!("/api/v1/todos/{id}/retry")]
    {
        let got = app.call_raw("POST", &path, Some(&o.token), JSON, b"{\"slug\": ".to_vec()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &path);
    }
    before.assert_unchanged(&app, "malformed JSON").await;
    assert_eq!(state_of(&app, id).await, "claimed");
}

#[actix_web::test]
async fn wrong_json_types_are_invalid_argument_and_change_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let pending = app.create_todo(&ep, "q", "waiting").await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let cases = [
        (TODOS.to_owned(), json!({"queue": "q", "title": 5})),
        (TODOS.to_owned(), json!({"queue": ["q"], "title": "t"})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "max_attempts": "5"})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "max_attempts": 2.5})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "max_attempts": 4_294_967_296_i64})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "idempotency_key": 7})),
        (TODOS.to_owned(), json!({"queue": "q"})),
        (TODOS.to_owned(), json!({"title": "t"})),
        (TODOS.to_owned(), json!({"queue": null, "title": "t"})),
        (CLAIM_NEXT.to_owned(), json!({"lease_ttl_seconds": "ten"})),
        (CLAIM_NEXT.to_owned(), json!({"lease_ttl_seconds": -1.5})),
        (CLAIM_NEXT.to_owned(), json!({"relay": "yes"})),
        (CLAIM_NEXT.to_owned(), json!({"queue": 1})),
        (CLAIM_NEXT.to_owned(), json!({"claimant": {"name": "w"}})),
        (todo_path(pending, "claim"), json!({"lease_ttl_seconds": "ten"})),
        (todo_path(id, "heartbeat"), json!({"lease_ttl_seconds": "ten"})),
        (todo_path(id, "heartbeat"), json!({"lease_token": 12})),
        (todo_path(id, "complete"), json!({"summary": 1})),
        (todo_path(id, "complete"), json!({"artifact": ["https://x"]})),
        (todo_path(id, "fail"), json!({"lease_token": true})),
        (todo_path(id, "release"), json!({"summary": false})),
        (todo_path(id, "interrupt"), json!({"state": "claimed"})),
        (todo_path(id, "interrupt"), json!({"state": 1})),
        (todo_path(id, "interrupt"), json!({"wait_seconds": 60})),
        (todo_path(id, "interrupt"), json!({"state": "input_required", "wait_seconds": "an hour"})),
        (todo_path(id, "resume"), json!({"lease_ttl_seconds": "ten"})),
    ];
    for (path, body) in &cases {
        let got = app.post(path, &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
    }
    let operator_cases = [
        ("/api/v1/endpoints".to_owned(), json!({"slug": 5})),
        ("/api/v1/endpoints".to_owned(), json!({"slug": "x", "grants": "claim_next"})),
        ("/api/v1/endpoints".to_owned(), json!({"slug": "x", "default_lease_seconds": "600"})),
        ("/api/v1/endpoints".to_owned(), json!({"slug": "x", "expires_at": "tomorrow"})),
        (format!("/api/v1/todos/{id}/fail"), json!({"summary": 1})),
        (format!("/api/v1/todos/{id}/retry"), json!({"summary": []})),
    ];
    for (path, body) in &operator_cases {
        let got = app.post(path, &o.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
    }
    before.assert_unchanged(&app, "wrong types").await;
    assert_eq!(state_of(&app, pending).await, "pending");
    assert_eq!(state_of(&app, id).await, "claimed");
}

#[actix_web::test]
async fn unknown_body_fields_are_invalid_argument_and_change_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let cases = [
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "priority": 1})),
        (TODOS.to_owned(), json!({"queue": "q", "title": "t", "state": "done"})),
        (CLAIM_NEXT.to_owned(), json!({"queues": ["q"]})),
        (todo_path(id, "heartbeat"), json!({"lease_ttl": 60})),
        (todo_path(id, "complete"), json!({"results": {}})),
        (todo_path(id, "fail"), json!({"retry": false})),
        (todo_path(id, "release"), json!({"reason": "x"})),
        (todo_path(id, "interrupt"), json!({"state": "input_required", "wait": 60})),
        (todo_path(id, "resume"), json!({"state": "claimed"})),
    ];
    for (path, body) in &cases {
        let got = app.post(path, &ep.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
    }
    let got = app.post("/api/v1/endpoints", &o.token, json!({"slug": "other", "scope": "everything"})).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "vend with an unknown field");
    let got = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({"force": true})).await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "operator fail with an unknown field");
    before.assert_unchanged(&app, "unknown fields").await;
}

#[actix_web::test]
async fn unknown_query_parameters_and_bad_query_values_are_invalid_argument() {
    let (app, o, ep) = TestApp::with_worker().await;
    for query in ["?page=2", "?limit=ten", "?limit=99999999999999999999", "?state=exploded", "?limit=-1&limit=2"] {
        let got = app.get(&format!("{TODOS}{query}"), &ep.token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", query);
    }
    for query in ["?page=2", "?limit=ten", "?limit=1.5"] {
        let got = app.get(&format!("/api/v1/dead-letters{query}"), &o.token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", query);
    }
}

#[actix_web::test]
async fn a_non_json_content_type_is_invalid_argument_and_changes_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let create = br#"{"queue": "q", "title": "t"}"#.to_vec();
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        "text/json",
    ] {
        let got = app.call_raw("POST", TODOS, Some(&ep.token), ct, create.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("create as {ct}"));
        let got = app.call_raw("POST", &todo_path(id, "complete"), Some(&ep.token), ct, b"{}".to_vec()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("complete as {ct}"));
        let got = app.call_raw("POST", CLAIM_NEXT, Some(&ep.token), ct, b"{}".to_vec()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("claim-next as {ct}"));
        let got = app.call_raw("POST", "/api/v1/endpoints", Some(&o.token), ct, br#"{"slug": "x"}"#.to_vec()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("vend as {ct}"));
    }
    // A form body is refused even when it parses as a form.
    let got = app
        .call_raw("POST", TODOS, Some(&ep.token), "application/x-www-form-urlencoded", b"queue=q&title=t".to_vec())
        .await;
    expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "form body");
    before.assert_unchanged(&app, "non-JSON content type").await;
    // The media type is matched case-insensitively and may carry parameters.
    let (s, b) = app.call_raw("POST", TODOS, Some(&ep.token), "Application/JSON; charset=utf-8", create).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
}

#[actix_web::test]
async fn an_empty_body_where_one_is_required_is_invalid_argument() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    for (path, token) in [
        (TODOS.to_owned(), &ep.token),
        (todo_path(id, "interrupt"), &ep.token),
        ("/api/v1/endpoints".to_owned(), &o.token),
    ] {
        for body in [&b""[..], b"   \n"] {
            let got = app.call_raw("POST", &path, Some(token), JSON, body.to_vec()).await;
            expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &path);
        }
        let got = app.call("POST", &path, Some(token), None).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} without a body"));
    }
    before.assert_unchanged(&app, "empty bodies").await;
}

// ---------------------------------------------------------------------------------
// 413: bodies over 1 MiB
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_body_over_one_mebibyte_is_payload_too_large_and_changes_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let big = "x".repeat(2 * 1024 * 1024);
    let got = app.post(TODOS, &ep.token, json!({"queue": "q", "title": "t", "payload": {"blob": big}})).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "create with a 2 MiB payload");
    let got = app.post(&todo_path(id, "complete"), &ep.token, json!({"result": {"blob": big}})).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "complete with a 2 MiB result");
    let got = app.post(&todo_path(id, "fail"), &ep.token, json!({"summary": big})).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "fail with a 2 MiB summary");
    let got = app.post("/api/v1/endpoints", &o.token, json!({"slug": "x", "pad": big})).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "vend with a 2 MiB body");
    // Just over the limit is over the limit.
    let mut just_over = br#"{"queue": "q", "title": "t", "payload": ""#.to_vec();
    just_over.resize(1024 * 1024 - 1, b'y');
    just_over.extend_from_slice(b"\"}");
    let got = app.call_raw("POST", TODOS, Some(&ep.token), JSON, just_over).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "create with 1 MiB + 1 byte");
    before.assert_unchanged(&app, "oversize bodies").await;
    assert_eq!(state_of(&app, id).await, "claimed");
}

#[actix_web::test]
async fn a_large_declared_content_length_is_refused_before_the_body_is_read() {
    let (app, _, ep) = TestApp::with_worker().await;
    let before = Snapshot::take(&app).await;
    // Declares 10 MiB, sends a few bytes: the answer comes without waiting for the rest.
    let head = format!(
        "POST {TODOS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        ep.token,
        10 * 1024 * 1024
    );
    let got = raw_http(&app, head, br#"{"queue": "q", "title": "t"}"#.to_vec()).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "lying Content-Length");
    // A chunked body with no declared length is cut off once it passes the limit.
    let head = format!(
        "POST {TODOS} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        ep.token
    );
    let mut body = Vec::new();
    let opening = br#"{"queue": "q", "title": "t", "payload": ""#;
    body.extend_from_slice(format!("{:x}\r\n", opening.len()).as_bytes());
    body.extend_from_slice(opening);
    body.extend_from_slice(b"\r\n");
    let chunk = vec![b'z'; 64 * 1024];
    for _ in 0..24 {
        body.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        body.extend_from_slice(&chunk);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"2\r\n\"}\r\n0\r\n\r\n");
    let got = raw_http(&app, head, body).await;
    expect_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", "chunked 1.5 MiB body");
    before.assert_unchanged(&app, "large declared length").await;
    assert_alive(&app).await;
}

#[actix_web::test]
async fn a_payload_with_an_astral_key_and_the_largest_double_is_stored_not_a_server_error() {
    // Found by the conformance fuzzing (schemathesis, stateful phase): this body once
    // answered 500.
    let (app, _o, ep) = TestApp::with_worker().await;
    let body = r#"{"idempotency_key": "k-1", "title": "pending", "max_attempts": 5, "payload": {"\udae4\ude41": -1.7976931348623157e+308}, "queue": "inbox", "kind": null}"#;
    let (s, b) = app.call_raw("POST", TODOS, Some(&ep.token), "application/json", body.as_bytes().to_vec()).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    // And it reads back: the number survives PostgreSQL's 309-digit rendering.
    let (s, got) = app.get(&format!("{TODOS}/{}", b["id"].as_str().unwrap()), &ep.token).await;
    assert_eq!(s, StatusCode::OK, "{got}");
    assert_eq!(got["payload"]["\u{c9241}"], json!(-1.7976931348623157e308), "{got}");
}
