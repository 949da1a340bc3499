//! Dead letter → sink message latency at idle: one agent over REST creates a todo with
//! an attempt cap of 1, claims it and `fail`s it (a dead letter); the clock runs from
//! the moment the bench has read the `fail` answer to the receiver's arrival of that
//! todo's Gotify message. One at a time, with a pause between, so each meets idle
//! workers: what is timed is the LISTEN/NOTIFY wake-up, the claim, the message and
//! the POST, not a poll. Beside it, the round trip of a plain POST of the same body.

use std::time::{Duration, Instant};

use testkit::receiver::GOTIFY_KIND;

use super::rig::{Gotify, Line, Poster, QUEUE, SUMMARY};
use crate::load::{self, Agent, Window};
use crate::machine::Probe;
use crate::{Args, BenchResult};

/// How long a message may take before the run gives up on it.
const ARRIVAL_TIMEOUT: Duration = Duration::from_secs(10);
/// The pause after each arrival, so the next dead letter finds the workers idle (the
/// worker records the row's result after the receiver answered).
pub const PAUSE: Duration = Duration::from_millis(50);

/// The measurement.
#[derive(Debug, Clone, Default)]
pub struct LatencyResult {
    /// `fail` answer read → message held by the receiver, µs, sorted.
    pub latency_us: Vec<u32>,
    /// Messages that arrived before the bench had read the `fail` answer (counted 0).
    pub early: u64,
    /// Plain POSTs of the same body, one at a time: their round trips.
    pub rtt: Window,
    /// The body's size, bytes.
    pub body_bytes: usize,
}

impl LatencyResult {
    /// The `q` quantile (nearest rank), ms.
    pub fn ms(&self, q: f64) -> f64 {
        let n = self.latency_us.len();
        if n == 0 {
            return 0.0;
        }
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        f64::from(self.latency_us[rank - 1]) / 1000.0
    }

    /// Dead letters whose message took longer than `ms`.
    pub fn over(&self, ms: f64) -> usize {
        self.latency_us.iter().filter(|&&us| f64::from(us) / 1000.0 > ms).count()
    }
}

/// `args.outbox_dead_letters` dead letters through the server at `base`, one at a
/// time, then the plain POST round trip for one window.
pub async fn measure(
    args: &Args,
    base: &str,
    line: &Line,
    receiver: &Gotify,
    probe: &Probe,
) -> BenchResult<LatencyResult> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let mut result = LatencyResult::default();
    // Unmeasured first ones: connections opened, statements planned, caches warm.
    for n in 0..5 {
        dead_letter(&client, base, line, receiver, &format!("warm-up {n}")).await?;
        tokio::time::sleep(PAUSE).await;
    }
    for n in 0..args.outbox_dead_letters {
        let (took, early) = dead_letter(&client, base, line, receiver, &format!("latency #{n}")).await?;
        result.latency_us.push(took.as_micros().min(u128::from(u32::MAX)) as u32);
        result.early += u64::from(early);
        tokio::time::sleep(PAUSE).await;
    }
    result.latency_us.sort_unstable();
    let body = receiver.rx.sample(GOTIFY_KIND).ok_or("no message arrived to size the ceiling's body")?;
    result.body_bytes = body.len();
    let agents = vec![Agent::Work(Box::new(Poster::new(receiver, &body)))];
    result.rtt = load::measure(agents, u64::MAX, args.warmup(), args.window(), probe).await;
    result.rtt.check()?;
    Ok(result)
}

/// One todo made, claimed and failed at its cap over REST; the time from reading the
/// `fail` answer to the message's arrival, and whether the message came first.
async fn dead_letter(
    client: &awc::Client,
    base: &str,
    line: &Line,
    receiver: &Gotify,
    title: &str,
) -> BenchResult<(Duration, bool)> {
    let todos = format!("{base}/api/v1/agent/todos");
    let created = agent_post(
        client,
        line,
        &todos,
        serde_json::json!({ "queue": QUEUE, "title": format!("deploy {title}"), "max_attempts": 1 }),
        201,
    )
    .await?;
    let id = created["id"].as_str().ok_or("the created todo has no id")?.to_owned();
    let claimed = agent_post(client, line, &format!("{todos}/{id}/claim"), serde_json::json!({}), 200).await?;
    let lease = claimed["lease_token"].as_str().ok_or("the claim answer has no lease_token")?;
    let arrival = receiver.rx.expect(GOTIFY_KIND, &id, 1);
    let failed = agent_post(
        client,
        line,
        &format!("{todos}/{id}/fail"),
        serde_json::json!({ "lease_token": lease, "summary": SUMMARY }),
        200,
    )
    .await?;
    let answered = Instant::now();
    if failed["dead_letter"] != serde_json::Value::Bool(true) {
        return Err(format!("the fail at the cap did not dead-letter todo {id}: {failed}"));
    }
    let at = tokio::time::timeout(ARRIVAL_TIMEOUT, arrival)
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| format!("todo {id}'s message did not arrive within {} s", ARRIVAL_TIMEOUT.as_secs()))?;
    Ok((at.saturating_duration_since(answered), at < answered))
}

/// An agent call that must answer `want`; its JSON.
async fn agent_post(
    client: &awc::Client,
    line: &Line,
    url: &str,
    body: serde_json::Value,
    want: u16,
) -> BenchResult<serde_json::Value> {
    let mut resp = client
        .post(url)
        .insert_header(("authorization", line.authorization.as_str()))
        .send_json(&body)
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let answer = resp.body().await.map_err(|e| format!("POST {url}: {e}"))?;
    if resp.status().as_u16() != want {
        return Err(format!("POST {url} answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
    }
    serde_json::from_slice(&answer).map_err(|e| format!("POST {url}: {e}"))
}
