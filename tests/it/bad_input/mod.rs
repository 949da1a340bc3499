//! Bad input on every route: each refusal is the SPEC error envelope
//! `{"error": {"code", "message"}}` with the right status, a refused request writes and
//! announces nothing, and no input at all produces a 500 or takes the server down.

mod auth;
mod bodies;
mod credentials;
mod fuzz;
mod hooks;
mod ids;
mod intake;
mod methods;
mod names;
mod operator;
mod ranges;
mod transitions;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::ids::TodoId;

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
    "notify_hooks",
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
