//! The sink outbox, the worker's side: claim due rows (committed before any outbound
//! call, so a worker that dies mid-call leaves a claim that lapses and is taken over),
//! spend each sink's budget in its own row lock (so it holds across instances), hold
//! what the budget cannot pay for and coalesce it when a token returns, and record what
//! each sink answered. Rows are written by the dead-letter trigger and the revocation
//! cascade (migration `outbox`), in the transactions that cause them.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Bool, Int4, Integer, Jsonb, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, RunQueryDsl};

mod facts;
mod log;
mod plan;
mod record;

use facts::DeadLetterColumns;
pub use facts::SubjectFacts;
pub use log::{SendRow, ToldSink};
pub use record::{Fresh, Record, SendOutcome};

use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, EndpointId, ScopeId, SinkId, TodoId};
use crate::error::{Error, Result};
use crate::sinks::rules::content::DeadLetterFacts;
use crate::sinks::rules::vocabulary::{AppriseMode, OutboxStatus, SinkEvent, SinkKind};
use crate::store::Store;
use std::collections::HashMap;

/// How long a claim keeps other workers off a row (longer than one attempt's timeout).
pub const CLAIM_SECONDS: i32 = 60;

/// [`CLAIM_SECONDS`] as a duration (how long a worker may count on its claim).
pub const CLAIM: std::time::Duration = std::time::Duration::from_secs(CLAIM_SECONDS as u64);

/// Rows one claim takes at most: enough that the claim (its plan is made anew each
/// call), the budget, the sink's dial and secret and the records'
/// settling are paid once for many messages; few enough that a sink answering in tens
/// of milliseconds has them all on the wire well within the claim's minute.
pub const CLAIM_BATCH: i32 = 512;

/// A claimed row, with what sending it needs.
#[derive(Debug, Clone, QueryableByName)]
pub struct OutboxRow {
    /// The row.
    #[diesel(sql_type = SqlUuid)]
    pub id: uuid::Uuid,
    /// Its sink (none: the sink was deleted).
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub sink_id: Option<SinkId>,
    /// The event.
    #[diesel(sql_type = Text)]
    pub event: SinkEvent,
    /// The todo it is about, if any.
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub todo_id: Option<TodoId>,
    /// The endpoint it is about (a cascade), if any.
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub endpoint_id: Option<EndpointId>,
    /// A cascade's count, slug and reason; a rule's id, webhook and queue.
    #[diesel(sql_type = Jsonb)]
    pub facts: serde_json::Value,
    /// How urgent it is.
    #[diesel(sql_type = Text)]
    pub severity: crate::sinks::rules::vocabulary::Severity,
    /// Whether the message may carry an excerpt of the subject.
    #[diesel(sql_type = Bool)]
    pub include_excerpt: bool,
    /// Repeats folded into it (1: none).
    #[diesel(sql_type = Int4)]
    pub count: i32,
    /// Attempts so far, this one included.
    #[diesel(sql_type = Int4)]
    pub attempts: i32,
    /// The previous attempt's error class.
    #[diesel(sql_type = Nullable<Text>)]
    pub last_error: Option<String>,
    /// When it was queued.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// The dead letter's record it was claimed from, when it is not in the table yet
    /// (its record writes it).
    #[diesel(sql_type = Nullable<BigInt>)]
    pub event_ref: Option<i64>,
    /// That record's scope (what writing the row needs besides the row), when claimed
    /// from a record.
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub record_scope: Option<ScopeId>,
    /// That record's dead-letter count (the row's dedup key), when claimed from a record.
    #[diesel(sql_type = Nullable<Int4>)]
    pub dead_letter_count: Option<i32>,
}

#[cfg(test)]
impl OutboxRow {
    /// A claimed `todo.dead_lettered` row of `sink`, for unit tests.
    pub(crate) fn test_row(sink: Option<SinkId>) -> OutboxRow {
        OutboxRow {
            id: uuid::Uuid::new_v4(),
            sink_id: sink,
            event: SinkEvent::DeadLettered,
            todo_id: None,
            endpoint_id: None,
            facts: serde_json::json!({}),
            severity: crate::sinks::rules::vocabulary::Severity::High,
            include_excerpt: false,
            count: 1,
            attempts: 1,
            last_error: None,
            created_at: Utc::now(),
            event_ref: None,
            record_scope: None,
            dead_letter_count: None,
        }
    }
}

/// What one claim of dead-letter records took.
#[derive(Debug, Default)]
pub struct ClaimedEvents {
    /// One row per subscribed sink whose row is not written yet, its attempt counted.
    pub rows: Vec<OutboxRow>,
    /// Records with no such sink left, to delete.
    pub settled: Vec<i64>,
    /// What the rows' messages say about their dead letters, read by the claim (a todo
    /// that is gone is absent).
    pub facts: HashMap<(TodoId, bool), DeadLetterFacts>,
}

/// How a sink posts, for the worker: where to is its connection's bound destination,
/// read with the secret ([`Store::bound_credential`]).
#[derive(Clone, QueryableByName)]
pub struct SinkDial {
    /// The sink.
    #[diesel(sql_type = SqlUuid)]
    pub id: SinkId,
    /// Its scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// Its kind.
    #[diesel(sql_type = Text)]
    pub kind: SinkKind,
    /// Apprise only.
    #[diesel(sql_type = Nullable<Text>)]
    pub apprise_mode: Option<AppriseMode>,
    /// Its connection.
    #[diesel(sql_type = SqlUuid)]
    pub connection_id: ConnectionId,
    /// Whether it is switched on.
    #[diesel(sql_type = Bool)]
    pub enabled: bool,
    /// Whether its connection is bound to a destination (else its rows are held).
    #[diesel(sql_type = Bool)]
    pub bound: bool,
}

impl std::fmt::Debug for SinkDial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkDial").field("id", &self.id).field("kind", &self.kind).finish_non_exhaustive()
    }
}

/// What one sink's budget decided for a pass.
#[derive(Debug, Default)]
pub struct SinkPlan {
    /// Rows to send one message each.
    pub individual: Vec<OutboxRow>,
    /// Rows (held ones and due ones) to send as one coalesced message.
    pub coalesced: Vec<OutboxRow>,
    /// Rows the budget held (all of them, this pass's and earlier ones).
    pub held: usize,
    /// The events of the rows this pass newly held.
    pub held_now: Vec<SinkEvent>,
    /// The dead-letter records of fresh rows this pass wrote (to be held or coalesced).
    pub written: Vec<i64>,
}

const ROW_COLUMNS: &str = "id, sink_id, event, todo_id, endpoint_id, facts, severity, include_excerpt, count, attempts, \
                           last_error, created_at, NULL::int8 AS event_ref, NULL::uuid AS record_scope, \
                           NULL::int4 AS dead_letter_count";

statement! {
    static CLAIM_ROWS = format!("SELECT {ROW_COLUMNS} FROM switchboard_claim_outbox($1, $2, $3)");
    static CLAIM_RECORDS = "SELECT event_ref, id, sink_id, event, todo_id, endpoint_id, record_scope, dead_letter_count, \
        include_excerpt, created_at, fact_todo_id, queue, title, dead_reason, attempt, max_attempts, \
        summary, artifact, source, webhook_id, excerpt \
        FROM switchboard_claim_outbox_messages($1, $2)";
    static FAN_OUT = "SELECT switchboard_fan_out_outbox($1) AS taken";
    static SINKS_WITH_HELD = "SELECT o.sink_id FROM outbox o \
        WHERE o.status = 'held' AND o.sink_id IS NOT NULL \
        AND (o.claimed_until IS NULL OR o.claimed_until < now()) AND o.sink_id <> ALL($1) \
        AND NOT EXISTS (SELECT 1 FROM sinks k JOIN connections c ON c.id = k.connection_id \
        WHERE k.id = o.sink_id AND c.bound IS NOT TRUE) \
        GROUP BY o.sink_id ORDER BY min(o.created_at)";
    static SINK_DIAL = "SELECT k.id, k.scope_id, k.kind, k.apprise_mode, k.connection_id, k.enabled, c.bound IS TRUE AS bound \
        FROM sinks k JOIN connections c ON c.id = k.connection_id WHERE k.id = $1";
    static HOLD_UNBOUND = "UPDATE outbox SET status = 'held', claimed_until = NULL, attempts = attempts - 1, \
        last_error = 'connection_unbound' WHERE id = ANY($1)";
    static UNCLAIM_HELD = "UPDATE outbox SET status = 'held', claimed_until = NULL WHERE id = ANY($1)";
    static END_HELD = "UPDATE outbox SET status = 'undeliverable', claimed_until = NULL, last_error = $2 \
        WHERE sink_id = $1 AND status = 'held'";
    static FINISH_COALESCED = "UPDATE outbox SET status = $2, claimed_until = NULL, last_error = $3, \
        sent_at = CASE WHEN $2 = 'coalesced' THEN now() ELSE sent_at END WHERE id = ANY($1)";
}

impl Store {
    /// Claims up to [`CLAIM_BATCH`] due rows (pending, due, unclaimed or with a lapsed
    /// claim) of sinks other than `busy` (which this worker is draining) and counts an
    /// attempt on each; committed before anything is sent.
    pub async fn claim_outbox(&self, busy: &[SinkId]) -> Result<Vec<OutboxRow>> {
        let mut conn = self.conn().await?;
        // The function (migration `outbox_costs`) keeps the plan on the due index.
        Ok(CLAIM_ROWS
            .query()
            .bind::<Integer, _>(CLAIM_SECONDS)
            .bind::<Integer, _>(CLAIM_BATCH)
            .bind::<Array<SqlUuid>, _>(busy)
            .load(&mut conn)
            .await?)
    }

    /// Claims up to `batch` recorded dead letters (migrations `outbox_direct`,
    /// `outbox_record_facts`): one row per subscribed sink whose row is not written yet,
    /// sent straight from the record and written once by its [`Record`], with what the
    /// message says of the dead letter as its record carries it (a record written
    /// before that migration carries none: the drain reads its todo); committed before
    /// anything is sent.
    pub async fn claim_outbox_events(&self, batch: i32) -> Result<ClaimedEvents> {
        #[derive(QueryableByName)]
        struct Pair {
            #[diesel(sql_type = BigInt)]
            event_ref: i64,
            #[diesel(sql_type = Nullable<SqlUuid>)]
            id: Option<uuid::Uuid>,
            #[diesel(sql_type = Nullable<SqlUuid>)]
            sink_id: Option<SinkId>,
            #[diesel(sql_type = Nullable<Text>)]
            event: Option<SinkEvent>,
            #[diesel(sql_type = SqlUuid)]
            todo_id: TodoId,
            #[diesel(sql_type = SqlUuid)]
            endpoint_id: EndpointId,
            #[diesel(sql_type = SqlUuid)]
            record_scope: ScopeId,
            #[diesel(sql_type = Int4)]
            dead_letter_count: i32,
            #[diesel(sql_type = Timestamptz)]
            created_at: DateTime<Utc>,
            #[diesel(embed)]
            facts: DeadLetterColumns,
        }
        let mut conn = self.conn().await?;
        // The function (migration `outbox_record_facts`) returns the records' facts too.
        let pairs: Vec<Pair> =
            CLAIM_RECORDS.query().bind::<Integer, _>(CLAIM_SECONDS).bind::<Integer, _>(batch).load(&mut conn).await?;
        let mut claimed = ClaimedEvents::default();
        for pair in pairs {
            match (pair.id, pair.sink_id, pair.event) {
                (Some(id), Some(sink), Some(event)) => {
                    let include_excerpt = pair.facts.include_excerpt();
                    claimed.rows.push(OutboxRow {
                        id,
                        sink_id: Some(sink),
                        event,
                        todo_id: Some(pair.todo_id),
                        endpoint_id: Some(pair.endpoint_id),
                        facts: serde_json::json!({}),
                        severity: event.default_severity(),
                        include_excerpt,
                        count: 1,
                        attempts: 1,
                        last_error: None,
                        created_at: pair.created_at,
                        event_ref: Some(pair.event_ref),
                        record_scope: Some(pair.record_scope),
                        dead_letter_count: Some(pair.dead_letter_count),
                    });
                    if let Some((key, facts)) = pair.facts.into_facts() {
                        claimed.facts.insert(key, facts);
                    }
                }
                _ => claimed.settled.push(pair.event_ref),
            }
        }
        Ok(claimed)
    }

    /// Fans out up to `batch` recorded dead letters (migration `outbox_fanout`) to one
    /// outbox row per subscribed sink, deleting them in the same statement; how many it
    /// took.
    pub async fn fan_out_outbox(&self, batch: i32) -> Result<usize> {
        #[derive(QueryableByName)]
        struct Taken {
            #[diesel(sql_type = Integer)]
            taken: i32,
        }
        let mut conn = self.conn().await?;
        let taken: Taken = FAN_OUT.query().bind::<Integer, _>(batch).one_row(&mut conn).await?;
        Ok(usize::try_from(taken.taken).unwrap_or(0))
    }

    /// Sinks other than `skip` with held rows nobody has claimed, the longest waiting
    /// first: a claim asks their budgets again. A sink whose connection is not bound is
    /// left out: its rows wait for a rotation, not for a token.
    pub async fn sinks_with_held(&self, skip: &[SinkId]) -> Result<Vec<SinkId>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            sink_id: SinkId,
        }
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = SINKS_WITH_HELD.query().bind::<Array<SqlUuid>, _>(skip).load(&mut conn).await?;
        Ok(rows.into_iter().map(|r| r.sink_id).collect())
    }

    /// Where `sink` posts (none: deleted).
    pub async fn sink_dial(&self, sink: SinkId) -> Result<Option<SinkDial>> {
        let mut conn = self.conn().await?;
        Ok(SINK_DIAL.query().bind::<SqlUuid, _>(sink).one_row(&mut conn).await.optional()?)
    }

    /// Holds `due` (rows this pass claimed for `sink`) because its connection is not
    /// bound to a destination: they wait, unsent and uncounted, until an admin rotates
    /// the connection with one, and then go out as the budget's coalesced message. Fresh
    /// rows (from a dead letter's record) are written first; answers their records'
    /// references, now owed nothing more by this sink.
    pub async fn hold_for_unbound(&self, due: Vec<OutboxRow>) -> Result<Vec<i64>> {
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let fresh: Vec<&OutboxRow> = due.iter().filter(|r| r.event_ref.is_some()).collect();
            record::write_claimed(conn, &fresh).await?;
            let written: Vec<i64> = fresh.iter().filter_map(|r| r.event_ref).collect();
            let ids: Vec<uuid::Uuid> = due.iter().map(|r| r.id).collect();
            HOLD_UNBOUND.query().bind::<Array<SqlUuid>, _>(&ids).execute(conn).await?;
            Ok(written)
        })
        .await
    }

    /// Gives claimed held rows back to the budget (a coalesced send that may succeed
    /// later).
    pub async fn unclaim_held_outbox(&self, ids: &[uuid::Uuid]) -> Result<()> {
        let mut conn = self.conn().await?;
        UNCLAIM_HELD.query().bind::<Array<SqlUuid>, _>(ids).execute(&mut conn).await?;
        Ok(())
    }

    /// Ends every held row of `sink` `undeliverable` for `why` (the sink is gone or
    /// switched off, so no returning token will send them).
    pub async fn end_held_outbox(&self, sink: SinkId, why: &str) -> Result<()> {
        let mut conn = self.conn().await?;
        END_HELD.query().bind::<SqlUuid, _>(sink).bind::<Text, _>(why).execute(&mut conn).await?;
        Ok(())
    }

    /// Ends rows of a coalesced message with `status`.
    pub async fn finish_coalesced(&self, ids: &[uuid::Uuid], status: OutboxStatus, error: Option<&str>) -> Result<()> {
        let mut conn = self.conn().await?;
        FINISH_COALESCED
            .query()
            .bind::<Array<SqlUuid>, _>(ids)
            .bind::<Text, _>(status)
            .bind::<Nullable<Text>, _>(error)
            .execute(&mut conn)
            .await?;
        Ok(())
    }
}
