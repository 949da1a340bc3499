//! The outbox benchmark (issue 12), on a database of its own with `switchboard serve`
//! processes of its own and a Gotify-contract receiver in the bench process:
//!
//! 1. the outbox's cost on the dead-letter transaction, with 0, 1 and 5 subscribed
//!    sinks (outbox/cost.rs), no server running; then the rows those windows queued,
//!    delivered by two servers and checked at the receiver (outbox/drain.rs);
//! 2. outbox throughput: a backlog drained by two servers, beside plain POSTs of the
//!    same body at the concurrency the two servers' workers can have in flight
//!    (outbox/drain.rs), in alternating rounds;
//! 3. dead letter → message latency at idle, beside a plain POST's round trip
//!    (outbox/latency.rs).

pub mod cost;
pub mod doc;
pub mod drain;
pub mod latency;
pub mod rig;

use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;
use switchboard::store::Store;
use testkit::receiver::GOTIFY_KIND;

use crate::database::BenchDb;
use crate::instances::{self, Instances};
use crate::load::{self, Agent, Window};
use crate::machine::{Machine, Probe};
use crate::{Args, BenchResult, progress};
use cost::{CostResult, SINK_COUNTS};
use drain::{CostDelivery, Drain, DrainRig};
use latency::LatencyResult;
use rig::{BUDGET_PER_HOUR, BURST, Gotify, Line, Poster};

/// Servers draining the one outbox.
pub const INSTANCES: usize = 2;
/// Deliveries one server's `OutboxWorker` has in flight at once for one sink: a sink's
/// drain sends its rows at most this many at a time (`src/actors/outbox/drain.rs`; one
/// drain per sink per server), so with one sink, exactly this.
pub const IN_FLIGHT_PER_INSTANCE: usize = switchboard::sinks::worker::MAX_SENDS_IN_FLIGHT;
/// The Board links' base (messages only link to it).
pub const BASE_URL: &str = "https://switchboard.bench.example";

/// Everything the outbox benchmark measured.
#[derive(Debug, Clone, Default)]
pub struct OutboxRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and the settings that matter.
    pub pg: (String, String),
    /// Source revision.
    pub revision: String,
    /// Rounds per side.
    pub rounds: u32,
    /// Measured seconds per window.
    pub seconds: u64,
    /// Warm-up seconds per window.
    pub warmup: u64,
    /// Each server's pool, and the bench's.
    pub pool_size: u32,
    /// The cost windows.
    pub cost: CostResult,
    /// How the cost windows' rows reached their sinks.
    pub cost_delivery: CostDelivery,
    /// One drain per round.
    pub drains: Vec<Drain>,
    /// Plain POSTs at the same concurrency, pooled over rounds.
    pub ceiling: Window,
    /// The message body's size, bytes (what the ceiling posts).
    pub body_bytes: usize,
    /// The drain sink's rows by status at the end.
    pub statuses: Vec<(String, i64)>,
    /// The latency measurement.
    pub latency: LatencyResult,
    /// POSTs the receiver refused (the sanity check's one included), and the first reason.
    pub rejected: (u64, Option<String>),
    /// The whole run, seconds.
    pub total_seconds: f64,
}

impl OutboxRun {
    /// Concurrent deliveries the servers can have in flight: the ceiling's concurrency.
    pub fn concurrency(&self) -> usize {
        INSTANCES * IN_FLIGHT_PER_INSTANCE
    }

    /// Messages per second over every drain, pooled (rows − 1 over first → last).
    pub fn drain_rate(&self) -> f64 {
        let rows: u64 = self.drains.iter().map(|d| d.rows.saturating_sub(1)).sum();
        let secs: f64 = self.drains.iter().map(|d| d.first_to_last.as_secs_f64()).sum();
        if secs > 0.0 { rows as f64 / secs } else { 0.0 }
    }

    /// Drain rate as a share of the ceiling.
    pub fn ratio(&self) -> f64 {
        let c = self.ceiling.rate();
        if c > 0.0 { self.drain_rate() / c } else { 0.0 }
    }

    /// Backlog messages lost and duplicated over every drain.
    pub fn lost_and_duplicated(&self) -> (u64, u64) {
        self.drains.iter().fold((0, 0), |(l, d), x| (l + x.tally.lost, d + x.tally.duplicates))
    }

    /// Drain-sink rows that did not end `sent`.
    pub fn not_sent(&self) -> i64 {
        self.statuses.iter().filter(|(s, _)| s != "sent").map(|(_, n)| n).sum()
    }
}

/// Runs the outbox benchmark on a database of its own; always stops its servers and
/// drops the database.
pub async fn run(args: &Args, bin: &Path) -> BenchResult<OutboxRun> {
    let started = Instant::now();
    let db = BenchDb::create(&args.admin_url).await?;
    progress(&format!("outbox: created database {}", db.name()));
    let receiver = Gotify::start()?;
    let outcome = phases(args, &db, bin, &receiver).await;
    receiver.rx.stop().await;
    let pg = db.settings().await;
    let dropped = db.drop_database().await;
    let mut run = outcome?;
    dropped?;
    run.pg = pg?;
    run.total_seconds = started.elapsed().as_secs_f64();
    Ok(run)
}

/// The settings every server of the benchmark gets beside the defaults (server.rs):
/// the operator's bounds on a sink's budget at their hard ceilings, and Board links.
fn settings() -> Vec<(&'static str, String)> {
    vec![
        ("SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR", BUDGET_PER_HOUR.to_string()),
        ("SWITCHBOARD_SINK_BURST_MAX", BURST.to_string()),
        ("SWITCHBOARD_BASE_URL", BASE_URL.to_owned()),
    ]
}

/// The owners, sinks and endpoints.
struct Setup {
    drain: Line,
    drain_sink: String,
    cost: Vec<Line>,
    cost_sinks: Vec<String>,
}

async fn phases(args: &Args, db: &BenchDb, bin: &Path, receiver: &Gotify) -> BenchResult<OutboxRun> {
    let instances = Instances::new(bin, &db.url, args.pool_size, settings());
    let store = db.store(args.pool_size)?;
    // One server migrates the database and answers the operator API for the set-up.
    let servers = instances.start(1).await?;
    let setup = match servers.first() {
        Some(server) => set_up(db, &store, server, receiver).await,
        None => Err("no server started".into()),
    };
    instances::stop(servers).await?;
    let setup = setup?;

    let mut run = OutboxRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        revision: args.revision.clone(),
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        pool_size: args.pool_size,
        ..OutboxRun::default()
    };
    run.cost = cost::measure(args, db, &store, &setup.cost).await?;
    if let [_, one, five] = setup.cost.as_slice() {
        run.cost_delivery = drain::deliver_cost_rows(db, &instances, receiver, one, five, &setup.cost_sinks).await?;
    }
    cost::count_rows(db, &mut run.cost, &setup.cost).await?;

    let body = receiver.rx.sample(GOTIFY_KIND).ok_or("no message arrived to size the ceiling's body")?;
    run.body_bytes = body.len();
    let rig = DrainRig {
        args,
        db,
        store: &store,
        instances: &instances,
        line: &setup.drain,
        sink: &setup.drain_sink,
        receiver,
    };
    let probe = Probe { server_pid: 0, database: db.name().to_owned(), threads: Vec::new() };
    for round in 0..args.rounds {
        for drain_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            if drain_turn {
                run.drains.push(drain::drain(&rig, round).await?);
            } else {
                let posters =
                    (0..run.concurrency()).map(|_| Agent::Work(Box::new(Poster::new(receiver, &body)))).collect();
                let w = load::measure(posters, u64::MAX, args.warmup(), args.window(), &probe).await;
                w.check()?;
                progress(&format!("outbox: plain POSTs at {} concurrent: {:.0}/s", run.concurrency(), w.rate()));
                run.ceiling.merge(w);
            }
        }
    }

    receiver.rx.forget();
    let mut servers = instances.start(INSTANCES).await?;
    let latency = match servers.first() {
        Some(server) => {
            let probe = Probe { server_pid: server.pid(), ..probe.clone() };
            latency::measure(args, server.base(), &setup.drain, receiver, &probe).await
        }
        None => Err("no server started".into()),
    };
    let ready = instances::ready(&mut servers).await;
    instances::stop(servers).await?;
    ready?;
    run.latency = latency?;
    progress(&format!(
        "outbox: dead letter → message p50 {:.1} ms, p99 {:.1} ms over {} (plain POST p50 {:.2} ms, p99 {:.2} ms)",
        run.latency.ms(0.5),
        run.latency.ms(0.99),
        run.latency.latency_us.len(),
        run.latency.rtt.latency_ms(0.5),
        run.latency.rtt.latency_ms(0.99)
    ));
    run.statuses = drain::statuses(db, std::slice::from_ref(&setup.drain_sink)).await?;
    run.rejected = receiver.rx.rejected();
    Ok(run)
}

/// Owners, endpoints and sinks; then one dead letter must reach the receiver through
/// the running server, and a POST with a wrong token must be refused.
async fn set_up(db: &BenchDb, store: &Store, server: &crate::server::Server, receiver: &Gotify) -> BenchResult<Setup> {
    let drain = rig::line(store, "drain@outbox.bench", "outbox-drain").await?;
    let drain_sink = rig::gotify_sinks(server, &drain.owner, receiver, 1, "drain").await?;
    let mut cost = Vec::new();
    let mut cost_sinks = Vec::new();
    for n in SINK_COUNTS {
        let line = rig::line(store, &format!("cost{n}@outbox.bench"), &format!("outbox-cost-{n}")).await?;
        if n > 0 {
            cost_sinks.extend(rig::gotify_sinks(server, &line.owner, receiver, n, &format!("cost{n}")).await?);
        }
        cost.push(line);
    }
    let drain_sink = drain_sink.into_iter().next().ok_or("the drain sink was not made")?;

    let ids = rig::claimed_todos(db, &drain, 1, "sanity").await?;
    let id = ids.first().map(ToString::to_string).ok_or("no sanity todo")?;
    let arrival = receiver.rx.expect(GOTIFY_KIND, &id, 1);
    rig::fail_all(store, &drain, ids, 1).await?;
    if !matches!(tokio::time::timeout(Duration::from_secs(10), arrival).await, Ok(Ok(_))) {
        let (rejected, first) = receiver.rx.rejected();
        return Err(format!(
            "a dead letter's message did not reach the receiver within 10 s ({rejected} refused; first: {})",
            first.as_deref().unwrap_or("none")
        ));
    }
    let client = awc::Client::builder().timeout(Duration::from_secs(10)).finish();
    let resp = client
        .post(format!("{}/message", receiver.rx.base()))
        .insert_header(("X-Gotify-Key", "not-the-token"))
        .send_json(&serde_json::json!({ "title": "t", "message": "m", "priority": 5 }))
        .await
        .map_err(|e| format!("forged post: {e}"))?;
    if resp.status().as_u16() != 401 {
        return Err(format!("the receiver answered a post with a wrong token with {}", resp.status()));
    }
    progress("outbox: receiver ready; a dead letter's message arrived, a wrong token was refused");
    Ok(Setup { drain, drain_sink, cost, cost_sinks })
}
