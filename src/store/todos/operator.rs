//! What an operator may do to a todo in their scopes: fail it (the same cap rule as an
//! agent's fail) and retry it now.

use diesel::prelude::*;
use diesel::sql_types::{Array, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::Store;
use super::finish::{Finish, fail_in_tx};
use super::{Actor, explain_miss, todo_query};
use crate::db::models::TodoRow;
use crate::domain::ids::{ScopeId, TodoId};
use crate::domain::todo_state::TodoState;
use crate::error::{Error, Result};

impl Store {
    /// Operator fail of a pending, claimed or interrupted todo in `scopes`. Any open
    /// attempt closes `failed` with the operator's summary; at the cap the todo becomes
    /// a dead letter (`attempts_exhausted`) and `DeadLettered` is emitted after commit.
    pub async fn operator_fail(&self, scopes: &[ScopeId], id: TodoId, summary: Option<String>) -> Result<TodoRow> {
        let finish = Finish { summary, ..Finish::default() };
        let prepared = finish.prepare()?;
        let actor = Actor::Operator(scopes.to_vec());
        let mut conn = self.conn().await?;
        let allowed = [TodoState::Pending, TodoState::Claimed, TodoState::InputRequired, TodoState::AuthRequired];
        let moved = conn
            .transaction::<_, Error, _>(async move |conn| fail_in_tx(conn, &actor, id, &allowed, None, prepared).await)
            .await?;
        self.emit(moved.signal().into_iter().collect());
        Ok(moved.todo)
    }

    /// "Retry now": a failed todo (dead letter or waiting on a retry) goes back to
    /// pending with its attempt counter reset to 0; history and `seq` are kept. Rings
    /// nothing. Refused when the endpoint is no longer active, or when a live todo has
    /// since taken its idempotency key.
    pub async fn retry_now(&self, scopes: &[ScopeId], id: TodoId) -> Result<TodoRow> {
        let sql = "UPDATE todos t SET state = 'pending', attempt = 0, claimed_by = NULL, lease_expires_at = NULL, \
               lease_token_hash = NULL, result = NULL, claimed_at = NULL, completed_at = NULL, \
               next_retry_at = NULL, dead_reason = NULL, dead_lettered_at = NULL, updated_at = now() \
             WHERE t.id = $1 AND t.scope_id = ANY($2) AND t.state = 'failed' AND t.queue <> 'quarantine' \
               AND EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = t.endpoint_id AND ep.state = 'active' \
                           AND (ep.expires_at IS NULL OR ep.expires_at > now())) \
             RETURNING t.*";
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        let row: QueryResult<Option<TodoRow>> =
            todo_query(sql.to_owned(), id).bind::<Array<SqlUuid>, _>(ids).get_result(&mut conn).await.optional();
        match row {
            Ok(Some(todo)) => Ok(todo),
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _)) => {
                Err(Error::Conflict("a live todo already holds this todo's idempotency key".into()))
            }
            Err(e) => Err(e.into()),
            Ok(None) => {
                let actor = Actor::Operator(scopes.to_vec());
                match explain_miss(&mut conn, &actor, id, None, "failed").await {
                    Error::Conflict(msg) if msg.starts_with("todo is failed") => {
                        Err(Error::Conflict("the todo's endpoint is revoked or expired".into()))
                    }
                    other => Err(other),
                }
            }
        }
    }
}
