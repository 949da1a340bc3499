//! The outbox as people read it: a sink's send log, which sinks were told about a
//! todo, and the depth `/metrics` reports.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Double, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId, SinkId, TodoId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::{OutboxStatus, SinkEvent};
use crate::store::Store;

/// One row of a sink's send log.
#[derive(Debug, Clone, QueryableByName)]
pub struct SendRow {
    /// The outbox row.
    #[diesel(sql_type = SqlUuid)]
    pub id: uuid::Uuid,
    /// The event.
    #[diesel(sql_type = Text)]
    pub event: SinkEvent,
    /// What it is about: a todo (`td_…`) or, for a cascade, an endpoint (`ep_…`).
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub todo_id: Option<TodoId>,
    /// The endpoint of a cascade.
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub endpoint_id: Option<EndpointId>,
    /// Where it stands.
    #[diesel(sql_type = Text)]
    pub status: OutboxStatus,
    /// Repeats folded into it.
    #[diesel(sql_type = Int4)]
    pub count: i32,
    /// Attempts made.
    #[diesel(sql_type = Int4)]
    pub attempts: i32,
    /// The last attempt's error class.
    #[diesel(sql_type = Nullable<Text>)]
    pub last_error: Option<String>,
    /// When it was queued.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// When it went out.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub sent_at: Option<DateTime<Utc>>,
}

statement! {
    static SINK_LOG = "SELECT id, event, todo_id, endpoint_id, status, count, attempts, last_error, created_at, sent_at \
        FROM outbox WHERE sink_id = $1 ORDER BY created_at DESC, id LIMIT $2";
    static DEPTH = "SELECT o.open + e.open AS open, \
        COALESCE(EXTRACT(EPOCH FROM now() - LEAST(o.oldest, e.oldest)), 0)::float8 AS oldest \
        FROM (SELECT count(*) AS open, min(created_at) FILTER (WHERE status = 'pending') AS oldest \
        FROM outbox WHERE status IN ('pending', 'held')) o, \
        (SELECT count(*) AS open, min(created_at) AS oldest FROM outbox_events) e";
}

impl Store {
    /// The newest `limit` (1–500) rows of `sink`'s send log, a sink in `scopes`
    /// (else not found).
    pub async fn sink_sends(&self, scopes: &[ScopeId], sink: SinkId, limit: i64) -> Result<Vec<SendRow>> {
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid("limit", "must be between 1 and 500"));
        }
        self.sink_in(scopes, sink).await?;
        let mut conn = self.conn().await?;
        Ok(SINK_LOG.query().bind::<SqlUuid, _>(sink).bind::<diesel::sql_types::Int8, _>(limit).load(&mut conn).await?)
    }

    /// Outbox depth (rows pending or held, and dead letters whose rows are not all
    /// written yet, each once) and the age in seconds of the oldest of those waiting to be
    /// sent, for `/metrics`.
    pub async fn outbox_depth(&self) -> Result<(i64, f64)> {
        #[derive(QueryableByName)]
        struct Depth {
            #[diesel(sql_type = diesel::sql_types::BigInt)]
            open: i64,
            #[diesel(sql_type = Double)]
            oldest: f64,
        }
        let mut conn = self.conn().await?;
        let d: Depth = DEPTH.query().one_row(&mut conn).await?;
        Ok((d.open, d.oldest))
    }
}

/// Which sink was told about a todo, and how that went: the outbox row, with the
/// sink's name.
#[derive(Debug, Clone, QueryableByName)]
pub struct ToldSink {
    /// The sink's name (none: the sink was deleted since).
    #[diesel(sql_type = Nullable<Text>)]
    pub sink: Option<String>,
    /// The notification.
    #[diesel(embed)]
    pub send: SendRow,
}

statement! {
    static SCOPE_LOG = "SELECT k.name AS sink, o.id, o.event, o.todo_id, o.endpoint_id, o.status, o.count, o.attempts, \
        o.last_error, o.created_at, o.sent_at \
        FROM outbox o LEFT JOIN sinks k ON k.id = o.sink_id \
        WHERE o.todo_id = $1 AND o.scope_id = ANY($2) ORDER BY o.created_at DESC LIMIT 50";
}

impl Store {
    /// The notifications about `todo` to sinks of `scopes`, newest first.
    pub async fn told_about(&self, scopes: &[ScopeId], todo: TodoId) -> Result<Vec<ToldSink>> {
        let mut conn = self.conn().await?;
        Ok(SCOPE_LOG.query().bind::<SqlUuid, _>(todo).bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?)
    }
}
