//! Issue 14's throughput benchmark, in one run on one database: the bare-SQL ceiling of
//! a claim cycle (pgbench, throughput/ceiling.rs), PGQueuer's batched enqueue and drain
//! (throughput/pgqueuer.rs), and the product over REST (throughput/agents.rs): single
//! claim-next → complete cycles at 1/4/16 agents, batched drains (claim 100 → complete
//! 100), batched creation, and the long-poll wake-up at idle. With `--baseline-bin`, the
//! single cycle at the highest concurrency is also run against a baseline server on a
//! database of its own: the CPU and WAL per cycle before and after.

pub mod agents;
pub mod ceiling;
pub mod doc;
pub mod pgqueuer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::claim_cost::Rig;
use crate::database::{QUEUE, Seeded};
use crate::load::{Agent, Load, Mark};
use crate::machine::Machine;
use crate::{Args, BenchResult, progress};
use agents::{BatchCreate, BatchDrain, RestAgent, WakeUps, wake_ups};
use ceiling::{CeilingWindow, ClusterMark, Cost};
use pgqueuer::PgqRun;

/// The throughput benchmark's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ThroughputArgs {
    /// Run only the throughput benchmark; it rewrites only its own section of `--doc`.
    #[arg(long, conflicts_with_all = ["only_board", "only_intake", "only_hooks", "only_outbox", "only_claim_cost"])]
    pub only_throughput: bool,
    /// Concurrencies of the bare-SQL ceiling and of the single-row REST cycles.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 4, 16])]
    pub throughput_clients: Vec<usize>,
    /// Agents of the batched REST drains.
    #[arg(long, value_delimiter = ',', default_values_t = vec![4, 16])]
    pub batch_agents: Vec<usize>,
    /// Todos per batched claim (and per batch complete).
    #[arg(long, default_value_t = 100)]
    pub batch_limit: u64,
    /// Pending rows of the ceiling's table, rebuilt before every pgbench window.
    #[arg(long, default_value_t = 200_000)]
    pub ceiling_rows: u64,
    /// Jobs PGQueuer enqueues and drains per round (and todos the batched create makes).
    #[arg(long, default_value_t = 20_000)]
    pub pgqueuer_jobs: u64,
    /// PGQueuer's consumers.
    #[arg(long, default_value_t = 4)]
    pub pgqueuer_consumers: usize,
    /// Todos per batched create call (PGQueuer's enqueue batch is the same).
    #[arg(long, default_value_t = 500)]
    pub create_batch: u64,
    /// Long-poll wake-ups timed at idle.
    #[arg(long, default_value_t = 200)]
    pub wake_ups: usize,
    /// Where PGQueuer is installed when missing.
    #[arg(long, default_value = "target/bench-venv")]
    pub venv: PathBuf,
}

/// One concurrency's single-row figures.
pub struct SingleRow {
    /// Agents or pgbench clients.
    pub clients: usize,
    /// The ceiling, pooled over the rounds.
    pub ceiling: Vec<CeilingWindow>,
    /// REST cycles per second, pooled over the rounds (cycles, seconds).
    pub rest: (u64, f64),
    /// REST cycle latencies, ms, sorted.
    pub rest_latency_ms: Vec<f64>,
    /// The REST windows' cost.
    pub rest_cost: Cost,
}

impl SingleRow {
    /// The ceiling's pooled rate.
    pub fn ceiling_rate(&self) -> f64 {
        let cycles: u64 = self.ceiling.iter().map(|w| w.cycles).sum();
        let seconds: f64 = self.ceiling.iter().map(|w| w.cycles as f64 / w.rate.max(f64::MIN_POSITIVE)).sum();
        if seconds > 0.0 { cycles as f64 / seconds } else { 0.0 }
    }

    /// The ceiling's pooled cost.
    pub fn ceiling_cost(&self) -> Cost {
        let mut c = Cost::default();
        for w in &self.ceiling {
            c.add(&w.cost);
        }
        c
    }

    /// REST cycles per second.
    pub fn rest_rate(&self) -> f64 {
        if self.rest.1 > 0.0 { self.rest.0 as f64 / self.rest.1 } else { 0.0 }
    }
}

/// A batched drain's figures.
pub struct Batched {
    /// Agents.
    pub agents: usize,
    /// Todos per second.
    pub rate: f64,
    /// Its cost (units: todos).
    pub cost: Cost,
    /// Batch round trips (claim + complete) latencies, ms, sorted.
    pub latency_ms: Vec<f64>,
}

/// The baseline's single-row cycle, when `--baseline-bin` was given.
pub struct Before {
    /// Its revision.
    pub revision: String,
    /// Agents.
    pub agents: usize,
    /// Cycles per second.
    pub rate: f64,
    /// Its cost.
    pub cost: Cost,
}

/// Everything the run found.
pub struct ThroughputRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and settings.
    pub pg: (String, String),
    /// This build's revision.
    pub revision: String,
    /// Settings of the run.
    pub args: ThroughputArgs,
    /// Rounds, window and warm-up seconds.
    pub rounds: u32,
    /// Seconds per window.
    pub seconds: u64,
    /// Warm-up seconds.
    pub warmup: u64,
    /// Done and pending todos on the product's queue before each window.
    pub table: (u32, u32),
    /// Per concurrency.
    pub single: Vec<SingleRow>,
    /// Per batch agent count.
    pub batched: Vec<Batched>,
    /// PGQueuer.
    pub pgqueuer: PgqRun,
    /// Batched create: todos per second of each round.
    pub create_rates: Vec<f64>,
    /// Long-poll wake-ups.
    pub wake: WakeUps,
    /// Before this build.
    pub before: Option<Before>,
    /// Wall time, seconds.
    pub total_seconds: f64,
}

impl ThroughputRun {
    /// The single-row figures at the highest concurrency.
    pub fn top(&self) -> Option<&SingleRow> {
        self.single.iter().max_by_key(|s| s.clients)
    }

    /// The best batched drain rate.
    pub fn best_batched(&self) -> Option<&Batched> {
        self.batched.iter().max_by(|a, b| a.rate.total_cmp(&b.rate))
    }

    /// Median batched create rate.
    pub fn create_rate(&self) -> f64 {
        let mut v = self.create_rates.clone();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// Runs the whole benchmark with this build's server `bin`.
pub async fn run(args: &Args, bin: &Path) -> BenchResult<ThroughputRun> {
    let t = &args.throughput;
    if t.throughput_clients.is_empty() || t.throughput_clients.contains(&0) || t.batch_agents.contains(&0) {
        return Err("--throughput-clients and --batch-agents must be positive".into());
    }
    let started = Instant::now();
    let rig = Rig::start(args, bin, "throughput").await?;
    let measured = measure(args, &rig).await;
    let finished = rig.finish().await;
    let (single, batched, pgqueuer, create_rates, wake, pg) = measured?;
    finished?;
    let before = match &args.claim_cost.baseline_bin {
        Some(baseline) => Some(before(args, baseline).await?),
        None => None,
    };
    Ok(ThroughputRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg,
        revision: args.revision.clone(),
        args: t.clone(),
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        table: (args.done, args.pending),
        single,
        batched,
        pgqueuer,
        create_rates,
        wake,
        before,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

type Measured = (Vec<SingleRow>, Vec<Batched>, PgqRun, Vec<f64>, WakeUps, (String, String));

async fn measure(args: &Args, rig: &Rig) -> BenchResult<Measured> {
    let t = &args.throughput;
    let (db, seeded, probe) = (&rig.db, &rig.seeded, &rig.probe);
    let base = rig.server.base();
    let pg = db.settings().await?;
    let scratch = std::env::temp_dir().join(format!("sb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;

    let mut single: Vec<SingleRow> = t
        .throughput_clients
        .iter()
        .map(|&clients| SingleRow {
            clients,
            ceiling: Vec::new(),
            rest: (0, 0.0),
            rest_latency_ms: Vec::new(),
            rest_cost: Cost::default(),
        })
        .collect();
    for round in 0..args.rounds {
        for row in &mut single {
            // Rounds alternate which side goes first, so a drift in the machine's load
            // favours neither.
            for ceiling_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
                if ceiling_turn {
                    let w = ceiling::window(db, probe, row.clients, args.seconds, t.ceiling_rows, &scratch).await?;
                    progress(&format!("round {round}: ceiling at {} clients {:.0} cycles/s", row.clients, w.rate));
                    row.ceiling.push(w);
                } else {
                    let agents = (0..row.clients).map(|_| Agent::rest(base, seeded)).collect();
                    let (cycles, secs, lat, cost) = window(args, rig, agents).await?;
                    progress(&format!(
                        "round {round}: REST at {} agents {:.0} cycles/s",
                        row.clients,
                        cycles as f64 / secs
                    ));
                    row.rest.0 += cycles;
                    row.rest.1 += secs;
                    row.rest_latency_ms.extend(lat);
                    row.rest_cost.add(&cost);
                }
            }
        }
    }
    for row in &mut single {
        row.rest_latency_ms.sort_by(f64::total_cmp);
    }

    let mut batched = Vec::new();
    for &agents in &t.batch_agents {
        let mut pooled = Batched { agents, rate: 0.0, cost: Cost::default(), latency_ms: Vec::new() };
        let mut secs = 0.0;
        for round in 0..args.rounds {
            let drains = (0..agents)
                .map(|_| {
                    Agent::Batch(Box::new(BatchDrain {
                        agent: RestAgent::new(base, seeded),
                        queue: QUEUE.into(),
                        limit: t.batch_limit,
                    }))
                })
                .collect();
            let (todos, s, lat, cost) = window(args, rig, drains).await?;
            progress(&format!("round {round}: batched drain at {agents} agents {:.0} todos/s", todos as f64 / s));
            secs += s;
            pooled.cost.add(&cost);
            pooled.latency_ms.extend(lat);
        }
        pooled.rate = if secs > 0.0 { pooled.cost.units as f64 / secs } else { 0.0 };
        pooled.latency_ms.sort_by(f64::total_cmp);
        batched.push(pooled);
    }

    let dsn = db.url.clone();
    let pgqueuer = pgqueuer::run(&dsn, &t.venv, t.pgqueuer_jobs, t.pgqueuer_consumers, args.rounds.max(3), 200).await?;
    progress(&format!(
        "PGQueuer: enqueue {:.0} jobs/s, drain {:.0} jobs/s (medians)",
        pgqueuer.median(|r| r.enqueue_per_s),
        pgqueuer.median(|r| r.drain_per_s)
    ));

    let mut create_rates = Vec::new();
    for round in 0..args.rounds.max(3) {
        let rate = create_round(rig, seeded, t.pgqueuer_jobs, t.create_batch).await?;
        progress(&format!("round {round}: batched create {rate:.0} todos/s"));
        create_rates.push(rate);
    }

    let waiter = RestAgent::new(base, seeded);
    let creator = RestAgent::new(base, seeded);
    let wake = wake_ups(&waiter, &creator, "wake-ups", t.wake_ups, Duration::from_millis(50)).await?;
    Ok((single, batched, pgqueuer, create_rates, wake, pg))
}

/// One window of `agents` on the freshly topped-up queue: (units, seconds, latencies in
/// ms, cost with the cluster's CPU and WAL).
async fn window(args: &Args, rig: &Rig, agents: Vec<Agent>) -> BenchResult<(u64, f64, Vec<f64>, Cost)> {
    let budget = rig.db.prepare_window(args, &rig.seeded).await?;
    rig.db.exec_batch("CHECKPOINT").await?;
    let load = Load::start(agents, budget);
    tokio::time::sleep(args.warmup()).await;
    let tally = load.tally();
    let from = (Mark::now(&tally, &rig.probe), ClusterMark::now(&rig.db, &rig.probe).await?);
    load.record(true);
    tokio::time::sleep(args.window()).await;
    let to = (Mark::now(&tally, &rig.probe), ClusterMark::now(&rig.db, &rig.probe).await?);
    load.record(false);
    let w = load.stop(from.0, to.0).await;
    w.check()?;
    let lat = w.latencies_us.iter().map(|us| f64::from(*us) / 1000.0).collect();
    Ok((w.cycles, w.seconds, lat, from.1.until(&to.1, w.cycles)))
}

/// Creates `total` todos on a queue of their own in batches of `batch` from one agent;
/// todos per second.
async fn create_round(rig: &Rig, seeded: &Seeded, total: u64, batch: u64) -> BenchResult<f64> {
    let maker = BatchCreate { agent: RestAgent::new(rig.server.base(), seeded), queue: "created".into(), size: batch };
    rig.db.exec_batch("CHECKPOINT").await?;
    let started = Instant::now();
    let mut made = 0;
    while made < total {
        made += crate::load::BatchWork::once(&maker).await?;
    }
    let rate = made as f64 / started.elapsed().as_secs_f64();
    rig.db
        .exec_batch(&format!("DELETE FROM todos WHERE endpoint_id = '{}' AND queue = 'created'", seeded.cycles.0))
        .await?;
    Ok(rate)
}

/// The single-row cycle at the highest concurrency against the baseline binary.
async fn before(args: &Args, baseline: &Path) -> BenchResult<Before> {
    let agents = args.throughput.throughput_clients.iter().copied().max().unwrap_or(16);
    let rig = Rig::start(args, baseline, "before").await?;
    let mut pooled = (0u64, 0.0f64, Cost::default());
    let mut failed = None;
    for _ in 0..args.rounds {
        let rest = (0..agents).map(|_| Agent::rest(rig.server.base(), &rig.seeded)).collect();
        match window(args, &rig, rest).await {
            Ok((n, s, _, cost)) => {
                pooled.0 += n;
                pooled.1 += s;
                pooled.2.add(&cost);
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let finished = rig.finish().await;
    if let Some(e) = failed {
        return Err(e);
    }
    finished?;
    Ok(Before {
        revision: args.claim_cost.baseline_revision.clone(),
        agents,
        rate: if pooled.1 > 0.0 { pooled.0 as f64 / pooled.1 } else { 0.0 },
        cost: pooled.2,
    })
}
