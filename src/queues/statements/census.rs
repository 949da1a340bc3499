//! Taking the census (see [`crate::queues`]): one transaction that, under the lock of
//! `queue_census_runs`' one row (a second instance's census skips its tick), adds what
//! finished since the last census to `queue_minutes`, drops minutes older than a day,
//! and rewrites `queue_census` from the live partial indexes and those minutes.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Nullable, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::db::statement::statement;
use crate::error::{Error, Result};
use crate::queues::rules::watermark::{self, Window};
use crate::store::Store;

/// The most pending todos a census counts per queue (as the Board's pills count: a
/// queue with more shows `10 000+`, and its row says the count stopped there).
pub const PENDING_COUNTED: i64 = crate::domain::pills::COUNT_CAP as i64;

statement! {
    /// The census's lock and where the previous one ended; none when another instance
    /// holds it.
    static LOCK = "SELECT watermark FROM queue_census_runs WHERE id = 1 FOR UPDATE SKIP LOCKED";

    /// The census's clock and the start of the oldest other transaction open in this
    /// database ([`watermark`] says why). Read first in the transaction: PostgreSQL keeps
    /// this view's snapshot for the rest of it.
    /// Only client sessions count (autovacuum never writes a todo), and of those the ones
    /// that have written (an xid) or opened within the last minute: a reader open for
    /// longer, such as `pg_dump`'s snapshot, would otherwise freeze the counts for as long
    /// as it runs, and the application's writers write within their first second.
    static CLOCKS = "SELECT now() AS now, (SELECT min(xact_start) FROM pg_stat_activity \
         WHERE datname = current_database() AND backend_type = 'client backend' AND xact_start IS NOT NULL \
           AND pid <> pg_backend_pid() \
           AND (backend_xid IS NOT NULL OR xact_start > now() - interval '1 minute')) AS oldest_open";

    /// Adds to `queue_minutes` the completions and dead letters whose time is in
    /// `[$1, $2)`, read off `todos_retention_idx` (each predicate repeats the index's so
    /// the planner may use it), and the failed attempts the trigger logged, which it
    /// deletes (a failed attempt is one that ended `failed`, `lease_expired`, `reaped` or
    /// `interrupt_expired`: migration `000040_queue_census`). Endpoints deleted meanwhile
    /// are skipped.
    static ROLL_UP = "WITH failed AS (DELETE FROM queue_failed_attempts RETURNING endpoint_id, queue, minute, n), \
         done AS (SELECT endpoint_id, queue, date_trunc('minute', completed_at) AS minute, count(*) AS n FROM todos \
           WHERE (state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL)) \
             AND updated_at >= $1 AND state = 'done' AND completed_at >= $1 AND completed_at < $2 \
             AND queue <> 'quarantine' GROUP BY 1, 2, 3), \
         dead AS (SELECT endpoint_id, queue, date_trunc('minute', dead_lettered_at) AS minute, count(*) AS n FROM todos \
           WHERE (state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL)) \
             AND updated_at >= $1 AND state = 'failed' AND next_retry_at IS NULL \
             AND dead_lettered_at >= $1 AND dead_lettered_at < $2 AND queue <> 'quarantine' GROUP BY 1, 2, 3), \
         happened AS (SELECT endpoint_id, queue, minute, n AS done, 0::int8 AS failed, 0::int8 AS dead FROM done \
           UNION ALL SELECT endpoint_id, queue, minute, 0, n, 0 FROM failed \
           UNION ALL SELECT endpoint_id, queue, minute, 0, 0, n FROM dead) \
         INSERT INTO queue_minutes AS m (endpoint_id, queue, minute, done, failed_attempts, dead) \
         SELECT h.endpoint_id, h.queue, h.minute, sum(h.done), sum(h.failed), sum(h.dead) \
         FROM happened h JOIN endpoints e ON e.id = h.endpoint_id GROUP BY 1, 2, 3 \
         ON CONFLICT (endpoint_id, queue, minute) DO UPDATE SET done = m.done + EXCLUDED.done, \
           failed_attempts = m.failed_attempts + EXCLUDED.failed_attempts, dead = m.dead + EXCLUDED.dead";

    /// Minutes older than a day and an hour: nothing shows them.
    static PRUNE = "DELETE FROM queue_minutes WHERE minute < now() - interval '25 hours'";

    /// Rewrites every census row from the partial indexes of live todos (pending,
    /// claimed with stalled among them, interrupted, retrying) and the last day's
    /// minutes, for every queue that has any of those or an admission budget; `$1` is
    /// the census's clock, `$2` the most pending todos counted per queue. Quarantine is
    /// left out.
    ///
    /// Pending todos are counted per queue up to `$2` + 1, off the claim's index: the
    /// queues that hold any are found by skipping through that index one queue at a
    /// time, and each is counted with a limit, so a pass costs what the queues hold up
    /// to the cap, not the whole backlog (a full count read every pending row, by a
    /// sequential scan once they were most of the table: 225 ms a pass at 400 000
    /// pending, and the claim cycle 11 % slower beside it in the A/B).
    static WRITE = "WITH RECURSIVE pending_keys AS ( \
           (SELECT endpoint_id, queue FROM todos WHERE state = 'pending' ORDER BY endpoint_id, queue LIMIT 1) \
           UNION ALL \
           SELECT n.endpoint_id, n.queue FROM pending_keys k CROSS JOIN LATERAL ( \
             SELECT t.endpoint_id, t.queue FROM todos t \
             WHERE t.state = 'pending' AND (t.endpoint_id, t.queue) > (k.endpoint_id, k.queue) \
             ORDER BY t.endpoint_id, t.queue LIMIT 1) n), \
         pend AS (SELECT k.endpoint_id, k.queue, c.n, o.oldest FROM pending_keys k \
           CROSS JOIN LATERAL (SELECT count(*) AS n FROM (SELECT 1 FROM todos t WHERE t.state = 'pending' \
             AND t.endpoint_id = k.endpoint_id AND t.queue = k.queue LIMIT $2 + 1) x) c \
           CROSS JOIN LATERAL (SELECT min(t.created_at) AS oldest FROM todos t WHERE t.state = 'pending' \
             AND t.endpoint_id = k.endpoint_id AND t.queue = k.queue) o \
           WHERE k.queue <> 'quarantine'), \
         held AS (SELECT endpoint_id, queue, count(*) AS n, count(*) FILTER (WHERE lease_expires_at < $1) AS stalled \
           FROM todos WHERE state = 'claimed' AND queue <> 'quarantine' GROUP BY 1, 2), \
         waiting AS (SELECT endpoint_id, queue, count(*) AS n FROM todos \
           WHERE state IN ('input_required', 'auth_required') AND queue <> 'quarantine' GROUP BY 1, 2), \
         retrying AS (SELECT endpoint_id, queue, count(*) AS n FROM todos \
           WHERE state = 'failed' AND next_retry_at IS NOT NULL AND queue <> 'quarantine' GROUP BY 1, 2), \
         recent AS (SELECT endpoint_id, queue, \
             sum(done) FILTER (WHERE minute >= $1 - interval '1 hour') AS done, \
             sum(failed_attempts) FILTER (WHERE minute >= $1 - interval '1 hour') AS failed, \
             sum(dead) AS dead \
           FROM queue_minutes WHERE minute >= $1 - interval '24 hours' GROUP BY 1, 2), \
         keys AS (SELECT endpoint_id, queue FROM pend UNION SELECT endpoint_id, queue FROM held \
           UNION SELECT endpoint_id, queue FROM waiting UNION SELECT endpoint_id, queue FROM retrying \
           UNION SELECT endpoint_id, queue FROM recent UNION SELECT endpoint_id, queue FROM queue_admission) \
         INSERT INTO queue_census AS c (endpoint_id, queue, scope_id, pending, pending_capped, oldest_pending_at, claimed, stalled, \
           interrupted, retrying, done_last_hour, failed_attempts_last_hour, dead_last_24h, measured_at) \
         SELECT k.endpoint_id, k.queue, e.scope_id, least(coalesce(p.n, 0), $2), coalesce(p.n > $2, false), p.oldest, coalesce(h.n, 0), coalesce(h.stalled, 0), \
           coalesce(w.n, 0), coalesce(r.n, 0), coalesce(m.done, 0), coalesce(m.failed, 0), coalesce(m.dead, 0), $1 \
         FROM keys k JOIN endpoints e ON e.id = k.endpoint_id \
           LEFT JOIN pend p ON p.endpoint_id = k.endpoint_id AND p.queue = k.queue \
           LEFT JOIN held h ON h.endpoint_id = k.endpoint_id AND h.queue = k.queue \
           LEFT JOIN waiting w ON w.endpoint_id = k.endpoint_id AND w.queue = k.queue \
           LEFT JOIN retrying r ON r.endpoint_id = k.endpoint_id AND r.queue = k.queue \
           LEFT JOIN recent m ON m.endpoint_id = k.endpoint_id AND m.queue = k.queue \
         WHERE k.queue <> 'quarantine' \
         ON CONFLICT (endpoint_id, queue) DO UPDATE SET scope_id = EXCLUDED.scope_id, pending = EXCLUDED.pending, \
           pending_capped = EXCLUDED.pending_capped, \
           oldest_pending_at = EXCLUDED.oldest_pending_at, claimed = EXCLUDED.claimed, stalled = EXCLUDED.stalled, \
           interrupted = EXCLUDED.interrupted, retrying = EXCLUDED.retrying, done_last_hour = EXCLUDED.done_last_hour, \
           failed_attempts_last_hour = EXCLUDED.failed_attempts_last_hour, dead_last_24h = EXCLUDED.dead_last_24h, \
           measured_at = EXCLUDED.measured_at";

    /// Census rows this census did not write: queues with nothing left to show.
    static DROP_STALE = "DELETE FROM queue_census WHERE measured_at < $1";

    /// Where this census ended, for the next.
    static ADVANCE = "UPDATE queue_census_runs SET watermark = $1, measured_at = $2 WHERE id = 1";
}

#[derive(QueryableByName)]
struct Watermark {
    #[diesel(sql_type = Nullable<Timestamptz>)]
    watermark: Option<DateTime<Utc>>,
}

#[derive(QueryableByName)]
struct Clocks {
    #[diesel(sql_type = Timestamptz)]
    now: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    oldest_open: Option<DateTime<Utc>>,
}

/// What one census did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CensusTaken {
    /// The census's clock: what its figures are as of.
    pub measured_at: DateTime<Utc>,
    /// The stretch it counted completions and dead letters over.
    pub window: Window,
    /// Queues it wrote.
    pub queues: usize,
}

impl Store {
    /// Takes one census; none when another instance is taking one now.
    pub async fn take_queue_census(&self) -> Result<Option<CensusTaken>> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let Some(previous) = LOCK.query().one_row::<Watermark>(conn).await.optional()? else {
                return Ok(None);
            };
            let clocks: Clocks = CLOCKS.query().one_row(conn).await?;
            let window = watermark::window(previous.watermark, clocks.now, clocks.oldest_open);
            ROLL_UP.query().bind::<Timestamptz, _>(window.from).bind::<Timestamptz, _>(window.to).execute(conn).await?;
            PRUNE.query().execute(conn).await?;
            let queues = WRITE
                .query()
                .bind::<Timestamptz, _>(clocks.now)
                .bind::<BigInt, _>(PENDING_COUNTED)
                .execute(conn)
                .await?;
            DROP_STALE.query().bind::<Timestamptz, _>(clocks.now).execute(conn).await?;
            ADVANCE.query().bind::<Timestamptz, _>(window.to).bind::<Timestamptz, _>(clocks.now).execute(conn).await?;
            Ok(Some(CensusTaken { measured_at: clocks.now, window, queues }))
        })
        .await
    }
}
