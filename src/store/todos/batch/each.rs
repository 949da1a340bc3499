//! Claim-next for several callers at once: the single claim-next requests of one
//! endpoint's queue that arrived together (gathered by `crate::service::group_commit`) are
//! claimed by one statement, each caller's todo under its own lease token, lease length,
//! claimant label and relay flag, each attempt opened as a single claim opens it. Every
//! caller gets what its own claim-next would have answered: a claim (with its earlier
//! attempts, as a single claim carries them), or nothing.
//!
//! A queue with an admission budget (on any queue: an endpoint with one) is not claimed
//! here: the statement then claims nothing and says so, and each caller claims alone,
//! under the budget's lock, as today.
//!
//! Completions of several callers are one statement too, the single completion's first
//! statement for many rows: each todo this release claimed (its attempt on its row) and
//! still the caller's to complete. Anything else (a body the single verb refuses, a todo
//! named twice, a miss of any kind, an attempt an earlier release opened) is left to the
//! caller's own single completion, which changes or explains it as always: a row the
//! statement did not complete, it did not change.
//!
//! Lock order (see [`crate::store`]): the completion statement visits its rows in id
//! order (the items are sorted, and joined to `todos` by primary key), as a batch of
//! completions locks them.

use diesel::pg::Pg;
use diesel::sql_types::{Array, Bool, Bytea, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::super::Store;
use super::super::Finish;
use super::super::attempt_close::completed_on_row;
use super::super::claim::{ClaimOutcome, ClaimRequest, FastRow};
use super::super::claim_parts::{ClaimParams, EACH_CLAIM_CTES};
use super::CLAIM_LIMIT_MAX;
use super::claim::next_batch;
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::{Error, Result};

statement! {
    static EACH_ON_QUEUE = built(|| next_batch(false, EACH_CLAIM_CTES));
    static EACH_ON_ANY_QUEUE = built(|| next_batch(true, EACH_CLAIM_CTES));
}

statement! {
    /// `$1` ids, `$2` endpoint, then per item: `$3` result, `$4` lease token hash (null: not
    /// fenced), `$5` summary, `$6` whether it was cut, `$7` artifact. The ids are distinct.
    /// The single completion's `COMPLETE_OPENED_ON_ROW`, for every item at once.
    static COMPLETE_EACH = format!(
        "UPDATE todos t SET state = 'done', result = i.result, completed_at = now(), updated_at = now(), \
           lease_expires_at = NULL, lease_token_hash = NULL, {on_row} \
         FROM (SELECT * FROM unnest($1::uuid[], $3::jsonb[], $4::bytea[], $5::text[], $6::bool[], $7::text[]) \
           AS u(id, result, token_hash, summary, truncated, artifact) ORDER BY id) i \
         WHERE t.id = i.id AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE \"C\" \
           AND (i.token_hash IS NULL OR t.lease_token_hash = i.token_hash) AND t.attempt_on_row = t.attempts_total \
         RETURNING t.*",
        on_row = completed_on_row(["i.summary", "i.truncated", "i.artifact"]),
    );
}

/// What a claim for several callers came to.
#[derive(Debug)]
pub enum EachClaim {
    /// One answer per caller, in the callers' order: the first callers got the oldest
    /// todos; a caller past the last claimable todo got nothing (`Empty`), or its own
    /// request's refusal (an invalid lease length or queue).
    Answered(Vec<Result<ClaimOutcome>>),
    /// The queue has an admission budget: nothing was claimed, and each caller must claim
    /// alone ([`Store::claim_next`]), where the budget judges every claim.
    Budgeted,
}

impl Store {
    /// Claims for each request of `reqs` (1–100 requests of one endpoint, all for the same
    /// queue) the oldest pending todo not claimed by the others, in one statement.
    pub async fn claim_next_each(&self, endpoint: EndpointId, reqs: &[ClaimRequest]) -> Result<EachClaim> {
        let queue = reqs.first().and_then(|r| r.queue.as_deref());
        // The group commit's lanes are per queue and hold at most a statement's worth.
        if reqs.len() > CLAIM_LIMIT_MAX as usize || reqs.iter().any(|r| r.queue.as_deref() != queue) {
            return Err(Error::internal("claims of several queues, or too many, in one group commit"));
        }
        // Each caller's parameters, or its own request's refusal (a lease length out of
        // range, a queue that is not drainable).
        let params: Vec<Result<ClaimParams>> = reqs.iter().map(ClaimRequest::params).collect();
        let callers: Vec<&ClaimParams> = params.iter().flatten().collect();
        if callers.is_empty() {
            return Ok(EachClaim::Answered(params.into_iter().map(|p| p.map(|_| ClaimOutcome::Empty)).collect()));
        }
        let statement = if queue.is_some() { &EACH_ON_QUEUE } else { &EACH_ON_ANY_QUEUE };
        let q = statement
            .query()
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Text>, _>(queue)
            .bind::<Array<Int4>, _>(callers.iter().map(|p| p.lease).collect::<Vec<_>>())
            .bind::<Array<Bytea>, _>(callers.iter().map(|p| p.hash.to_vec()).collect::<Vec<_>>())
            .bind::<Array<Nullable<Text>>, _>(callers.iter().map(|p| p.claimant.clone()).collect::<Vec<_>>())
            .bind::<Array<Bool>, _>(callers.iter().map(|p| p.relay).collect::<Vec<_>>())
            .bind::<Int4, _>(callers.len() as i32);
        let mut conn = self.conn().await?;
        let rows: Vec<FastRow> = Prepared(q).load(&mut conn).await?;
        if rows.as_slice().first().is_some_and(|r| r.budgeted) {
            return Ok(EachClaim::Budgeted);
        }
        // The candidates were numbered in the order the rows come back in: the n-th row
        // is the n-th caller's; callers past the last claimable todo get nothing.
        let mut todos = rows.into_iter().filter_map(|r| r.todo);
        let mut answers = Vec::with_capacity(params.len());
        for p in params {
            // A refused request had no candidate: only the others take the next row.
            let Ok(p) = p else {
                answers.push(p.map(|_| ClaimOutcome::Empty));
                continue;
            };
            answers.push(match todos.next() {
                // The claims are made: a failure to read one's earlier attempts is that
                // caller's alone.
                Some(todo) => {
                    self.finish_claim(&mut conn, todo, p.token).await.map(|c| ClaimOutcome::Claimed(Box::new(c)))
                }
                None => Ok(ClaimOutcome::Empty),
            });
        }
        Ok(EachClaim::Answered(answers))
    }
}

impl Store {
    /// Completes each `(todo, finish)` that the single completion's first statement would
    /// complete, in one statement; answers per item, in order: the completed row, or
    /// nothing (the caller completes alone, which completes or explains it).
    pub async fn complete_each<'a>(
        &self,
        endpoint: EndpointId,
        items: impl IntoIterator<Item = (TodoId, &'a Finish)>,
    ) -> Result<Vec<Option<TodoRow>>> {
        let mut taken = std::collections::HashSet::new();
        let checked: Vec<_> = items
            .into_iter()
            .map(|(id, finish)| finish.check().ok().filter(|_| taken.insert(id)).map(|c| (id, &finish.result, c)))
            .collect();
        let todo: Vec<_> = checked.iter().flatten().collect();
        if todo.is_empty() {
            return Ok(vec![None; checked.len()]);
        }
        let q = COMPLETE_EACH
            .query()
            .bind::<Array<SqlUuid>, _>(todo.iter().map(|(id, _, _)| id.0).collect::<Vec<_>>())
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Array<Nullable<Jsonb>>, _>(todo.iter().map(|(_, result, _)| *result).collect::<Vec<_>>())
            .bind::<Array<Nullable<Bytea>>, _>(
                todo.iter().map(|(_, _, c)| c.token_hash.map(|h| h.to_vec())).collect::<Vec<_>>(),
            )
            .bind::<Array<Nullable<Text>>, _>(todo.iter().map(|(_, _, c)| c.summary.as_deref()).collect::<Vec<_>>())
            .bind::<Array<Bool>, _>(todo.iter().map(|(_, _, c)| c.truncated).collect::<Vec<_>>())
            .bind::<Array<Nullable<Text>>, _>(todo.iter().map(|(_, _, c)| c.artifact.as_deref()).collect::<Vec<_>>());
        let mut conn = self.conn().await?;
        let done: Vec<TodoRow> = Prepared(q).load(&mut conn).await?;
        let mut done: std::collections::HashMap<TodoId, TodoRow> = done.into_iter().map(|t| (t.id, t)).collect();
        Ok(checked.into_iter().map(|c| c.and_then(|(id, _, _)| done.remove(&id))).collect())
    }
}
