//! Retention: history past its age is deleted, in small batches that never wait on a
//! lock and never hold one a claim waits on.
//!
//! - **Todos** that are history ([`crate::domain::retention::prunable`], written here
//!   in SQL) and whose last change (`updated_at`) is older than the age go, with their
//!   attempts (by the foreign key's cascade). Live work (a held delivery on the
//!   quarantine queue is live: pending) and young history stay.
//! - **Events** (accepted deliveries) received before the age go once no todo
//!   references them; they are pruned after the todos, so a delivery leaves with the
//!   last of its todos.
//! - **Records** that only the digest and the Board read back (ended outbox rows,
//!   doorbell rings, digest send records, admission deferral counts) go once older
//!   than the age, each table on its own.
//!
//! Each batch is one statement (its own short transaction): it picks at most
//! [`RETENTION_BATCH`] candidates `FOR UPDATE SKIP LOCKED`, so rows another
//! transaction holds (a retry now, a racing pruner) are skipped rather than waited
//! for, and PostgreSQL re-checks the predicate on a row that changed since the
//! statement began (a dead letter retried meanwhile is live again, and stays). Racing
//! instances therefore delete each row once and never fail. Claims only lock pending
//! rows, which are never candidates. Lock order: a todo, then its attempts (the
//! cascade), as every transition takes them; events alone; never an endpoint.
//!
//! After a full batch the pruner pauses like the sweeps ([`SWEEP_PAUSE_RATIO`]):
//! pruning is background work and must leave the database's cores and WAL to claims.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Double, Int8, Nullable, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use super::todos::SWEEP_PAUSE_RATIO;
use crate::db::prepared::Prepared;
use crate::db::statement::{Statement, statement};
use crate::domain::retention::{RETENTION_BATCH, batch_was_full};
use crate::error::Result;

statement! {
    /// One batch of todos: `$1` the age in seconds, `$2` the batch size. The predicate is
    /// `todos_retention_idx`'s, word for word (migration 2026-12-01-000012), so the oldest
    /// candidates come off the front of that index; the delete then finds them by primary
    /// key (`= ANY(ARRAY(…))`: a join to the candidates was planned as a hash join over a
    /// sequential scan of the whole table). Public so that tests can EXPLAIN it.
    pub static PRUNE_TODOS_SQL = "DELETE FROM todos WHERE id = ANY(ARRAY( \
           SELECT t.id FROM todos t \
           WHERE (t.state IN ('done', 'canceled') OR (t.state = 'failed' AND t.next_retry_at IS NULL)) \
             AND t.updated_at < now() - make_interval(secs => $1) \
           ORDER BY t.updated_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED))";

    /// One batch of one owner scope's events: `$1` the scope, `$2` the age in seconds, `$3`
    /// where the previous batch stopped (NULL: the start), `$4` the batch size. It walks
    /// `events_scope_received_idx` oldest first from `$3`, so events kept because a todo
    /// still references them are passed once per pass, not once per batch. Public so that
    /// tests can EXPLAIN it.
    pub static PRUNE_EVENTS_SQL = "DELETE FROM events WHERE id = ANY(ARRAY( \
           SELECT e.id FROM events e \
           WHERE e.scope_id = $1 \
             AND e.received_at < now() - make_interval(secs => $2) \
             AND e.received_at >= COALESCE($3, '-infinity'::timestamptz) \
             AND NOT EXISTS (SELECT 1 FROM todos t WHERE t.event_id = e.id) \
           ORDER BY e.received_at LIMIT $4 FOR UPDATE OF e SKIP LOCKED)) \
         RETURNING received_at";

    /// Owner scopes that hold at least one event older than `$1` seconds (one probe of
    /// `events_scope_received_idx` each).
    static SCOPES_WITH_OLD_EVENTS_SQL = "SELECT s.id FROM owner_scopes s WHERE EXISTS ( \
           SELECT 1 FROM events e WHERE e.scope_id = s.id AND e.received_at < now() - make_interval(secs => $1)) \
         ORDER BY s.id";

    /// Ended outbox rows (sent, coalesced, partial, undeliverable) queued before the age.
    static PRUNE_OUTBOX_SQL = "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox \
           WHERE status IN ('sent', 'coalesced', 'partial', 'undeliverable') \
             AND created_at < now() - make_interval(secs => $1) LIMIT $2 FOR UPDATE SKIP LOCKED)";

    /// Doorbell rings older than the age (the digest reads only recent ones).
    static PRUNE_RINGS_SQL = "DELETE FROM doorbell_rings WHERE todo_id IN (SELECT todo_id FROM doorbell_rings \
           WHERE rung_at < now() - make_interval(secs => $1) ORDER BY rung_at LIMIT $2 FOR UPDATE SKIP LOCKED)";

    /// Digest send records older than the age; a run still publishing is kept.
    static PRUNE_DIGEST_RUNS_SQL = "DELETE FROM digest_runs WHERE id IN (SELECT id FROM digest_runs \
           WHERE created_at < now() - make_interval(secs => $1) AND outcome <> 'publishing' \
           LIMIT $2 FOR UPDATE SKIP LOCKED)";

    /// Deferral counts (`queue_deferrals`, one row per queue, clock hour and reason) whose
    /// whole hour ended before the age: `$1` the age in seconds, `$2` the batch size. The
    /// oldest come off `queue_deferrals_hour_idx`; a count of the hour a claim is refused
    /// in now is never a candidate, so the claims that upsert counts never meet the pruner.
    /// The delete finds the locked candidates by `ctid` (the key has four columns; matching
    /// it against the candidates was planned as a hash join over the whole table), which
    /// stays theirs while this statement holds their locks. Public so that tests can
    /// EXPLAIN it.
    pub static PRUNE_DEFERRALS_SQL = "DELETE FROM queue_deferrals WHERE ctid = ANY(ARRAY( \
           SELECT ctid FROM queue_deferrals \
           WHERE hour <= now() - make_interval(secs => $1) - interval '1 hour' \
           ORDER BY hour LIMIT $2 FOR UPDATE SKIP LOCKED))";
}

/// What one retention pass deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PruneReport {
    /// Todos deleted (their attempts went with them).
    pub todos: usize,
    /// Events deleted.
    pub events: usize,
    /// Ended outbox rows deleted (sent, coalesced, partial, undeliverable).
    pub outbox: usize,
    /// Doorbell rings, digest send records and admission deferral counts deleted.
    pub records: usize,
}

impl PruneReport {
    /// Every row deleted (attempts not counted).
    pub fn total(&self) -> usize {
        self.todos + self.events + self.outbox + self.records
    }
}

#[derive(QueryableByName)]
struct Received {
    #[diesel(sql_type = Timestamptz)]
    received_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct ScopeRow {
    #[diesel(sql_type = SqlUuid)]
    id: uuid::Uuid,
}

impl Store {
    /// One retention pass: terminal todos last changed more than `max_age` ago (with
    /// their attempts), then events received more than `max_age` ago that no todo
    /// references, ended outbox rows, doorbell rings, digest send records and deferral
    /// counts of hours older than that. Runs until every batch comes back short.
    pub async fn prune_expired(&self, max_age: Duration) -> Result<PruneReport> {
        let todos = self.prune_expired_todos(max_age).await?;
        let events = self.prune_expired_events(max_age).await?;
        let outbox = self.prune_expired_outbox(max_age).await?;
        let records = self.prune_in_batches(&PRUNE_RINGS_SQL, max_age).await?
            + self.prune_in_batches(&PRUNE_DIGEST_RUNS_SQL, max_age).await?
            + self.prune_in_batches(&PRUNE_DEFERRALS_SQL, max_age).await?;
        Ok(PruneReport { todos, events, outbox, records })
    }

    /// Runs `statement` (a batch delete: `$1` the age in seconds, `$2` the batch size) until
    /// a batch comes back short, pausing between batches like the other sweeps.
    async fn prune_in_batches(&self, statement: &'static Statement, max_age: Duration) -> Result<usize> {
        let mut deleted = 0;
        loop {
            let started = Instant::now();
            let mut conn = self.conn().await?;
            let n = statement
                .query()
                .bind::<Double, _>(max_age.as_secs_f64())
                .bind::<Int8, _>(RETENTION_BATCH)
                .execute(&mut conn)
                .await?;
            drop(conn);
            deleted += n;
            if !batch_was_full(n) {
                return Ok(deleted);
            }
            tokio::time::sleep(started.elapsed() * SWEEP_PAUSE_RATIO).await;
        }
    }

    /// Ended outbox rows (sent, coalesced, partial, undeliverable) queued more than
    /// `max_age` ago; open ones (pending, held) stay however old. Returns how many went.
    pub async fn prune_expired_outbox(&self, max_age: Duration) -> Result<usize> {
        self.prune_in_batches(&PRUNE_OUTBOX_SQL, max_age).await
    }

    /// The todo half of [`Store::prune_expired`]; returns how many todos went.
    pub async fn prune_expired_todos(&self, max_age: Duration) -> Result<usize> {
        let mut deleted = 0;
        loop {
            let started = Instant::now();
            let mut conn = self.conn().await?;
            let n = Prepared(
                PRUNE_TODOS_SQL.query().bind::<Double, _>(max_age.as_secs_f64()).bind::<Int8, _>(RETENTION_BATCH),
            )
            .execute(&mut conn)
            .await?;
            drop(conn);
            deleted += n;
            if !batch_was_full(n) {
                return Ok(deleted);
            }
            tokio::time::sleep(started.elapsed() * SWEEP_PAUSE_RATIO).await;
        }
    }

    /// The event half of [`Store::prune_expired`], one owner scope after another;
    /// returns how many events went.
    pub async fn prune_expired_events(&self, max_age: Duration) -> Result<usize> {
        let age = max_age.as_secs_f64();
        let scopes: Vec<ScopeRow> = {
            let mut conn = self.conn().await?;
            SCOPES_WITH_OLD_EVENTS_SQL.query().bind::<Double, _>(age).load(&mut conn).await?
        };
        let mut deleted = 0;
        for scope in scopes {
            let mut after: Option<DateTime<Utc>> = None;
            loop {
                let started = Instant::now();
                let mut conn = self.conn().await?;
                let gone: Vec<Received> = Prepared(
                    PRUNE_EVENTS_SQL
                        .query()
                        .bind::<SqlUuid, _>(scope.id)
                        .bind::<Double, _>(age)
                        .bind::<Nullable<Timestamptz>, _>(after)
                        .bind::<Int8, _>(RETENTION_BATCH),
                )
                .load(&mut conn)
                .await?;
                drop(conn);
                deleted += gone.len();
                if !batch_was_full(gone.len()) {
                    break;
                }
                // Events before the newest one deleted were either deleted or kept on
                // purpose (still referenced, or held by another transaction): the next
                // batch starts there instead of reading them again.
                after = gone.iter().map(|r| r.received_at).max().or(after);
                tokio::time::sleep(started.elapsed() * SWEEP_PAUSE_RATIO).await;
            }
        }
        Ok(deleted)
    }
}
