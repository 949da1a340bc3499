//! Recording an accepted delivery: its event row (deduplicated by the provider's
//! delivery id) and the todos routing chose, in one transaction; `todo.ready` for each
//! new todo after commit.

use diesel::prelude::*;
use diesel::sql_types::{Bool, Bytea, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::Store;
use super::todos::{CreateOutcome, NewTodo, insert_todo};
use crate::db::prepared::Prepared;
use crate::domain::ids::{EndpointId, EventId, ScopeId, WebhookId};
use crate::domain::todo_state::{Disposition, TrustMode};
use crate::error::{Error, Result};

/// An accepted delivery and where routing sends it.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The webhook it arrived on.
    pub webhook_id: WebhookId,
    /// The webhook's scope (a quarantine or rule match belongs to it).
    pub scope_id: ScopeId,
    /// The webhook's endpoint.
    pub endpoint_id: EndpointId,
    /// Source type label (`github`, …).
    pub source: String,
    /// Provider event type, if known.
    pub event_type: Option<String>,
    /// Provider delivery id: a redelivery with the same id is recorded once; none means
    /// the delivery is not deduplicated.
    pub external_id: Option<String>,
    /// How much the sender is trusted.
    pub trust_mode: TrustMode,
    /// Whether the signature verified.
    pub verified: bool,
    /// Headers with credentials removed.
    pub headers: serde_json::Value,
    /// The raw body.
    pub payload: Vec<u8>,
    /// What routing decided.
    pub disposition: Disposition,
    /// The todos to create (their `event_id` is filled in here).
    pub todos: Vec<NewTodo>,
}

/// What recording did.
#[derive(Debug, Clone)]
pub enum Recorded {
    /// A new delivery: its event and the todos created (or found by idempotency key).
    New {
        /// The event.
        event_id: EventId,
        /// One outcome per routed todo.
        todos: Vec<CreateOutcome>,
    },
    /// A redelivery of one already recorded: nothing new was created.
    Duplicate {
        /// The event first recorded.
        event_id: EventId,
        /// What was decided for it then.
        disposition: Disposition,
    },
}

impl Store {
    /// Records `delivery` and its todos in one transaction, then rings `todo.ready` for
    /// every new todo (each signal carries the sender gate).
    pub async fn record_delivery(&self, delivery: Delivery) -> Result<Recorded> {
        #[derive(QueryableByName)]
        struct First {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
            #[diesel(sql_type = Text)]
            disposition: Disposition,
        }
        let mut conn = self.conn().await?;
        let (recorded, signals) = conn
            .transaction::<_, Error, _>(async move |conn| {
                let event_id = EventId::new();
                let inserted: usize = Prepared(
                    diesel::sql_query(
                        "INSERT INTO events (id, scope_id, endpoint_id, webhook_id, source, event_type, external_id, \
                                         trust_mode, verified, headers, payload, payload_size, disposition) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) \
                     ON CONFLICT (webhook_id, external_id) WHERE webhook_id IS NOT NULL AND external_id IS NOT NULL \
                     DO NOTHING",
                    )
                    .bind::<SqlUuid, _>(event_id.0)
                    .bind::<SqlUuid, _>(delivery.scope_id.0)
                    .bind::<SqlUuid, _>(delivery.endpoint_id.0)
                    .bind::<SqlUuid, _>(delivery.webhook_id.0)
                    .bind::<Text, _>(&delivery.source)
                    .bind::<Nullable<Text>, _>(delivery.event_type.as_deref())
                    .bind::<Nullable<Text>, _>(delivery.external_id.as_deref())
                    .bind::<Text, _>(delivery.trust_mode)
                    .bind::<Bool, _>(delivery.verified)
                    .bind::<Jsonb, _>(&delivery.headers)
                    .bind::<Bytea, _>(&delivery.payload)
                    .bind::<Int4, _>(delivery.payload.len() as i32)
                    .bind::<Text, _>(delivery.disposition),
                )
                .execute(conn)
                .await?;
                // Nothing inserted: the conflict on (webhook, delivery id) — a redelivery.
                if inserted == 0 {
                    let first: First = diesel::sql_query(
                        "SELECT id, disposition FROM events WHERE webhook_id = $1 AND external_id = $2",
                    )
                    .bind::<SqlUuid, _>(delivery.webhook_id.0)
                    .bind::<Nullable<Text>, _>(delivery.external_id.as_deref())
                    .get_result(conn)
                    .await?;
                    let duplicate = Recorded::Duplicate { event_id: EventId(first.id), disposition: first.disposition };
                    return Ok((duplicate, Vec::new()));
                }
                let mut outcomes = Vec::with_capacity(delivery.todos.len());
                let mut signals = Vec::new();
                for todo in delivery.todos {
                    let (outcome, signal) = insert_todo(conn, &NewTodo { event_id: Some(event_id), ..todo }).await?;
                    outcomes.push(outcome);
                    signals.extend(signal);
                }
                Ok((Recorded::New { event_id, todos: outcomes }, signals))
            })
            .await?;
        self.emit(signals);
        Ok(recorded)
    }
}
