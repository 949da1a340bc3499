//! Todos as humans see and move them: one todo with its attempts, operator fail,
//! retry now, the dead letters (list, count, bulk retry) and the Board's Todos view.
//! Every read and every change is limited to the caller's scopes; another scope's
//! todo is not found.

use chrono::{DateTime, Utc};

use super::Services;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::db::models::TodoRow;
use crate::domain::ids::TodoId;
use crate::domain::pills::{Pill, PillCount, PillCounts};
use crate::error::Result;
use crate::store::board::{DeadLetterDays, TodoListing};
use crate::store::dead_letters::DeadLetter;
use crate::store::tenancy::Reach;
use crate::store::todos::{BulkRetried, Caller, TodoWithAttempts};

/// One todo in the caller's scopes (else 404), with its attempts.
pub async fn show(s: &Services, who: &Reach, id: TodoId) -> Result<TodoWithAttempts> {
    let found = s.store.get_todo(&Caller::Operator(who.scope_ids()), id).await?;
    check(Action::ShowTodo, Principal::Human(who), Some(Place::scope(found.todo.scope_id)))?;
    Ok(found)
}

/// The notifications about a todo in the caller's scopes (else 404): which sinks were
/// told and how that went, newest first.
pub async fn told_about(
    s: &Services,
    who: &Reach,
    id: TodoId,
) -> Result<Vec<crate::sinks::statements::outbox::ToldSink>> {
    show(s, who, id).await?;
    s.store.told_about(&who.scope_ids(), id).await
}

/// Operator fail: a retry below the cap, a dead letter (`attempts_exhausted`) at it.
pub async fn fail(s: &Services, who: &Reach, id: TodoId, summary: Option<String>) -> Result<TodoRow> {
    check(Action::OperatorFail, Principal::Human(who), None)?;
    // The store finds the todo only in these scopes: another scope's is not found.
    s.store.operator_fail(&who.scope_ids(), id, summary).await
}

/// Retry now: a failed todo in the caller's scopes goes back to pending with its
/// attempt counter reset. Refused (409) when it is not failed, its endpoint is revoked
/// or expired, or a live todo holds its idempotency key.
pub async fn retry_now(s: &Services, who: &Reach, id: TodoId) -> Result<TodoRow> {
    check(Action::RetryNow, Principal::Human(who), None)?;
    s.store.retry_now(&who.scope_ids(), id).await
}

/// Dead letters across the caller's scopes, newest first, matching `search`.
pub async fn dead_letters(s: &Services, who: &Reach, search: Option<&str>, limit: i64) -> Result<Vec<DeadLetter>> {
    check(Action::ListDeadLetters, Principal::Human(who), None)?;
    s.store.list_dead_letters(&who.scope_ids(), search, limit).await
}

/// How many dead letters across the caller's scopes match `search` (for the bulk
/// retry's confirmation).
pub async fn count_dead_letters(s: &Services, who: &Reach, search: Option<&str>) -> Result<PillCount> {
    check(Action::BulkRetry, Principal::Human(who), None)?;
    s.store.count_dead_letters(&who.scope_ids(), search).await
}

/// Retries every dead letter across the caller's scopes that matches `search` and
/// died by `died_by` (the moment the confirmation counted them).
pub async fn bulk_retry(
    s: &Services,
    who: &Reach,
    search: Option<&str>,
    died_by: Option<DateTime<Utc>>,
) -> Result<BulkRetried> {
    check(Action::BulkRetry, Principal::Human(who), None)?;
    s.store.retry_dead_letters(&who.scope_ids(), search, died_by).await
}

/// What the Board's Todos view shows for one pill.
#[derive(Debug)]
pub struct TodosContent {
    /// Every pill's count.
    pub counts: PillCounts,
    /// The pill's list.
    pub rows: PillList,
}

/// One pill's list: the Dead pill shows dead letters with the chart and how many
/// match the search; every other pill shows todos.
#[derive(Debug)]
pub enum PillList {
    /// The Dead pill.
    Dead {
        /// The dead letters shown.
        rows: Vec<DeadLetter>,
        /// Dead letters per day, for the chart.
        chart: DeadLetterDays,
        /// How many match the search (unsearched: the pill's own count).
        matching: PillCount,
    },
    /// Any other pill.
    Todos(Vec<TodoListing>),
}

/// The Todos view of `pill` across the caller's scopes: the counts and the list
/// (matching `search`, at most `limit`).
pub async fn view(s: &Services, who: &Reach, pill: Pill, search: Option<&str>, limit: i64) -> Result<TodosContent> {
    check(Action::ListTodos, Principal::Human(who), None)?;
    let store = &s.store;
    let scopes = who.scope_ids();
    if pill == Pill::Dead {
        // The four reads are independent: each takes its own pooled connection.
        let matching = async {
            match search {
                Some(q) => store.count_dead_letters(&scopes, Some(q)).await.map(Some),
                None => Ok(None),
            }
        };
        let (counts, rows, chart, matching) = tokio::try_join!(
            store.pill_counts(&scopes),
            store.list_dead_letters(&scopes, search, limit),
            store.dead_letters_per_day(&scopes),
            matching,
        )?;
        let matching = matching.unwrap_or(counts.dead);
        Ok(TodosContent { counts, rows: PillList::Dead { rows, chart, matching } })
    } else {
        let (counts, rows) =
            tokio::try_join!(store.pill_counts(&scopes), store.list_todos_for(&scopes, pill, search, limit))?;
        Ok(TodosContent { counts, rows: PillList::Todos(rows) })
    }
}
