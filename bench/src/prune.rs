//! Retention under load: REST agents keep claiming on one endpoint's queue while one
//! retention pass (`Store::prune_expired`, the `Retention` actor's call, at the default
//! 30 days) deletes `--pruned` old terminal todos of another endpoint, each with one
//! attempt and the delivery it came from. Reported like the lease sweep: how long the
//! pass takes, and claim throughput while it runs against a window with no prune just
//! before it, in the same run.
//!
//! One pass over 100 000 rows runs for many seconds (500 rows a statement, then a pause
//! three times as long as the statement took), long enough to count on its own.

use std::time::{Duration, Instant};

use switchboard::domain::grants::Verb;
use switchboard::domain::retention::{DEFAULT_RETENTION_DAYS, max_age};
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::retention::PruneReport;
use switchboard::store::signals::Emitter;

use crate::database::{BenchDb, QUEUE, Seeded};
use crate::load::{Agent, Load, Mark, Tally, Window};
use crate::machine::{CpuSpent, Probe};
use crate::server::Server;
use crate::{Args, BenchResult};

/// The prune measurement.
#[derive(Debug, Clone, Default)]
pub struct PruneResult {
    /// Old terminal todos seeded (each with one attempt and one event).
    pub seeded: u32,
    /// The window before the prune, with the same load and no prune.
    pub baseline: Window,
    /// How long the pass took.
    pub duration: Duration,
    /// What it deleted.
    pub report: PruneReport,
    /// REST cycles completed while it ran.
    pub cycles: u64,
    /// CPU spent while it ran.
    pub cpu: CpuSpent,
}

impl PruneResult {
    /// Whether the measurement ran.
    pub fn measured(&self) -> bool {
        self.seeded > 0 && self.duration > Duration::ZERO
    }

    /// REST cycles per second while the prune ran.
    pub fn during_rate(&self) -> f64 {
        crate::sweep::rate(self.cycles, self.duration.as_secs_f64())
    }

    /// How much lower throughput was during the prune than in the baseline, percent
    /// (negative when it was higher).
    pub fn drop_pct(&self) -> f64 {
        crate::sweep::drop_pct(self.baseline.rate(), self.during_rate())
    }
}

/// Seeds the old rows, runs the load, measures the baseline window, then times one
/// retention pass. `--pruned 0` skips it.
pub async fn measure(
    args: &Args,
    db: &BenchDb,
    server: &Server,
    seeded: &Seeded,
    probe: &Probe,
) -> BenchResult<PruneResult> {
    if args.pruned == 0 {
        return Ok(PruneResult::default());
    }
    seed_history(db, seeded, args.pruned).await?;
    let budget = db.prepare_window(args, seeded).await?;
    let agents = (0..args.sweep_clients).map(|_| Agent::rest(server.base(), seeded)).collect();
    let load = Load::start(agents, budget);
    tokio::time::sleep(args.warmup()).await;
    let tally = load.tally();
    let from = Mark::now(&tally, probe);
    load.record(true);
    tokio::time::sleep(args.window()).await;
    let to = Mark::now(&tally, probe);
    load.record(false);

    let url = db.url.clone();
    let (thread_tally, thread_probe) = (tally.clone(), probe.clone());
    let pruner = std::thread::spawn(move || prune_on_this_thread(&url, &thread_tally, &thread_probe));
    let timed = tokio::task::spawn_blocking(move || pruner.join())
        .await
        .map_err(|e| format!("prune thread: {e}"))
        .and_then(|joined| joined.map_err(|_| "the prune thread panicked".to_owned()))
        .and_then(|r| r);
    // Stop the agents whatever happened, so a failed prune leaves nothing running.
    let baseline = load.stop(from, to).await;
    let (duration, report, cycles, cpu) = timed?;
    // Also refuses a load whose budget ran out before the prune ended.
    baseline.check()?;
    let expected = args.pruned as usize;
    if report.todos != expected || report.events != expected {
        return Err(format!(
            "the prune deleted {} todos and {} events, expected {expected} of each",
            report.todos, report.events
        ));
    }
    Ok(PruneResult { seeded: args.pruned, baseline, duration, report, cycles, cpu })
}

/// `n` todos on an endpoint of their own, done (two in three) or dead-lettered, last
/// changed 31 days ago, each with a closed attempt and the event it came from.
async fn seed_history(db: &BenchDb, seeded: &Seeded, n: u32) -> BenchResult<()> {
    let store = db.store(1)?;
    let vended = store
        .vend_endpoint(VendEndpoint {
            scope: seeded.scope,
            slug: "bench-retained".into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .map_err(|e| e.to_string())?;
    let sql = format!(
        "WITH ev AS ( \
           INSERT INTO events (id, scope_id, endpoint_id, source, trust_mode, verified, headers, payload, \
             payload_size, disposition, received_at) \
           SELECT gen_random_uuid(), '{scope}', '{ep}', 'github', 'signed', true, '{{}}', \
             convert_to(repeat('x', 1024), 'UTF8'), 1024, 'routed', now() - interval '31 days' - g * interval '1 ms' \
           FROM generate_series(1, {n}) g RETURNING id, received_at), \
         todo AS ( \
           INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, attempts_total, event_id, \
             dead_reason, dead_lettered_at, dead_letter_count, completed_at, created_at, updated_at) \
           SELECT gen_random_uuid(), '{ep}', '{scope}', '{QUEUE}', 'bench retained', \
             CASE WHEN n % 3 = 0 THEN 'failed' ELSE 'done' END, 1, 1, id, \
             CASE WHEN n % 3 = 0 THEN 'attempts_exhausted' END, CASE WHEN n % 3 = 0 THEN received_at END, \
             CASE WHEN n % 3 = 0 THEN 1 ELSE 0 END, CASE WHEN n % 3 = 0 THEN NULL ELSE received_at END, \
             received_at, received_at \
           FROM (SELECT id, received_at, row_number() OVER () AS n FROM ev) e RETURNING id, endpoint_id, updated_at) \
         INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, claimed_at, lease_expires_at, \
           ended_at, outcome, disposition) \
         SELECT id, 1, endpoint_id, 'bench/agent', updated_at, updated_at, updated_at, 'completed', 'done' FROM todo",
        scope = seeded.scope.0,
        ep = vended.endpoint.id.0,
    );
    let inserted = db.client().execute(&sql, &[]).await.map_err(|e| format!("seeding old history: {e}"))?;
    if inserted != u64::from(n) {
        return Err(format!("seeded {inserted} old todos, expected {n}"));
    }
    db.client().batch_execute("VACUUM (ANALYZE) events").await.map_err(|e| format!("VACUUM events: {e}"))?;
    Ok(())
}

type Timed = (Duration, PruneReport, u64, CpuSpent);

/// Runs one pass on a thread of its own (own runtime and pool), as the server runs the
/// `Retention` actor beside its HTTP workers.
fn prune_on_this_thread(url: &str, tally: &Tally, probe: &Probe) -> BenchResult<Timed> {
    let age = max_age(DEFAULT_RETENTION_DAYS).ok_or("retention is off by default")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("prune runtime: {e}"))?;
    rt.block_on(async {
        let pool = switchboard::db::pool(url, 2).map_err(|e| e.to_string())?;
        let store = Store::new(pool, Emitter::none());
        store.ping().await.map_err(|e| format!("prune pool: {e}"))?;
        let cpu_before = probe.sample();
        let cycles_before = tally.cycles();
        let started = Instant::now();
        let report = store.prune_expired(age).await.map_err(|e| format!("prune_expired: {e}"))?;
        let duration = started.elapsed();
        let cycles = tally.cycles() - cycles_before;
        Ok((duration, report, cycles, CpuSpent::between(cpu_before, probe.sample())))
    })
}
