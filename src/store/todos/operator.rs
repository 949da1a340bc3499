//! What an operator may do to a todo in their scopes: fail it (the same cap rule as an
//! agent's fail) and retry it now.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Array, Uuid as SqlUuid};
use diesel_async::AsyncConnection;

use super::super::Store;
use super::finish::{Finish, fail_in_tx};
use super::{Caller, todo_query};
use crate::db::models::TodoRow;
use crate::db::statement::statement;
use crate::domain::ids::{ScopeId, TodoId};
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::TodoState;
use crate::domain::wakeups::Arrived;
use crate::error::{Error, Result};

/// What "retry now" does to a failed todo `t`: back to pending with the attempt
/// counter reset and every trace of the last claim and death cleared (the history in
/// `todo_attempts` and `attempts_total` stay). Shared by the one-todo and bulk retries.
pub(crate) const RETRY_NOW_SET: &str = "state = 'pending', attempt = 0, claimed_by = NULL, lease_expires_at = NULL, \
    lease_token_hash = NULL, result = NULL, claimed_at = NULL, completed_at = NULL, next_retry_at = NULL, \
    dead_reason = NULL, dead_lettered_at = NULL, interrupt_reason = NULL, updated_at = now()";

/// `t`'s endpoint may still take work (active, not expired); the endpoint row is
/// share-locked so a concurrent revocation waits for the retry and then dead-letters
/// what it returned to the queue, instead of missing it.
pub(crate) const ENDPOINT_LIVE: &str = "EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = t.endpoint_id \
    AND ep.state = 'active' AND (ep.expires_at IS NULL OR ep.expires_at > now()) FOR SHARE)";

statement! {
    /// "Retry now" of todo `$1` in scopes `$2`.
    static RETRY_NOW = format!(
        "UPDATE todos t SET {RETRY_NOW_SET} \
         WHERE t.id = $1 AND t.scope_id = ANY($2) AND t.state = 'failed' AND t.queue <> 'quarantine' \
           AND {ENDPOINT_LIVE} \
         RETURNING t.*"
    );

    /// Why "retry now" of todo `$1` in scopes `$2` matched nothing.
    static WHY_NOT_RETRIED = "SELECT t.state, t.queue, EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = t.endpoint_id \
                 AND ep.state = 'active' AND (ep.expires_at IS NULL OR ep.expires_at > now())) AS endpoint_active \
               FROM todos t WHERE t.id = $1 AND t.scope_id = ANY($2)";
}

impl Store {
    /// Operator fail of a pending, claimed or interrupted todo, or of a parked retry, in
    /// `scopes`. An open attempt closes `failed` with the operator's summary (with none
    /// open, the fail counts as an attempt of its own); at the cap the todo becomes a
    /// dead letter (`attempts_exhausted`) and `DeadLettered` is emitted after commit.
    pub async fn operator_fail(&self, scopes: &[ScopeId], id: TodoId, summary: Option<String>) -> Result<TodoRow> {
        let scopes = scopes.to_vec();
        self.to_completion(move |s| async move { s.operator_fail_now(&scopes, id, summary).await }).await
    }

    /// [`Self::operator_fail`], on the caller's task.
    async fn operator_fail_now(&self, scopes: &[ScopeId], id: TodoId, summary: Option<String>) -> Result<TodoRow> {
        let finish = Finish { summary, ..Finish::default() };
        let prepared = finish.check()?;
        let caller = Caller::Operator(scopes.to_vec());
        let mut conn = self.conn().await?;
        let allowed = [
            TodoState::Pending,
            TodoState::Claimed,
            TodoState::InputRequired,
            TodoState::AuthRequired,
            TodoState::Failed,
        ];
        let moved = conn
            .transaction::<_, Error, _>(async move |conn| fail_in_tx(conn, &caller, id, &allowed, None, prepared).await)
            .await?;
        self.emit(moved.signal().into_iter().collect());
        Ok(moved.todo)
    }

    /// "Retry now": a failed todo (dead letter or waiting on a retry) goes back to
    /// pending with its attempt counter reset to 0; history and `seq` are kept. Rings
    /// no doorbell (only the claim bell, for agents waiting on its queue). Refused when
    /// the endpoint is no longer active, or when a live todo has since taken its
    /// idempotency key.
    pub async fn retry_now(&self, scopes: &[ScopeId], id: TodoId) -> Result<TodoRow> {
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        let row: QueryResult<Option<TodoRow>> =
            todo_query(&RETRY_NOW, id).bind::<Array<SqlUuid>, _>(ids).one_row(&mut conn).await.optional();
        match row {
            Ok(Some(todo)) => {
                self.emitter().claimable(todo.endpoint_id, &todo.queue, Arrived::Todos(1));
                Ok(todo)
            }
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _)) => {
                Err(Error::Conflict("a live todo already holds this todo's idempotency key".into()))
            }
            Err(e) => Err(e.into()),
            Ok(None) => Err(why_not_retried(&mut conn, scopes, id).await),
        }
    }
}

/// Why `retry_now` matched nothing: unknown or out of reach (404), not failed,
/// quarantined, or its endpoint is no longer active (409).
async fn why_not_retried(conn: &mut diesel_async::AsyncPgConnection, scopes: &[ScopeId], id: TodoId) -> Error {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        state: TodoState,
        #[diesel(sql_type = diesel::sql_types::Text)]
        queue: String,
        #[diesel(sql_type = diesel::sql_types::Bool)]
        endpoint_active: bool,
    }
    let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
    let found: QueryResult<Option<Row>> =
        todo_query(&WHY_NOT_RETRIED, id).bind::<Array<SqlUuid>, _>(ids).one_row(conn).await.optional();

    match found {
        Ok(None) => Error::NotFound,
        Ok(Some(r)) if r.queue == QUARANTINE_QUEUE => {
            Error::Conflict("a quarantined delivery leaves by release or discard, not retry".into())
        }
        Ok(Some(r)) if r.state != TodoState::Failed => {
            Error::Conflict(format!("todo is {}; only failed todos can be retried", r.state))
        }
        Ok(Some(r)) if !r.endpoint_active => Error::Conflict("the todo's endpoint is revoked or expired".into()),
        Ok(Some(_)) => Error::Conflict("the todo changed while being retried; try again".into()),
        Err(e) => e.into(),
    }
}
