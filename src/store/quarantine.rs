//! The quarantine: deliveries held on the reserved `quarantine` queue of the webhook's
//! endpoint, invisible to agents. They leave by release (re-routed), discard, or expiry
//! after 30 days; each way closes the held todo as `done` with a result saying which.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Jsonb, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::Store;
use super::signals::Signal;
use super::todos::{CreateOutcome, NewTodo, insert_todo};
use crate::db::models::TodoRow;
use crate::db::statement::statement;
use crate::domain::ids::{EventId, ScopeId, TodoId, WebhookId};
use crate::error::{Error, Result};

/// How long a held delivery waits before it expires.
pub const QUARANTINE_DAYS: i64 = 30;

/// A held delivery, with what a release needs to route it again.
#[derive(Debug, Clone, QueryableByName)]
pub struct HeldDelivery {
    /// The held todo.
    #[diesel(embed)]
    pub todo: TodoRow,
    /// Its delivery.
    #[diesel(sql_type = diesel::sql_types::Nullable<SqlUuid>)]
    pub event_id: Option<EventId>,
    /// The webhook it arrived on.
    #[diesel(sql_type = diesel::sql_types::Nullable<SqlUuid>)]
    pub webhook_id: Option<WebhookId>,
    /// The delivery's stored (redacted) headers.
    #[diesel(sql_type = diesel::sql_types::Nullable<Jsonb>)]
    pub headers: Option<serde_json::Value>,
    /// When it was received.
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Timestamptz>)]
    pub received_at: Option<DateTime<Utc>>,
}

const HELD_SQL: &str = "SELECT t.*, e.id AS event_id, e.webhook_id, e.headers, e.received_at \
     FROM todos t LEFT JOIN events e ON e.id = t.event_id \
     WHERE t.queue = 'quarantine'";

statement! {
    static QUARANTINE_LIST = format!(
        "{HELD_SQL} AND t.state = 'pending' AND t.scope_id = ANY($1) ORDER BY t.created_at DESC, t.id DESC LIMIT $2"
    );
    static HELD_ONE = format!("{HELD_SQL} AND t.id = $1 AND t.scope_id = ANY($2)");
    static EXPIRE_QUARANTINE = format!(
        "UPDATE todos SET state = 'done', completed_at = now(), updated_at = now(), result = '{{\"expired\": true}}' \
        WHERE id IN (SELECT id FROM todos WHERE queue = 'quarantine' AND state = 'pending' \
        AND created_at < now() - interval '{QUARANTINE_DAYS} days' LIMIT 1000 FOR UPDATE SKIP LOCKED)"
    );
}

impl Store {
    /// Held deliveries in `scopes`, newest first.
    pub async fn list_quarantine(&self, scopes: &[ScopeId], limit: i64) -> Result<Vec<HeldDelivery>> {
        if !(1..=500).contains(&limit) {
            return Err(Error::invalid("limit", "must be between 1 and 500"));
        }
        let mut conn = self.conn().await?;
        Ok(QUARANTINE_LIST
            .query()
            .bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.0).collect::<Vec<_>>())
            .bind::<Int8, _>(limit)
            .load(&mut conn)
            .await?)
    }

    /// One delivery in `scopes` that was held (it may have left since: see its state).
    pub async fn held(&self, scopes: &[ScopeId], id: TodoId) -> Result<HeldDelivery> {
        let mut conn = self.conn().await?;
        HELD_ONE
            .query()
            .bind::<SqlUuid, _>(id.0)
            .bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.0).collect::<Vec<_>>())
            .one_row(&mut conn)
            .await
            .optional()?
            .ok_or(Error::NotFound)
    }

    /// Releases a held delivery: in one transaction the held todo closes (`released`)
    /// and `routed` become todos carrying the same event (so the sender gate still
    /// answers for them); `todo.ready` rings for each after commit.
    pub async fn release_held(
        &self,
        scopes: &[ScopeId],
        id: TodoId,
        routed: Vec<NewTodo>,
    ) -> Result<Vec<CreateOutcome>> {
        let scope_ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        self.to_completion(move |s| async move { s.release_held_now(scope_ids, id, routed).await }).await
    }

    /// [`Self::release_held`], on the caller's task.
    async fn release_held_now(
        &self,
        scope_ids: Vec<uuid::Uuid>,
        id: TodoId,
        routed: Vec<NewTodo>,
    ) -> Result<Vec<CreateOutcome>> {
        let mut conn = self.conn().await?;
        let (outcomes, signals) = conn
            .transaction::<_, Error, _>(async move |conn| {
                let event_id = close_held(conn, &scope_ids, id, serde_json::json!({"released": true})).await?;
                let mut outcomes = Vec::with_capacity(routed.len());
                let mut signals: Vec<Signal> = Vec::new();
                for todo in routed {
                    let (outcome, signal) = insert_todo(conn, &NewTodo { event_id, ..todo }).await?;
                    outcomes.push(outcome);
                    signals.extend(signal);
                }
                Ok((outcomes, signals))
            })
            .await?;
        self.emit(signals);
        Ok(outcomes)
    }

    /// Discards a held delivery: it closes as `done` with `{"discarded": true}`.
    pub async fn discard_held(&self, scopes: &[ScopeId], id: TodoId) -> Result<()> {
        let scope_ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        close_held(&mut conn, &scope_ids, id, serde_json::json!({"discarded": true})).await.map(|_| ())
    }

    /// Expires deliveries held longer than 30 days (`{"expired": true}`); returns how many.
    pub async fn expire_quarantine(&self) -> Result<usize> {
        let mut conn = self.conn().await?;
        Ok(EXPIRE_QUARANTINE.query().execute(&mut conn).await?)
    }
}

statement! {
    static CLOSE_HELD = "UPDATE todos SET state = 'done', completed_at = now(), updated_at = now(), result = $3 \
        WHERE id = $1 AND scope_id = ANY($2) AND queue = 'quarantine' AND state = 'pending' RETURNING event_id";
    static HELD_EXISTS = "SELECT count(*) AS n FROM todos WHERE id = $1 AND scope_id = ANY($2) AND queue = 'quarantine'";
}

/// Closes a pending held todo in `scopes` with `result`; returns its event. A held todo
/// already closed (released, discarded, expired) is a conflict; another id is unknown.
async fn close_held(
    conn: &mut AsyncPgConnection,
    scopes: &[uuid::Uuid],
    id: TodoId,
    result: serde_json::Value,
) -> Result<Option<EventId>> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Nullable<SqlUuid>)]
        event_id: Option<uuid::Uuid>,
    }
    let closed: Option<Row> = CLOSE_HELD
        .query()
        .bind::<SqlUuid, _>(id.0)
        .bind::<Array<SqlUuid>, _>(scopes.to_vec())
        .bind::<Jsonb, _>(result)
        .one_row(conn)
        .await
        .optional()?;
    match closed {
        Some(row) => Ok(row.event_id.map(EventId)),
        None => {
            let exists: i64 = HELD_EXISTS
                .query()
                .bind::<SqlUuid, _>(id.0)
                .bind::<Array<SqlUuid>, _>(scopes.to_vec())
                .one_row::<Count>(conn)
                .await?
                .n;
            if exists > 0 {
                Err(Error::Conflict("this delivery has already left quarantine".into()))
            } else {
                Err(Error::NotFound)
            }
        }
    }
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = Int8)]
    n: i64,
}

statement! {
    static HELD_PAYLOAD = "SELECT payload FROM events WHERE id = $1 AND scope_id = ANY($2)";
}

impl Store {
    /// The raw body of a delivery in `scopes` (a release routes it again).
    pub async fn event_payload(&self, scopes: &[ScopeId], event: EventId) -> Result<Vec<u8>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Bytea>)]
            payload: Option<Vec<u8>>,
        }
        let mut conn = self.conn().await?;
        let row: Option<Row> = HELD_PAYLOAD
            .query()
            .bind::<SqlUuid, _>(event.0)
            .bind::<Array<SqlUuid>, _>(scopes.iter().map(|s| s.0).collect::<Vec<_>>())
            .one_row(&mut conn)
            .await
            .optional()?;
        Ok(row.ok_or(Error::NotFound)?.payload.unwrap_or_default())
    }
}
