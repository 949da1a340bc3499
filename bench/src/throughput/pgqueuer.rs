//! PGQueuer, a PostgreSQL queue people pick for this job, on the same database in the
//! same run: its batched enqueue and its drain (bench/pgqueuer_drain.py). The bench
//! installs it into a virtual environment of its own (`target/bench-venv`) when missing.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tokio::process::Command;

use crate::{BenchResult, progress};

/// The PGQueuer release measured (pinned so that runs compare).
const PGQUEUER: &str = "pgqueuer==1.6.0";
/// Its PostgreSQL driver.
const ASYNCPG: &str = "asyncpg>=0.29";

/// One round's figures, as the script prints them.
#[derive(Debug, Clone, Deserialize)]
pub struct PgqRound {
    /// Jobs enqueued per second, in batches.
    pub enqueue_per_s: f64,
    /// Jobs drained per second.
    pub drain_per_s: f64,
    /// Jobs the handlers saw.
    pub processed: u64,
    /// Jobs left in the queue after the drain.
    pub left: u64,
}

#[derive(Deserialize)]
struct Printed {
    rounds: Vec<PgqRound>,
}

/// What PGQueuer did.
#[derive(Debug, Clone)]
pub struct PgqRun {
    /// Every round.
    pub rounds: Vec<PgqRound>,
    /// Jobs per round.
    pub jobs: u64,
    /// Jobs per enqueue call.
    pub enqueue_batch: u64,
    /// Consumers draining.
    pub consumers: usize,
    /// Jobs per dequeue.
    pub dequeue_batch: u64,
}

impl PgqRun {
    /// The median of `f` over the rounds.
    pub fn median(&self, f: impl Fn(&PgqRound) -> f64) -> f64 {
        let mut v: Vec<f64> = self.rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    }
}

/// The venv's python, made (and PGQueuer installed) if missing.
async fn python(venv: &Path) -> BenchResult<PathBuf> {
    let py = venv.join("bin/python");
    let ready = py.is_file()
        && Command::new(&py).args(["-c", "import pgqueuer, asyncpg"]).status().await.is_ok_and(|s| s.success());
    if ready {
        return Ok(py);
    }
    progress(&format!("installing {PGQUEUER} into {}", venv.display()));
    let made = Command::new("python3").arg("-m").arg("venv").arg(venv).status().await;
    if !made.is_ok_and(|s| s.success()) {
        return Err("cannot make a Python venv (apt-get install -y python3-venv)".into());
    }
    let installed = Command::new(venv.join("bin/pip")).args(["install", "-q", PGQUEUER, ASYNCPG]).status().await;
    if !installed.is_ok_and(|s| s.success()) {
        return Err(format!("cannot install {PGQUEUER}"));
    }
    Ok(py)
}

/// Runs the script against `dsn`.
pub async fn run(
    dsn: &str,
    venv: &Path,
    jobs: u64,
    consumers: usize,
    rounds: u32,
    payload_bytes: usize,
) -> BenchResult<PgqRun> {
    let py = python(venv).await?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgqueuer_drain.py");
    let (enqueue_batch, dequeue_batch) = (500, 10);
    let out = Command::new(py)
        .arg(script)
        .args(["--dsn", dsn, "--jobs", &jobs.to_string(), "--enq-batch", &enqueue_batch.to_string()])
        .args(["--consumers", &consumers.to_string(), "--deq-batch", &dequeue_batch.to_string()])
        .args(["--rounds", &rounds.to_string(), "--payload-bytes", &payload_bytes.to_string()])
        .output()
        .await
        .map_err(|e| format!("cannot run the PGQueuer script: {e}"))?;
    if !out.status.success() {
        return Err(format!("the PGQueuer script failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or_default();
    let printed: Printed = serde_json::from_str(line).map_err(|e| format!("PGQueuer's answer ({line}): {e}"))?;
    if let Some(r) = printed.rounds.iter().find(|r| r.left > 0 || r.processed != jobs) {
        return Err(format!("PGQueuer processed {} of {jobs} jobs and left {}", r.processed, r.left));
    }
    Ok(PgqRun { rounds: printed.rounds, jobs, enqueue_batch, consumers, dequeue_batch })
}
