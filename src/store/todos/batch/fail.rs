//! Failing many claimed todos in one transaction: the rows locked in id order, each item
//! judged by the single verb's judgement ([`plan_fail`]: state, lease token, the cap,
//! the backoff, the dead-letter reason), then per round one statement that writes every
//! accepted fail and closes its attempt as the single fail does. The dead-letter trigger
//! records each dead letter for the sinks in the same transaction; `DeadLettered` goes
//! out for each after the commit.

use std::collections::HashMap;

use diesel::sql_types::{Array, Bool, Double, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::super::Store;
use super::super::attempt_close::closed_cte;
use super::super::finish::{FailPlan, plan_fail};
use super::super::{MovedRow, SIGNAL_COLUMNS};
use super::{Answers, Item, ItemResult, check_items, lock_in_id_order, rounds};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::todo_state::{AttemptOutcome, TodoState};
use crate::error::{Error, Result};
use crate::store::todos::Finish;

/// Per accepted item (`$1` ids, distinct): `$2` result, `$3` retry seconds (null: a dead
/// letter), `$4` dead reason, `$5` the closing attempt's disposition, `$6` summary, `$7`
/// whether it was cut, `$8` artifact, `$9` the attempt counter after the fail; `$10` the
/// outcome (`failed`). The rows are locked and judged: every id is written.
fn fail_batch_sql() -> String {
    format!(
        "WITH items AS (SELECT * FROM unnest($1::uuid[], $2::jsonb[], $3::float8[], $4::text[], $5::text[], \
             $6::text[], $7::bool[], $8::text[], $9::int4[]) \
           AS i(id, result, retry_secs, dead_reason, disposition, summary, truncated, artifact, attempt)), \
         moved AS ( \
           UPDATE todos t SET state = 'failed', attempt = i.attempt, result = COALESCE(i.result, t.result), \
             updated_at = now(), lease_expires_at = NULL, lease_token_hash = NULL, interrupt_expires_at = NULL, \
             interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
             next_retry_at = now() + i.retry_secs * interval '1 second', \
             dead_reason = i.dead_reason, \
             dead_lettered_at = CASE WHEN i.dead_reason IS NULL THEN NULL ELSE now() END, \
             dead_letter_count = t.dead_letter_count + CASE WHEN i.dead_reason IS NULL THEN 0 ELSE 1 END \
           FROM items i WHERE t.id = i.id RETURNING t.*), \
         {closed} \
         SELECT t.*, {SIGNAL_COLUMNS}, c.seq AS final_seq, c.outcome AS final_outcome, \
           c.summary AS final_summary, c.artifact AS final_artifact, c.ended_at AS final_at \
         FROM moved t LEFT JOIN closed c ON c.todo_id = t.id",
        closed = closed_cte(
            "= ANY($1)",
            " JOIN items i ON i.id = m.id",
            "$10, i.disposition, i.summary, i.truncated, i.artifact"
        )
    )
}

statement! {
    static FAIL_BATCH = built(fail_batch_sql);
}

/// One accepted fail, ready to write.
struct Accepted {
    at: usize,
    item: Item,
    plan: FailPlan,
}

impl Store {
    /// Fails each `(todo, finish)` as [`Store::fail`] would, in one transaction; answers
    /// per item, in order, and emits each dead letter's `DeadLettered` after the commit.
    pub async fn fail_batch(
        &self,
        endpoint: EndpointId,
        items: Vec<(Option<TodoId>, Finish)>,
    ) -> Result<Vec<ItemResult<TodoRow>>> {
        self.to_completion(move |s| async move { s.fail_batch_now(endpoint, items).await }).await
    }

    /// [`Self::fail_batch`], on the caller's task.
    async fn fail_batch_now(
        &self,
        endpoint: EndpointId,
        items: Vec<(Option<TodoId>, Finish)>,
    ) -> Result<Vec<ItemResult<TodoRow>>> {
        let mut answers = Answers::new(items.len());
        let (ids, mut checked) = check_items(items, &mut answers);
        let mut conn = self.conn().await?;
        let moved = conn
            .transaction::<_, Error, _>(async move |conn| {
                let mut rows: HashMap<TodoId, TodoRow> =
                    lock_in_id_order(conn, endpoint, &ids).await?.into_iter().map(|t| (t.id, t)).collect();
                let mut moved: Vec<(usize, MovedRow)> = Vec::new();
                for round in rounds(&ids) {
                    let mut accepted = Vec::new();
                    for at in round {
                        let Some(item) = checked[at].take() else { continue };
                        let judged = match rows.get(&item.id) {
                            None => Err(Error::NotFound),
                            Some(current) => {
                                plan_fail(current, &[TodoState::Claimed], item.checked.token_hash.as_ref())
                            }
                        };
                        match judged {
                            Ok(plan) => accepted.push(Accepted { at, item, plan }),
                            Err(refused) => answers.set(at, Err(refused)),
                        }
                    }
                    for (at, row) in fail_round(conn, accepted).await? {
                        answers.set(at, Ok(row.todo.clone()));
                        // A later round judges this todo as it is now.
                        rows.insert(row.todo.id, row.todo.clone());
                        moved.push((at, row));
                    }
                }
                Ok((answers.into_vec()?, moved))
            })
            .await;
        let (answers, mut moved) = moved?;
        moved.sort_by_key(|(at, _)| *at);
        self.emit(moved.iter().filter_map(|(_, row)| row.signal()).collect());
        Ok(answers)
    }
}

/// Writes one round's accepted fails (distinct ids); returns each moved row with the
/// index of its item.
async fn fail_round(conn: &mut AsyncPgConnection, accepted: Vec<Accepted>) -> Result<Vec<(usize, MovedRow)>> {
    if accepted.is_empty() {
        return Ok(Vec::new());
    }
    let at: HashMap<TodoId, usize> = accepted.iter().map(|a| (a.item.id, a.at)).collect();
    let q = FAIL_BATCH
        .query()
        .bind::<Array<SqlUuid>, _>(accepted.iter().map(|a| a.item.id.0).collect::<Vec<_>>())
        .bind::<Array<Nullable<Jsonb>>, _>(accepted.iter().map(|a| a.item.result.clone()).collect::<Vec<_>>())
        .bind::<Array<Nullable<Double>>, _>(accepted.iter().map(|a| a.plan.retry_secs).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(accepted.iter().map(|a| a.plan.dead_reason).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(accepted.iter().map(|a| a.plan.disposition).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(accepted.iter().map(|a| a.item.checked.summary.clone()).collect::<Vec<_>>())
        .bind::<Array<Bool>, _>(accepted.iter().map(|a| a.item.checked.truncated).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(accepted.iter().map(|a| a.item.checked.artifact.clone()).collect::<Vec<_>>())
        .bind::<Array<Int4>, _>(accepted.iter().map(|a| a.plan.attempt).collect::<Vec<_>>())
        .bind::<Text, _>(AttemptOutcome::Failed);
    let rows: Vec<MovedRow> = Prepared(q).load(conn).await?;
    if rows.len() != accepted.len() {
        return Err(Error::internal("a locked todo of a batch fail was not written"));
    }
    rows.into_iter()
        .map(|row| {
            let i =
                at.get(&row.todo.id).copied().ok_or_else(|| Error::internal("a batch fail wrote an unasked todo"))?;
            Ok((i, row))
        })
        .collect()
}
