//! Long-poll `claim-next` (`wait_seconds`) over HTTP, on a real database and real
//! servers: a waiting agent gets work made on its own instance or on another, the
//! longest-waiting agent first and one agent per todo, an empty wait answers as an empty
//! claim does when its time is up, the bound answers at once, bad input claims nothing,
//! waiting costs the database nothing, and a hang-up, a stop or a lost listener never
//! leaves a waiter stranded.
//!
//! Every wait here waits for an event (the waiters gauge, an answer, a session), never
//! for a guessed number of milliseconds; the generous deadlines only turn a hang into a
//! failure.

mod bounds;
mod fairness;
mod lifecycle;
mod wakeups;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::config::Settings;
use switchboard::startup::{Application, Stopper};
use switchboard::store::signals::Emitter;

use crate::harness::wait::wait_metric_at;
use crate::harness::{Ep, TestApp, TestDb, metric_at, test_settings};

/// The metrics token every server here is started with.
pub const METRICS_TOKEN: &str = "long-poll-metrics-token-0123456789abcdef";

/// The waiters gauge.
pub const WAITERS: &str = "switchboard_long_poll_waiters";

/// Wake-ups counted.
pub const WAKEUPS: &str = "switchboard_long_poll_wakeups_total";

/// The one generous limit for any awaited event.
pub const WITHIN: Duration = Duration::from_secs(30);

/// The claim listener's session name.
pub const CLAIM_LISTENER: &str = switchboard::db::listen::LISTENER_SESSION_NAME;

fn with_metrics(s: &mut Settings) {
    s.metrics_token = Some(METRICS_TOKEN.into());
}

/// The application with the metrics token, after `adjust`.
pub async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        with_metrics(s);
        adjust(s);
    })
    .await
}

/// The application with the metrics token.
pub async fn spawn() -> TestApp {
    spawn_with(|_| {}).await
}

/// Another instance of the application on `db`, served on port 0.
pub struct Instance {
    pub base: String,
    pub stopper: Stopper,
}

impl Instance {
    /// Starts it (its own pool, listeners and waiters).
    pub async fn start(db: &TestDb) -> Instance {
        let mut settings = test_settings(db);
        with_metrics(&mut settings);
        let app = Application::build(&settings, &db.url, Emitter::none()).await.expect("build an instance");
        let base = format!("http://127.0.0.1:{}", app.port());
        let stopper = app.stopper();
        actix_rt::spawn(app.run_until_stopped());
        Instance { base, stopper }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let stopper = self.stopper.clone();
        actix_rt::spawn(async move { stopper.stop(false).await });
    }
}

fn client() -> awc::Client {
    awc::Client::builder().timeout(Duration::from_secs(90)).finish()
}

/// One series of the instance at `base`'s metrics.
pub async fn metric(base: &str, series: &str) -> u64 {
    metric_at(&client(), base, METRICS_TOKEN, series).await
}

/// Waits until the instance at `base` holds exactly `n` requests waiting.
pub async fn wait_for_waiters(base: &str, n: u64) {
    wait_metric_at(base, METRICS_TOKEN, WAITERS, n, WITHIN).await;
}

/// How a `claim-next` was answered, and after how long.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub took: Duration,
}

impl Answer {
    /// The claimed todo's id, if any.
    pub fn todo(&self) -> Option<&str> {
        self.body["todo"]["id"].as_str()
    }
}

/// Sends `claim-next` with `body` to `base` as `ep` on a task of its own; its answer.
pub fn claim_next(base: &str, ep: &Ep, body: Value) -> actix_rt::task::JoinHandle<Answer> {
    let (url, token) = (format!("{base}/api/v1/agent/todos/claim-next"), ep.token.clone());
    actix_rt::spawn(async move {
        let started = Instant::now();
        let mut resp = client()
            .post(url)
            .insert_header(("Authorization", format!("Bearer {token}")))
            .send_json(&body)
            .await
            .expect("claim-next");
        let bytes = resp.body().await.expect("body");
        Answer {
            status: resp.status().as_u16(),
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
            took: started.elapsed(),
        }
    })
}

/// A `claim-next` waiting up to `seconds` on any queue.
pub fn wait_on_any(base: &str, ep: &Ep, seconds: i32) -> actix_rt::task::JoinHandle<Answer> {
    claim_next(base, ep, json!({"wait_seconds": seconds}))
}

/// The answer of `call`, which must come within [`WITHIN`].
pub async fn answered(call: actix_rt::task::JoinHandle<Answer>) -> Answer {
    tokio::time::timeout(WITHIN, call).await.expect("no answer in time").expect("request task")
}
