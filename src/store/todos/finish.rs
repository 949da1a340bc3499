//! Ending an attempt as the agent: complete, fail (retry with backoff, or a dead letter
//! at the cap), release.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Bytea, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection};

use super::super::Store;
use super::attempt_close::{closed_cte, closed_in_place_cte, completed_on_row};
use super::{Caller, MovedRow, SIGNAL_COLUMNS, agent_reach_sql, agent_transition, operator_reach_sql, todo_query};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::text::{QUARANTINE_QUEUE, SUMMARY_MAX_BYTES, json_has_nul, truncate_bytes, validate_artifact};
use crate::domain::todo_state::{AttemptDisposition, AttemptOutcome, DeadReason, TodoState};
use crate::domain::tokens::sha256;
use crate::domain::transitions::{AfterFailure, after_fail};
use crate::error::{Error, Result};

/// What an agent reports when it ends an attempt. Its Debug form leaves out the lease
/// token and the result.
#[derive(Clone, Default)]
pub struct Finish {
    /// Result JSON kept on the todo.
    pub result: Option<serde_json::Value>,
    /// Short summary for the attempt history (truncated at 2 048 bytes).
    pub summary: Option<String>,
    /// An https URL or `mcp://cairn/<id>` (≤512 bytes).
    pub artifact: Option<String>,
    /// Lease token from the claim; when given it must match.
    pub lease_token: Option<String>,
}

impl std::fmt::Debug for Finish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Finish").field("artifact", &self.artifact).finish_non_exhaustive()
    }
}

/// A [`Finish`] checked and normalised for the statements.
pub(crate) struct Checked {
    /// Summary, cut to 2 048 bytes.
    pub summary: Option<String>,
    /// Whether it was cut.
    pub truncated: bool,
    /// Validated artifact.
    pub artifact: Option<String>,
    /// SHA-256 of the lease token, when one was given.
    pub token_hash: Option<[u8; 32]>,
}

impl Finish {
    /// Validates and normalises.
    pub(crate) fn check(&self) -> Result<Checked> {
        let nul =
            self.summary.as_ref().is_some_and(|s| s.contains('\0')) || self.result.as_ref().is_some_and(json_has_nul);
        if nul {
            return Err(Error::InvalidArgument("text may not contain NUL (\\u0000) characters".into()));
        }
        if let Some(a) = &self.artifact {
            validate_artifact(a).map_err(|e| Error::invalid("artifact", e))?;
        }
        let (summary, truncated) = match &self.summary {
            Some(s) => {
                let (cut, did) = truncate_bytes(s, SUMMARY_MAX_BYTES);
                (Some(cut), did)
            }
            None => (None, false),
        };
        let token_hash = self.lease_token.as_deref().map(|t| sha256(t.as_bytes()));
        Ok(Checked { summary, truncated, artifact: self.artifact.clone(), token_hash })
    }
}

/// The update of a completion (`$1` todo, `$2` endpoint, `$3` result, `$4` the lease
/// token's hash or null, `$5`–`$7` summary, whether it was cut, artifact), with `extra`
/// further conditions on the row. The attempt it closes stays on the todo row
/// ([`completed_on_row`]); no history row is written.
fn complete_update(extra: &str) -> String {
    format!(
        "UPDATE todos t SET state = 'done', result = $3, completed_at = now(), updated_at = now(), \
           lease_expires_at = NULL, lease_token_hash = NULL, {} \
         WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE \"C\" \
           AND ($4::bytea IS NULL OR t.lease_token_hash = $4){extra} \
         RETURNING t.*",
        completed_on_row(["$5", "$6", "$7"]),
    )
}

statement! {
    /// Complete, when this release opened the attempt (`attempt_on_row`, written by the
    /// claim): no history row exists for it, so the completion is one update of `todos`
    /// and leaves `todo_attempts` and its indexes alone. The cycle probe runs it
    /// (`bench/cycle_probe/product.sql`, held to this text by the integration test
    /// `statements`).
    static COMPLETE_OPENED_ON_ROW = built(|| complete_update(" AND t.attempt_on_row = t.attempts_total"));

    /// Complete, for any attempt: one an earlier release opened as a history row is closed
    /// in place ([`closed_in_place_cte`]). What a completion that
    /// [`COMPLETE_OPENED_ON_ROW`] did not match runs, and what explains a miss.
    static COMPLETE = format!(
        "WITH moved AS ({}), {} SELECT * FROM moved",
        complete_update(""),
        closed_in_place_cte("= $1", "", ["$5", "$6", "$7"])
    );

    /// Release (`$1` todo, `$2` endpoint, `$3` the lease token's hash or null, `$4`–`$6`
    /// summary, whether it was cut, artifact).
    static RELEASE = format!(
        "WITH moved AS ( \
           UPDATE todos t SET state = 'pending', attempt = GREATEST(t.attempt - 1, 0), claimed_by = NULL, \
             lease_expires_at = NULL, lease_token_hash = NULL, updated_at = now() \
           WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE \"C\" \
             AND ($3::bytea IS NULL OR t.lease_token_hash = $3) \
           RETURNING t.*), \
         {closed} \
         SELECT t.*, {SIGNAL_COLUMNS}, NULL::int AS final_seq, NULL::text AS final_outcome, \
           NULL::text AS final_summary, NULL::text AS final_artifact, NULL::timestamptz AS final_at \
         FROM moved t",
        closed = closed_cte("= $1", "", "'released', 'requeued', $4, $5, $6")
    );

    /// A fail's lock of an agent's todo (`$1` todo, `$2` endpoint).
    static FAIL_LOCK_AS_AGENT = concat!("SELECT t.* FROM todos t WHERE t.id = $1 AND ", agent_reach_sql!(), " FOR UPDATE");
    /// A fail's lock of an operator's todo (`$1` todo, `$2` scopes).
    static FAIL_LOCK_AS_OPERATOR =
        concat!("SELECT t.* FROM todos t WHERE t.id = $1 AND ", operator_reach_sql!(), " FOR UPDATE");

    /// The fail itself, of the todo [`fail_in_tx`] locked and judged.
    static FAIL = format!(
        "WITH moved AS ( \
           UPDATE todos t SET state = 'failed', attempt = $10, result = COALESCE($2, t.result), updated_at = now(), \
             lease_expires_at = NULL, lease_token_hash = NULL, interrupt_expires_at = NULL, \
             interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
             next_retry_at = now() + $3 * interval '1 second', \
             dead_reason = $4, dead_lettered_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() END, \
             dead_letter_count = t.dead_letter_count + CASE WHEN $4::text IS NULL THEN 0 ELSE 1 END \
           WHERE t.id = $1 RETURNING t.*), \
         {closed} \
         SELECT t.*, {SIGNAL_COLUMNS}, c.seq AS final_seq, c.outcome AS final_outcome, \
           c.summary AS final_summary, c.artifact AS final_artifact, c.ended_at AS final_at \
         FROM moved t LEFT JOIN closed c ON true",
        closed = closed_cte("= $1", "", "$5, $6, $7, $8, $9")
    );
}

impl Store {
    /// Completes a claimed todo; its attempt closes `completed` / `done`.
    pub async fn complete(&self, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
        let Checked { summary, truncated, artifact, token_hash } = finish.check()?;
        // Bound by reference: the fallback binds the same values again, and the result
        // may be large.
        let query = |statement| {
            todo_query(statement, id)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Nullable<Jsonb>, _>(&finish.result)
                .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec()))
                .bind::<Nullable<Text>, _>(&summary)
                .bind::<Bool, _>(truncated)
                .bind::<Nullable<Text>, _>(&artifact)
        };
        let mut conn = self.conn().await?;
        // Each statement is a transaction of its own: a miss of the first changed
        // nothing, and the second judges the row afresh.
        if let Some(todo) = Prepared(query(&COMPLETE_OPENED_ON_ROW)).one_row::<TodoRow>(&mut conn).await.optional()? {
            return Ok(todo);
        }
        agent_transition(&mut conn, query(&COMPLETE), endpoint, id, token_hash, "claimed").await
    }

    /// Fails a claimed todo: below the cap a retry is scheduled after the backoff; at
    /// the cap it becomes a dead letter (`attempts_exhausted`) and, after commit,
    /// `DeadLettered` is emitted with the attempt this fail closed.
    pub async fn fail(&self, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
        self.to_completion(move |s| async move { s.fail_now(endpoint, id, finish).await }).await
    }

    /// [`Self::fail`], on the caller's task.
    async fn fail_now(&self, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
        let prepared = finish.check()?;
        let mut conn = self.conn().await?;
        let failed = conn
            .transaction::<_, Error, _>(async move |conn| {
                {
                    fail_in_tx(conn, &Caller::Endpoint(endpoint), id, &[TodoState::Claimed], finish.result, prepared)
                        .await
                }
            })
            .await?;
        self.emit(failed.signal().into_iter().collect());
        Ok(failed.todo)
    }

    /// Hands a claimed todo back to pending. The attempt closes `released` / `requeued`
    /// and, because releasing is not failing, it does not count toward the cap (the
    /// history keeps it; `seq` is never reused). Rings `todo.ready` (`requeued`).
    pub async fn release(&self, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
        self.to_completion(move |s| async move { s.release_now(endpoint, id, finish).await }).await
    }

    /// [`Self::release`], on the caller's task.
    async fn release_now(&self, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
        let Checked { summary, truncated, artifact, token_hash } = finish.check()?;
        let mut conn = self.conn().await?;
        let query = todo_query(&RELEASE, id)
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec()))
            .bind::<Nullable<Text>, _>(summary)
            .bind::<Bool, _>(truncated)
            .bind::<Nullable<Text>, _>(artifact);
        let moved: MovedRow = agent_transition(&mut conn, query, endpoint, id, token_hash, "claimed").await?;
        self.emit(moved.signal().into_iter().collect());
        Ok(moved.todo)
    }
}

/// What a fail does to a todo it may fail: the attempt counter after it, and either the
/// retry's backoff or the dead letter's reason, with the closing attempt's disposition.
pub(crate) struct FailPlan {
    /// The attempt counter after the fail.
    pub attempt: i32,
    /// Seconds until the retry; none for a dead letter.
    pub retry_secs: Option<f64>,
    /// Why it dies; none below the cap.
    pub dead_reason: Option<DeadReason>,
    /// What the closing attempt records.
    pub disposition: AttemptDisposition,
}

/// Decides a fail of `current` (locked by the caller): refuses a quarantined delivery, a
/// state outside `allowed`, a dead letter and a lease token that does not match (409),
/// else says what the fail does ([`after_fail`]). The one judgement of a fail, for the
/// single verbs ([`fail_in_tx`]) and the batch (`super::batch::fail`).
///
/// A fail of a todo that holds no open attempt (an operator failing pending work, or a
/// parked retry) counts as an attempt of its own, so repeated operator fails reach the
/// cap like any other.
pub(crate) fn plan_fail(current: &TodoRow, allowed: &[TodoState], token_hash: Option<&[u8; 32]>) -> Result<FailPlan> {
    if current.queue == QUARANTINE_QUEUE {
        // Quarantine leaves only by release, discard or expiry, never by a fail.
        return Err(Error::Conflict("a quarantined delivery leaves by release or discard, not fail".into()));
    }
    if !allowed.contains(&current.state) || current.is_dead_letter() {
        let what = if current.is_dead_letter() { "a dead letter".to_owned() } else { current.state.to_string() };
        return Err(Error::Conflict(format!("todo is {what}; it cannot be failed now")));
    }
    if let (Some(given), Some(held)) = (token_hash, current.lease_token_hash.as_deref())
        && given.as_slice() != held
    {
        return Err(Error::Conflict("lease token does not match the current lease".into()));
    }
    let holds_attempt = current.state == TodoState::Claimed || current.state.is_interrupted();
    let attempt = if holds_attempt { current.attempt } else { current.attempt + 1 };
    Ok(match after_fail(attempt, current.max_attempts) {
        AfterFailure::RetryAfter(wait) => FailPlan {
            attempt,
            retry_secs: Some(wait.as_secs_f64()),
            dead_reason: None,
            disposition: AttemptDisposition::RetryScheduled,
        },
        AfterFailure::DeadLetter(reason) => FailPlan {
            attempt,
            retry_secs: None,
            dead_reason: Some(reason),
            disposition: AttemptDisposition::DeadLettered,
        },
    })
}

/// The fail transition, shared by the agent's fail and the operator's: locks the row,
/// decides with [`plan_fail`], closes the open attempt (if any) as `failed`, and returns
/// the moved row with what its signal needs. A dead letter without an open attempt has
/// no closing attempt (`final_attempt` is none).
pub(crate) async fn fail_in_tx(
    conn: &mut AsyncPgConnection,
    caller: &Caller,
    id: TodoId,
    allowed: &[TodoState],
    result: Option<serde_json::Value>,
    Checked { summary, truncated, artifact, token_hash }: Checked,
) -> Result<MovedRow> {
    let lock = caller.pick(&FAIL_LOCK_AS_AGENT, &FAIL_LOCK_AS_OPERATOR);
    let current: Option<TodoRow> = Prepared(caller.bind(todo_query(lock, id))).one_row(conn).await.optional()?;
    let current = current.ok_or(Error::NotFound)?;
    let FailPlan { attempt, retry_secs, dead_reason, disposition } = plan_fail(&current, allowed, token_hash.as_ref())?;
    let row: MovedRow = Prepared(
        todo_query(&FAIL, id)
            .bind::<Nullable<Jsonb>, _>(result)
            .bind::<Nullable<diesel::sql_types::Double>, _>(retry_secs)
            .bind::<Nullable<Text>, _>(dead_reason)
            .bind::<Text, _>(AttemptOutcome::Failed)
            .bind::<Text, _>(disposition)
            .bind::<Nullable<Text>, _>(summary)
            .bind::<Bool, _>(truncated)
            .bind::<Nullable<Text>, _>(artifact)
            .bind::<diesel::sql_types::Int4, _>(attempt),
    )
    .one_row(conn)
    .await?;
    Ok(row)
}
