//! The notify-hook channel end to end (issue 4): the real server delivers `todo.ready`
//! and `todo.dead_lettered` to real receivers on loopback, which record what arrives.
//!
//! The guard refuses loopback unless allowlisted, so every app here allows plain http
//! and `127.0.0.1/32` (except where a test is about exactly that). Todos that may ring
//! come through intake (a `generic` webhook trusts its token), since an agent-made
//! todo never passes the sender gate.
//!
//! The receivers are testkit's ([`testkit::receiver::Receiver`]).
//!
//! Waiting: positive cases poll the receiver until a deadline. A case that must stay
//! silent first makes something that does fire after it (a control), waits for that,
//! then waits until no notification is under way (`quiet`): no wall-clock guess.

mod doorbells;
mod firing;
mod flood;
mod guard;
mod isolation;
mod killswitch;
mod matching;
mod metrics;
mod restart;
mod self_target;
mod signing;
mod startup;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::domain::ids::{HookId, TodoId};

use switchboard::db::listen::LISTENER_SESSION_NAME as HOOK_LISTENER_NAME;

use crate::harness::wait::{
    DEADLINE, wait_count_at_least, wait_count_within, wait_for_listener, wait_metric, wait_until,
};
use crate::harness::{Ep, Owner, TestApp};

/// The instance key the notify tests run with (hook secrets are sealed with it).
const KEY: SecretKey = SecretKey([9; 32]);

/// The bearer for `/metrics`.
const METRICS_TOKEN: &str = "notify-tests-metrics-token-0123456789abcdef";

/// What the notify tests need on top of the test settings: a vault key, plain http,
/// loopback allowlisted, a metrics token.
pub(crate) fn notify_settings(s: &mut Settings) {
    s.secret_encryption_key = Some(KEY);
    s.push_allow_http = true;
    s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    s.metrics_token = Some(METRICS_TOKEN.into());
}

/// The app as the notify tests run it.
async fn spawn() -> TestApp {
    spawn_with(|_| {}).await
}

/// The app as the notify tests run it, after `adjust`.
pub(crate) async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        notify_settings(s);
        adjust(s);
    })
    .await
}

/// The app, an owner and their endpoint `worker`.
async fn with_worker() -> (TestApp, Owner, Ep) {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, owner, ep)
}

/// A hook as created: its id and the secret shown once.
pub(crate) struct Hook {
    pub(crate) id: HookId,
    pub(crate) secret: String,
}

/// Creates a hook on `ep` through the operator route.
pub(crate) async fn hook(app: &TestApp, owner: &Owner, ep: &Ep, url: &str, queues: &[&str]) -> Hook {
    let (s, b) = app
        .post(&format!("/api/v1/endpoints/{}/hooks", ep.id), &owner.token, json!({"url": url, "queues": queues}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    Hook { id: b["id"].as_str().unwrap().parse().unwrap(), secret: b["signing_secret"].as_str().unwrap().to_owned() }
}

/// The hook as listed (health included).
async fn listed_hook(app: &TestApp, owner: &Owner, ep: &Ep, id: HookId) -> Value {
    let (s, b) = app.get(&format!("/api/v1/endpoints/{}/hooks", ep.id), &owner.token).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b["hooks"].as_array().unwrap().iter().find(|h| h["id"] == id.to_string()).cloned().expect("hook listed")
}

/// Waits until the hook's health records a finished delivery (`last_attempt_at` set);
/// returns the listed hook.
async fn finished_hook(app: &TestApp, owner: &Owner, ep: &Ep, id: HookId) -> Value {
    wait_until(format!("a finished delivery to hook {id}"), DEADLINE, async || {
        let h = listed_hook(app, owner, ep, id).await;
        if h["health"]["last_attempt_at"].is_string() { Ok(h) } else { Err(h.to_string()) }
    })
    .await
}

/// An ingest URL path of a webhook.
pub(crate) struct Intake {
    path: String,
}

/// Creates a webhook (operator route) on `ep`; extra fields in `extra`.
async fn webhook(app: &TestApp, owner: &Owner, ep: &Ep, extra: Value) -> (Intake, Value) {
    let mut body = extra;
    body["endpoint_id"] = json!(ep.id.to_string());
    let (s, w) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(s, 201, "{w}");
    let url = w["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    (Intake { path }, w)
}

/// A `generic` webhook (token trust: its todos pass the sender gate) routing to `queue`
/// with an attempt cap of `max_attempts`.
pub(crate) async fn generic(app: &TestApp, owner: &Owner, ep: &Ep, queue: &str, max_attempts: i32) -> Intake {
    webhook(app, owner, ep, json!({"source_type": "generic", "queue": queue, "max_attempts": max_attempts})).await.0
}

impl Intake {
    /// Posts a delivery with `headers`; returns the status and answer.
    async fn post(&self, app: &TestApp, headers: &[(&str, String)], body: &[u8]) -> (u16, Value) {
        let mut req =
            app.client.post(format!("{}{}", app.base, self.path)).insert_header(("content-type", "application/json"));
        for (k, v) in headers {
            req = req.insert_header((*k, v.as_str()));
        }
        let mut resp = req.send_body(body.to_vec()).await.unwrap();
        let bytes = resp.body().limit(1 << 20).await.unwrap();
        (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Delivers one generic event (`X-Event: event`) with `payload`; returns the one todo
    /// it became.
    pub(crate) async fn deliver(&self, app: &TestApp, event: &str, payload: Value) -> TodoId {
        let headers = [("X-Event", event.to_owned()), ("X-Delivery-Id", TodoId::new().to_string())];
        let (s, answer) = self.post(app, &headers, payload.to_string().as_bytes()).await;
        routed_todo(s, &answer)
    }
}

/// The one todo a routed delivery became.
fn routed_todo(status: u16, answer: &Value) -> TodoId {
    assert_eq!(status, 202, "{answer}");
    assert_eq!(answer["disposition"], "routed", "{answer}");
    let todos = answer["todos"].as_array().unwrap();
    assert_eq!(todos.len(), 1, "{answer}");
    todos[0].as_str().unwrap().parse().unwrap()
}

/// Claims a todo by id.
async fn claim(app: &TestApp, ep: &Ep, id: TodoId) {
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}

/// The agent fails a claimed todo; returns the answer.
async fn agent_fail(app: &TestApp, ep: &Ep, id: TodoId, body: Value) -> Value {
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, body).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    b
}

/// Claims and fails a todo at its cap (the caller made sure it is the last attempt).
async fn fail_to_dead_letter(app: &TestApp, ep: &Ep, id: TodoId) {
    claim(app, ep, id).await;
    let row = agent_fail(app, ep, id, json!({"summary": "no luck"})).await;
    assert_eq!(row["dead_letter"], true, "{row}");
}

/// The value of one metrics series (`name{labels}`), read from `GET /metrics`.
async fn metric(app: &TestApp, series: &str) -> u64 {
    app.metric(METRICS_TOKEN, series).await
}

/// `switchboard_notify_hook_notifications_total` for one type and outcome.
fn notifications(kind: &str, outcome: &str) -> String {
    format!(r#"switchboard_notify_hook_notifications_total{{type="{kind}",outcome="{outcome}"}}"#)
}

/// `switchboard_notify_hook_attempts_total` for one result.
fn attempts(result: &str) -> String {
    format!(r#"switchboard_notify_hook_attempts_total{{result="{result}"}}"#)
}

/// Waits until no notification is under way (none waiting for a lookup, queued at a
/// supervisor or being delivered). Called once a control notification has arrived:
/// the dispatcher takes signals in commit order, so anything committed before the
/// control was taken before it, and has ended by now (ringing, or not).
async fn quiet(app: &TestApp) {
    wait_metric(app, METRICS_TOKEN, IN_FLIGHT, 0).await;
}

/// The gauge of notifications under way.
const IN_FLIGHT: &str = "switchboard_notify_hook_notifications_in_flight";

/// The count of hook change notices this instance's listener applied.
const CHANGE_NOTICES: &str = "switchboard_notify_hook_change_notices_total";

/// 1 while this instance's listener session follows hook changes.
const LISTENING: &str = r#"switchboard_change_listener_listening{listener="hooks"}"#;

/// Waits until the hook change listener is listening (its session idle after naming
/// itself, which it does only once its LISTEN is in place, or after a ping since):
/// changes committed after this are noticed.
async fn wait_until_listening(app: &TestApp) {
    let sql = format!(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{HOOK_LISTENER_NAME}' \
         AND datname = current_database() AND state = 'idle' AND (query LIKE '%set_config%' OR query LIKE '%pg_notify%')"
    );
    wait_count_at_least(&app.db, &sql, 1, DEADLINE).await;
}

/// The sorted keys of a JSON object.
fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> =
        v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().map(String::as_str).collect();
    k.sort_unstable();
    k
}
