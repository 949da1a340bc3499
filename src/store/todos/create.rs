//! Creating todos: agent-authored, and the function intake calls with an event.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Bool, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::Store;
use super::super::signals::{Signal, TodoFacts, TodoReady};
use super::{LIVE_KEY, SENDER_GATE};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::domain::ids::{EndpointId, EventId, TodoId};
use crate::domain::text::{self, QUARANTINE_QUEUE};
use crate::domain::todo_state::{QuarantineReason, ReadyReason};
use crate::domain::transitions::{DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_RANGE, within};
use crate::error::{Error, Result};

/// A todo to create.
#[derive(Debug, Clone)]
pub struct NewTodo {
    /// The endpoint whose queue receives it.
    pub endpoint_id: EndpointId,
    /// Queue name.
    pub queue: String,
    /// Title (sender- or agent-written).
    pub title: String,
    /// Kind label.
    pub kind: Option<String>,
    /// Source label (intake sets the webhook's source type).
    pub source: Option<String>,
    /// Opaque JSON payload.
    pub payload: Option<serde_json::Value>,
    /// De-duplicates creation among live todos of the endpoint.
    pub idempotency_key: Option<String>,
    /// Attempt cap (default 5).
    pub max_attempts: Option<i32>,
    /// The delivery that produced it (intake only; agent-authored todos have none and
    /// so never pass the sender gate).
    pub event_id: Option<EventId>,
    /// Why intake held it (only on the reserved `quarantine` queue).
    pub quarantine_reason: Option<QuarantineReason>,
    /// Instructions a routing rule attached for the agent.
    pub work_order: Option<String>,
}

impl NewTodo {
    /// A todo with a queue and title and every optional field unset.
    pub fn new(endpoint_id: EndpointId, queue: impl Into<String>, title: impl Into<String>) -> Self {
        NewTodo {
            endpoint_id,
            queue: queue.into(),
            title: title.into(),
            kind: None,
            source: None,
            payload: None,
            idempotency_key: None,
            max_attempts: None,
            event_id: None,
            quarantine_reason: None,
            work_order: None,
        }
    }

    /// Checks every field; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        if !text::valid_queue_name(&self.queue) {
            return Err(Error::invalid(
                "queue",
                "must be 1–64 of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
            ));
        }
        // The reserved queue holds intake's deliveries only, each with its reason.
        if (self.queue == QUARANTINE_QUEUE) != (self.event_id.is_some() && self.quarantine_reason.is_some()) {
            return Err(Error::invalid("queue", "quarantine is reserved for held deliveries"));
        }
        if self.title.trim().is_empty() || self.title.len() > text::TITLE_MAX_BYTES {
            return Err(Error::invalid("title", "must be 1–1024 bytes"));
        }
        for (field, value) in [("kind", &self.kind), ("source", &self.source)] {
            if value.as_ref().is_some_and(|v| v.is_empty() || v.len() > text::LABEL_MAX_BYTES) {
                return Err(Error::invalid(field, "must be 1–128 bytes"));
            }
        }
        if self.idempotency_key.as_ref().is_some_and(|k| k.is_empty() || k.len() > text::IDEMPOTENCY_KEY_MAX_BYTES) {
            return Err(Error::invalid("idempotency_key", "must be 1–256 bytes"));
        }
        let texts = [Some(&self.title), self.kind.as_ref(), self.source.as_ref(), self.idempotency_key.as_ref()];
        if texts.into_iter().flatten().any(|t| t.contains('\0'))
            || self.payload.as_ref().is_some_and(text::json_has_nul)
        {
            return Err(Error::InvalidArgument("text may not contain NUL (\\u0000) characters".into()));
        }
        if let Some(m) = self.max_attempts
            && !within(m, MAX_ATTEMPTS_RANGE)
        {
            return Err(Error::invalid("max_attempts", "must be between 1 and 100"));
        }
        Ok(())
    }
}

/// The result of a create: the todo, and whether it is new (an idempotency hit
/// returns the existing live todo).
#[derive(Debug, Clone)]
pub struct CreateOutcome {
    /// The todo.
    pub todo: TodoRow,
    /// False when an existing live todo with the same idempotency key was returned.
    pub created: bool,
}

/// A todo row just inserted, with what its `todo.ready` signal needs.
#[derive(QueryableByName)]
pub(crate) struct Inserted {
    #[diesel(embed)]
    pub todo: TodoRow,
    #[diesel(sql_type = Text)]
    pub endpoint_slug: String,
    #[diesel(sql_type = Bool)]
    pub sender_gate: bool,
}

impl Inserted {
    /// The outcome of a create, and its `todo.ready` signal unless it was held.
    pub(crate) fn into_outcome(self) -> (CreateOutcome, Option<Signal>) {
        let signal = (self.todo.queue != QUARANTINE_QUEUE).then(|| {
            Signal::Ready(TodoReady {
                todo: TodoFacts::from_row(&self.todo, self.endpoint_slug, self.sender_gate),
                reason: ReadyReason::Created,
            })
        });
        (CreateOutcome { todo: self.todo, created: true }, signal)
    }
}

/// Inserts a todo inside the caller's connection or transaction (intake composes this
/// with its event insert). Returns the outcome and, for a new non-quarantine todo, the
/// `TodoReady` signal to emit once the caller commits. The endpoint must be active.
pub async fn insert_todo(conn: &mut AsyncPgConnection, new: &NewTodo) -> Result<(CreateOutcome, Option<Signal>)> {
    new.validate()?;
    // Two tries: a live todo holding the key can turn terminal between the insert that
    // found it and the read that looks for it; the second insert then succeeds.
    for _ in 0..2 {
        if let Some(row) = try_insert(conn, new).await? {
            return Ok(row.into_outcome());
        }
        let Some(key) = &new.idempotency_key else { break };
        if let Some(todo) = live_todo_with_key(conn, new.endpoint_id, key).await? {
            return Ok((CreateOutcome { todo, created: false }, None));
        }
    }
    Err(Error::Conflict("the endpoint is not active".into()))
}

/// The todo insert, its values bound by [`bind_todo`] as `$1`–`$13`: a row only when
/// the endpoint `$2` is active. Statements append their own conditions (`AND …`), then
/// `FOR SHARE OF ep`.
///
/// A concurrent revocation or expiry locks the endpoint row `FOR NO KEY UPDATE`, which
/// conflicts with this insert's `FOR SHARE OF ep` (the endpoint is locked before the
/// todo, as the lock order in [`crate::store`] says): the revocation waits for this
/// insert and then cascades it, or the insert waits for the revocation and then finds
/// the endpoint revoked (pinned by a race test).
pub(crate) const TODO_INSERT: &str = "\
    INSERT INTO todos (id, endpoint_id, scope_id, queue, source, kind, title, payload, payload_size, \
                       event_id, idempotency_key, state, max_attempts, quarantine_reason, work_order) \
    SELECT $1, ep.id, ep.scope_id, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11, $12, $13 \
    FROM endpoints ep \
    WHERE ep.id = $2 AND ep.state = 'active' AND (ep.expires_at IS NULL OR ep.expires_at > now())";

/// Binds a new todo's values in [`TODO_INSERT`]'s order (`$1`–`$13`).
pub(crate) fn bind_todo<'f>(
    q: BoxedSqlQuery<'f, Pg, SqlQuery>,
    new: &'f NewTodo,
    payload_size: i32,
) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
    q.bind::<SqlUuid, _>(TodoId::new().0)
        .bind::<SqlUuid, _>(new.endpoint_id.0)
        .bind::<Text, _>(&new.queue)
        .bind::<Nullable<Text>, _>(new.source.as_deref())
        .bind::<Nullable<Text>, _>(new.kind.as_deref())
        .bind::<Text, _>(new.title.trim())
        .bind::<Nullable<Jsonb>, _>(new.payload.as_ref())
        .bind::<Int4, _>(payload_size)
        .bind::<Nullable<SqlUuid>, _>(new.event_id.map(|e| e.0))
        .bind::<Nullable<Text>, _>(new.idempotency_key.as_deref())
        .bind::<Int4, _>(new.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS))
        .bind::<Nullable<Text>, _>(new.quarantine_reason)
        .bind::<Nullable<Text>, _>(new.work_order.as_deref())
}

/// The size of a new todo's payload as JSON text (0 without one).
pub(super) fn payload_size(new: &NewTodo) -> i32 {
    new.payload.as_ref().map(|p| p.to_string().len()).unwrap_or(0) as i32
}

/// The insert itself; nothing when the endpoint is not active or the key is taken.
async fn try_insert(conn: &mut AsyncPgConnection, new: &NewTodo) -> Result<Option<Inserted>> {
    let payload_size = payload_size(new);
    let sql = format!(
        "WITH t AS ({TODO_INSERT} FOR SHARE OF ep \
           ON CONFLICT (endpoint_id, idempotency_key) WHERE {LIVE_KEY} DO NOTHING \
           RETURNING *) \
         SELECT t.*, (SELECT slug FROM endpoints ep WHERE ep.id = t.endpoint_id) AS endpoint_slug, \
           {SENDER_GATE} AS sender_gate FROM t"
    );
    Ok(Prepared(bind_todo(diesel::sql_query(sql).into_boxed(), new, payload_size)).get_result(conn).await.optional()?)
}

/// The live, non-quarantined todo of `endpoint` holding idempotency `key`, if any.
pub(super) async fn live_todo_with_key(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    key: &str,
) -> Result<Option<TodoRow>> {
    use crate::db::schema::todos::dsl as t;
    Ok(t::todos
        .filter(t::endpoint_id.eq(endpoint.0))
        .filter(t::idempotency_key.eq(key))
        .filter(t::queue.ne(QUARANTINE_QUEUE))
        .filter(diesel::dsl::sql::<diesel::sql_types::Bool>(LIVE_KEY))
        .select(TodoRow::as_select())
        .first(conn)
        .await
        .optional()?)
}

impl Store {
    /// Creates a todo and, after commit, rings `todo.ready` (`created`).
    pub async fn create_todo(&self, new: NewTodo) -> Result<CreateOutcome> {
        self.to_completion(move |s| async move { s.create_todo_now(new).await }).await
    }

    /// [`Self::create_todo`], on the caller's task.
    async fn create_todo_now(&self, new: NewTodo) -> Result<CreateOutcome> {
        let mut conn = self.conn().await?;
        let (outcome, signal) = insert_todo(&mut conn, &new).await?;
        self.emit(signal.into_iter().collect());
        Ok(outcome)
    }
}
