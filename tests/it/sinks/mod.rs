//! Notification sinks over HTTP: the connection vault (sealed, write-only), sinks and
//! their subscriptions, and every refusal changing nothing.

mod apprise_policy;
mod claims;
mod config;
mod crash;
mod defaults;
mod instances;
pub(crate) mod logs;
mod outbox;
mod test_send;
mod wake;

use serde_json::{Value, json};
use switchboard::config::SecretKey;

use crate::harness::wait::wait_count;
use crate::harness::{Owner, TestApp};

/// The vault key the sink tests run with.
const KEY: SecretKey = SecretKey([7; 32]);

/// A public address written as a literal: the outbound guard accepts it without DNS.
const GOTIFY_URL: &str = "https://203.0.113.10";

/// The app with a vault key, after `adjust`.
async fn spawn_with(adjust: impl FnOnce(&mut switchboard::config::Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(KEY);
        adjust(s);
    })
    .await
}

/// The app with a vault key.
async fn spawn() -> TestApp {
    spawn_with(|_| {}).await
}

/// Stores a connection for `owner` bound to `GOTIFY_URL` (where [`gotify_sink`] posts),
/// asserting it was created; answers it.
async fn connection(app: &TestApp, owner: &Owner, name: &str, kind: &str, secret: &str) -> Value {
    connection_at(app, owner, name, kind, secret, GOTIFY_URL).await
}

/// Stores a connection for `owner` bound to `base_url`, asserting it was created; answers it.
async fn connection_at(app: &TestApp, owner: &Owner, name: &str, kind: &str, secret: &str, base_url: &str) -> Value {
    let body = json!({"name": name, "kind": kind, "secret": secret, "base_url": base_url});
    let (s, b) = app.post("/api/v1/connections", &owner.token, body).await;
    assert_eq!(s, 201, "{b}");
    b
}

/// Adds a Gotify sink for `owner` with `connection`; answers it.
async fn gotify_sink(app: &TestApp, owner: &Owner, name: &str, connection: &Value) -> Value {
    let body = json!({"name": name, "kind": "gotify", "base_url": GOTIFY_URL, "connection_id": connection["id"]});
    let (s, b) = app.post("/api/v1/sinks", &owner.token, body).await;
    assert_eq!(s, 201, "{b}");
    b
}
