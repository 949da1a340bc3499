//! Notify hooks: signed `todo.dead_lettered` and `todo.ready` notifications posted to a
//! receiver inside the bench process (testkit's) — the announcement latency through
//! the release server end to end, the throughput from the real notify channel run in
//! the bench process (hooks/load.rs, hooks/channel.rs) — beside the same-run ceilings of plain
//! `awc` POSTs of same-size bodies to the same receiver.
//!
//! Every todo here comes from a `generic` webhook created through the operator API, so
//! it passes the sender gate (token trust); todos an agent makes never announce. Every
//! hook is created through the operator API on an endpoint of its own line and posts
//! to `/hooks/<name>` on the receiver, which verifies the signature with that hook's
//! secret before it takes the arrival time.
//!
//! **Announcement latency**: an agent has a todo delivered on a webhook whose attempt
//! cap is 1, claims it by id and fails it, so the `fail` is the one that dead-letters
//! it; the clock starts when the bench has read the `fail` answer and stops at the
//! receiver's verified arrival of that todo's `todo.dead_lettered`.

pub mod channel;
pub mod doc;
pub mod load;

use std::time::{Duration, Instant};

use serde::Deserialize;
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::EndpointId;
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use testkit::receiver::{Receiver, Track};
use testkit::signature::Key;

use crate::database::Seeded;
use crate::load::Window;
use crate::scrape::{self, NotifyCounts};
use crate::server::Server;
use crate::{Args, BenchResult};

/// The type of a dead-letter announcement.
pub const DEAD: &str = "todo.dead_lettered";
/// The type of a ready announcement.
pub const READY: &str = "todo.ready";
/// How long a notification may take before the bench calls it lost.
pub const ARRIVAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Worker threads of the receiver (threads of their own, so the bench's clients never
/// delay a timestamp).
pub const RECEIVER_WORKERS: usize = 2;

/// The receiver the hooks post to: it admits only posts signed with the secret of the
/// hook their path names, and keeps nothing of them but the arrivals it times.
pub fn start_receiver() -> BenchResult<Receiver> {
    Receiver::builder().workers(RECEIVER_WORKERS).keep(false).start()
}

/// The receiver path of hook `name`.
pub fn hook_path(name: &str) -> String {
    format!("/hooks/{name}")
}

/// One endpoint with a `generic` webhook and its hooks, all posting to the receiver.
#[derive(Debug, Clone)]
pub struct Line {
    /// The endpoint.
    pub endpoint: EndpointId,
    /// Its slug (what notifications name as `endpoint`).
    pub slug: String,
    /// `Bearer sbk_…` of its agent.
    pub authorization: String,
    /// The webhook's ingest URL.
    pub ingest_url: String,
    /// How many hooks the endpoint has.
    pub hooks: usize,
}

/// The receiver and the lines the two measurements use.
pub struct Rig {
    /// The local receiver.
    pub receiver: Receiver,
    /// The dead-letter line: attempt cap 1, one hook.
    pub dead: Line,
    /// The throughput lines.
    pub lines: Vec<Line>,
}

/// What the notify-hook benchmark found.
#[derive(Debug, Clone, Default)]
pub struct HooksResult {
    /// Dead letters announced and timed.
    pub dead_letters: usize,
    /// Agents failing todos at once.
    pub agents: usize,
    /// `fail` answer → verified arrival, µs, sorted (0 where the POST came first).
    pub announce_us: Vec<u32>,
    /// Announcements the receiver held before the bench had read the `fail` answer.
    pub early: u64,
    /// The `todo.dead_lettered` body's size, bytes.
    pub dead_body_bytes: usize,
    /// The server's notify counters over the latency phase.
    pub dead_counts: NotifyCounts,
    /// Plain POSTs of a dead-letter-sized body at the agents' concurrency.
    pub rtt: Window,
    /// Throughput lines (endpoints).
    pub endpoints: usize,
    /// Hooks per endpoint.
    pub hooks_per_endpoint: usize,
    /// Feeders per endpoint, each with one notification in flight.
    pub feeders_per_endpoint: usize,
    /// Threads the in-process channel ran on (its CPU is `cpu.threads_s`).
    pub channel_threads: usize,
    /// Notifications that reached every hook of their endpoint, pooled over rounds
    /// (one "cycle" = one `TodoReady` fed to the in-process channel and its H
    /// verified POSTs).
    pub notifications: Window,
    /// Plain POSTs of a ready-sized body at the same concurrency, pooled over rounds.
    pub ceiling: Window,
    /// The `todo.ready` body's size, bytes.
    pub ready_body_bytes: usize,
    /// The in-process channel's counters over the throughput windows (warm-ups included).
    pub load_counts: NotifyCounts,
    /// What the database sessions were doing over the same spans.
    pub sessions: crate::waits::SessionTally,
    /// Verified POSTs the receiver held over the same spans (the channel's `delivered`
    /// counted from the other side).
    pub load_verified: u64,
    /// POSTs the receiver refused (bad or missing signature), and the first reason.
    pub rejected: u64,
    /// The first refusal's reason.
    pub first_rejection: Option<String>,
}

impl HooksResult {
    /// Whether this run measured hooks at all.
    pub fn measured(&self) -> bool {
        self.dead_letters > 0
    }

    /// The `q` quantile of announcement latency, ms.
    pub fn announce_ms(&self, q: f64) -> f64 {
        let n = self.announce_us.len();
        let i = ((n as f64 * q) as usize).min(n.saturating_sub(1));
        self.announce_us.get(i).map_or(0.0, |us| f64::from(*us) / 1000.0)
    }

    /// Deliveries in flight at most: the ceiling's concurrency.
    pub fn concurrency(&self) -> usize {
        self.endpoints * self.feeders_per_endpoint * self.hooks_per_endpoint
    }

    /// Verified deliveries per second at the receiver.
    pub fn deliveries_rate(&self) -> f64 {
        self.notifications.rate() * self.hooks_per_endpoint as f64
    }

    /// Deliveries/s as a share of the ceiling's POSTs/s.
    pub fn ratio(&self) -> f64 {
        let c = self.ceiling.rate();
        if c > 0.0 { self.deliveries_rate() / c } else { 0.0 }
    }
}

/// The throughput half of the measurement (hooks/load.rs), run on the rig once the
/// latency is measured. The trait keeps `hooks` from knowing `hook_load`, which uses the
/// rig and the result (no module cycle); main hands the one to the other.
pub trait Throughput {
    /// Measures the ceilings and the channel's throughput on `rig` into `result`.
    async fn measure(&self, rig: &Rig, result: &mut HooksResult) -> BenchResult<()>;
}

/// The part of an ingest answer the bench needs.
#[derive(Deserialize)]
struct IngestAnswer {
    disposition: String,
    todos: Vec<String>,
}

/// Posts one generic delivery to `line`'s webhook; returns the todo it made.
pub async fn deliver(client: &awc::Client, line: &Line, n: u64) -> BenchResult<String> {
    let body = serde_json::json!({
        "type": "build.failed",
        "pipeline": "deploy-production",
        "run": n,
        "commit": "9a1c2b3d4e5f60718293a4b5c6d7e8f901234567",
        "url": "https://ci.example.com/acme/switchboard/runs/1",
    });
    let mut resp = client
        .post(&line.ingest_url)
        .insert_header(("content-type", "application/json"))
        .send_json(&body)
        .await
        .map_err(|e| format!("ingest: {e}"))?;
    let answer = resp.body().await.map_err(|e| format!("ingest body: {e}"))?;
    if resp.status().as_u16() != 202 {
        return Err(format!("ingest answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
    }
    let parsed: IngestAnswer = serde_json::from_slice(&answer).map_err(|e| format!("ingest answer: {e}"))?;
    match (parsed.disposition.as_str(), parsed.todos.as_slice()) {
        ("routed", [todo]) => Ok(todo.clone()),
        _ => Err(format!("ingest did not route one todo: {}", String::from_utf8_lossy(&answer))),
    }
}

/// Sets up the receiver and every line, checks the loop (a delivery's `todo.ready`
/// arrives verified; a forged POST is refused), then measures the latency and has
/// `throughput` measure its ceiling, throughput and its ceiling.
pub async fn measure(
    args: &Args,
    server: &Server,
    seeded: &Seeded,
    store: &Store,
    throughput: &impl Throughput,
) -> BenchResult<HooksResult> {
    let receiver = start_receiver()?;
    let outcome = async {
        let rig = rig(args, server, seeded, store, receiver.clone()).await?;
        let mut result = HooksResult {
            agents: args.dead_letter_agents,
            endpoints: rig.lines.len(),
            hooks_per_endpoint: args.hooks_per_endpoint,
            feeders_per_endpoint: args.feeders_per_endpoint,
            ..HooksResult::default()
        };
        let refused_by_checks = sanity_check(&rig).await?;
        settle().await;
        let before = scrape::notify_counts(server).await?;
        announce(args, server, &rig, &mut result).await?;
        settle().await;
        result.dead_counts = scrape::notify_counts(server).await?.since(&before);
        crate::progress(&format!(
            "hooks: {} dead letters announced, p50 {:.1} ms, p99 {:.1} ms ({} before the fail answer was read)",
            result.announce_us.len(),
            result.announce_ms(0.5),
            result.announce_ms(0.99),
            result.early
        ));
        rig.receiver.forget_unclaimed();
        throughput.measure(&rig, &mut result).await?;
        let (rejected, first) = rig.receiver.rejected();
        result.rejected = rejected - refused_by_checks;
        result.first_rejection = first.filter(|_| result.rejected > 0);
        Ok(result)
    }
    .await;
    receiver.stop().await;
    outcome
}

/// Waits until the deliveries the receiver already holds are counted by the server,
/// which counts a notification once its health is written, just after the receiver
/// answered (the attempt is counted before): read around this, the counters agree.
pub async fn settle() {
    tokio::time::sleep(Duration::from_millis(500)).await;
}

/// Vends the endpoints, creates their webhooks and hooks through the operator API.
async fn rig(args: &Args, server: &Server, seeded: &Seeded, store: &Store, receiver: Receiver) -> BenchResult<Rig> {
    let dead = line(server, seeded, store, &receiver, "bench-dead", Some(1), 1).await?;
    let mut lines = Vec::new();
    for e in 0..args.hook_endpoints {
        lines.push(
            line(server, seeded, store, &receiver, &format!("bench-ready-{e}"), None, args.hooks_per_endpoint).await?,
        );
    }
    Ok(Rig { receiver, dead, lines })
}

/// One endpoint, its generic webhook (attempt cap `max_attempts`) and `hooks` hooks.
async fn line(
    server: &Server,
    seeded: &Seeded,
    store: &Store,
    receiver: &Receiver,
    slug: &str,
    max_attempts: Option<i32>,
    hooks: usize,
) -> BenchResult<Line> {
    let vended = store
        .vend_endpoint(VendEndpoint {
            scope: seeded.scope,
            slug: slug.into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .map_err(|e| format!("vending {slug}: {e}"))?;
    let endpoint = vended.endpoint.id;
    let created = operator_post(
        server,
        seeded,
        "/api/v1/webhooks",
        serde_json::json!({ "endpoint_id": endpoint, "source_type": "generic", "queue": "jobs",
                            "max_attempts": max_attempts }),
    )
    .await?;
    let ingest_url = created["ingest_url"].as_str().ok_or("the webhook came back without an ingest_url")?.to_owned();
    for h in 0..hooks {
        let name = format!("{slug}-{h}");
        let hook = operator_post(
            server,
            seeded,
            &format!("/api/v1/endpoints/{endpoint}/hooks"),
            serde_json::json!({ "url": receiver.url_of(&hook_path(&name)) }),
        )
        .await?;
        let secret = hook["signing_secret"].as_str().ok_or("the hook came back without a signing_secret")?;
        receiver.admit_signed(&hook_path(&name), secret, Some(Track::Notification))?;
    }
    Ok(Line { endpoint, slug: slug.to_owned(), authorization: format!("Bearer {}", vended.token), ingest_url, hooks })
}

/// A POST to the operator API with the owner's token that must answer 201.
async fn operator_post(
    server: &Server,
    seeded: &Seeded,
    path: &str,
    body: serde_json::Value,
) -> BenchResult<serde_json::Value> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let mut resp = client
        .post(format!("{}{path}", server.base()))
        .insert_header(("authorization", format!("Bearer {}", seeded.owner_token)))
        .send_json(&body)
        .await
        .map_err(|e| format!("POST {path}: {e}"))?;
    let answer = resp.body().await.map_err(|e| format!("POST {path}: {e}"))?;
    if resp.status().as_u16() != 201 {
        return Err(format!("POST {path} answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
    }
    serde_json::from_slice(&answer).map_err(|e| format!("POST {path}: {e}"))
}

/// A delivery's `todo.ready` must reach the dead line's hook verified, and a POST
/// signed with another key must be refused. Returns the refusals it caused.
async fn sanity_check(rig: &Rig) -> BenchResult<u64> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let started = Instant::now();
    let todo = deliver(&client, &rig.dead, 0).await?;
    let arrived = tokio::time::timeout(ARRIVAL_TIMEOUT, rig.receiver.take(READY, &todo, 1)).await;
    if !matches!(arrived, Ok(Ok(_))) {
        let (rejected, first) = rig.receiver.rejected();
        return Err(format!(
            "no verified todo.ready reached the receiver within {} s ({rejected} refused; first: {})",
            ARRIVAL_TIMEOUT.as_secs(),
            first.as_deref().unwrap_or("none")
        ));
    }
    let first_ms = started.elapsed().as_secs_f64() * 1000.0;
    let (wrong, _) = Key::random()?;
    let (_, secret) = Key::random()?;
    rig.receiver.admit_signed(&hook_path("forged"), &secret, None)?;
    let now = chrono::Utc::now().timestamp();
    let resp = client
        .post(rig.receiver.url_of(&hook_path("forged")))
        .insert_header(("webhook-id", "msg_forged"))
        .insert_header(("webhook-timestamp", now.to_string()))
        .insert_header(("webhook-signature", wrong.sign("msg_forged", now, b"{}")))
        .send_body("{}")
        .await
        .map_err(|e| format!("forged post: {e}"))?;
    if resp.status().as_u16() != 401 {
        return Err(format!("the receiver answered a forged post with {}", resp.status()));
    }
    crate::progress(&format!("hooks: receiver ready, first todo.ready verified {first_ms:.1} ms after its delivery"));
    Ok(rig.receiver.rejected().0)
}

/// The announcement latency: `args.dead_letters` todos failed at their cap by
/// `args.dead_letter_agents` agents.
async fn announce(args: &Args, server: &Server, rig: &Rig, result: &mut HooksResult) -> BenchResult<()> {
    let next = std::rc::Rc::new(std::cell::Cell::new(0usize));
    let mut agents = Vec::new();
    for _ in 0..args.dead_letter_agents {
        let (next, total, base, line, receiver) =
            (next.clone(), args.dead_letters, server.base().to_owned(), rig.dead.clone(), rig.receiver.clone());
        agents.push(actix_rt::spawn(async move {
            let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
            let mut timed = Vec::new();
            loop {
                let n = next.get();
                if n >= total {
                    return Ok::<_, String>(timed);
                }
                next.set(n + 1);
                timed.push(dead_letter(&client, &base, &line, &receiver, n as u64 + 1).await?);
            }
        }));
    }
    for agent in agents {
        let timed = agent.await.map_err(|e| format!("a dead-letter agent panicked: {e}"))??;
        for (us, early) in timed {
            result.announce_us.push(us);
            result.early += u64::from(early);
        }
    }
    result.announce_us.sort_unstable();
    result.dead_letters = result.announce_us.len();
    result.dead_body_bytes = rig.receiver.sample(DEAD).map_or(0, |b| b.len());
    Ok(())
}

/// One todo delivered, claimed and failed at its cap; the time from the `fail` answer
/// to the verified announcement, µs, and whether the announcement came first.
async fn dead_letter(
    client: &awc::Client,
    base: &str,
    line: &Line,
    receiver: &Receiver,
    n: u64,
) -> BenchResult<(u32, bool)> {
    let todo = deliver(client, line, n).await?;
    let todos = format!("{base}/api/v1/agent/todos/{todo}");
    let claimed = agent_post(client, line, &format!("{todos}/claim"), serde_json::json!({})).await?;
    let lease = claimed["lease_token"].as_str().ok_or("the claim answer has no lease_token")?;
    let failed = agent_post(
        client,
        line,
        &format!("{todos}/fail"),
        serde_json::json!({ "lease_token": lease, "summary": "deploy failed: exit status 1" }),
    )
    .await?;
    let answered = Instant::now();
    if failed["dead_letter"] != serde_json::Value::Bool(true) {
        return Err(format!("the fail at the cap did not dead-letter todo {todo}"));
    }
    let arrival = tokio::time::timeout(ARRIVAL_TIMEOUT, receiver.take(DEAD, &todo, 1))
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| format!("todo {todo}'s dead letter was not announced within {} s", ARRIVAL_TIMEOUT.as_secs()))?;
    let took = arrival.saturating_duration_since(answered);
    Ok((took.as_micros().min(u128::from(u32::MAX)) as u32, arrival < answered))
}

/// An agent call that must answer 200; its JSON.
async fn agent_post(
    client: &awc::Client,
    line: &Line,
    url: &str,
    body: serde_json::Value,
) -> BenchResult<serde_json::Value> {
    let mut resp = client
        .post(url)
        .insert_header(("authorization", line.authorization.as_str()))
        .send_json(&body)
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let answer = resp.body().await.map_err(|e| format!("POST {url}: {e}"))?;
    if resp.status().as_u16() != 200 {
        return Err(format!("POST {url} answered {}: {}", resp.status(), String::from_utf8_lossy(&answer)));
    }
    serde_json::from_slice(&answer).map_err(|e| format!("POST {url}: {e}"))
}
