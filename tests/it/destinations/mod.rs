//! Connections bound to their destination (issue 37): a connection's secret goes only to
//! the destination a human admin bound it to. An agent with `notifications`, or another
//! admin of the team, can pair sinks with connections but never send a secret anywhere
//! else; an agent cannot widen what leaves (no payload excerpts); an upgrade binds the
//! connections an earlier release stored only where no agent can have steered them, and
//! holds the rest; fingerprints are keyed. Every sink is a real receiver on loopback:
//! the attacker's receiver records what it would have been sent.

mod agents;
mod team_admins;
mod upgrade;

use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};

use crate::harness::{Ep, Owner, TestApp};
use testkit::receiver::Receiver;

/// The vault key these tests run with.
const KEY: SecretKey = SecretKey([5; 32]);

/// The owner's Gotify application token: must never reach anything but the owner's
/// receiver.
const SECRET: &str = "owner-gotify-token-XyZ123";

/// A vault key, loopback sinks over plain http, a worker that polls often.
fn settings(s: &mut Settings) {
    s.secret_encryption_key = Some(KEY);
    s.push_allow_http = true;
    s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    s.outbox_poll_ms = 50;
}

async fn spawn() -> TestApp {
    TestApp::spawn_with(settings).await
}

/// A gotify connection of `o` holding `secret`, bound to `rx`; the answer.
async fn connection(app: &TestApp, o: &Owner, name: &str, secret: &str, rx: &Receiver) -> Value {
    let body = json!({"name": name, "kind": "gotify", "secret": secret, "base_url": rx.base()});
    let (s, b) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["bound"], true, "{b}");
    b
}

/// An endpoint of `o` that drains, creates todos and holds `extra`.
async fn agent(app: &TestApp, o: &Owner, slug: &str, extra: &[Verb]) -> Ep {
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.push(Verb::CreateTodo);
    grants.extend_from_slice(extra);
    app.endpoint(o.scope, slug, &grants).await
}

/// Creates a one-attempt todo on `ep` carrying `payload`, claims it and fails it.
async fn dead_letter(app: &TestApp, ep: &Ep, title: &str, payload: Value) {
    let body = json!({"queue": "inbox", "title": title, "max_attempts": 1, "payload": payload});
    let (s, created) = app.post("/api/v1/agent/todos", &ep.token, body).await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "broke"})).await;
    assert_eq!(s, 200, "{b}");
}

/// The first 12 hex of the bare SHA-256 of `secret`: what an earlier release showed.
fn sha256_prefix(secret: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(secret.as_bytes()))[..12].to_owned()
}

/// Asserts that nothing `text` carries holds any part of the secret worth having.
fn holds_no_secret(text: &str) {
    assert!(!text.contains(SECRET), "the secret leaked: {text}");
    assert!(!text.contains(&SECRET[..12]), "part of the secret leaked: {text}");
}

/// A sink's `base_url` as answered (shown as a URL, with a trailing slash), without it.
fn shown(sink: &Value) -> &str {
    sink["base_url"].as_str().unwrap_or_default().trim_end_matches('/')
}
