//! Recording what sinks answered: many rows in one statement, so a backlog costs one
//! commit per batch of answers instead of one per message.
//!
//! Each record is fenced by the attempt count its claim gave the row and by the claim
//! itself: a row whose claim lapsed and that another worker claimed again (its count
//! moved on), or that was ended meanwhile (every end clears `claimed_until`), is left
//! alone, so a late answer never overwrites a newer attempt's.
//!
//! A row claimed straight from its dead letter's record ([`Fresh`]) is not in the table
//! yet: its record writes it, once (its id is the pair's, so a second writer's insert is
//! a no-op), with the sink's answer already in it and what the claim returned of its
//! record (scope, todo, endpoint, dead-letter count): the write looks nothing up.
//!
//! The statement names no `status`: a condition on it would let the planner walk a
//! partial index on `status` (every pending row) instead of looking each row up by id,
//! which with stale statistics it did, once per batch, over 290 000 pending rows.

use crate::db::one_row::OneRow;
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Bool, Int4, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::OutboxRow;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId, SinkId, TodoId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::{OutboxStatus, SinkEvent};
use crate::store::Store;

/// How a claimed row's attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// A final status (`sent`, `partial`, `undeliverable`) and the attempt's error class.
    Done(OutboxStatus, Option<&'static str>),
    /// Pending again after the wait, with the attempt's error class.
    RetryAfter(Duration, &'static str),
    /// Never attempted (its claim had too little time left for one attempt): pending
    /// again at once, the claim's attempt uncounted.
    GivenBack,
}

/// One claimed row's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The row.
    pub id: uuid::Uuid,
    /// Its attempt count as the claim left it (the fence).
    pub attempts: i32,
    /// How it ended.
    pub outcome: SendOutcome,
    /// What writing the row needs, when it is not in the table yet.
    pub fresh: Option<Fresh>,
}

/// A row claimed from its dead letter's record (`outbox_events`), not yet written: what
/// writing it needs, from the claim (so the write reads nothing back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fresh {
    /// The record it comes from.
    pub event_ref: i64,
    /// The sink.
    pub sink: SinkId,
    /// The event it raised.
    pub event: SinkEvent,
    /// Whether its message may carry an excerpt.
    pub include_excerpt: bool,
    /// The record's scope.
    pub scope: ScopeId,
    /// The dead letter's todo.
    pub todo: TodoId,
    /// The todo's endpoint.
    pub endpoint: EndpointId,
    /// The todo's dead-letter count (the dedup key).
    pub dead_letter_count: i32,
    /// When the dead letter was recorded.
    pub created_at: DateTime<Utc>,
}

impl Record {
    /// The end of `row`'s claimed attempt.
    pub fn of(row: &OutboxRow, outcome: SendOutcome) -> Record {
        let record = (row.event_ref, row.record_scope, row.dead_letter_count);
        let fresh = match (record, row.sink_id, row.todo_id, row.endpoint_id) {
            ((Some(event_ref), Some(scope), Some(dead_letter_count)), Some(sink), Some(todo), Some(endpoint)) => {
                Some(Fresh {
                    event_ref,
                    sink,
                    event: row.event,
                    include_excerpt: row.include_excerpt,
                    scope,
                    todo,
                    endpoint,
                    dead_letter_count,
                    created_at: row.created_at,
                })
            }
            _ => None,
        };
        Record { id: row.id, attempts: row.attempts, outcome, fresh }
    }
}

/// A record's columns as the statements bind them.
struct Columns<'a> {
    status: &'a str,
    error: Option<&'a str>,
    retry_ms: Option<i64>,
    given_back: bool,
}

fn columns(outcome: SendOutcome) -> Columns<'static> {
    match outcome {
        SendOutcome::Done(status, error) => {
            Columns { status: status.as_str(), error, retry_ms: None, given_back: false }
        }
        SendOutcome::RetryAfter(wait, error) => Columns {
            status: OutboxStatus::Pending.as_str(),
            error: Some(error),
            retry_ms: Some(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
            given_back: false,
        },
        SendOutcome::GivenBack => {
            Columns { status: OutboxStatus::Pending.as_str(), error: None, retry_ms: None, given_back: true }
        }
    }
}

/// Writes fresh rows claimed for the budget's coalesced send or hold as a claim leaves
/// a row (pending, claimed, its attempt counted), inside `conn`'s transaction.
pub(super) async fn write_claimed(conn: &mut AsyncPgConnection, rows: &[&OutboxRow]) -> Result<()> {
    let records: Vec<Record> = rows
        .iter()
        // Pending with its claim's attempt counted (`write_fresh` adds the claim).
        .map(|row| Record::of(row, SendOutcome::Done(OutboxStatus::Pending, None)))
        .filter(|r| r.fresh.is_some())
        .collect();
    if records.is_empty() {
        return Ok(());
    }
    write_fresh(conn, &records, &[], true, Conflicts::Skip).await?;
    Ok(())
}

/// What an insert of fresh rows does about a row that is already written (by a second
/// claimant of a record whose first claim lapsed, or by an earlier try of the same write
/// whose answer was lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conflicts {
    /// `ON CONFLICT DO NOTHING`: for a write inside a larger transaction, which a failed
    /// statement would abort.
    Skip,
    /// A plain insert first, and on a unique violation the same write again with
    /// `ON CONFLICT DO NOTHING`. Why: an `ON CONFLICT` insert is a speculative insertion
    /// (each unique index probed before the heap insert, and one more WAL record a row to
    /// confirm it); a conflict needs a lapsed claim, so nearly every write takes the plain
    /// path. Only for a statement that is its own transaction.
    Retry,
}

/// Inserts `records` (all fresh) with their ends, and deletes the `settled` dead-letter
/// records, in one statement; how many rows were written. `claimed`: written as a claim
/// leaves a row instead.
async fn write_fresh(
    conn: &mut AsyncPgConnection,
    records: &[Record],
    settled: &[i64],
    claimed: bool,
    conflicts: Conflicts,
) -> Result<usize> {
    if conflicts == Conflicts::Retry {
        match insert_fresh(conn, records, settled, claimed, false).await {
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _)) => {}
            done => return Ok(done?),
        }
    }
    Ok(insert_fresh(conn, records, settled, claimed, true).await?)
}

/// The write of fresh rows (see [`insert_fresh`]'s binds), with `on_conflict` after the
/// insert's rows.
fn write_sql(on_conflict: &str) -> String {
    format!(
        "WITH written AS ( \
          INSERT INTO outbox (id, sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, \
          include_excerpt, status, attempts, next_attempt_at, claimed_until, last_error, \
          created_at, sent_at) \
          SELECT r.id, r.sink_id, r.scope_id, r.event, 'high', 'dead_letter:' || r.todo_id || ':' || r.dead_letter_count, \
          r.todo_id, r.endpoint_id, r.include_excerpt, r.status, r.attempts, \
          CASE WHEN r.retry_ms IS NULL THEN now() ELSE now() + make_interval(secs => r.retry_ms / 1000.0) END, \
          CASE WHEN $13 THEN now() + make_interval(secs => $14) END, \
          CASE WHEN $13 THEN NULL ELSE r.error END, r.created_at, \
          CASE WHEN r.status IN ('sent', 'coalesced', 'partial') THEN now() END \
          FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::bool[], $5::text[], $6::int4[], $7::text[], $8::int8[], \
          $9::uuid[], $10::uuid[], $11::uuid[], $12::int4[], $15::timestamptz[]) \
          AS r(id, sink_id, event, include_excerpt, status, attempts, error, retry_ms, scope_id, todo_id, \
          endpoint_id, dead_letter_count, created_at) \
          {on_conflict} \
          RETURNING 1 \
        ), settled AS (DELETE FROM outbox_events WHERE id = ANY($16) RETURNING 1) \
          SELECT count(*) AS written FROM written"
    )
}

statement! {
    /// Writes fresh rows; a conflict is an error.
    static WRITE_EVENTS = built(|| write_sql(""));
    /// Writes fresh rows, skipping those already written (`ON CONFLICT DO NOTHING`).
    static WRITE_EVENTS_SKIPPING_CONFLICTS = built(|| write_sql("ON CONFLICT DO NOTHING"));
}

/// [`write_fresh`]'s statement; `skip_conflicts`: with `ON CONFLICT DO NOTHING`.
async fn insert_fresh(
    conn: &mut AsyncPgConnection,
    records: &[Record],
    settled: &[i64],
    claimed: bool,
    skip_conflicts: bool,
) -> diesel::QueryResult<usize> {
    #[derive(QueryableByName)]
    struct Written {
        #[diesel(sql_type = BigInt)]
        written: i64,
    }
    let mut sorted: Vec<(Record, Fresh)> = records.iter().filter_map(|r| r.fresh.map(|f| (*r, f))).collect();
    sorted.sort_by_key(|(r, _)| r.id);
    let n = sorted.len();
    let (mut ids, mut sinks, mut events, mut excerpts) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut scopes, mut todos, mut endpoints, mut counts, mut created) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut statuses, mut attempts, mut errors, mut retry_ms) =
        (Vec::with_capacity(n), Vec::with_capacity(n), Vec::<Option<&str>>::with_capacity(n), Vec::with_capacity(n));
    for (record, fresh) in &sorted {
        let c = columns(record.outcome);
        ids.push(record.id);
        sinks.push(fresh.sink);
        scopes.push(fresh.scope);
        todos.push(fresh.todo);
        endpoints.push(fresh.endpoint);
        counts.push(fresh.dead_letter_count);
        created.push(fresh.created_at);
        events.push(fresh.event.as_str());
        excerpts.push(fresh.include_excerpt);
        statuses.push(c.status);
        // A row given back was never attempted: its claim's attempt is not counted.
        attempts.push(if c.given_back { record.attempts - 1 } else { record.attempts });
        errors.push(c.error);
        retry_ms.push(c.retry_ms);
    }
    let statement = if skip_conflicts { &WRITE_EVENTS_SKIPPING_CONFLICTS } else { &WRITE_EVENTS };
    let written: Written = statement
        .query()
        .bind::<Array<SqlUuid>, _>(&ids)
        .bind::<Array<SqlUuid>, _>(&sinks)
        .bind::<Array<Text>, _>(&events)
        .bind::<Array<Bool>, _>(&excerpts)
        .bind::<Array<Text>, _>(&statuses)
        .bind::<Array<Int4>, _>(&attempts)
        .bind::<Array<Nullable<Text>>, _>(&errors)
        .bind::<Array<Nullable<Int8>>, _>(&retry_ms)
        .bind::<Array<SqlUuid>, _>(&scopes)
        .bind::<Array<SqlUuid>, _>(&todos)
        .bind::<Array<SqlUuid>, _>(&endpoints)
        .bind::<Array<Int4>, _>(&counts)
        .bind::<Bool, _>(claimed)
        .bind::<Int4, _>(super::CLAIM_SECONDS)
        .bind::<Array<Timestamptz>, _>(&created)
        .bind::<Array<BigInt>, _>(settled)
        .one_row(conn)
        .await?;
    Ok(usize::try_from(written.written).unwrap_or(0))
}

statement! {
    static DELETE_EVENTS = "DELETE FROM outbox_events WHERE id = ANY($1)";
}

impl Store {
    /// Records `records`; how many were recorded (fewer when a lapsed claim's row was
    /// claimed again, or ended, meanwhile).
    pub async fn record_outbox(&self, records: &[Record]) -> Result<usize> {
        self.record_outbox_settling(records, &[]).await
    }

    /// Records `records` and deletes the dead-letter records in `settled` (every sink's
    /// row of which is written) in one transaction; how many were recorded.
    pub async fn record_outbox_settling(&self, records: &[Record], settled: &[i64]) -> Result<usize> {
        let (fresh, claimed): (Vec<Record>, Vec<Record>) = records.iter().partition(|r| r.fresh.is_some());
        let mut conn = self.conn().await?;
        if claimed.is_empty() {
            if fresh.is_empty() && settled.is_empty() {
                return Ok(0);
            }
            return write_fresh(&mut conn, &fresh, settled, false, Conflicts::Retry).await;
        }
        conn.transaction::<_, Error, _>(async move |conn| {
            let mut recorded = record_claimed(conn, &claimed).await?;
            if !fresh.is_empty() || !settled.is_empty() {
                recorded += write_fresh(conn, &fresh, settled, false, Conflicts::Skip).await?;
            }
            Ok(recorded)
        })
        .await
    }

    /// Deletes dead-letter records every sink's row of which is written.
    pub async fn delete_outbox_events(&self, settled: &[i64]) -> Result<()> {
        if settled.is_empty() {
            return Ok(());
        }
        let mut conn = self.conn().await?;
        DELETE_EVENTS.query().bind::<Array<BigInt>, _>(settled).execute(&mut conn).await?;
        Ok(())
    }
}

statement! {
    static RECORD_RESULTS = "UPDATE outbox o SET status = r.status, claimed_until = NULL, \
        last_error = CASE WHEN r.given_back THEN o.last_error ELSE r.error END, \
        attempts = o.attempts - CASE WHEN r.given_back THEN 1 ELSE 0 END, \
        next_attempt_at = CASE WHEN r.retry_ms IS NULL THEN o.next_attempt_at \
        ELSE now() + make_interval(secs => r.retry_ms / 1000.0) END, \
        sent_at = CASE WHEN r.status IN ('sent', 'coalesced', 'partial') THEN now() ELSE o.sent_at END \
        FROM unnest($1::uuid[], $2::int4[], $3::text[], $4::text[], $5::int8[], $6::bool[]) \
        AS r(id, attempts, status, error, retry_ms, given_back) \
        WHERE o.id = r.id AND o.attempts = r.attempts AND o.claimed_until IS NOT NULL";
}

/// Updates claimed rows already in the table with their ends, in one statement.
async fn record_claimed(conn: &mut AsyncPgConnection, records: &[Record]) -> Result<usize> {
    {
        let mut sorted = records.to_vec();
        sorted.sort_by_key(|r| r.id);
        let mut ids = Vec::with_capacity(sorted.len());
        let mut attempts = Vec::with_capacity(sorted.len());
        let mut statuses = Vec::with_capacity(sorted.len());
        let mut errors: Vec<Option<&str>> = Vec::with_capacity(sorted.len());
        let mut retry_ms: Vec<Option<i64>> = Vec::with_capacity(sorted.len());
        let mut given_back = Vec::with_capacity(sorted.len());
        for record in &sorted {
            ids.push(record.id);
            attempts.push(record.attempts);
            let c = columns(record.outcome);
            statuses.push(c.status);
            errors.push(c.error);
            retry_ms.push(c.retry_ms);
            given_back.push(c.given_back);
        }
        let recorded = RECORD_RESULTS
            .query()
            .bind::<Array<SqlUuid>, _>(&ids)
            .bind::<Array<Int4>, _>(&attempts)
            .bind::<Array<Text>, _>(&statuses)
            .bind::<Array<Nullable<Text>>, _>(&errors)
            .bind::<Array<Nullable<Int8>>, _>(&retry_ms)
            .bind::<Array<Bool>, _>(&given_back)
            .execute(conn)
            .await?;
        Ok(recorded)
    }
}
