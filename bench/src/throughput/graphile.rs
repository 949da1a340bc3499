//! Graphile Worker, the Node.js PostgreSQL job queue, on the same database in the same
//! run: per round and concurrency, a backlog of no-op jobs added in bulk, prepared as
//! the product's queue is (vacuumed, analyzed, checkpointed), then drained by one
//! `run()` with that concurrency (bench/graphile/drain.js). The version is pinned in
//! bench/graphile/package.json and its lock; `npm ci` installs it into
//! `target/bench-node` on first use. 0.16.x is the last line that runs on Node 20
//! (0.17 needs Node 22); it has no local queue, so every job is fetched with its own
//! statement.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tokio::process::Command;

use super::child;
use super::series::{Round, Series};
use crate::database::BenchDb;
use crate::machine::Probe;
use crate::{BenchResult, progress};

/// The version pinned in bench/graphile/package.json.
pub const VERSION: &str = "0.16.6";
/// The schema it works in.
const SCHEMA: &str = "graphile_worker";
/// Jobs per `add_jobs` call.
pub const ADD_BATCH: u64 = 500;
/// Its `pollInterval`, ms (jobs are there from the start: it matters only when idle).
pub const POLL_MS: u64 = 10;

/// What the driver prints after a drain.
#[derive(Debug, Deserialize)]
struct Printed {
    add_per_s: f64,
    drain_s: f64,
    completed: u64,
    failed: u64,
    left: u64,
}

/// One concurrency's rounds.
#[derive(Debug, Clone)]
pub struct Point {
    /// Jobs run at once by the one worker.
    pub concurrency: usize,
    /// Its drains (units: jobs).
    pub drains: Series,
}

/// Every concurrency.
#[derive(Debug, Clone, Default)]
pub struct GraphileRun {
    /// In the order given.
    pub points: Vec<Point>,
    /// Jobs per drain.
    pub jobs: u64,
    /// Payload bytes per job.
    pub payload_bytes: usize,
    /// Rates of adding jobs in bulk, jobs/s, one per drain.
    add_rates: Vec<f64>,
    /// The Node.js version it ran on.
    pub node: String,
}

impl GraphileRun {
    /// The concurrency with the highest median drain rate.
    pub fn best(&self) -> Option<&Point> {
        self.points.iter().filter(|p| !p.drains.is_empty()).max_by(|a, b| a.drains.rate().total_cmp(&b.drains.rate()))
    }
}

/// The installed packages' folder, installed with `npm ci` from the lock when missing.
async fn install(prefix: &Path) -> BenchResult<PathBuf> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("graphile");
    let modules = prefix.join("node_modules");
    let installed = modules.join("graphile-worker/package.json");
    let current =
        std::fs::read_to_string(&installed).ok().is_some_and(|t| t.contains(&format!("\"version\": \"{VERSION}\"")));
    let same_lock =
        std::fs::read(prefix.join("package-lock.json")).ok() == std::fs::read(source.join("package-lock.json")).ok();
    if current && same_lock {
        return Ok(modules);
    }
    progress(&format!("installing graphile-worker {VERSION} into {} (npm ci)", prefix.display()));
    std::fs::create_dir_all(prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
    for file in ["package.json", "package-lock.json"] {
        std::fs::copy(source.join(file), prefix.join(file)).map_err(|e| format!("copying {file}: {e}"))?;
    }
    let ok = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--ignore-scripts"])
        .current_dir(prefix)
        .status()
        .await
        .is_ok_and(|s| s.success());
    if !ok {
        return Err(format!("npm ci of graphile-worker {VERSION} failed in {} (needs node and npm)", prefix.display()));
    }
    Ok(modules)
}

/// The installed driver: its modules folder and the Node.js version.
pub struct Driver {
    modules: PathBuf,
    /// `node --version`.
    pub node: String,
}

/// Installs Graphile Worker under `prefix` when missing; the driver.
pub async fn driver(prefix: &Path) -> BenchResult<Driver> {
    let modules = install(prefix).await?;
    let node = Command::new("node").arg("--version").output().await.map_err(|e| format!("node: {e}"))?;
    Ok(Driver { modules, node: String::from_utf8_lossy(&node.stdout).trim().to_owned() })
}

impl GraphileRun {
    /// Every concurrency in `concurrency`, nothing run yet.
    pub fn new(concurrency: &[usize], jobs: u64, payload_bytes: usize, node: &str) -> GraphileRun {
        GraphileRun {
            points: concurrency.iter().map(|&concurrency| Point { concurrency, drains: Series::default() }).collect(),
            jobs,
            payload_bytes,
            add_rates: Vec::new(),
            node: node.to_owned(),
        }
    }

    /// The median rate of adding jobs in bulk, jobs/s.
    pub fn add_rate(&self) -> f64 {
        super::series::median(self.add_rates.clone())
    }

    /// One drain at every concurrency (one round).
    pub async fn round(&mut self, db: &BenchDb, probe: &Probe, driver: &Driver, round: u32) -> BenchResult<()> {
        let (jobs, payload_bytes) = (self.jobs, self.payload_bytes);
        for p in &mut self.points {
            let (drain, add) = drain(db, probe, &driver.modules, jobs, payload_bytes, p.concurrency).await?;
            progress(&format!(
                "round {round}: Graphile Worker {VERSION}, concurrency {}: {:.0} jobs/s",
                p.concurrency,
                drain.rate()
            ));
            p.drains.push(drain);
            self.add_rates.push(add);
        }
        Ok(())
    }
}

/// Drops Graphile Worker's schema (after the last round).
pub async fn drop_schema(db: &BenchDb) -> BenchResult<()> {
    db.exec_batch(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")).await
}

async fn drain(
    db: &BenchDb,
    probe: &Probe,
    modules: &Path,
    jobs: u64,
    payload_bytes: usize,
    concurrency: usize,
) -> BenchResult<(Round, f64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("graphile/drain.js");
    let mut cmd = Command::new("node");
    cmd.arg(script)
        .env("NODE_PATH", modules)
        .args(["--dsn", &db.url, "--schema", SCHEMA, "--jobs", &jobs.to_string()])
        .args(["--batch", &ADD_BATCH.to_string(), "--concurrency", &concurrency.to_string()])
        .args(["--poll-ms", &POLL_MS.to_string(), "--payload-bytes", &payload_bytes.to_string()]);
    let marked = child::run::<Printed>(cmd, db, probe, "the Graphile Worker driver", Duration::from_secs(900)).await?;
    let p = &marked.result;
    if p.failed > 0 || p.left > 0 || p.completed != jobs {
        return Err(format!(
            "Graphile Worker completed {} of {jobs} jobs ({} failed) and left {}",
            p.completed, p.failed, p.left
        ));
    }
    let cost = marked.cost(db, p.completed).await;
    Ok((Round { units: p.completed, seconds: p.drain_s, cost, ..Round::default() }, p.add_per_s))
}
