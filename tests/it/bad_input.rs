//! Bad input on every route: each refusal is the SPEC error envelope
//! `{"error": {"code", "message"}}` with the right status, a refused request writes and
//! announces nothing, and no input at all produces a 500 or takes the server down.

use std::io::{Read, Write};
use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::TodoId;
use switchboard::domain::todo_state::TeamRole;

use crate::harness::{Ep, TestApp};

const TODOS: &str = "/api/v1/agent/todos";
const CLAIM_NEXT: &str = "/api/v1/agent/todos/claim-next";
const JSON: &str = "application/json";

/// Every table the service writes, hashed row by row: equal digests mean nothing changed.
const TABLES: &[&str] = &[
    "humans",
    "teams",
    "owner_scopes",
    "team_members",
    "operator_tokens",
    "endpoints",
    "events",
    "todos",
    "todo_attempts",
];

fn todo_path(id: impl std::fmt::Display, verb: &str) -> String {
    format!("{TODOS}/{id}/{verb}")
}

/// Asserts `body` is exactly the error envelope: one `error` object holding a string
/// `code` and a non-empty string `message`, nothing else.
#[track_caller]
fn assert_envelope(body: &Value, what: &str) {
    let outer = body.as_object().unwrap_or_else(|| panic!("{what}: not a JSON object: {body}"));
    assert_eq!(outer.len(), 1, "{what}: the envelope holds only `error`: {body}");
    let inner = body["error"].as_object().unwrap_or_else(|| panic!("{what}: `error` is not an object: {body}"));
    assert_eq!(inner.len(), 2, "{what}: `error` holds only `code` and `message`: {body}");
    assert!(inner["code"].is_string(), "{what}: {body}");
    assert!(inner["message"].as_str().is_some_and(|m| !m.is_empty()), "{what}: {body}");
}

/// Asserts an answer is the envelope with `status` and `code`.
#[track_caller]
fn expect_error(got: &(StatusCode, Value), status: StatusCode, code: &str, what: &str) {
    let (s, body) = got;
    assert_eq!(*s, status, "{what}: {body}");
    assert_envelope(body, what);
    assert_eq!(body["error"]["code"], code, "{what}: {body}");
}

/// Asserts a fuzz answer is a client error (never 5xx) in the envelope.
#[track_caller]
fn expect_client_error(got: &(StatusCode, Value), what: &str) {
    let (s, body) = got;
    assert!(s.is_client_error(), "{what}: answered {s}: {body}");
    assert_envelope(body, what);
}

/// What the database holds and what was announced, to prove a refusal changed nothing.
struct Snapshot(i64);

impl Snapshot {
    /// Forgets the signals of the set-up, then digests every table.
    async fn take(app: &TestApp) -> Snapshot {
        app.signals.take().await;
        Snapshot(digest(app).await)
    }

    /// Asserts no row changed and no signal was emitted since the snapshot.
    async fn assert_unchanged(&self, app: &TestApp, what: &str) {
        assert_eq!(digest(app).await, self.0, "{what}: the database changed");
        let signals = app.signals.take().await;
        assert!(signals.is_empty(), "{what}: announced {signals:?}");
    }
}

async fn digest(app: &TestApp) -> i64 {
    let parts: Vec<String> = TABLES
        .iter()
        .map(|t| format!("(SELECT coalesce(string_agg(x::text, '|' ORDER BY x::text), '') FROM {t} x)"))
        .collect();
    app.db.count(&format!("SELECT hashtextextended({}, 0)", parts.join(" || '#' || "))).await
}

/// The server still answers its liveness probe.
async fn assert_alive(app: &TestApp) {
    let (s, b) = app.call("GET", "/healthz", None, None).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

/// A claimed todo and its lease token.
async fn claimed(app: &TestApp, ep: &Ep) -> (TodoId, String) {
    let id = app.create_todo(ep, "q", "t").await;
    let (s, c) = app.post(&todo_path(id, "claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    (id, c["lease_token"].as_str().unwrap().to_owned())
}

/// An interrupted todo and its lease token.
async fn interrupted(app: &TestApp, ep: &Ep) -> (TodoId, String) {
    let (id, lease) = claimed(app, ep).await;
    let (s, b) = app.post(&todo_path(id, "interrupt"), &ep.token, json!({"state": "input_required"})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    (id, lease)
}

/// A todo's state as the database holds it.
async fn state_of(app: &TestApp, id: TodoId) -> &'static str {
    const STATES: [&str; 7] = ["pending", "claimed", "input_required", "auth_required", "done", "failed", "canceled"];
    // `count` reads one i64, so the state comes back as its position in STATES.
    let sql = format!(
        "SELECT array_position(ARRAY['{}'], state)::bigint FROM todos WHERE id = '{}'",
        STATES.join("','"),
        id.0
    );
    STATES[app.db.count(&sql).await as usize - 1]
}

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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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

// ---------------------------------------------------------------------------------
// 404: unknown, malformed and out-of-reach ids; unknown routes
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn unknown_and_malformed_todo_ids_are_not_found_and_change_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let paths = [
        "/",
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

// ---------------------------------------------------------------------------------
// 401: no credential, or one that does not authenticate on this route
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn missing_garbage_and_wrong_kind_tokens_are_unauthenticated_and_change_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let long = format!("sbk_{}", "a".repeat(400));
    let agent_routes = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "t"}))),
        ("POST", CLAIM_NEXT.to_owned(), Some(json!({}))),
        ("GET", format!("{TODOS}/{id}"), None),
        ("POST", todo_path(id, "claim"), Some(json!({}))),
        ("POST", todo_path(id, "heartbeat"), Some(json!({}))),
        ("POST", todo_path(id, "complete"), Some(json!({}))),
        ("POST", todo_path(id, "fail"), Some(json!({}))),
        ("POST", todo_path(id, "release"), Some(json!({}))),
        ("POST", todo_path(id, "interrupt"), Some(json!({"state": "input_required"}))),
        ("POST", todo_path(id, "resume"), Some(json!({}))),
        ("POST", "/api/v1/agent/presence/clock-in".to_owned(), None),
        ("POST", "/api/v1/agent/presence/clock-out".to_owned(), None),
    ];
    let operator_routes = [
        ("GET", "/api/v1/endpoints".to_owned(), None),
        ("POST", "/api/v1/endpoints".to_owned(), Some(json!({"slug": "new"}))),
        ("POST", format!("/api/v1/endpoints/{}/revoke", ep.id), None),
        ("GET", format!("/api/v1/todos/{id}"), None),
        ("POST", format!("/api/v1/todos/{id}/fail"), Some(json!({}))),
        ("POST", format!("/api/v1/todos/{id}/retry"), Some(json!({}))),
        ("GET", "/api/v1/dead-letters".to_owned(), None),
    ];
    let garbage = ["", "garbage", "sbk_", "sbo_", "sbk_doesnotexist", "sbo_doesnotexist", long.as_str(), "Bearer"];
    for (routes, wrong_kind) in [(&agent_routes[..], o.token.as_str()), (&operator_routes[..], ep.token.as_str())] {
        for (method, path, body) in routes.iter() {
            let what = format!("{method} {path}");
            let got = app.call(method, path, None, body.as_ref()).await;
            expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{what} without a token"));
            for token in garbage.iter().chain([&wrong_kind]) {
                let got = app.call(method, path, Some(token), body.as_ref()).await;
                expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{what} with {token:?}"));
            }
        }
    }
    // Not a bearer scheme, or a token with trailing junk.
    for header in [
        format!("Basic {}", ep.token),
        format!("Token {}", ep.token),
        ep.token.clone(),
        format!("Bearer {}x", ep.token),
    ] {
        let mut resp = app
            .client
            .get(format!("{}{TODOS}", app.base))
            .insert_header(("Authorization", header.clone()))
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap_or(Value::Null);
        expect_error(&(resp.status(), body), StatusCode::UNAUTHORIZED, "unauthenticated", &header);
        assert_eq!(resp.headers().get("www-authenticate").and_then(|v| v.to_str().ok()), Some("Bearer"));
    }
    // A header that is not even text.
    let mut resp = app
        .client
        .get(format!("{}{TODOS}", app.base))
        .insert_header(("Authorization", awc::http::header::HeaderValue::from_bytes(b"Bearer sbk_\xff\xfe").unwrap()))
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap_or(Value::Null);
    expect_error(&(resp.status(), body), StatusCode::UNAUTHORIZED, "unauthenticated", "non-UTF-8 header");
    before.assert_unchanged(&app, "unauthenticated calls").await;
}

#[actix_web::test]
async fn a_revoked_endpoint_token_is_unauthenticated_and_changes_nothing_more() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let pending = app.create_todo(&ep, "q", "t").await;
    // Use the token once so that any cache holds it.
    let (s, _) = app.get(TODOS, &ep.token).await;
    assert_eq!(s, StatusCode::OK);
    let (s, r) = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&o.token), None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["dead_lettered"], 1);
    let before = Snapshot::take(&app).await;
    let calls = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "t"}))),
        ("POST", CLAIM_NEXT.to_owned(), Some(json!({}))),
        ("GET", format!("{TODOS}/{pending}"), None),
        ("POST", todo_path(pending, "claim"), Some(json!({}))),
        ("POST", "/api/v1/agent/presence/clock-in".to_owned(), None),
    ];
    for (method, path, body) in &calls {
        let got = app.call(method, path, Some(&ep.token), body.as_ref()).await;
        expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{method} {path}"));
    }
    // Revoking twice is a conflict, not a second cascade.
    let got = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&o.token), None).await;
    expect_error(&got, StatusCode::CONFLICT, "conflict", "second revocation");
    before.assert_unchanged(&app, "revoked token").await;
}

#[actix_web::test]
async fn expired_endpoints_and_revoked_operator_tokens_are_unauthenticated() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    app.db
        .exec(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{}'", ep.id.0))
        .await;
    let before = Snapshot::take(&app).await;
    let got = app.post(TODOS, &ep.token, json!({"queue": "q", "title": "t"})).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "expired endpoint");
    before.assert_unchanged(&app, "expired endpoint").await;
    app.db.exec(&format!("UPDATE operator_tokens SET revoked_at = now() WHERE human_id = '{}'", o.id.0)).await;
    let before_revoked = Snapshot::take(&app).await;
    let got = app.post("/api/v1/endpoints", &o.token, json!({"slug": "new"})).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "revoked operator token");
    before_revoked.assert_unchanged(&app, "revoked operator token").await;
}

// ---------------------------------------------------------------------------------
// 403: a verb the endpoint was not granted
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_verb_outside_the_endpoints_grants_is_forbidden_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let narrow = app.endpoint(o.scope, "narrow", &[Verb::ClaimNext]).await;
    // The narrow endpoint may not create work, so its todo comes through the store.
    let id: TodoId = app
        .store
        .create_todo(switchboard::store::todos::NewTodo {
            endpoint_id: narrow.id,
            queue: "q".into(),
            title: "t".into(),
            kind: None,
            source: None,
            payload: None,
            idempotency_key: None,
            max_attempts: None,
            event_id: None,
        })
        .await
        .unwrap()
        .todo
        .id;
    let c = app.claim_next(&narrow).await;
    assert_eq!(c["todo"]["id"], id.to_string());
    let lease = c["lease_token"].as_str().unwrap().to_owned();
    let before = Snapshot::take(&app).await;
    let calls = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "sneaky"}))),
        ("GET", format!("{TODOS}/{id}"), None),
        ("POST", todo_path(id, "claim"), Some(json!({}))),
        ("POST", todo_path(id, "heartbeat"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "complete"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "fail"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "release"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "interrupt"), Some(json!({"state": "input_required", "lease_token": lease}))),
        ("POST", todo_path(id, "resume"), Some(json!({"lease_token": lease}))),
    ];
    for (method, path, body) in &calls {
        let got = app.call(method, path, Some(&narrow.token), body.as_ref()).await;
        expect_error(&got, StatusCode::FORBIDDEN, "forbidden", &format!("{method} {path}"));
    }
    // The grant is checked before the id: an unknown id is still forbidden, so a
    // narrow token learns nothing about which ids exist.
    let got = app.post(&todo_path(TodoId::new(), "complete"), &narrow.token, json!({})).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "complete an unknown id");
    before.assert_unchanged(&app, "missing grants").await;
    assert_eq!(state_of(&app, id).await, "claimed");
}

// ---------------------------------------------------------------------------------
// 409: lease-token mismatches and transitions the state does not allow
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_lease_token_mismatch_is_a_conflict_on_every_verb_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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

// ---------------------------------------------------------------------------------
// 422: values out of range or of the wrong form
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn invalid_artifacts_are_invalid_argument_and_leave_the_attempt_open() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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

// ---------------------------------------------------------------------------------
// The operator API
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn vending_with_a_bad_slug_grant_lease_owner_or_expiry_is_invalid_argument_and_vends_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let before = Snapshot::take(&app).await;
    let bodies = [
        json!({"slug": "Bad Slug"}),
        json!({"slug": ""}),
        json!({"slug": "-leading-dash"}),
        json!({"slug": "_leading"}),
        json!({"slug": "has.dot"}),
        json!({"slug": "UPPER"}),
        json!({"slug": "s".repeat(64)}),
        json!({"slug": "ok", "grants": ["claim_next", "launch_missiles"]}),
        json!({"slug": "ok", "grants": ["ClaimNext"]}),
        json!({"slug": "ok", "grants": [null]}),
        json!({"slug": "ok", "default_lease_seconds": 59}),
        json!({"slug": "ok", "default_lease_seconds": 86_401}),
        json!({"slug": "ok", "default_lease_seconds": 0}),
        json!({"slug": "ok", "owner": "nobody"}),
        json!({"slug": "ok", "owner": "team:"}),
        json!({"slug": "ok", "owner": "team:ghosts"}),
        json!({"slug": "ok", "owner": "ghost@example.com"}),
        json!({"slug": "ok", "expires_at": "2026-02-30T00:00:00Z"}),
        json!({"slug": "ok", "expires_at": "-262143-01-01T00:00:00Z"}),
        json!({"slug": "ok", "expires_at": "+262142-12-31T23:59:59Z"}),
    ];
    for body in &bodies {
        let got = app.post("/api/v1/endpoints", &o.token, body.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &body.to_string());
    }
    before.assert_unchanged(&app, "invalid vends").await;
}

#[actix_web::test]
async fn vending_a_duplicate_slug_is_a_conflict_and_vends_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let other = app.owner("b@example.com").await;
    let mine = app.agent(o.scope, "taken").await;
    app.agent(other.scope, "theirs").await;
    let before = Snapshot::take(&app).await;
    for (token, slug) in [(&o.token, "taken"), (&o.token, "theirs"), (&other.token, "taken")] {
        let got = app.post("/api/v1/endpoints", token, json!({"slug": slug})).await;
        expect_error(&got, StatusCode::CONFLICT, "conflict", &format!("duplicate {slug}"));
    }
    before.assert_unchanged(&app, "duplicate slugs").await;
    // The existing endpoint keeps its token.
    let (s, _) = app.get(TODOS, &mine.token).await;
    assert_eq!(s, StatusCode::OK);
}

#[actix_web::test]
async fn vending_for_a_team_or_human_the_caller_does_not_administer_is_invalid_argument() {
    let app = TestApp::spawn().await;
    let me = app.owner("a@example.com").await;
    app.owner("boss@example.com").await;
    app.store.create_team("strangers", "boss@example.com").await.unwrap();
    let (members_only, _, _) = app.store.create_team("members", "boss@example.com").await.unwrap();
    app.store.add_team_member(members_only, me.id, TeamRole::Member).await.unwrap();
    let before = Snapshot::take(&app).await;
    let reference =
        app.post("/api/v1/endpoints", &me.token, json!({"slug": "x", "owner": "team:does-not-exist"})).await;
    expect_error(&reference, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", "unknown team");
    for owner in ["team:strangers", "team:STRANGERS", "team:members", "boss@example.com"] {
        let got = app.post("/api/v1/endpoints", &me.token, json!({"slug": "x", "owner": owner})).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", owner);
        assert_eq!(got.1, reference.1, "{owner}: a foreign owner answers like an unknown one");
    }
    before.assert_unchanged(&app, "foreign owners").await;
}

#[actix_web::test]
async fn dead_letter_listing_limits_out_of_range_are_invalid_argument() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    for query in
        ["?limit=0", "?limit=501", "?limit=-3", "?limit=99999999999999999999", &format!("?q={}", "x".repeat(201))]
    {
        let got = app.get(&format!("/api/v1/dead-letters{query}"), &o.token).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", query);
    }
    let (s, b) = app.get("/api/v1/dead-letters?limit=500", &o.token).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

#[actix_web::test]
async fn a_team_member_who_is_not_an_admin_may_not_revoke_the_teams_endpoints() {
    let app = TestApp::spawn().await;
    let member = app.owner("m@example.com").await;
    app.owner("boss@example.com").await;
    let (team, _, scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(scope, "crew-worker").await;
    app.create_todo(&ep, "q", "t").await;
    let before = Snapshot::take(&app).await;
    let got = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&member.token), None).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "member revokes");
    before.assert_unchanged(&app, "member revocation").await;
    let (s, _) = app.get(TODOS, &ep.token).await;
    assert_eq!(s, StatusCode::OK);
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    // A method a path does not take is an unknown route: the 404 envelope.
    for (method, path) in [
        ("DELETE", TODOS.to_owned()),
        ("PUT", format!("{TODOS}/{id}")),
        ("GET", todo_path(id, "complete")),
        ("PATCH", "/api/v1/endpoints".to_owned()),
        ("GET", "/api/v1/dead-letters/x".to_owned()),
        ("POST", "/healthz".to_owned()),
    ] {
        let got = app.call(method, &path, Some(&ep.token), None).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{method} {path}"));
    }
    before.assert_unchanged(&app, "fuzzed paths").await;
    assert_alive(&app).await;
}

#[actix_web::test]
async fn nul_characters_in_text_fields_are_refused_not_a_server_error() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
    let e = switchboard::error::Error::Internal("database: relation \"todos\" secret detail".into());
    let resp = actix_web::ResponseError::error_response(&e);
    assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = actix_web::body::to_bytes(resp.into_body()).await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body, json!({"error": {"code": "internal", "message": "internal error"}}));
}
