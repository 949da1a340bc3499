//! "With no budget set, claims cost what they cost today" (issue 13, admission
//! budgets): REST claim_next → complete cycles by `--claim-cost-agents` agents against
//! this build's server and against a baseline binary built from the commit before
//! admission budgets landed, in alternating rounds. Each server serves a fresh database
//! of its own that it migrated itself (the baseline's schema has no `queue_admission`),
//! seeded alike; no queue has a budget. The two servers run side by side for the whole
//! measurement, so both pay for the other's idle timers alike.
//!
//! Only REST cycles: the foundation benchmark's raw-SQL side runs this build's store,
//! whose claim reads `queue_admission`, which the baseline's database lacks.

pub mod doc;

use std::path::{Path, PathBuf};
use std::time::Instant;

use chrono::Utc;

use crate::database::{BenchDb, Seeded};
use crate::load::{self, Agent, Window};
use crate::machine::{Machine, Probe};
use crate::server::Server;
use crate::{Args, BenchResult, progress};

/// The claim-cost benchmark's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ClaimCostArgs {
    /// Run only the claim-cost comparison (needs `--baseline-bin`); it rewrites only its
    /// own section of `--doc`.
    #[arg(long, requires = "baseline_bin", conflicts_with_all = ["only_board", "only_intake", "only_hooks", "only_outbox"])]
    pub only_claim_cost: bool,
    /// The `switchboard` binary built from the commit before admission budgets (the
    /// claim-cost baseline). A full run compares claims with it too when given.
    #[arg(long)]
    pub baseline_bin: Option<PathBuf>,
    /// The baseline's source revision, recorded with the results.
    #[arg(long, default_value = "unknown")]
    pub baseline_revision: String,
    /// Concurrent REST agents in every claim-cost window.
    #[arg(long, default_value_t = 16)]
    pub claim_cost_agents: usize,
}

/// One side of the comparison.
pub struct Side {
    /// "this build" or "baseline".
    pub name: &'static str,
    /// Its windows, pooled.
    pub window: Window,
    /// Its server's peak resident set at the end, KiB.
    pub peak_rss_kib: u64,
}

/// What the comparison found.
pub struct ClaimCostRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and the settings that matter.
    pub pg: (String, String),
    /// This build's revision.
    pub revision: String,
    /// The baseline's revision.
    pub baseline_revision: String,
    /// Agents per window.
    pub agents: usize,
    /// Windows per side.
    pub rounds: u32,
    /// Measured seconds per window.
    pub seconds: u64,
    /// Warm-up seconds per window.
    pub warmup: u64,
    /// Done and pending todos on each database's queue.
    pub table: (u32, u32),
    /// This build, then the baseline.
    pub sides: [Side; 2],
    /// Wall time of the whole comparison, seconds.
    pub total_seconds: f64,
}

impl ClaimCostRun {
    /// This build's cycles per second over the baseline's.
    pub fn ratio(&self) -> f64 {
        let base = self.sides[1].window.rate();
        if base > 0.0 { self.sides[0].window.rate() / base } else { 0.0 }
    }
}

/// A server on a database of its own, seeded (also the throughput benchmark's).
pub(crate) struct Rig {
    /// The database.
    pub(crate) db: BenchDb,
    /// The server on it.
    pub(crate) server: Server,
    /// What seeding made.
    pub(crate) seeded: Seeded,
    /// The server's and the database's CPU probe.
    pub(crate) probe: Probe,
}

impl Rig {
    /// Starts `bin` on a fresh database tagged `tag`, and seeds it.
    pub(crate) async fn start(args: &Args, bin: &Path, tag: &str) -> BenchResult<Rig> {
        let db = BenchDb::create_tagged(&args.admin_url, Some(tag)).await?;
        let mut server = match Server::start(bin, &db.url, args.pool_size).await {
            Ok(s) => s,
            Err(e) => {
                let _ = db.drop_database().await;
                return Err(e);
            }
        };
        let ready = async {
            server.wait_ready(std::time::Duration::from_secs(120)).await?;
            // No expired leases: nothing here reaps.
            db.seed(&Args { expired: 0, ..args.clone() }).await
        }
        .await;
        match ready {
            Ok(seeded) => {
                let probe = Probe { server_pid: server.pid(), database: db.name().to_owned(), threads: Vec::new() };
                progress(&format!("{tag}: {} ready on {}, seeded", bin.display(), db.name()));
                Ok(Rig { db, server, seeded, probe })
            }
            Err(e) => {
                let _ = server.stop().await;
                let _ = db.drop_database().await;
                Err(format!("{tag}: {e}"))
            }
        }
    }

    /// One window of cycles on a freshly topped-up and vacuumed queue.
    async fn window(&self, args: &Args) -> BenchResult<Window> {
        let budget = self.db.prepare_window(args, &self.seeded).await?;
        let agents = (0..args.claim_cost.claim_cost_agents).map(|_| Agent::rest(self.server.base(), &self.seeded));
        let window = load::measure(agents.collect(), budget, args.warmup(), args.window(), &self.probe).await;
        window.check()?;
        Ok(window)
    }

    /// Stops the server and drops the database; answers the server's peak RSS.
    pub(crate) async fn finish(self) -> BenchResult<u64> {
        let memory = self.server.memory_kib();
        let stopped = self.server.stop().await;
        let dropped = self.db.drop_database().await;
        stopped?;
        dropped?;
        Ok(memory?.0)
    }
}

/// Runs the comparison: `current` (this build's server) against `--baseline-bin`.
pub async fn run(args: &Args, current: &Path) -> BenchResult<ClaimCostRun> {
    let c = &args.claim_cost;
    let baseline = c.baseline_bin.clone().ok_or("--baseline-bin is required for the claim-cost comparison")?;
    if c.claim_cost_agents == 0 {
        return Err("--claim-cost-agents must be positive".into());
    }
    let started = Instant::now();
    let now = Rig::start(args, current, "now").await?;
    let base = match Rig::start(args, &baseline, "base").await {
        Ok(r) => r,
        Err(e) => {
            let _ = now.finish().await;
            return Err(e);
        }
    };
    let pg = now.db.settings().await;
    let measured = measure(args, &now, &base).await;
    let (now_rss, base_rss) = (now.finish().await, base.finish().await);
    let [now_window, base_window] = measured?;
    Ok(ClaimCostRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: pg?,
        revision: args.revision.clone(),
        baseline_revision: c.baseline_revision.clone(),
        agents: c.claim_cost_agents,
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        table: (args.done, args.pending),
        sides: [
            Side { name: "this build", window: now_window, peak_rss_kib: now_rss? },
            Side { name: "baseline", window: base_window, peak_rss_kib: base_rss? },
        ],
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The windows, rounds alternating which side goes first (this build, baseline,
/// baseline, this build, …) so that a drift in the machine's load favours neither.
async fn measure(args: &Args, now: &Rig, base: &Rig) -> BenchResult<[Window; 2]> {
    let (mut now_w, mut base_w) = (Window::default(), Window::default());
    for round in 0..args.rounds {
        for now_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            if now_turn {
                let w = now.window(args).await?;
                progress(&format!("round {round}: this build {:.0} cycles/s", w.rate()));
                now_w.merge(w);
            } else {
                let w = base.window(args).await?;
                progress(&format!("round {round}: baseline {:.0} cycles/s", w.rate()));
                base_w.merge(w);
            }
        }
    }
    Ok([now_w, base_w])
}
