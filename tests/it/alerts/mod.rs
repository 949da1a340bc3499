//! The metrics the alert rules (`deploy/prometheus/alerts.yml`) read: every series an
//! alert names exists on a running server's `/metrics`, and each counter added for them
//! counts what it says (dead letters by reason and those that reached no one, answers
//! by surface and status class, MCP requests for an unknown session, digest runs).

mod answers;
mod dead_letters;
mod digests;
mod series;

use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey, Settings};

use crate::harness::{Owner, TestApp};
use testkit::receiver::Receiver;

/// The bearer for `/metrics`.
const METRICS_TOKEN: &str = "alerts-tests-metrics-token-0123456789abcdef";

/// The vault key (sink connections are sealed with it).
const KEY: SecretKey = SecretKey([11; 32]);

/// A metrics token, a vault key, loopback receivers allowed, an outbox that polls and
/// retries fast (three attempts), then `adjust`.
async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        s.metrics_token = Some(METRICS_TOKEN.into());
        s.secret_encryption_key = Some(KEY);
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        s.outbox_poll_ms = 50;
        s.outbox_retry_base_ms = 50;
        s.outbox_max_attempts = 3;
        adjust(s);
    })
    .await
}

/// `app`'s `/metrics` text.
async fn scrape(app: &TestApp) -> String {
    app.metrics_text(METRICS_TOKEN).await
}

/// The value of `series` (`name{labels}` as exposed) in `text`; panics when absent.
fn value(text: &str, series: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

/// A Gotify sink of `o` posting to `rx`, with the default subscription (dead letters).
async fn sink_to(app: &TestApp, o: &Owner, rx: &Receiver) {
    let body =
        json!({"name": format!("c-{}", rx.port()), "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{c}");
    let body =
        json!({"name": format!("s-{}", rx.port()), "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
}

/// An agent-made todo of `ep` on `queue` with one attempt, claimed and failed: a dead
/// letter (`attempts_exhausted`) that rings no hook (an agent's todo never passes the
/// sender gate). Its id.
async fn dead_letter(app: &TestApp, ep: &crate::harness::Ep, queue: &str) -> String {
    let (s, created) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": queue, "title": "t", "max_attempts": 1})).await;
    assert_eq!(s, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    claim_and_fail(app, ep, &id).await;
    id
}

/// Claims todo `id` and fails it at its last attempt.
async fn claim_and_fail(app: &TestApp, ep: &crate::harness::Ep, id: &str) {
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, 200, "{b}");
    let (s, b): (_, Value) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "no luck"})).await;
    assert_eq!((s.as_u16(), &b["dead_letter"]), (200, &json!(true)), "{b}");
}
