//! Issue 41's throughput benchmark, in one run on one PostgreSQL: the bare-SQL ceiling
//! of a claim cycle (pgbench, ceiling.rs); the product over REST (agents.rs) with
//! compiled agents, single-row claim-next → complete cycles at 1/4/16 agents and
//! batched drains (claim 100 → complete 100), each with the full and with the lean
//! answer; the same with Python `requests` agents (python.rs); PGQueuer over a grid of
//! its set-ups (pgqueuer.rs); Graphile Worker at several concurrencies (graphile.rs);
//! batched creation and the long-poll wake-up; and, on a server and database of their
//! own, the drain of a burst before and after ANALYZE (stability.rs). Every figure is
//! the median of its rounds; a round runs every part once, so a drift in the machine's
//! load spreads over all of them. CPU and WAL (with and without full-page images, wal.rs)
//! are measured over every span. With `--baseline-bin`, the single cycle at the highest
//! concurrency is also run against a baseline server on a database of its own.

pub mod agents;
pub mod ceiling;
mod child;
pub mod doc;
pub mod graphile;
pub mod pgqueuer;
mod python;
pub mod series;
pub mod stability;
mod targets;
mod venv;
pub mod wal;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::Utc;

use crate::claim_cost::Rig;
use crate::database::{QUEUE, Seeded};
use crate::load::{Agent, Load, Mark};
use crate::machine::Machine;
use crate::{Args, BenchResult, progress};
use agents::{BatchCreate, BatchDrain, LeanCycle, RestAgent, WakeUps, quantile, wake_ups};
use ceiling::{ClusterMark, Cost};
use graphile::GraphileRun;
use pgqueuer::PgqRun;
use series::{Round, Series};
use stability::StabilityRun;

/// The throughput benchmark's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ThroughputArgs {
    /// Run only the throughput benchmark; it rewrites only its own section of `--doc`.
    #[arg(long, conflicts_with_all = ["only_board", "only_intake", "only_hooks", "only_outbox", "only_claim_cost"])]
    pub only_throughput: bool,
    /// Rounds of the throughput run (every part once per round; figures are medians).
    /// `--rounds` is not used here.
    #[arg(long, default_value_t = 3)]
    pub throughput_rounds: u32,
    /// Pending todos on the product's queue before every window (topped up; `--pending`
    /// is not used here).
    #[arg(long, default_value_t = 400_000)]
    pub throughput_pending: u32,
    /// Bytes of every todo's and job's payload (`{"body": "xx…"}`), on every side.
    #[arg(long, default_value_t = 200)]
    pub throughput_payload_bytes: u32,
    /// Only the product and the ceiling: no PGQueuer, Graphile Worker, Python agents,
    /// lean answers or plan stability (scripts/bench-ab).
    #[arg(long)]
    pub throughput_product_only: bool,
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
    /// Jobs PGQueuer enqueues and drains at each grid point per round (and todos the
    /// batched create makes).
    #[arg(long, default_value_t = 30_000)]
    pub pgqueuer_jobs: u64,
    /// PGQueuer's consumers, one grid axis.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 4, 16])]
    pub pgqueuer_consumers: Vec<usize>,
    /// PGQueuer's dequeue batches, the other axis.
    #[arg(long, value_delimiter = ',', default_values_t = vec![10, 100])]
    pub pgqueuer_batches: Vec<u64>,
    /// Graphile Worker's concurrencies (one `run()` each).
    #[arg(long, value_delimiter = ',', default_values_t = vec![4, 16, 32])]
    pub graphile_concurrency: Vec<usize>,
    /// Jobs Graphile Worker drains per concurrency and round.
    #[arg(long, default_value_t = 20_000)]
    pub graphile_jobs: u64,
    /// Threads of the Python agents' process.
    #[arg(long, default_value_t = 16)]
    pub python_threads: usize,
    /// Todos on `todos` when the plan-stability table is analyzed small.
    #[arg(long, default_value_t = 300)]
    pub stability_small: u32,
    /// Todos the plan-stability burst creates over REST.
    #[arg(long, default_value_t = 200_000)]
    pub stability_burst: u64,
    /// Todos per batched create call (PGQueuer's enqueue batch is the same).
    #[arg(long, default_value_t = 500)]
    pub create_batch: u64,
    /// Long-poll wake-ups timed at idle.
    #[arg(long, default_value_t = 200)]
    pub wake_ups: usize,
    /// Where PGQueuer and `requests` are installed when missing.
    #[arg(long, default_value = "target/bench-venv")]
    pub venv: PathBuf,
    /// Where Graphile Worker is installed (`npm ci`) when missing.
    #[arg(long, default_value = "target/bench-node")]
    pub node_prefix: PathBuf,
}

/// One concurrency's single-row figures.
pub struct SingleRow {
    /// Agents or pgbench clients.
    pub clients: usize,
    /// The ceiling (pgbench).
    pub ceiling: Series,
    /// REST cycles with the full answer, compiled agents.
    pub rest: Series,
    /// The same with the lean answer (empty when the server has none).
    pub lean: Series,
}

/// One agent count's batched drains, compiled agents.
pub struct Batched {
    /// Agents.
    pub agents: usize,
    /// With the full answer (units: todos; latency: a batch's round trips).
    pub full: Series,
    /// With the lean answer.
    pub lean: Series,
}

/// The Python agents' windows.
#[derive(Default)]
pub struct PythonRun {
    /// Threads.
    pub threads: usize,
    /// Single-row cycles, full answer.
    pub single: Series,
    /// Single-row cycles, lean answer.
    pub single_lean: Series,
    /// Batched drains, full answer.
    pub batch: Series,
    /// Batched drains, lean answer.
    pub batch_lean: Series,
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
    /// Rounds.
    pub rounds: u32,
    /// Seconds per window.
    pub seconds: u64,
    /// Warm-up seconds.
    pub warmup: u64,
    /// Done and pending todos on the product's queue before each window.
    pub table: (u32, u32),
    /// Whether the server answered the lean claim answer.
    pub lean_served: bool,
    /// Per concurrency.
    pub single: Vec<SingleRow>,
    /// Per batch agent count.
    pub batched: Vec<Batched>,
    /// Python agents (none with `--throughput-product-only`).
    pub python: Option<PythonRun>,
    /// PGQueuer's grid.
    pub pgqueuer: Option<PgqRun>,
    /// Graphile Worker.
    pub graphile: Option<GraphileRun>,
    /// Plan stability.
    pub stability: Option<StabilityRun>,
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

    /// The single-row figures at the lowest concurrency.
    pub fn bottom(&self) -> Option<&SingleRow> {
        self.single.iter().min_by_key(|s| s.clients)
    }

    /// The best batched drain with the full (`lean` false) or lean answer.
    pub fn best_batched(&self, lean: bool) -> Option<(usize, &Series)> {
        self.batched
            .iter()
            .map(|b| (b.agents, if lean { &b.lean } else { &b.full }))
            .filter(|(_, s)| !s.is_empty())
            .max_by(|a, b| a.1.rate().total_cmp(&b.1.rate()))
    }

    /// Median batched create rate.
    pub fn create_rate(&self) -> f64 {
        series::median(self.create_rates.clone())
    }
}

/// Runs the whole benchmark with this build's server `bin`.
pub async fn run(args: &Args, bin: &Path) -> BenchResult<ThroughputRun> {
    let t = &args.throughput;
    if t.throughput_clients.is_empty() || t.throughput_clients.contains(&0) || t.batch_agents.contains(&0) {
        return Err("--throughput-clients and --batch-agents must be positive".into());
    }
    if t.throughput_rounds == 0 {
        return Err("--throughput-rounds must be positive".into());
    }
    // The throughput run's own table size, rounds and payloads.
    let args = &Args {
        pending: t.throughput_pending,
        rounds: t.throughput_rounds,
        todo_payload_bytes: t.throughput_payload_bytes,
        ..args.clone()
    };
    let started = Instant::now();
    let rig = Rig::start(args, bin, "throughput").await?;
    let measured = measure(args, &rig).await;
    let finished = rig.finish().await;
    let m = measured?;
    finished?;
    let stability = if t.throughput_product_only { None } else { Some(plan_stability(args, bin).await?) };
    let before = match &args.claim_cost.baseline_bin {
        Some(baseline) => Some(before(args, baseline).await?),
        None => None,
    };
    Ok(ThroughputRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: m.pg,
        revision: args.revision.clone(),
        args: t.clone(),
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        table: (args.done, args.pending),
        lean_served: m.lean_served,
        single: m.single,
        batched: m.batched,
        python: m.python,
        pgqueuer: m.pgqueuer,
        graphile: m.graphile,
        stability,
        create_rates: m.create_rates,
        wake: m.wake,
        before,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// What the main rig measured.
struct Measured {
    pg: (String, String),
    lean_served: bool,
    single: Vec<SingleRow>,
    batched: Vec<Batched>,
    python: Option<PythonRun>,
    pgqueuer: Option<PgqRun>,
    graphile: Option<GraphileRun>,
    create_rates: Vec<f64>,
    wake: WakeUps,
}

/// The references' installed runtimes, when they run.
struct Peers {
    python: PathBuf,
    graphile: graphile::Driver,
}

async fn measure(args: &Args, rig: &Rig) -> BenchResult<Measured> {
    let t = &args.throughput;
    let (db, seeded) = (&rig.db, &rig.seeded);
    let base = rig.server.base();
    let pg = db.settings().await?;
    let scratch = std::env::temp_dir().join(format!("sb-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let peers = if t.throughput_product_only {
        None
    } else {
        Some(Peers { python: venv::python(&t.venv).await?, graphile: graphile::driver(&t.node_prefix).await? })
    };
    let lean_served = peers.is_some() && agents::lean_answer_served(&RestAgent::new(base, seeded)).await?;
    if peers.is_some() && !lean_served {
        progress("the server does not answer claim-next?answer=lean: the lean figures are skipped");
    }

    let mut single: Vec<SingleRow> = t
        .throughput_clients
        .iter()
        .map(|&clients| SingleRow {
            clients,
            ceiling: Series::default(),
            rest: Series::default(),
            lean: Series::default(),
        })
        .collect();
    let mut batched: Vec<Batched> = t
        .batch_agents
        .iter()
        .map(|&agents| Batched { agents, full: Series::default(), lean: Series::default() })
        .collect();
    let mut python = peers.as_ref().map(|_| PythonRun { threads: t.python_threads, ..PythonRun::default() });
    let payload = t.throughput_payload_bytes as usize;
    let mut pgq =
        peers.as_ref().map(|_| PgqRun::new(&t.pgqueuer_consumers, &t.pgqueuer_batches, t.pgqueuer_jobs, payload));
    let mut gw =
        peers.as_ref().map(|p| GraphileRun::new(&t.graphile_concurrency, t.graphile_jobs, payload, &p.graphile.node));

    for round in 0..args.rounds {
        for row in &mut single {
            single_round(args, rig, row, round, lean_served, &scratch).await?;
        }
        for b in &mut batched {
            // Rounds alternate which answer goes first.
            for lean in if round % 2 == 0 { [false, true] } else { [true, false] } {
                if lean && !lean_served {
                    continue;
                }
                let drains = (0..b.agents)
                    .map(|_| {
                        Agent::Batch(Box::new(BatchDrain {
                            agent: RestAgent::new(base, seeded),
                            queue: QUEUE.into(),
                            limit: t.batch_limit,
                            lean,
                        }))
                    })
                    .collect();
                let r = window(args, rig, drains).await?;
                progress(&format!(
                    "round {round}: batched drain{} at {} agents {:.0} todos/s",
                    if lean { " (lean)" } else { "" },
                    b.agents,
                    r.rate()
                ));
                if lean { b.lean.push(r) } else { b.full.push(r) }
            }
        }
        if let (Some(peers), Some(py)) = (&peers, &mut python) {
            python_round(args, rig, &peers.python, py, round, lean_served).await?;
        }
        if let (Some(peers), Some(pgq)) = (&peers, &mut pgq) {
            pgq.round(db, &rig.probe, &peers.python, round).await?;
        }
        if let (Some(peers), Some(gw)) = (&peers, &mut gw) {
            gw.round(db, &rig.probe, &peers.graphile, round).await?;
        }
    }
    if gw.is_some() {
        graphile::drop_schema(db).await?;
    }

    let mut create_rates = Vec::new();
    for round in 0..args.rounds {
        let rate = create_round(rig, seeded, t.pgqueuer_jobs, t.create_batch, payload).await?;
        progress(&format!("round {round}: batched create {rate:.0} todos/s"));
        create_rates.push(rate);
    }

    let waiter = RestAgent::new(base, seeded);
    let creator = RestAgent::new(base, seeded);
    let wake = wake_ups(&waiter, &creator, "wake-ups", t.wake_ups, Duration::from_millis(50)).await?;
    Ok(Measured { pg, lean_served, single, batched, python, pgqueuer: pgq, graphile: gw, create_rates, wake })
}

/// One round of the single-row figures at `row.clients`: the ceiling, REST with the
/// full answer, REST with the lean one; the order reversed in odd rounds.
async fn single_round(
    args: &Args,
    rig: &Rig,
    row: &mut SingleRow,
    round: u32,
    lean_served: bool,
    scratch: &Path,
) -> BenchResult<()> {
    let t = &args.throughput;
    let base = rig.server.base();
    let mut turns = vec![Turn::Ceiling, Turn::Full];
    if lean_served {
        turns.push(Turn::Lean);
    }
    if round % 2 == 1 {
        turns.reverse();
    }
    for turn in turns {
        match turn {
            Turn::Ceiling => {
                let w =
                    ceiling::window(&rig.db, &rig.probe, row.clients, args.seconds, t.ceiling_rows, scratch).await?;
                progress(&format!("round {round}: ceiling at {} clients {:.0} cycles/s", row.clients, w.rate));
                row.ceiling.push(Round {
                    units: w.cycles,
                    seconds: if w.rate > 0.0 { w.cycles as f64 / w.rate } else { 0.0 },
                    p50_ms: w.latency_ms,
                    p99_ms: 0.0,
                    cost: w.cost,
                });
            }
            Turn::Full => {
                let agents = (0..row.clients).map(|_| Agent::rest(base, &rig.seeded)).collect();
                let r = window(args, rig, agents).await?;
                progress(&format!("round {round}: REST at {} agents {:.0} cycles/s", row.clients, r.rate()));
                row.rest.push(r);
            }
            Turn::Lean => {
                let agents = (0..row.clients)
                    .map(|_| {
                        Agent::Batch(Box::new(LeanCycle {
                            agent: RestAgent::new(base, &rig.seeded),
                            queue: QUEUE.into(),
                        }))
                    })
                    .collect();
                let r = window(args, rig, agents).await?;
                progress(&format!("round {round}: REST (lean) at {} agents {:.0} cycles/s", row.clients, r.rate()));
                row.lean.push(r);
            }
        }
    }
    Ok(())
}

/// A side of a single-row round.
#[derive(Clone, Copy)]
enum Turn {
    Ceiling,
    Full,
    Lean,
}

/// One round of the Python agents: single-row and batched, full and lean answers.
async fn python_round(
    args: &Args,
    rig: &Rig,
    py: &Path,
    run: &mut PythonRun,
    round: u32,
    lean_served: bool,
) -> BenchResult<()> {
    let limit = args.throughput.batch_limit;
    for (batch, lean) in [(false, false), (false, true), (true, false), (true, true)] {
        if lean && !lean_served {
            continue;
        }
        let shape = python::Shape { threads: run.threads, limit: batch.then_some(limit), lean };
        let r = python::window(rig, args, py, shape).await?;
        progress(&format!(
            "round {round}: Python requests agents ({} threads), {}{}: {:.0} todos/s",
            run.threads,
            if batch { "batched drain" } else { "single-row cycles" },
            if lean { ", lean" } else { "" },
            r.rate()
        ));
        match (batch, lean) {
            (false, false) => run.single.push(r),
            (false, true) => run.single_lean.push(r),
            (true, false) => run.batch.push(r),
            (true, true) => run.batch_lean.push(r),
        }
    }
    Ok(())
}

/// The plan-stability run on a server and database of its own.
async fn plan_stability(args: &Args, bin: &Path) -> BenchResult<StabilityRun> {
    let t = &args.throughput;
    let small = Args { done: 0, pending: t.stability_small, ..args.clone() };
    let rig = Rig::start(&small, bin, "stability").await?;
    let settings = stability::Settings {
        small: t.stability_small,
        burst: t.stability_burst,
        creators: 4,
        create_batch: t.create_batch,
        agents: t.batch_agents.iter().copied().max().unwrap_or(16),
        limit: t.batch_limit,
        payload_bytes: t.throughput_payload_bytes,
    };
    let measured = stability::run(&rig, &settings, args.rounds).await;
    let finished = rig.finish().await;
    let run = measured?;
    finished?;
    Ok(run)
}

/// One window of `agents` on the freshly topped-up queue, after a `CHECKPOINT`.
async fn window(args: &Args, rig: &Rig, agents: Vec<Agent>) -> BenchResult<Round> {
    let budget = rig.db.prepare_window(args, &rig.seeded).await?;
    rig.db.exec_batch("CHECKPOINT").await?;
    let load = Load::start(agents, budget);
    tokio::time::sleep(args.warmup()).await;
    let tally = load.tally();
    let cluster = ClusterMark::start(&rig.db, &rig.probe).await?;
    let from = (Mark::now(&tally, &rig.probe), cluster);
    load.record(true);
    tokio::time::sleep(args.window()).await;
    let to = (Mark::now(&tally, &rig.probe), ClusterMark::now(&rig.db, &rig.probe).await?);
    load.record(false);
    let w = load.stop(from.0, to.0).await;
    w.check()?;
    let lat: Vec<f64> = w.latencies_us.iter().map(|us| f64::from(*us) / 1000.0).collect();
    let cost = from.1.cost_until(&rig.db, &to.1, w.cycles).await;
    Ok(Round { units: w.cycles, seconds: w.seconds, p50_ms: quantile(&lat, 0.5), p99_ms: quantile(&lat, 0.99), cost })
}

/// Creates `total` todos on a queue of their own in batches of `batch` from one agent;
/// todos per second.
async fn create_round(rig: &Rig, seeded: &Seeded, total: u64, batch: u64, payload_bytes: usize) -> BenchResult<f64> {
    let maker = BatchCreate {
        agent: RestAgent::new(rig.server.base(), seeded),
        queue: "created".into(),
        size: batch,
        payload_bytes,
    };
    rig.db.exec_batch("CHECKPOINT").await?;
    let started = Instant::now();
    let mut made = 0;
    while made < total {
        made += maker.create(total - made).await?;
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
            Ok(r) => {
                pooled.0 += r.units;
                pooled.1 += r.seconds;
                pooled.2.add(&r.cost);
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
