//! The agent's notification verbs (issue 13): `notify_owner`, which pages the
//! endpoint's owner through the owner's subscribed sinks (5 an hour per endpoint,
//! across instances), and the `notifications` family, which manages the owner's sinks
//! by name. Both are off by default and act only in the endpoint's own owner scope.
//! Sinks post to real Gotify-contract receivers on loopback.

mod paging;
mod rate;
mod refused;
mod sinks;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};
use switchboard::domain::ids::SinkId;

use crate::harness::wait::wait_count;
use crate::harness::{Ep, Owner, TestApp};
use testkit::receiver::Receiver;

/// The vault key these tests run with.
const KEY: SecretKey = SecretKey([9; 32]);

/// What the servers of these tests run with: a vault key, loopback sinks over plain
/// http, a worker that polls often.
fn settings(s: &mut Settings) {
    s.secret_encryption_key = Some(KEY);
    s.push_allow_http = true;
    s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    s.outbox_poll_ms = 50;
}

async fn spawn() -> TestApp {
    TestApp::spawn_with(settings).await
}

/// An endpoint of `o` that drains its queues, creates todos and holds `extra`.
async fn agent(app: &TestApp, o: &Owner, slug: &str, extra: &[Verb]) -> Ep {
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.push(Verb::CreateTodo);
    grants.extend_from_slice(extra);
    app.endpoint(o.scope, slug, &grants).await
}

/// A gotify connection of `o` holding `secret`, bound to `base_url`; its id.
async fn connection(app: &TestApp, o: &Owner, name: &str, secret: &str, base_url: &str) -> String {
    let body = json!({"name": name, "kind": "gotify", "secret": secret, "base_url": base_url});
    let (s, b) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_str().unwrap().to_owned()
}

/// A gotify sink of `o` named `name`, posting to `rx`, subscribed as `subscriptions`
/// says (through the operator API); its id.
async fn subscribed_sink(app: &TestApp, o: &Owner, name: &str, rx: &Receiver, subscriptions: Value) -> SinkId {
    let c = connection(app, o, &format!("conn-{name}"), &format!("token-{name}"), &rx.base()).await;
    let body = json!({"name": name, "kind": "gotify", "base_url": rx.base(), "connection_id": c});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let id = sink["id"].as_str().unwrap().to_owned();
    let subs = json!({"subscriptions": subscriptions});
    let (s, b) = app.call("PUT", &format!("/api/v1/sinks/{id}/subscriptions"), Some(&o.token), Some(&subs)).await;
    assert_eq!(s, 200, "{b}");
    id.parse().unwrap()
}

/// `POST /api/v1/agent/notify-owner` as `ep`.
async fn page(app: &TestApp, ep: &Ep, body: Value) -> (StatusCode, Value) {
    app.post("/api/v1/agent/notify-owner", &ep.token, body).await
}
