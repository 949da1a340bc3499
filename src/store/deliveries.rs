//! Recording an accepted delivery: its event row (deduplicated by the provider's
//! delivery id) and the todos routing chose, in one transaction; `todo.ready` for each
//! new todo after commit.

use crate::db::one_row::OneRow;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Bool, Bytea, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::Store;
use super::todos::{CreateOutcome, EVENT_GATE, Inserted, NewTodo, TODO_INSERT, bind_todo, insert_todo};
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
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
    /// The matched rule's `notify`, when it has one: queued for its sink with the
    /// delivery, in the same transaction.
    pub notice: Option<RuleNotice>,
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

/// The event insert, its values bound by [`bind_event`]: the event id is `$id`, the
/// other values `$first`… in order. (In the one-statement form a todo's values come
/// first and the event id is the todo's event id.)
fn event_insert(id: usize, first: usize) -> String {
    let values: Vec<String> = (first..first + 12).map(|i| format!("${i}")).collect();
    format!(
        "INSERT INTO events (id, scope_id, endpoint_id, webhook_id, source, event_type, external_id, \
                             trust_mode, verified, headers, payload, payload_size, disposition) \
         SELECT ${id}, {}",
        values.join(", ")
    )
}

/// Where a redelivery collides with the delivery first recorded.
const EVENT_CONFLICT: &str = "ON CONFLICT (webhook_id, external_id) \
    WHERE webhook_id IS NOT NULL AND external_id IS NOT NULL DO NOTHING";

fn bind_event<'f>(q: BoxedSqlQuery<'f, Pg, SqlQuery>, d: &'f Delivery) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
    q.bind::<SqlUuid, _>(d.scope_id.0)
        .bind::<SqlUuid, _>(d.endpoint_id.0)
        .bind::<SqlUuid, _>(d.webhook_id.0)
        .bind::<Text, _>(&d.source)
        .bind::<Nullable<Text>, _>(d.event_type.as_deref())
        .bind::<Nullable<Text>, _>(d.external_id.as_deref())
        .bind::<Text, _>(d.trust_mode)
        .bind::<Bool, _>(d.verified)
        .bind::<Jsonb, _>(&d.headers)
        .bind::<Bytea, _>(&d.payload)
        .bind::<Int4, _>(d.payload.len() as i32)
        .bind::<Text, _>(d.disposition)
}

statement! {
    /// The one statement that records a delivery routed to a single todo on the webhook's
    /// own endpoint (the common case): the event, then the todo, each only while the
    /// endpoint is active (both lock it, so a racing revocation leaves neither), the todo
    /// only when the event is new. No row back: a redelivery, or an inactive endpoint.
    static ONE_TODO_SQL = format!(
        "WITH ev AS ({} FROM endpoints ep \
             WHERE ep.id = $2 AND ep.state = 'active' AND (ep.expires_at IS NULL OR ep.expires_at > now()) \
             FOR SHARE OF ep {EVENT_CONFLICT} RETURNING id, verified, trust_mode), \
         t AS ({TODO_INSERT} AND EXISTS (SELECT 1 FROM ev) FOR SHARE OF ep RETURNING *) \
         SELECT t.*, (SELECT slug FROM endpoints ep WHERE ep.id = t.endpoint_id) AS endpoint_slug, \
           {EVENT_GATE} AS sender_gate FROM t CROSS JOIN ev e",
        event_insert(9, 14)
    );

    /// The event of a delivery recorded in a transaction (`$1` its id, then
    /// [`bind_event`]'s values); nothing on a redelivery.
    static EVENT_INSERT = format!("{} {EVENT_CONFLICT}", event_insert(1, 2));

    /// A routing rule's notice queued for its sink (see [`queue_rule_notice`]).
    static RULE_NOTICE = "INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, facts) \
         SELECT k.id, k.scope_id, 'rule.notify', $3, 'rule:' || $4::text || ':' || $5 || ':' || $6::text, $7, $8 \
         FROM sinks k WHERE k.scope_id = $1 AND k.enabled AND (k.id = $2 OR ($2 IS NULL AND k.name = $9)) \
         ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held') DO UPDATE SET count = outbox.count + 1";

    /// The event first recorded under webhook `$1`'s provider delivery id `$2`.
    static FIRST_RECORDED = "SELECT id, disposition FROM events WHERE webhook_id = $1 AND external_id = $2";
}

impl Store {
    /// Records `delivery` and its todos atomically, then rings `todo.ready` for every
    /// new todo (each signal carries the sender gate).
    pub async fn record_delivery(&self, delivery: Delivery) -> Result<Recorded> {
        self.to_completion(move |s| async move { s.record_delivery_now(delivery).await }).await
    }

    /// [`Self::record_delivery`], on the caller's task.
    async fn record_delivery_now(&self, delivery: Delivery) -> Result<Recorded> {
        match delivery.todos.as_slice() {
            [only]
                if only.endpoint_id == delivery.endpoint_id
                    && only.idempotency_key.is_none()
                    && delivery.notice.is_none() =>
            {
                self.record_with_one_todo(delivery).await
            }
            _ => self.record_in_transaction(delivery).await,
        }
    }

    /// The common case in one statement: no transaction round trips, and the event's
    /// sender gate read from the row being inserted.
    async fn record_with_one_todo(&self, mut delivery: Delivery) -> Result<Recorded> {
        let event_id = EventId::new();
        let Some(todo) = delivery.todos.pop() else { return self.record_in_transaction(delivery).await };
        let todo = NewTodo { event_id: Some(event_id), ..todo };
        todo.validate()?;
        let payload_size = todo.payload.as_ref().map(|p| p.to_string().len()).unwrap_or(0) as i32;
        let mut conn = self.conn().await?;
        let query = bind_event(bind_todo(ONE_TODO_SQL.query().into_boxed(), &todo, payload_size), &delivery);
        let inserted: Option<Inserted> = Prepared(query).one_row(&mut conn).await.optional()?;
        if let Some(row) = inserted {
            let (outcome, signal) = row.into_outcome();
            self.emit(signal.into_iter().collect());
            return Ok(Recorded::New { event_id, todos: vec![outcome] });
        }
        match first_recorded(&mut conn, &delivery).await? {
            Some(duplicate) => Ok(duplicate),
            None => Err(Error::Conflict("the endpoint is not active".into())),
        }
    }

    /// Any other routing (none, several todos, another endpoint's) in one transaction.
    async fn record_in_transaction(&self, delivery: Delivery) -> Result<Recorded> {
        let mut conn = self.conn().await?;
        let (recorded, signals) = conn
            .transaction::<_, Error, _>(async move |conn| {
                let event_id = EventId::new();
                let query = bind_event(EVENT_INSERT.query().into_boxed().bind::<SqlUuid, _>(event_id.0), &delivery);
                let inserted: usize = Prepared(query).execute(conn).await?;
                // Nothing inserted: the conflict on (webhook, delivery id) — a redelivery.
                if inserted == 0 {
                    let duplicate = first_recorded(conn, &delivery)
                        .await?
                        .ok_or(Error::Conflict("the delivery conflicted but its first record is gone".into()))?;
                    return Ok((duplicate, Vec::new()));
                }
                let mut outcomes = Vec::with_capacity(delivery.todos.len());
                let mut signals = Vec::new();
                for todo in delivery.todos {
                    let (outcome, signal) = insert_todo(conn, &NewTodo { event_id: Some(event_id), ..todo }).await?;
                    outcomes.push(outcome);
                    signals.extend(signal);
                }
                if let Some(notice) = &delivery.notice {
                    let first = <[CreateOutcome]>::first(&outcomes).map(|o| o.todo.id);
                    queue_rule_notice(conn, delivery.scope_id, delivery.webhook_id, event_id, first, notice).await?;
                }
                Ok((Recorded::New { event_id, todos: outcomes }, signals))
            })
            .await?;
        self.emit(signals);
        Ok(recorded)
    }
}

/// A routing rule's `notify` action, fired by one delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleNotice {
    /// The sink the rule names: its id (`sk_…`) or its name, in the webhook's scope
    /// (resolved again here, at fire time; another scope's or a deleted one is skipped).
    pub sink: String,
    /// The rule's `notify_severity` (default normal).
    pub severity: crate::sinks::rules::vocabulary::Severity,
    /// The rule.
    pub rule_id: String,
    /// The queue the delivery went to, if it went to one.
    pub queue: Option<String>,
}

/// Queues `notice` for its sink, if the sink is the webhook's scope's and enabled; a
/// repeat for the same rule and delivery folds into the open row.
async fn queue_rule_notice(
    conn: &mut AsyncPgConnection,
    scope: ScopeId,
    webhook: WebhookId,
    event: EventId,
    todo: Option<crate::domain::ids::TodoId>,
    notice: &RuleNotice,
) -> Result<()> {
    let by_id: Option<uuid::Uuid> = notice.sink.parse::<crate::domain::ids::SinkId>().ok().map(|id| id.0);
    let facts =
        serde_json::json!({"rule_id": notice.rule_id, "webhook_id": webhook.to_string(), "queue": notice.queue});
    RULE_NOTICE
        .query()
        .bind::<SqlUuid, _>(scope.0)
        .bind::<diesel::sql_types::Nullable<SqlUuid>, _>(by_id)
        .bind::<Text, _>(notice.severity)
        .bind::<SqlUuid, _>(webhook.0)
        .bind::<Text, _>(&notice.rule_id)
        .bind::<SqlUuid, _>(event.0)
        .bind::<diesel::sql_types::Nullable<SqlUuid>, _>(todo.map(|t| t.0))
        .bind::<diesel::sql_types::Jsonb, _>(facts)
        .bind::<Text, _>(&notice.sink)
        .execute(conn)
        .await?;
    Ok(())
}

/// The delivery first recorded under this one's provider delivery id, if any.
async fn first_recorded(conn: &mut AsyncPgConnection, delivery: &Delivery) -> Result<Option<Recorded>> {
    #[derive(QueryableByName)]
    struct First {
        #[diesel(sql_type = SqlUuid)]
        id: uuid::Uuid,
        #[diesel(sql_type = Text)]
        disposition: Disposition,
    }
    let Some(external_id) = delivery.external_id.as_deref() else { return Ok(None) };
    let first: Option<First> = FIRST_RECORDED
        .query()
        .bind::<SqlUuid, _>(delivery.webhook_id.0)
        .bind::<Text, _>(external_id)
        .one_row(conn)
        .await
        .optional()?;
    Ok(first.map(|f| Recorded::Duplicate { event_id: EventId(f.id), disposition: f.disposition }))
}
