//! The digest's sections, each its own grouped query under its own statement timeout
//! (SPEC section 11). A query that fails or times out becomes
//! [`Measured::Unavailable`] with a reason fit for an owner's phone (never the
//! database's message, never a zero). Every query is bounded to one owner scope and
//! reads through an index (the digest benchmark records the plans).

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::db::DbConn;
use crate::db::statement::{Statement, statement};
use crate::digests::rules::report::*;
use crate::domain::ids::{ScopeId, TodoId};
use crate::error::Result;
use crate::sinks::rules::vocabulary::SinkEvent;
use crate::store::Store;

/// What one digest covers.
#[derive(Debug, Clone)]
pub struct Coverage {
    /// The owner scope.
    pub scope: ScopeId,
    /// Only these queues (empty: all).
    pub queues: Vec<String>,
    /// The previous digest's send time.
    pub since: DateTime<Utc>,
    /// This one's.
    pub until: DateTime<Utc>,
    /// A doorbell not answered within this many seconds is unheard.
    pub doorbell_ack_seconds: i64,
    /// Each section's statement timeout, in milliseconds.
    pub section_timeout_ms: u64,
}

/// The SQL of every section, in one place for the benchmark's `EXPLAIN`s. Parameters:
/// `$1` scope, `$2` queues (empty: all), `$3` since, `$4` until, and for the doorbells
/// `$5` the acknowledgement window in seconds.
pub mod sql {
    use crate::db::statement::statement;
    use crate::store::todos::claimed_by_sql;

    statement! {
        /// Pending count and oldest age per queue (the claim index, per endpoint).
        pub static PENDING = "SELECT e.slug AS endpoint, t.queue, count(*)::int8 AS n, \
               COALESCE(EXTRACT(EPOCH FROM $4 - min(t.created_at)), 0)::int8 AS m \
             FROM endpoints e JOIN todos t ON t.endpoint_id = e.id AND t.state = 'pending' \
             WHERE e.scope_id = $1 AND t.queue <> 'quarantine' \
               AND (cardinality($2::text[]) = 0 OR t.queue = ANY($2)) AND $3 <= $4 \
             GROUP BY 1, 2 ORDER BY 1, 2";
        /// Claimed and stalled (lease lapsed, not reaped yet) per queue.
        pub static CLAIMED = "SELECT e.slug AS endpoint, t.queue, count(*)::int8 AS n, \
               count(*) FILTER (WHERE t.lease_expires_at < $4)::int8 AS m \
             FROM todos t JOIN endpoints e ON e.id = t.endpoint_id \
             WHERE t.scope_id = $1 AND t.state = 'claimed' \
               AND (cardinality($2::text[]) = 0 OR t.queue = ANY($2)) AND $3 <= $4 \
             GROUP BY 1, 2 ORDER BY 1, 2";
        /// Dead letters since the previous digest per queue, with the latest five. The
        /// dead-letter predicate is `todos_dead_letters_idx`'s, word for word, so the
        /// window is read off that index (it changes nothing: `dead_lettered_at` is set
        /// exactly on dead letters, a CHECK says so, and a quarantined delivery never dies).
        pub static DEAD = "SELECT e.slug AS endpoint, d.queue, d.n, d.id, d.title, d.from_delivery FROM ( \
               SELECT t.endpoint_id, t.queue, t.id, t.title, t.event_id IS NOT NULL AS from_delivery, \
                 count(*) OVER (PARTITION BY t.endpoint_id, t.queue)::int8 AS n, \
                 row_number() OVER (PARTITION BY t.endpoint_id, t.queue ORDER BY t.dead_lettered_at DESC, t.id DESC) AS r \
               FROM todos t \
               WHERE t.scope_id = $1 AND t.state = 'failed' AND t.next_retry_at IS NULL AND t.queue <> 'quarantine' \
                 AND t.dead_lettered_at > $3 AND t.dead_lettered_at <= $4 \
                 AND (cardinality($2::text[]) = 0 OR t.queue = ANY($2))) d \
             JOIN endpoints e ON e.id = d.endpoint_id WHERE d.r <= 5 ORDER BY 1, 2, d.r";
        /// Deliveries quarantined since the previous digest, per webhook.
        pub static QUARANTINED = "SELECT e.slug || '/' || w.queue AS label, count(*)::int8 AS n \
             FROM events ev JOIN webhooks w ON w.id = ev.webhook_id JOIN endpoints e ON e.id = w.endpoint_id \
             WHERE ev.scope_id = $1 AND ev.received_at > $3 AND ev.received_at <= $4 \
               AND ev.disposition = 'quarantined' AND cardinality($2::text[]) >= 0 \
             GROUP BY 1 ORDER BY 1";
        /// Doorbells whose acknowledgement window ended since the previous digest and
        /// whose todo was not claimed within it, per endpoint: the rings decided unheard,
        /// and any not decided yet (the scheduler decides them each tick) checked here.
        pub static UNHEARD = concat!(
            "SELECT e.slug AS label, count(*)::int8 AS n \
             FROM endpoints e JOIN doorbell_rings r ON r.endpoint_id = e.id \
             WHERE e.scope_id = $1 \
               AND r.rung_at > $3::timestamptz - make_interval(secs => $5) \
               AND r.rung_at <= $4::timestamptz - make_interval(secs => $5) \
               AND (cardinality($2::text[]) = 0 OR r.queue = ANY($2)) \
               AND (r.unheard OR NOT ",
            claimed_by_sql!("r.todo_id", "r.rung_at + make_interval(secs => $5)"),
            ") \
             GROUP BY 1 ORDER BY 1"
        );
        /// Endpoints that clocked out (and have not clocked in since); never-seen
        /// endpoints are not counted as clocked out.
        pub static CLOCKED_OUT = "SELECT slug AS label, 0::int8 AS n FROM endpoints \
             WHERE scope_id = $1 AND state = 'active' AND presence = 'out' AND presence_changed_at IS NOT NULL \
               AND cardinality($2::text[]) >= 0 AND $3 <= $4 ORDER BY 1";
        /// Claims deferred by admission budgets, counted per hour: the hour the previous
        /// digest was sent in is counted whole. Summed per endpoint in a lateral subquery,
        /// so each of the owner's endpoints reads its own rows off the table's primary key
        /// `(endpoint_id, queue, hour, reason)`; as a plain join the planner reads every
        /// owner's rows of the table instead.
        pub static DEFERRED = "SELECT e.slug AS endpoint, d.queue, d.reason AS label, d.n \
             FROM endpoints e CROSS JOIN LATERAL ( \
               SELECT q.queue, q.reason, sum(q.count)::int8 AS n FROM queue_deferrals q \
               WHERE q.endpoint_id = e.id AND q.hour >= date_trunc('hour', $3::timestamptz) AND q.hour <= $4 \
                 AND (cardinality($2::text[]) = 0 OR q.queue = ANY($2)) \
               GROUP BY 1, 2) d \
             WHERE e.scope_id = $1 ORDER BY 1, 2, 3";
        /// The scope's connections not bound to a destination now, and how many messages
        /// their sinks hold meanwhile.
        pub static UNBOUND = "SELECT c.name AS label, count(o.id)::int8 AS n FROM connections c \
             LEFT JOIN sinks k ON k.connection_id = c.id \
             LEFT JOIN outbox o ON o.sink_id = k.id AND o.status = 'held' \
             WHERE c.scope_id = $1 AND c.bound IS NOT TRUE AND cardinality($2::text[]) >= 0 AND $3 <= $4 \
             GROUP BY c.id, c.name ORDER BY 1";
        /// Notifications that became undeliverable since the previous digest (the last
        /// attempt's time), per event.
        pub static UNDELIVERABLE = "SELECT event AS label, count(*)::int8 AS n FROM outbox \
             WHERE scope_id = $1 AND status = 'undeliverable' AND next_attempt_at > $3 AND next_attempt_at <= $4 \
               AND cardinality($2::text[]) >= 0 \
             GROUP BY 1 ORDER BY 1";
    }
}

#[derive(QueryableByName)]
struct QueueCount {
    #[diesel(sql_type = Text)]
    endpoint: String,
    #[diesel(sql_type = Text)]
    queue: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = BigInt)]
    m: i64,
}

#[derive(QueryableByName)]
struct Labelled {
    #[diesel(sql_type = Text)]
    label: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct DeadRow {
    #[diesel(sql_type = Text)]
    endpoint: String,
    #[diesel(sql_type = Text)]
    queue: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
    #[diesel(sql_type = SqlUuid)]
    id: TodoId,
    #[diesel(sql_type = Text)]
    title: String,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    from_delivery: bool,
}

#[derive(QueryableByName)]
struct Deferred {
    #[diesel(sql_type = Text)]
    endpoint: String,
    #[diesel(sql_type = Text)]
    queue: String,
    #[diesel(sql_type = Text)]
    label: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

impl Store {
    /// Measures every section of a digest over `c`; a section that fails is
    /// unavailable, the others still measured. Fails only when no connection can be had
    /// at all (the whole digest then waits for the next tick).
    pub async fn digest_report(&self, c: &Coverage) -> Result<Report> {
        let mut conn = self.conn().await?;
        let key = |endpoint: String, queue: String| QueueKey { endpoint, queue };
        let pending = section::<QueueCount>(&mut conn, c, &sql::PENDING).await.map(|rows| {
            rows.into_iter()
                .map(|r| PendingLine { key: key(r.endpoint, r.queue), pending: r.n, oldest_pending_seconds: r.m })
                .collect()
        });
        let claimed = section::<QueueCount>(&mut conn, c, &sql::CLAIMED).await.map(|rows| {
            rows.into_iter()
                .map(|r| ClaimedLine { key: key(r.endpoint, r.queue), claimed: r.n, stalled: r.m })
                .collect()
        });
        let dead = section::<DeadRow>(&mut conn, c, &sql::DEAD).await.map(|rows| {
            let mut out: Vec<DeadLine> = Vec::new();
            for r in rows {
                let k = key(r.endpoint, r.queue);
                let line = DeadLetterLine {
                    id: r.id,
                    title: r.title,
                    title_by: crate::domain::vocabulary::Writer::of_title(r.from_delivery),
                };
                match out.last_mut() {
                    Some(last) if last.key == k => last.first.push(line),
                    _ => out.push(DeadLine { key: k, dead_letters: r.n, first: vec![line] }),
                }
            }
            out
        });
        let quarantined = section::<Labelled>(&mut conn, c, &sql::QUARANTINED)
            .await
            .map(|rows| rows.into_iter().map(|r| QuarantineLine { webhook: r.label, quarantined: r.n }).collect());
        let unheard = section::<Labelled>(&mut conn, c, &sql::UNHEARD)
            .await
            .map(|rows| rows.into_iter().map(|r| UnheardLine { endpoint: r.label, unheard: r.n }).collect());
        let clocked_out = section::<Labelled>(&mut conn, c, &sql::CLOCKED_OUT)
            .await
            .map(|rows| rows.into_iter().map(|r| r.label).collect());
        let deferred = section::<Deferred>(&mut conn, c, &sql::DEFERRED).await.map(|rows| {
            rows.into_iter()
                .map(|r| DeferredLine { key: key(r.endpoint, r.queue), reason: r.label, deferred: r.n })
                .collect()
        });
        let undeliverable = section::<Labelled>(&mut conn, c, &sql::UNDELIVERABLE).await.map(|rows| {
            rows.into_iter()
                .filter_map(|r| {
                    r.label.parse::<SinkEvent>().ok().map(|event| UndeliverableLine { event, undeliverable: r.n })
                })
                .collect()
        });
        let unbound = section::<Labelled>(&mut conn, c, &sql::UNBOUND)
            .await
            .map(|rows| rows.into_iter().map(|r| UnboundLine { connection: r.label, held: r.n }).collect());
        Ok(Report {
            since: c.since,
            until: c.until,
            pending,
            claimed,
            dead,
            quarantined,
            unheard,
            clocked_out,
            deferred,
            undeliverable,
            unbound,
        })
    }
}

statement! {
    /// This transaction's statement timeout (`$1` milliseconds).
    static SET_STATEMENT_TIMEOUT = "SELECT set_config('statement_timeout', $1, true)";
    /// This transaction's lock timeout (`$1` milliseconds).
    static SET_LOCK_TIMEOUT = "SELECT set_config('lock_timeout', $1, true)";
}

/// Runs one section's query in a transaction of its own with its own statement
/// timeout (and as long a lock timeout, so a locked table is a timeout too).
async fn section<T>(conn: &mut DbConn, c: &Coverage, query: &'static Statement) -> Measured<Vec<T>>
where
    T: QueryableByName<diesel::pg::Pg> + Send + 'static,
{
    let timeout = c.section_timeout_ms.max(1);
    let run = conn
        .transaction::<Vec<T>, diesel::result::Error, _>(async |conn| {
            // `SET LOCAL`, as `set_config(…, true)`: SET itself takes no parameters.
            let timeout_ms = timeout.to_string();
            SET_STATEMENT_TIMEOUT.query().bind::<Text, _>(&timeout_ms).execute(conn).await?;
            SET_LOCK_TIMEOUT.query().bind::<Text, _>(&timeout_ms).execute(conn).await?;
            let mut q = query
                .query()
                .into_boxed()
                .bind::<SqlUuid, _>(c.scope)
                .bind::<Array<Text>, _>(c.queues.clone())
                .bind::<Timestamptz, _>(c.since)
                .bind::<Timestamptz, _>(c.until);
            if query.text().contains("$5") {
                q = q.bind::<diesel::sql_types::Double, _>(c.doorbell_ack_seconds as f64);
            }
            q.load::<T>(conn).await
        })
        .await;
    match run {
        Ok(rows) => Measured::Ok(rows),
        Err(e) => Measured::Unavailable(reason(&e, timeout)),
    }
}

/// A reason an owner can read; the database's own message stays in the server log.
fn reason(e: &diesel::result::Error, timeout_ms: u64) -> String {
    let text = e.to_string();
    if text.contains("statement timeout") || text.contains("lock timeout") {
        format!("timed out after {timeout_ms} ms")
    } else if text.contains("does not exist") {
        "not measured on this instance".to_owned()
    } else {
        tracing::warn!(error = %text, "a digest section's query failed");
        "the query failed".to_owned()
    }
}
