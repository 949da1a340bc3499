//! System sweeps, each one bounded statement repeated until a batch comes back short:
//! the lease reaper, the interrupt reaper and the retry scheduler. `FOR UPDATE SKIP
//! LOCKED` plus a re-checked state predicate means racing instances move each row once.
//!
//! The cap rule here is [`crate::domain::transitions::after_lapse`] written in SQL
//! (`attempt >= max_attempts`); the integration tests pin that both agree.

use diesel::sql_types::Int8;
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::super::signals::Signal;
use super::attempt_close::closed_cte;
use super::{MovedRow, SIGNAL_COLUMNS};
use crate::db::prepared::Prepared;
use crate::db::statement::{Statement, statement};
use crate::error::Result;

/// Whether the endpoint of the todo aliased `t` may still act. A sweep leaves the work
/// of an expired (not yet swept) endpoint alone: the expiry cascade takes it, silently,
/// instead of a reaper announcing it.
macro_rules! endpoint_live_sql {
    () => {
        "EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = t.endpoint_id AND ep.state = 'active' \
         AND (ep.expires_at IS NULL OR ep.expires_at > now()))"
    };
}

/// The claimed todos whose lease lapsed, oldest lapse first (read off `todos_lapse_idx`).
pub const LEASES_DUE: &str = concat!(
    "SELECT id FROM todos t WHERE state = 'claimed' AND lease_expires_at < now() ",
    "AND queue <> 'quarantine' AND ",
    endpoint_live_sql!(),
    " ORDER BY lease_expires_at"
);

/// The interrupted todos whose interrupt lease lapsed, oldest lapse first.
/// `lease_expires_at IS NULL` holds for every interrupted todo (the row check); written
/// out, it lets the scan of `todos_lapse_idx` start at the interrupt leases instead of
/// walking every claim's lease before them.
pub const INTERRUPTS_DUE: &str = concat!(
    "SELECT id FROM todos t WHERE state IN ('input_required', 'auth_required') ",
    "AND lease_expires_at IS NULL AND interrupt_expires_at < now() AND queue <> 'quarantine' AND ",
    endpoint_live_sql!(),
    " ORDER BY interrupt_expires_at"
);

/// Rows moved per statement: large enough to be efficient, small enough that claims
/// on the same tables never wait long behind a sweep.
pub const SWEEP_BATCH: i64 = 500;

/// After a full batch, a sweep pauses this many times as long as the batch took before
/// the next one. A backlog of thousands of lapsed leases is background work: its large
/// commits compete with the claim path's for the database's cores and WAL flushes, so
/// it runs at a quarter duty cycle (measured in docs/benchmarks.md: one sweep of 10 000
/// leases takes a few seconds, and claims keep most of their throughput meanwhile).
pub const SWEEP_PAUSE_RATIO: u32 = 3;

/// What one sweep did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Rows moved back to pending.
    pub requeued: usize,
    /// Rows that became dead letters.
    pub dead_lettered: usize,
}

impl SweepReport {
    fn add(&mut self, signals: &[Signal], moved: usize) {
        let dead = signals.iter().filter(|s| matches!(s, Signal::DeadLettered(_))).count();
        self.dead_lettered += dead;
        self.requeued += moved - dead;
    }
}

/// Builds a lapse sweep: `due` selects the rows, `outcome` names how their attempt
/// closed, `reason` is the dead-letter reason at the cap.
fn lapse_sql(due: &str, outcome: &str, reason: &str) -> String {
    // `due` aliases todos as `t`.
    format!(
        "WITH due AS ({due} LIMIT $1 FOR UPDATE OF t SKIP LOCKED), \
         moved AS ( \
           UPDATE todos t SET \
             state = CASE WHEN t.attempt >= t.max_attempts THEN 'failed' ELSE 'pending' END, \
             dead_reason = CASE WHEN t.attempt >= t.max_attempts THEN '{reason}' END, \
             dead_lettered_at = CASE WHEN t.attempt >= t.max_attempts THEN now() END, \
             dead_letter_count = t.dead_letter_count + CASE WHEN t.attempt >= t.max_attempts THEN 1 ELSE 0 END, \
             claimed_by = NULL, lease_expires_at = NULL, lease_token_hash = NULL, \
             interrupt_expires_at = NULL, interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
             updated_at = now() \
           FROM due WHERE t.id = due.id \
           RETURNING t.*), \
         {closed} \
         SELECT t.*, {SIGNAL_COLUMNS}, c.seq AS final_seq, c.outcome AS final_outcome, \
           c.summary AS final_summary, c.artifact AS final_artifact, c.ended_at AS final_at \
         FROM moved t LEFT JOIN closed c ON c.todo_id = t.id",
        closed = closed_cte(
            "IN (SELECT id FROM due)",
            "",
            &format!(
                "'{outcome}', CASE WHEN m.state = 'failed' THEN 'dead_lettered' ELSE 'requeued' END, NULL, false, NULL"
            )
        )
    )
}

statement! {
    /// The lease reaper's batch (`$1` its size).
    static REAP_LEASES = built(|| lapse_sql(LEASES_DUE, "lease_expired", "lease_expired"));
    /// The interrupt reaper's batch (`$1` its size).
    static REAP_INTERRUPTS = built(|| lapse_sql(INTERRUPTS_DUE, "interrupt_expired", "interrupt_expired"));
    /// The retry scheduler's batch (`$1` its size).
    static REQUEUE_RETRIES = format!(
        "WITH due AS (SELECT id FROM todos t WHERE state = 'failed' AND next_retry_at <= now() AND {live} \
           ORDER BY next_retry_at LIMIT $1 FOR UPDATE OF t SKIP LOCKED), \
         moved AS ( \
           UPDATE todos t SET state = 'pending', next_retry_at = NULL, claimed_by = NULL, updated_at = now() \
           FROM due WHERE t.id = due.id RETURNING t.*) \
         SELECT t.*, {SIGNAL_COLUMNS}, NULL::int AS final_seq, NULL::text AS final_outcome, \
           NULL::text AS final_summary, NULL::text AS final_artifact, NULL::timestamptz AS final_at \
         FROM moved t",
        live = endpoint_live_sql!()
    );
}

impl Store {
    /// Runs `statement` in batches until one comes back short, emitting each batch's
    /// signals as soon as it commits.
    async fn sweep(&self, statement: &'static Statement) -> Result<SweepReport> {
        let mut report = SweepReport::default();
        loop {
            let started = std::time::Instant::now();
            let mut conn = self.conn().await?;
            let rows: Vec<MovedRow> = Prepared(statement.query().bind::<Int8, _>(SWEEP_BATCH)).load(&mut conn).await?;
            drop(conn);
            let moved = rows.len();
            let signals: Vec<Signal> = rows.iter().filter_map(MovedRow::signal).collect();
            report.add(&signals, moved);
            self.emit(signals);
            if (moved as i64) < SWEEP_BATCH {
                return Ok(report);
            }
            tokio::time::sleep(started.elapsed() * SWEEP_PAUSE_RATIO).await;
        }
    }

    /// Lease reaper: claimed todos whose lease lapsed go back to pending below the cap
    /// (`todo.ready`, `requeued`) or become dead letters at the cap (`lease_expired`).
    pub async fn reap_expired_leases(&self) -> Result<SweepReport> {
        self.sweep(&REAP_LEASES).await
    }

    /// Interrupt reaper: interrupted todos whose holder let the interrupt lease lapse go
    /// back to pending below the cap or become dead letters at the cap
    /// (`interrupt_expired`).
    pub async fn reap_expired_interrupts(&self) -> Result<SweepReport> {
        self.sweep(&REAP_INTERRUPTS).await
    }

    /// Retry scheduler: failed todos whose retry is due go back to pending
    /// (`todo.ready`, `requeued`).
    pub async fn requeue_due_retries(&self) -> Result<SweepReport> {
        self.sweep(&REQUEUE_RETRIES).await
    }
}
