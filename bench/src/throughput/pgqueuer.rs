//! PGQueuer, a PostgreSQL queue people pick for this job, on the same database in the
//! same run, over a grid of its set-ups (consumers × dequeue batch): each point drains
//! a fresh backlog per round (bench/pgqueuer_drain.py), its tables vacuumed, analyzed
//! and checkpointed before the drain as the product's queue is before a window. Its
//! best point (highest median) is the reference. Installed into the bench's venv
//! (venv.rs).

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use tokio::process::Command;

use super::child;
use super::series::{Round, Series};
use crate::database::BenchDb;
use crate::machine::Probe;
use crate::{BenchResult, progress};

/// The PGQueuer release measured (pinned so that runs compare; venv.rs installs it).
pub const VERSION: &str = "1.6.0";
/// Jobs per enqueue call.
pub const ENQUEUE_BATCH: u64 = 500;

/// What the script prints after a drain.
#[derive(Debug, Clone, Deserialize)]
struct Printed {
    enqueue_per_s: f64,
    drain_s: f64,
    processed: u64,
    left: u64,
}

/// One set-up's rounds.
#[derive(Debug, Clone)]
pub struct Point {
    /// Consumers (QueueManagers, one connection each).
    pub consumers: usize,
    /// Jobs per dequeue.
    pub batch: u64,
    /// Its drains (units: jobs).
    pub drains: Series,
    /// Its enqueue rates, jobs/s.
    pub enqueue_rates: Vec<f64>,
}

/// The grid.
#[derive(Debug, Clone, Default)]
pub struct PgqRun {
    /// Every point, in grid order.
    pub points: Vec<Point>,
    /// Jobs per drain.
    pub jobs: u64,
    /// Payload bytes per job.
    pub payload_bytes: usize,
}

impl PgqRun {
    /// A grid of `consumers` × `batches`, nothing run yet.
    pub fn new(consumers: &[usize], batches: &[u64], jobs: u64, payload_bytes: usize) -> PgqRun {
        let points = consumers
            .iter()
            .flat_map(|&consumers| {
                batches.iter().map(move |&batch| Point {
                    consumers,
                    batch,
                    drains: Series::default(),
                    enqueue_rates: Vec::new(),
                })
            })
            .collect();
        PgqRun { points, jobs, payload_bytes }
    }

    /// The point with the highest median drain rate.
    pub fn best(&self) -> Option<&Point> {
        self.points.iter().filter(|p| !p.drains.is_empty()).max_by(|a, b| a.drains.rate().total_cmp(&b.drains.rate()))
    }

    /// The median enqueue rate over every drain.
    pub fn enqueue_rate(&self) -> f64 {
        super::series::median(self.points.iter().flat_map(|p| p.enqueue_rates.iter().copied()).collect())
    }

    /// One drain at every point of the grid (one round), with the venv's `python`.
    pub async fn round(&mut self, db: &BenchDb, probe: &Probe, python: &Path, round: u32) -> BenchResult<()> {
        let (jobs, payload_bytes) = (self.jobs, self.payload_bytes);
        for p in &mut self.points {
            let (drain, enqueue) = drain(db, probe, python, jobs, payload_bytes, p.consumers, p.batch).await?;
            progress(&format!(
                "round {round}: PGQueuer {VERSION}, {} consumers, batches of {}: {:.0} jobs/s",
                p.consumers,
                p.batch,
                drain.rate()
            ));
            p.drains.push(drain);
            p.enqueue_rates.push(enqueue);
        }
        Ok(())
    }
}

/// One drain: (its round, the enqueue rate before it).
async fn drain(
    db: &BenchDb,
    probe: &Probe,
    python: &Path,
    jobs: u64,
    payload_bytes: usize,
    consumers: usize,
    batch: u64,
) -> BenchResult<(Round, f64)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("pgqueuer_drain.py");
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .args(["--dsn", &db.url, "--jobs", &jobs.to_string(), "--enq-batch", &ENQUEUE_BATCH.to_string()])
        .args(["--consumers", &consumers.to_string(), "--deq-batch", &batch.to_string()])
        .args(["--payload-bytes", &payload_bytes.to_string()]);
    let marked = child::run::<Printed>(cmd, db, probe, "the PGQueuer script", Duration::from_secs(600)).await?;
    let p = &marked.result;
    if p.left > 0 || p.processed != jobs {
        return Err(format!("PGQueuer processed {} of {jobs} jobs and left {}", p.processed, p.left));
    }
    let cost = marked.cost(db, p.processed).await;
    Ok((Round { units: p.processed, seconds: p.drain_s, cost, ..Round::default() }, p.enqueue_per_s))
}
