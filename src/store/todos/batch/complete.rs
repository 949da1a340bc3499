//! Completing many claimed todos: first one statement for every item whose attempt this
//! release opened on the row (the rows locked in id order by its join), then, for what it
//! did not complete, one transaction: the rows locked in id order, then
//! per round one statement that completes every item the single verb would complete
//! (the same conditions: the endpoint's, not quarantined, `claimed`, the lease token
//! when given) and closes its attempt `completed` / `done`, kept on the todo row as the
//! single verb keeps it. An item it did not complete
//! is explained as the single verb explains it ([`explain_miss`]).

use std::collections::HashMap;

use diesel::sql_types::{Array, Bool, Bytea, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::super::Store;
use super::super::attempt_close::{closed_in_place_cte, completed_on_row};
use super::super::{Caller, explain_miss};
use super::{Answers, Item, ItemResult, check_items, item_error, lock_in_id_order, rounds};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::{Error, Result};
use crate::store::todos::Finish;

statement! {
    /// `$1` ids, `$2` endpoint, then per item: `$3` result, `$4` lease token hash (null: not
    /// fenced), `$5` summary, `$6` whether it was cut, `$7` artifact. The ids are distinct.
    static COMPLETE_BATCH = format!(
        "\
    WITH items AS (SELECT * FROM unnest($1::uuid[], $3::jsonb[], $4::bytea[], $5::text[], $6::bool[], $7::text[]) \
        AS i(id, result, token_hash, summary, truncated, artifact)), \
      moved AS ( \
        UPDATE todos t SET state = 'done', result = i.result, completed_at = now(), updated_at = now(), \
          lease_expires_at = NULL, lease_token_hash = NULL, {on_row} \
        FROM items i \
        WHERE t.id = i.id AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE \"C\" \
          AND (i.token_hash IS NULL OR t.lease_token_hash = i.token_hash) \
        RETURNING t.*), \
      {closed} \
    SELECT * FROM moved",
        on_row = completed_on_row(["i.summary", "i.truncated", "i.artifact"]),
        closed = closed_in_place_cte(
            "= ANY($1)",
            " JOIN items i ON i.id = m.id",
            ["i.summary", "i.truncated", "i.artifact"]
        )
    );
}

impl Store {
    /// Completes each `(todo, finish)` as [`Store::complete`] would; answers per item, in
    /// order. First, in one statement of its own ([`Store::complete_each`], the group
    /// commit's), every item whose attempt this release opened on the todo row: the rows
    /// are locked in id order by that statement's join, with no transaction, lock
    /// statement or history look-up around it (the common case, and the cheap one). What
    /// it did not complete (a refused body, an id named twice, a lease token that does not
    /// match, a todo not claimed, an attempt an earlier release opened as a history row)
    /// then goes through [`Store::complete_batch_locked`], in one transaction, which
    /// completes or explains each exactly as the single verb would.
    pub async fn complete_batch(
        &self,
        endpoint: EndpointId,
        items: Vec<(Option<TodoId>, Finish)>,
    ) -> Result<Vec<ItemResult<TodoRow>>> {
        let at_once = items.iter().filter_map(|(id, finish)| id.map(|id| (id, finish)));
        let mut done = self.complete_each(endpoint, at_once).await?.into_iter();
        // Each item's row when the statement completed it; the others, in order, go on.
        let mut answered: Vec<Option<TodoRow>> = Vec::with_capacity(items.len());
        let mut rest = Vec::new();
        for (id, finish) in items {
            let row = match id {
                Some(_) => done.next().flatten(),
                None => None,
            };
            if row.is_none() {
                rest.push((id, finish));
            }
            answered.push(row);
        }
        let mut rest = match rest.is_empty() {
            true => Vec::new(),
            false => self.complete_batch_locked(endpoint, rest).await?,
        }
        .into_iter();
        answered
            .into_iter()
            .map(|row| match row {
                Some(row) => Ok(Ok(row)),
                None => rest.next().ok_or_else(|| Error::internal("a batch item was left unanswered")),
            })
            .collect()
    }

    /// Completes each `(todo, finish)` as [`Store::complete`] would, in one transaction
    /// that locks the rows in id order first; answers per item, in order.
    async fn complete_batch_locked(
        &self,
        endpoint: EndpointId,
        items: Vec<(Option<TodoId>, Finish)>,
    ) -> Result<Vec<ItemResult<TodoRow>>> {
        let mut answers = Answers::new(items.len());
        let (ids, mut checked) = check_items(items, &mut answers);
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            lock_in_id_order(conn, endpoint, &ids).await?;
            for round in rounds(&ids) {
                let todo: Vec<(usize, Item)> =
                    round.into_iter().filter_map(|i| checked[i].take().map(|item| (i, item))).collect();
                complete_round(conn, endpoint, todo, &mut answers).await?;
            }
            answers.into_vec()
        })
        .await
    }
}

/// Completes one round's items (distinct ids) and answers each.
async fn complete_round(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    items: Vec<(usize, Item)>,
    answers: &mut Answers<TodoRow>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let q = COMPLETE_BATCH
        .query()
        .bind::<Array<SqlUuid>, _>(items.iter().map(|(_, it)| it.id.0).collect::<Vec<_>>())
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<Array<Nullable<Jsonb>>, _>(items.iter().map(|(_, it)| it.result.clone()).collect::<Vec<_>>())
        .bind::<Array<Nullable<Bytea>>, _>(
            items.iter().map(|(_, it)| it.checked.token_hash.map(|h| h.to_vec())).collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(items.iter().map(|(_, it)| it.checked.summary.clone()).collect::<Vec<_>>())
        .bind::<Array<Bool>, _>(items.iter().map(|(_, it)| it.checked.truncated).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(items.iter().map(|(_, it)| it.checked.artifact.clone()).collect::<Vec<_>>());
    let done: Vec<TodoRow> = Prepared(q).load(conn).await?;
    let mut done: HashMap<TodoId, TodoRow> = done.into_iter().map(|t| (t.id, t)).collect();
    let caller = Caller::Endpoint(endpoint);
    for (i, item) in items {
        let answer = match done.remove(&item.id) {
            Some(row) => Ok(row),
            None => {
                let hash = item.checked.token_hash;
                Err(item_error(
                    explain_miss(conn, &caller, item.id, hash.as_ref().map(|h| h.as_slice()), "claimed").await,
                )?)
            }
        };
        answers.set(i, answer);
    }
    Ok(())
}
