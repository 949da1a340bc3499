//! Reading todos: an agent's list of its own drainable work, and one todo with its
//! attempt history.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::Caller;
use crate::db::models::{AttemptRow, TodoRow};
use crate::db::schema::todos;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::TodoState;
use crate::error::{Error, Result};

/// How many attempts a todo's detail shows, newest first.
const ATTEMPTS_SHOWN: i64 = 20;

statement! {
    /// Todo `$1`'s newest `$2` attempts, closed or kept on its row.
    static ATTEMPT_HISTORY = "SELECT * FROM todo_attempt_history WHERE todo_id = $1 ORDER BY seq DESC LIMIT $2";
}

/// Filters of `list_todos`.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this queue.
    pub queue: Option<String>,
    /// Only this drainable state (`failed` means a retry is scheduled).
    pub state: Option<TodoState>,
    /// At most this many (1–200, default 50).
    pub limit: Option<i64>,
}

/// A todo and its newest attempts.
#[derive(Debug, Clone)]
pub struct TodoWithAttempts {
    /// The todo.
    pub todo: TodoRow,
    /// Newest first, at most 20.
    pub attempts: Vec<AttemptRow>,
}

/// States an agent's list may show: work that is or will again be drainable.
const DRAINABLE: &[TodoState] =
    &[TodoState::Pending, TodoState::Claimed, TodoState::InputRequired, TodoState::AuthRequired, TodoState::Failed];

impl Store {
    /// This endpoint's drainable work, newest first: pending, claimed, interrupted, and
    /// failed with a retry scheduled. Never done work, dead letters or quarantine.
    pub async fn list_todos(&self, endpoint: EndpointId, filter: ListFilter) -> Result<Vec<TodoRow>> {
        let limit = filter.limit.unwrap_or(50);
        if !(1..=200).contains(&limit) {
            return Err(Error::invalid("limit", "must be between 1 and 200"));
        }
        let states: Vec<TodoState> = match filter.state {
            Some(s) if DRAINABLE.contains(&s) => vec![s],
            Some(s) => return Err(Error::invalid("state", format!("{s} is not drainable work"))),
            None => DRAINABLE.to_vec(),
        };
        let mut conn = self.conn().await?;
        let mut q = todos::table
            .filter(todos::endpoint_id.eq(endpoint.0))
            .filter(todos::queue.ne(QUARANTINE_QUEUE))
            .filter(todos::state.eq_any(states))
            .filter(todos::state.ne(TodoState::Failed).or(todos::next_retry_at.is_not_null()))
            .order((todos::created_at.desc(), todos::id.desc()))
            .limit(limit)
            .select(TodoRow::as_select())
            .into_boxed();
        if let Some(queue) = filter.queue {
            q = q.filter(todos::queue.eq(queue));
        }
        Ok(q.load(&mut conn).await?)
    }

    /// One todo with up to [`ATTEMPTS_SHOWN`] newest attempts (the open one first, if
    /// one is), as `caller` may see it.
    pub async fn get_todo(&self, caller: &Caller, id: TodoId) -> Result<TodoWithAttempts> {
        let mut conn = self.conn().await?;
        let mut q = todos::table.filter(todos::id.eq(id.0)).select(TodoRow::as_select()).into_boxed();
        q = match caller {
            Caller::Endpoint(e) => q.filter(todos::endpoint_id.eq(e.0)).filter(todos::queue.ne(QUARANTINE_QUEUE)),
            Caller::Operator(scopes) => {
                q.filter(todos::scope_id.eq_any(scopes.iter().map(|s| s.0).collect::<Vec<_>>()))
            }
        };
        let todo = q.first(&mut conn).await.optional()?.ok_or(Error::NotFound)?;
        // The closed attempts, from the view that also holds the one a completion kept on
        // the todo row; the open attempt is held on the todo row until it closes.
        let history: Vec<AttemptRow> = ATTEMPT_HISTORY
            .query()
            .bind::<diesel::sql_types::Uuid, _>(id.0)
            .bind::<diesel::sql_types::BigInt, _>(ATTEMPTS_SHOWN)
            .load(&mut conn)
            .await?;

        let attempts = todo.history_with_open(history, ATTEMPTS_SHOWN as usize);
        Ok(TodoWithAttempts { todo, attempts })
    }
}
