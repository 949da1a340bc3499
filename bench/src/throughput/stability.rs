//! Plan stability (issue 41's hard gate): the batched drain of a burst on a `todos`
//! table whose statistics were taken while it was small, beside the same drain after
//! `VACUUM (ANALYZE)`. On a server and database of their own, per round and side:
//! `todos` truncated, a few hundred pending todos and `VACUUM (ANALYZE)` (the small
//! table's statistics), then a burst of creates over REST (`POST /api/v1/agent/todos/batch`
//! from several agents). The un-analyzed side then checkpoints and drains at once; the
//! analyzed side first runs `VACUUM (ANALYZE)`. Each drain is the whole backlog, from
//! the first claim to the last agent finding the queue empty (a burn-down, as the
//! peers' drains), by batched agents with the full answer. Sides alternate which goes
//! first between rounds.

use std::time::Instant;

use super::agents::{BatchCreate, BatchDrain, RestAgent};
use super::ceiling::ClusterMark;
use super::series::{Round, Series};
use crate::claim_cost::Rig;
use crate::database::QUEUE;
use crate::load::BatchWork;
use crate::{BenchResult, progress};

/// The stability run's settings.
pub struct Settings {
    /// Todos on the table when it is analyzed small.
    pub small: u32,
    /// Todos the burst creates.
    pub burst: u64,
    /// Agents creating the burst at once.
    pub creators: usize,
    /// Todos per create call.
    pub create_batch: u64,
    /// Draining agents.
    pub agents: usize,
    /// Todos per claim.
    pub limit: u64,
    /// Payload bytes of each todo.
    pub payload_bytes: u32,
}

/// What the stability run found.
#[derive(Debug, Clone, Default)]
pub struct StabilityRun {
    /// Drains right after the burst, statistics from the small table (units: todos).
    pub stale: Series,
    /// Drains after `VACUUM (ANALYZE)`.
    pub analyzed: Series,
    /// The bursts' creates per second over REST.
    pub burst_rates: Vec<f64>,
    /// The cluster's `autovacuum` setting, and whether the bench turned it off on `todos`.
    pub autovacuum: (String, bool),
    /// Settings: small, burst, creators, agents, limit.
    pub small: u32,
    /// Todos per burst.
    pub burst: u64,
    /// Burst creators.
    pub creators: usize,
    /// Draining agents.
    pub agents: usize,
    /// Todos per claim.
    pub limit: u64,
}

impl StabilityRun {
    /// The un-analyzed drain's median rate over the analyzed one's.
    pub fn ratio(&self) -> f64 {
        let a = self.analyzed.rate();
        if a > 0.0 { self.stale.rate() / a } else { 0.0 }
    }
}

/// Runs `rounds` rounds on `rig` (a server and database of their own).
pub async fn run(rig: &Rig, s: &Settings, rounds: u32) -> BenchResult<StabilityRun> {
    let autovacuum = rig.db.settings_value("autovacuum").await?;
    // With autovacuum on, an ANALYZE could land mid-measurement: keep it off `todos`.
    let turned_off = autovacuum != "off";
    if turned_off {
        rig.db.exec_batch("ALTER TABLE todos SET (autovacuum_enabled = off)").await?;
    }
    let mut run = StabilityRun {
        autovacuum: (autovacuum, turned_off),
        small: s.small,
        burst: s.burst,
        creators: s.creators,
        agents: s.agents,
        limit: s.limit,
        ..StabilityRun::default()
    };
    for round in 0..rounds {
        for analyze in if round % 2 == 0 { [false, true] } else { [true, false] } {
            let (drain, burst_rate) = side(rig, s, analyze).await?;
            progress(&format!(
                "round {round}: plan stability, drain of a {} burst {}: {:.0} todos/s (burst created at {burst_rate:.0}/s)",
                s.burst,
                if analyze { "after VACUUM (ANALYZE)" } else { "with the small table's statistics" },
                drain.rate()
            ));
            run.burst_rates.push(burst_rate);
            if analyze { run.analyzed.push(drain) } else { run.stale.push(drain) }
        }
    }
    Ok(run)
}

/// One side: the table made small and analyzed, the burst, (the analyze,) the drain.
async fn side(rig: &Rig, s: &Settings, analyze: bool) -> BenchResult<(Round, f64)> {
    let db = &rig.db;
    db.exec_batch("TRUNCATE todos, todo_attempts").await?;
    db.add_pending(&rig.seeded, rig.seeded.cycles, s.small, s.payload_bytes).await?;
    db.vacuum().await?;
    let burst_rate = burst(rig, s).await?;
    if analyze {
        db.vacuum().await?;
    }
    db.exec_batch("CHECKPOINT").await?;
    let expected = db.pending(rig.seeded.cycles).await?;
    let base = rig.server.base();
    let drains: Vec<BatchDrain> = (0..s.agents)
        .map(|_| BatchDrain {
            agent: RestAgent::new(base, &rig.seeded),
            queue: QUEUE.into(),
            limit: s.limit,
            lean: false,
        })
        .collect();
    let from = ClusterMark::start(db, &rig.probe).await?;
    let started = Instant::now();
    let handles: Vec<_> = drains.into_iter().map(|d| actix_rt::spawn(drain_to_empty(d))).collect();
    let mut units = 0;
    for h in handles {
        units += h.await.map_err(|e| format!("a draining agent panicked: {e}"))??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let to = ClusterMark::now(db, &rig.probe).await?;
    if units != expected {
        return Err(format!("the drain completed {units} todos of {expected}"));
    }
    let cost = from.cost_until(db, &to, units).await;
    Ok((Round { units, seconds, cost, ..Round::default() }, burst_rate))
}

/// Claims and completes in batches until a claim comes back empty; todos completed.
async fn drain_to_empty(d: BatchDrain) -> BenchResult<u64> {
    let mut done = 0;
    loop {
        match d.once().await? {
            0 => return Ok(done),
            n => done += n,
        }
    }
}

/// Creates the burst on the drained queue from `s.creators` agents at once; creates
/// per second.
async fn burst(rig: &Rig, s: &Settings) -> BenchResult<f64> {
    let per = s.burst.div_ceil(s.creators as u64);
    let started = Instant::now();
    let handles: Vec<_> = (0..s.creators)
        .map(|i| {
            let share = per.min(s.burst.saturating_sub(per * i as u64));
            let maker = BatchCreate {
                agent: RestAgent::new(rig.server.base(), &rig.seeded),
                queue: QUEUE.into(),
                size: s.create_batch,
                payload_bytes: s.payload_bytes as usize,
            };
            actix_rt::spawn(async move {
                let mut made = 0;
                while made < share {
                    made += maker.create(share - made).await?;
                }
                Ok::<_, String>(made)
            })
        })
        .collect();
    let mut made = 0;
    for h in handles {
        made += h.await.map_err(|e| format!("a creating agent panicked: {e}"))??;
    }
    Ok(made as f64 / started.elapsed().as_secs_f64())
}
