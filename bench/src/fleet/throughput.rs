//! Cycles per second through nginx with 1, 2 and 3 replicas on the same PostgreSQL,
//! beside one replica asked directly (the balancer's own cost) and the bare-SQL ceiling
//! (pgbench, throughput/ceiling.rs) on the same cluster in the same run; and the
//! PostgreSQL connections each configuration holds, counted in `pg_stat_activity` per
//! `application_name` at idle and under load.
//!
//! On one small machine this measures what the balancer and each further instance
//! cost (every process shares the same cores), not scale-out.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::Utc;

use super::cpu::{self, Spent};
use super::rig::{Ground, Rig, Shape};
use crate::database::{BenchDb, Seeded};
use crate::load::{Agent, Load, Mark};
use crate::machine::{CpuSample, Machine};
use crate::throughput::ceiling::{self, CeilingWindow};
use crate::{Args, BenchResult, progress};

/// PostgreSQL connections by `application_name` (`(pool)` for the unnamed ones).
pub type Census = BTreeMap<String, i64>;

/// One configuration's figures, pooled over the rounds.
#[derive(Debug, Clone)]
pub struct Config {
    /// Replicas serving.
    pub replicas: usize,
    /// Through nginx, or straight to the one replica.
    pub balanced: bool,
    /// Cycles and seconds.
    pub cycles: (u64, f64),
    /// Cycle latencies, µs, sorted.
    pub latencies_us: Vec<u32>,
    /// CPU in the windows.
    pub cpu: Spent,
    /// Connections at idle (3 s after the configuration came up, nothing asked; a
    /// replica that served an earlier window keeps what its pool opened then).
    pub idle: Census,
    /// Connections in the middle of a window (the most seen over the rounds).
    pub loaded: Census,
}

impl Config {
    /// What the row is called.
    pub fn label(&self) -> String {
        match (self.replicas, self.balanced) {
            (1, false) => "1 replica, direct (no balancer)".to_owned(),
            (1, true) => "1 replica via nginx".to_owned(),
            (n, _) => format!("{n} replicas via nginx"),
        }
    }

    /// Cycles per second.
    pub fn rate(&self) -> f64 {
        if self.cycles.1 > 0.0 { self.cycles.0 as f64 / self.cycles.1 } else { 0.0 }
    }

    /// The `q` quantile of cycle latency, ms.
    pub fn latency_ms(&self, q: f64) -> f64 {
        let n = self.latencies_us.len();
        let i = ((n as f64 * q) as usize).min(n.saturating_sub(1));
        self.latencies_us.get(i).map_or(0.0, |us| f64::from(*us) / 1000.0)
    }

    /// CPU µs per cycle of `s` seconds.
    pub fn per_cycle_us(&self, s: f64) -> f64 {
        if self.cycles.0 > 0 { s * 1e6 / self.cycles.0 as f64 } else { 0.0 }
    }
}

/// The throughput part's run.
pub struct Throughput {
    /// When.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL's version and settings.
    pub pg: (String, String),
    /// nginx's version.
    pub nginx: String,
    /// Agents (and pgbench clients).
    pub agents: usize,
    /// Rounds; measured and warm-up seconds per window.
    pub rounds: u32,
    /// Measured seconds per window.
    pub seconds: u64,
    /// Warm-up seconds per window.
    pub warmup: u64,
    /// Each replica's pool.
    pub pool_size: u32,
    /// Done and pending todos before each window.
    pub table: (u32, u32),
    /// The configurations.
    pub configs: Vec<Config>,
    /// The ceiling's windows.
    pub ceiling: Vec<CeilingWindow>,
    /// Connections of three replicas just started (3 s after the last was ready,
    /// nothing asked yet), before any window.
    pub fresh: Census,
}

impl Throughput {
    /// The ceiling's pooled rate.
    pub fn ceiling_rate(&self) -> f64 {
        let cycles: u64 = self.ceiling.iter().map(|w| w.cycles).sum();
        let seconds: f64 = self.ceiling.iter().map(|w| w.cycles as f64 / w.rate.max(f64::MIN_POSITIVE)).sum();
        if seconds > 0.0 { cycles as f64 / seconds } else { 0.0 }
    }
}

/// The replicas' settings here: no sweeps or retention passes in the windows (as the
/// other benchmarks' servers), the pool as the run says.
fn settings(args: &Args) -> Vec<(&'static str, String)> {
    let day_ms = (24 * 3600 * 1000).to_string();
    vec![
        ("SWITCHBOARD_DB_POOL_SIZE", args.pool_size.to_string()),
        ("SWITCHBOARD_LEASE_REAPER_INTERVAL_MS", day_ms.clone()),
        ("SWITCHBOARD_INTERRUPT_REAPER_INTERVAL_MS", day_ms.clone()),
        ("SWITCHBOARD_RETRY_SCHEDULER_INTERVAL_MS", day_ms.clone()),
        ("SWITCHBOARD_ENDPOINT_EXPIRY_INTERVAL_MS", day_ms),
        ("SWITCHBOARD_RETENTION_DAYS", "0".into()),
    ]
}

/// Runs the part with this build's `bin`.
pub async fn run(args: &Args, bin: &Path) -> BenchResult<Throughput> {
    let ground = Ground::prepare(200).await?;
    let db = BenchDb::create_tagged(&ground.cluster.url("postgres"), Some("fleet")).await?;
    let shape =
        Shape { bin: bin.to_owned(), replicas: 3, extra: settings(args), access_log: false, max_connections: 200 };
    let url = db.url.clone();
    let mut rig = Rig::start_on(ground, &url, &shape).await?;
    let measured = measure(args, &db, &mut rig).await;
    let stopped = rig.stop(args.fleet.fleet_keep).await;
    let run = measured?;
    stopped?;
    Ok(run)
}

async fn measure(args: &Args, db: &BenchDb, rig: &mut Rig) -> BenchResult<Throughput> {
    tokio::time::sleep(Duration::from_secs(3)).await;
    let fresh = census(db).await?;
    let seeded = db.seed(&Args { expired: 0, ..args.clone() }).await?;
    progress(&format!("fleet: seeded {} done and {} pending todos", args.done, args.pending));
    let pg = db.settings().await?;
    let scratch = rig.dir.join("pgbench");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let agents = args.fleet.fleet_agents;
    let shapes = [(1, false), (1, true), (2, true), (3, true)];
    let mut configs: Vec<Config> = shapes
        .iter()
        .map(|&(replicas, balanced)| Config {
            replicas,
            balanced,
            cycles: (0, 0.0),
            latencies_us: Vec::new(),
            cpu: Spent::default(),
            idle: Census::new(),
            loaded: Census::new(),
        })
        .collect();
    let mut ceilings = Vec::new();
    let machine_probe = crate::machine::Probe { server_pid: 0, database: db.name().to_owned(), threads: Vec::new() };
    for round in 0..args.rounds {
        // Rounds alternate the order, so a drift in the machine's load favours none.
        let mut order: Vec<Option<usize>> = std::iter::once(None).chain((0..configs.len()).map(Some)).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for turn in order {
            match turn {
                None => {
                    let w = ceiling::window(
                        db,
                        &machine_probe,
                        agents,
                        args.seconds,
                        args.throughput.ceiling_rows,
                        &scratch,
                    )
                    .await?;
                    progress(&format!("fleet round {round}: ceiling at {agents} clients {:.0} cycles/s", w.rate));
                    ceilings.push(w);
                }
                Some(i) => {
                    let c = &mut configs[i];
                    serve_with(rig, c.replicas).await?;
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    let idle = census(db).await?;
                    let base = if c.balanced { rig.balancer.base() } else { rig.replicas[0].base() };
                    let (cycles, seconds, lat, cpu, loaded) = window(args, db, rig, &seeded, &base, agents).await?;
                    progress(&format!("fleet round {round}: {} {:.0} cycles/s", c.label(), cycles as f64 / seconds));
                    c.cycles.0 += cycles;
                    c.cycles.1 += seconds;
                    c.latencies_us.extend(lat);
                    c.cpu.add(&cpu);
                    c.idle = idle;
                    for (name, n) in loaded {
                        let seen = c.loaded.entry(name).or_default();
                        *seen = (*seen).max(n);
                    }
                }
            }
        }
    }
    for c in &mut configs {
        c.latencies_us.sort_unstable();
    }
    serve_with(rig, 3).await?;
    Ok(Throughput {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg,
        nginx: super::balancer::version(),
        agents,
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        pool_size: args.pool_size,
        table: (args.done, args.pending),
        configs,
        ceiling: ceilings,
        fresh,
    })
}

/// Runs exactly the first `n` replicas, and the balancer over them.
async fn serve_with(rig: &mut Rig, n: usize) -> BenchResult<()> {
    for (i, r) in rig.replicas.iter_mut().enumerate() {
        if i < n && !r.running() {
            r.restart()?;
            r.wait_ready(Duration::from_secs(60)).await?;
        } else if i >= n && r.running() {
            r.terminate().await?;
        }
    }
    let ports: Vec<u16> = rig.replicas.iter().take(n).map(|r| r.port()).collect();
    rig.balancer.reload(&ports).await
}

/// Connections to the benchmark database now, by `application_name`, this one left out.
async fn census(db: &BenchDb) -> BenchResult<Census> {
    let rows = db
        .client()
        .query(
            "SELECT coalesce(nullif(application_name, ''), '(pool)'), count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1",
            &[],
        )
        .await
        .map_err(|e| format!("pg_stat_activity: {e}"))?;
    Ok(rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1))).collect())
}

type Measured = (u64, f64, Vec<u32>, Spent, Census);

/// One window of `agents` against `base` on a topped-up, vacuumed queue.
async fn window(
    args: &Args,
    db: &BenchDb,
    rig: &Rig,
    seeded: &Seeded,
    base: &str,
    agents: usize,
) -> BenchResult<Measured> {
    let budget = db.prepare_window(args, seeded).await?;
    db.exec_batch("CHECKPOINT").await?;
    let probe = cpu::Probe {
        replicas: rig.replicas.iter().map(|r| r.pid()).filter(|p| *p != 0).collect(),
        nginx: rig.balancer.pid(),
        postmaster: rig.cluster.postmaster().unwrap_or(0),
    };
    let load = Load::start((0..agents).map(|_| Agent::rest(base, seeded)).collect(), budget);
    tokio::time::sleep(args.warmup()).await;
    let tally = load.tally();
    let mark = |cpu: CpuSample| Mark { at: Instant::now(), cycles: tally.cycles(), cpu };
    let (from, cpu_from) = (mark(CpuSample::default()), probe.sample());
    load.record(true);
    tokio::time::sleep(args.window() / 2).await;
    let loaded = census(db).await?;
    tokio::time::sleep(args.window() / 2).await;
    let (to, cpu_to) = (mark(CpuSample::default()), probe.sample());
    load.record(false);
    let w = load.stop(from, to).await;
    w.check()?;
    Ok((w.cycles, w.seconds, w.latencies_us, Spent::between(cpu_from, cpu_to), loaded))
}
