//! What the agents' database sessions wait on, sampled from `pg_stat_activity` during
//! the sweep measurement: with a sweep running and without. A throughput drop with
//! cores to spare is a wait somewhere; this says where, from the same run. During the
//! intake windows every session is sampled, with the statement it is on.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::BenchResult;

/// How often sessions are sampled: often enough to catch a few hundred samples in a
/// half-second sweep, rare enough to cost the database next to nothing.
const EVERY: Duration = Duration::from_millis(20);

/// One sample: per session, what it is doing, and whether a sweep is running.
const SAMPLE_SQL: &str = "\
    SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait)'), \
      CASE WHEN query LIKE 'WITH due AS%' THEN 'sweep' \
           WHEN query LIKE 'WITH claimed AS%' THEN 'relapse' ELSE 'agent' END \
    FROM pg_stat_activity \
    WHERE datname = current_database() AND state = 'active' AND backend_type = 'client backend' \
      AND pid <> pg_backend_pid()";

/// Counts of agent-session states, split by whether a sweep was running.
#[derive(Debug, Clone, Default)]
pub struct WaitTally {
    /// Samples taken while no sweep (and no re-lapse) ran: state → sessions seen.
    pub quiet: BTreeMap<String, u64>,
    /// Samples taken while a sweep ran.
    pub sweeping: BTreeMap<String, u64>,
}

impl WaitTally {
    /// The most frequent states of one side with their shares, most frequent first.
    pub fn top(side: &BTreeMap<String, u64>, n: usize) -> Vec<(String, f64)> {
        let total: u64 = side.values().sum();
        let mut v: Vec<(String, f64)> =
            side.iter().map(|(k, c)| (k.clone(), *c as f64 / total.max(1) as f64)).collect();
        v.sort_by(|a, b| b.1.total_cmp(&a.1));
        v.truncate(n);
        v
    }
}

/// One sample of every session on the database but the sampler's: what it is doing
/// (a wait, on CPU, or idle inside a transaction while its client works) and which
/// statement it is running or last ran.
const SESSIONS_SQL: &str = "\
    SELECT CASE WHEN state = 'idle in transaction' THEN 'idle in transaction' \
                ELSE coalesce(wait_event_type || ':' || wait_event, 'CPU (no wait)') END, \
      CASE WHEN query LIKE 'INSERT INTO events%' THEN 'insert event' \
           WHEN query LIKE 'WITH t AS%' THEN 'insert todo' \
           WHEN query LIKE 'SELECT%FROM \"webhooks\"%' THEN 'webhook lookup' \
           WHEN query LIKE 'UPDATE notify_hooks h SET%' THEN 'hook health update' \
           WHEN query LIKE 'SELECT h.id AS hook_id%WHERE h.id = $1%' THEN 'hook re-check' \
           WHEN query LIKE 'SELECT h.id AS hook_id%' THEN 'hook lookup' \
           WHEN query LIKE 'SELECT t.* FROM todos t WHERE t.id = $1%FOR UPDATE' THEN 'fail: lock todo' \
           WHEN query LIKE 'WITH moved AS ( UPDATE todos t SET state = ''failed''%' THEN 'fail: dead-letter' \
           WHEN query LIKE '%FROM switchboard_claim_outbox(%' THEN 'outbox: claim' \
           WHEN query LIKE '%FROM switchboard_claim_outbox_events(%' \
             OR query LIKE '%FROM switchboard_claim_outbox_records(%' \
             OR query LIKE '%FROM switchboard_claim_outbox_messages(%' THEN 'outbox: claim records' \
           WHEN query LIKE 'SELECT switchboard_fan_out_outbox(%' THEN 'outbox: fan-out' \
           WHEN query LIKE 'SELECT DISTINCT sink_id FROM outbox%' THEN 'outbox: held sinks' \
           WHEN query LIKE 'SELECT id, scope_id, kind, base_url%' THEN 'outbox: sink' \
           WHEN query LIKE 'SELECT tokens, tokens_at%' OR query LIKE 'UPDATE sinks SET tokens%' \
             OR query LIKE 'SELECT id, sink_id, event%status = ''held''%' THEN 'outbox: budget' \
           WHEN query LIKE 'SELECT secret FROM connections%' THEN 'outbox: secret' \
           WHEN query LIKE 'SELECT t.id AS fact_todo_id, w.with_excerpt%' THEN 'outbox: facts' \
           WHEN query LIKE 'UPDATE outbox o SET status = r.status%' THEN 'outbox: record' \
           WHEN query LIKE 'WITH written AS%' THEN 'outbox: record (write)' \
           WHEN query LIKE 'DELETE FROM outbox_events%' THEN 'outbox: settle records' \
           WHEN upper(query) LIKE 'BEGIN%' THEN 'BEGIN' \
           WHEN upper(query) LIKE 'COMMIT%' THEN 'COMMIT' \
           ELSE 'other' END \
    FROM pg_stat_activity \
    WHERE datname = current_database() AND backend_type = 'client backend' \
      AND state IN ('active', 'idle in transaction') AND pid <> pg_backend_pid()";

/// Session states summed over samples: `state · statement` → sessions seen.
#[derive(Debug, Clone, Default)]
pub struct SessionTally {
    /// Samples taken.
    pub samples: u64,
    /// Sessions seen per `state · statement`.
    pub seen: BTreeMap<String, u64>,
}

impl SessionTally {
    /// Adds another tally's samples.
    pub fn add(&mut self, o: &SessionTally) {
        self.samples += o.samples;
        for (k, n) in &o.seen {
            *self.seen.entry(k.clone()).or_default() += n;
        }
    }

    /// Sessions in state `k` on average over the samples.
    pub fn mean(&self, k: &str) -> f64 {
        self.seen.get(k).copied().unwrap_or(0) as f64 / self.samples.max(1) as f64
    }

    /// Sessions busy (active or idle in a transaction) on average.
    pub fn mean_busy(&self) -> f64 {
        self.seen.values().sum::<u64>() as f64 / self.samples.max(1) as f64
    }
}

/// A loop on the current thread that samples `pg_stat_activity` on a connection of its
/// own every [`EVERY`], folding each sample (rows of two text columns) into a tally.
pub struct Sampler<T> {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<BenchResult<T>>,
    what: &'static str,
}

impl<T: Default + 'static> Sampler<T> {
    async fn spawn(
        url: &str,
        what: &'static str,
        sql: &'static str,
        fold: fn(&mut T, &[(String, String)]),
    ) -> BenchResult<Self> {
        let client = testkit::db::connect(url).await.map_err(|e| format!("{what}: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let task = actix_rt::spawn(async move {
            let mut tally = T::default();
            while !stopping.load(Ordering::SeqCst) {
                let rows = client.query(sql, &[]).await.map_err(|e| format!("{what}: {e}"))?;
                let sample: Vec<(String, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
                fold(&mut tally, &sample);
                tokio::time::sleep(EVERY).await;
            }
            Ok(tally)
        });
        Ok(Sampler { stop, task, what })
    }

    /// Stops sampling and returns the tally.
    pub async fn finish(self) -> BenchResult<T> {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.map_err(|e| format!("{}: {e}", self.what))?
    }
}

/// Samples the agents' sessions, split by whether a sweep is running.
pub type WaitSampler = Sampler<WaitTally>;

impl Sampler<WaitTally> {
    /// Starts sampling the database at `url`.
    pub async fn start(url: &str) -> BenchResult<Self> {
        Self::spawn(url, "wait sampler", SAMPLE_SQL, |tally, roles| {
            // A re-lapse is bench set-up, not part of either side: skip its samples.
            if roles.iter().any(|(_, role)| role == "relapse") {
                return;
            }
            let side =
                if roles.iter().any(|(_, role)| role == "sweep") { &mut tally.sweeping } else { &mut tally.quiet };
            for (state, _) in roles.iter().filter(|(_, role)| role == "agent") {
                *side.entry(state.clone()).or_default() += 1;
            }
        })
        .await
    }
}

/// Samples every session on the database (not just agents).
pub type SessionSampler = Sampler<SessionTally>;

impl Sampler<SessionTally> {
    /// Starts sampling the database at `url`.
    pub async fn start(url: &str) -> BenchResult<Self> {
        Self::spawn(url, "session sampler", SESSIONS_SQL, |tally, rows| {
            tally.samples += 1;
            for (state, statement) in rows {
                *tally.seen.entry(format!("{state} · {statement}")).or_default() += 1;
            }
        })
        .await
    }
}
