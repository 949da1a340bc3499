//! The lease reaper under load: REST agents keep claiming on one endpoint's queue while
//! `Store::reap_expired_leases` sweeps another endpoint's expired leases. Reported:
//! how long a sweep takes, and claim throughput during sweeps against a window with
//! no sweep just before them.
//!
//! One sweep over 10 000 leases lasts well under a second here, too short to count
//! throughput reliably, so several sweeps are timed (the leases re-lapsed in between,
//! outside the measured spans) and the throughput during them is pooled: cycles
//! completed while any sweep ran, over the summed sweep time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard::store::Store;
use switchboard::store::signals::Emitter;

use crate::database::{BenchDb, Seeded};
use crate::load::{Agent, Load, Mark, Tally, Window};
use crate::machine::{CpuSpent, Probe};
use crate::server::Server;
use crate::waits::{WaitSampler, WaitTally};
use crate::{Args, BenchResult};

/// Pause between re-lapsing the leases and the next sweep, so the bulk UPDATE that
/// re-lapses them has settled before the sweep is timed.
const SETTLE: Duration = Duration::from_secs(1);

/// One timed sweep.
#[derive(Debug, Clone, Default)]
pub struct SweepTiming {
    /// How long `reap_expired_leases` took.
    pub duration: Duration,
    /// Leases requeued (below the cap, so all of them).
    pub requeued: usize,
    /// Leases dead-lettered (none expected).
    pub dead_lettered: usize,
    /// REST cycles completed while it ran.
    pub cycles: u64,
    /// CPU spent while it ran (sampled just outside the sweep).
    pub cpu: CpuSpent,
}

/// The sweep measurement.
#[derive(Debug, Clone, Default)]
pub struct SweepResult {
    /// Expired leases per sweep.
    pub expired: u32,
    /// The window before the sweeps, with the same load and no sweep.
    pub baseline: Window,
    /// Every timed sweep, in order.
    pub sweeps: Vec<SweepTiming>,
    /// What the agents' database sessions waited on, with and without a sweep.
    pub waits: WaitTally,
}

impl SweepResult {
    /// Median sweep duration, ms.
    pub fn median_sweep_ms(&self) -> f64 {
        let mut ms: Vec<f64> = self.sweeps.iter().map(|s| s.duration.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        ms.get(ms.len() / 2).copied().unwrap_or(0.0)
    }

    /// Summed sweep time, seconds.
    pub fn swept_seconds(&self) -> f64 {
        self.sweeps.iter().map(|s| s.duration.as_secs_f64()).sum()
    }

    /// REST cycles per second while sweeps ran (pooled over all sweeps).
    pub fn during_rate(&self) -> f64 {
        rate(self.sweeps.iter().map(|s| s.cycles).sum(), self.swept_seconds())
    }

    /// How much lower throughput was during sweeps than in the baseline, in percent
    /// (negative when it was higher).
    pub fn drop_pct(&self) -> f64 {
        drop_pct(self.baseline.rate(), self.during_rate())
    }
}

/// Cycles per second over `secs` (0 for no time).
pub fn rate(cycles: u64, secs: f64) -> f64 {
    if secs > 0.0 { cycles as f64 / secs } else { 0.0 }
}

/// How much lower `during` is than `baseline`, in percent (negative when higher; 0
/// without a baseline). The lease sweep's and the retention prune's figure.
pub fn drop_pct(baseline: f64, during: f64) -> f64 {
    if baseline > 0.0 { (1.0 - during / baseline) * 100.0 } else { 0.0 }
}

/// Runs the load, measures the baseline window, then times `--sweeps` sweeps.
pub async fn measure(
    args: &Args,
    db: &BenchDb,
    server: &Server,
    seeded: &Seeded,
    probe: &Probe,
) -> BenchResult<SweepResult> {
    let budget = db.prepare_window(args, seeded).await?;
    let agents = (0..args.sweep_clients).map(|_| Agent::rest(server.base(), seeded)).collect();
    let load = Load::start(agents, budget);
    tokio::time::sleep(args.warmup()).await;
    let sampler = WaitSampler::start(&db.url).await;
    let tally = load.tally();
    let from = Mark::now(&tally, probe);
    load.record(true);
    tokio::time::sleep(args.window()).await;
    let to = Mark::now(&tally, probe);
    load.record(false);

    let mut sweeps = Vec::new();
    let mut failure = None;
    for round in 0..args.sweeps {
        match one_sweep(round, args, db, seeded, &tally, probe).await {
            Ok(t) => sweeps.push(t),
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    // Stop the agents whatever happened, so a failed sweep leaves nothing running.
    let baseline = load.stop(from, to).await;
    let waits = match sampler {
        Ok(s) => s.finish().await,
        Err(e) => Err(e),
    };
    if let Some(e) = failure {
        return Err(e);
    }
    baseline.check()?;
    Ok(SweepResult { expired: args.expired, baseline, sweeps, waits: waits? })
}

async fn one_sweep(
    round: u32,
    args: &Args,
    db: &BenchDb,
    seeded: &Seeded,
    tally: &Arc<Tally>,
    probe: &Probe,
) -> BenchResult<SweepTiming> {
    // Seeding lapsed the leases for the first sweep; later ones need them lapsed again.
    if round > 0 {
        let lapsed = db.lapse_leases(seeded).await?;
        if lapsed != u64::from(args.expired) {
            return Err(format!("re-lapsed {lapsed} leases, expected {}", args.expired));
        }
    }
    tokio::time::sleep(SETTLE).await;
    let url = db.url.clone();
    let (tally, probe) = (tally.clone(), probe.clone());
    let sweeper = std::thread::spawn(move || sweep_on_this_thread(&url, &tally, &probe));
    let timing = tokio::task::spawn_blocking(move || sweeper.join())
        .await
        .map_err(|e| format!("sweep thread: {e}"))?
        .map_err(|_| "the sweep thread panicked".to_owned())??;
    if timing.requeued + timing.dead_lettered != args.expired as usize {
        return Err(format!(
            "a sweep moved {} leases, expected {}",
            timing.requeued + timing.dead_lettered,
            args.expired
        ));
    }
    Ok(timing)
}

/// Runs one sweep on a thread of its own (with its own runtime and pool), so the
/// sweep's client-side work never takes time from the agents' thread, as in the
/// server, where the reaper is an actor beside the HTTP workers.
fn sweep_on_this_thread(url: &str, tally: &Tally, probe: &Probe) -> BenchResult<SweepTiming> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("sweep runtime: {e}"))?;
    rt.block_on(async {
        let pool = switchboard::db::pool(url, 2).map_err(|e| e.to_string())?;
        let store = Store::new(pool, Emitter::none());
        // Connect before the clock starts: the server's pool is warm too.
        store.ping().await.map_err(|e| format!("sweep pool: {e}"))?;
        let cpu_before = probe.sample();
        let cycles_before = tally.cycles();
        let started = Instant::now();
        let report = store.reap_expired_leases().await.map_err(|e| format!("reap_expired_leases: {e}"))?;
        let duration = started.elapsed();
        let cycles = tally.cycles() - cycles_before;
        let cpu = CpuSpent::between(cpu_before, probe.sample());
        Ok(SweepTiming { duration, requeued: report.requeued, dead_lettered: report.dead_lettered, cycles, cpu })
    })
}
