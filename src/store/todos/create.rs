//! Creating todos: agent-authored, and the function intake calls with an event.

use crate::db::one_row::OneRow;
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
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
pub use crate::domain::new_todo::NewTodo;
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::ReadyReason;
use crate::domain::transitions::DEFAULT_MAX_ATTEMPTS;
use crate::error::{Error, Result};

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

statement! {
    /// The insert of one todo ([`TODO_INSERT`], bound by [`bind_todo`]); nothing when the
    /// endpoint is not active or the key is taken.
    static INSERT_ONE = format!(
        "WITH t AS ({TODO_INSERT} FOR SHARE OF ep \
           ON CONFLICT (endpoint_id, idempotency_key) WHERE {LIVE_KEY} DO NOTHING \
           RETURNING *) \
         SELECT t.*, (SELECT slug FROM endpoints ep WHERE ep.id = t.endpoint_id) AS endpoint_slug, \
           {SENDER_GATE} AS sender_gate FROM t"
    );
}

/// The insert itself; nothing when the endpoint is not active or the key is taken.
async fn try_insert(conn: &mut AsyncPgConnection, new: &NewTodo) -> Result<Option<Inserted>> {
    let payload_size = payload_size(new);
    Ok(Prepared(bind_todo(INSERT_ONE.query().into_boxed(), new, payload_size)).one_row(conn).await.optional()?)
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
