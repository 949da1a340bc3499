//! Issue 40's fleet: Switchboard run as N replicas behind nginx on one PostgreSQL, on
//! this machine (loopback only, a cluster of its own on a free port, so stopping it
//! never disturbs the machine's PostgreSQL on 5432).
//!
//! - `--fleet-check` (CI, through `scripts/fleet BIN`): the fault run (fault.rs) with
//!   the given build: three replicas, agents and signed deliveries through nginx, a hook
//!   and a Gotify-style sink receiving, one replica killed and started again, the
//!   database stopped and started; then the verdict (verdict.rs). Exits non-zero when a
//!   rule broke.
//! - `--only-fleet` (the bench, through `scripts/fleet --bench` or `scripts/bench
//!   --only-fleet`): cycles per second through nginx with 1, 2 and 3 replicas beside the
//!   bare-SQL ceiling in the same run, and the PostgreSQL connections each holds
//!   (throughput.rs); then the fault run on the release build with a replica of the
//!   previous release joining and leaving. Writes the `bench:fleet` section of the
//!   results file (doc.rs).

pub mod agent;
pub mod balancer;
pub mod cluster;
pub mod cpu;
pub mod doc;
pub mod fault;
pub mod feeder;
pub mod http;
pub mod journal;
pub mod replica;
pub mod rig;
pub mod setup;
pub mod throughput;
pub mod verdict;

use std::path::{Path, PathBuf};

use crate::{Args, BenchResult, progress};

/// The fleet's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct FleetArgs {
    /// Run only the fleet fault run with `--server-bin` and judge it (CI); writes
    /// nothing.
    #[arg(long, conflicts_with = "only_fleet")]
    pub fleet_check: bool,
    /// Run only the fleet benchmark (throughput through nginx with 1, 2, 3 replicas and
    /// the fault run with the previous release); it rewrites only its own section of
    /// `--doc`.
    #[arg(long)]
    pub only_fleet: bool,
    /// The `switchboard` binary of the previous release (deploy/previous-release), for
    /// the bench's fault run.
    #[arg(long)]
    pub previous_bin: Option<PathBuf>,
    /// Its revision, recorded with the results.
    #[arg(long, default_value = "unknown")]
    pub previous_revision: String,
    /// Agents of the throughput windows.
    #[arg(long, default_value_t = 16)]
    pub fleet_agents: usize,
    /// How many times the fault run stops and starts the database (8 s apart): more
    /// chances to catch what a restart breaks.
    #[arg(long, default_value_t = 1)]
    pub fleet_database_restarts: u32,
    /// Keep the run directory (logs of every replica, nginx and PostgreSQL) even when
    /// every rule held.
    #[arg(long)]
    pub fleet_keep: bool,
}

/// `--fleet-check`: the fault run with `bin`; an error when a rule broke.
pub async fn check(args: &Args, bin: &Path) -> BenchResult<()> {
    let plan = fault::Plan::check().with_database_restarts(args.fleet.fleet_database_restarts);
    let run = fault::run(bin, plan, args.fleet.fleet_keep).await?;
    println!("fleet fault run ({:.0} s of load and drain):\n{}", run.seconds, run.verdict.report());
    if run.verdict.passed() { Ok(()) } else { Err("the fleet broke a rule (see above)".into()) }
}

/// `--only-fleet`: the throughput part, then the fault run with the previous release;
/// writes the section, then fails when the fault run broke a rule.
pub async fn bench(args: &Args, bin: &Path) -> BenchResult<()> {
    let started = std::time::Instant::now();
    let throughput = throughput::run(args, bin).await?;
    progress("fleet: throughput done; the fault run with the previous release follows");
    if args.fleet.previous_bin.is_none() {
        progress("fleet: no --previous-bin: the fault run goes without a replica of the previous release");
    }
    let faults = fault::run(bin, fault::Plan::bench(args.fleet.previous_bin.clone()), args.fleet.fleet_keep).await?;
    println!("{}", doc::table(&throughput, &faults));
    let run = doc::FleetRun {
        throughput,
        faults,
        revision: args.revision.clone(),
        previous_revision: args.fleet.previous_bin.as_ref().map(|_| args.fleet.previous_revision.clone()),
        total_seconds: started.elapsed().as_secs_f64(),
    };
    if !args.no_doc {
        doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the fleet section of {}", args.doc.display()));
    }
    if run.faults.verdict.passed() { Ok(()) } else { Err("the fleet's fault run broke a rule (see above)".into()) }
}
