//! Creating many todos on one endpoint in one transaction, each as the single create
//! would create it: checked by [`NewTodo::validate`], inserted only while the endpoint is
//! active (its row held `FOR SHARE`, as every todo insert), and an idempotency key held
//! by a live todo of the endpoint answering that todo (`created: false`) instead of a
//! new one, also when an earlier item of the same batch holds it.
//!
//! One statement inserts every valid item. It inserts in idempotency-key order, so two
//! batches racing on the same keys wait on each other in one order (never a deadlock);
//! `created_at` follows the items' order (a microsecond apart), so claim-next takes a
//! batch's todos in the order they were sent, as it would have taken them one by one.
//! An item the statement did not insert is the key's live todo; when none holds the key
//! any more (it ended meanwhile), the item is created as the single verb would
//! ([`insert_todo`]).

use std::collections::HashMap;

use diesel::sql_types::{Array, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::super::super::Store;
use super::super::create::payload_size;
use super::super::{CreateOutcome, Inserted, LIVE_KEY, NewTodo, SENDER_GATE, insert_todo};
use super::{Answers, ItemResult, item_error};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::transitions::DEFAULT_MAX_ATTEMPTS;
use crate::error::{Error, Result};
use crate::store::signals::Signal;

/// `$1` the endpoint, then one array per column (`$2`–`$14`), the last the item's
/// position, which orders `created_at`.
fn insert_batch_sql() -> String {
    format!(
        "WITH items AS (SELECT * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], \
             $7::jsonb[], $8::int4[], $9::uuid[], $10::text[], $11::int4[], $12::text[], $13::text[], $14::int4[]) \
           AS i(id, queue, source, kind, title, payload, payload_size, event_id, idempotency_key, max_attempts, \
             quarantine_reason, work_order, position)), \
         t AS ( \
           INSERT INTO todos (id, endpoint_id, scope_id, queue, source, kind, title, payload, payload_size, \
             event_id, idempotency_key, state, max_attempts, quarantine_reason, work_order, created_at) \
           SELECT i.id, ep.id, ep.scope_id, i.queue, i.source, i.kind, i.title, i.payload, i.payload_size, \
             i.event_id, i.idempotency_key, 'pending', i.max_attempts, i.quarantine_reason, i.work_order, \
             now() + i.position * interval '1 microsecond' \
           FROM (SELECT ep.id, ep.scope_id FROM endpoints ep WHERE ep.id = $1 AND ep.state = 'active' \
               AND (ep.expires_at IS NULL OR ep.expires_at > now()) FOR SHARE OF ep) ep \
             CROSS JOIN items i \
           ORDER BY i.idempotency_key NULLS LAST, i.position \
           ON CONFLICT (endpoint_id, idempotency_key) WHERE {LIVE_KEY} DO NOTHING \
           RETURNING *) \
         SELECT t.*, (SELECT slug FROM endpoints ep WHERE ep.id = t.endpoint_id) AS endpoint_slug, \
           {SENDER_GATE} AS sender_gate FROM t"
    )
}

statement! {
    static INSERT_BATCH = built(insert_batch_sql);
}

/// The live todos of `endpoint` holding any of `keys`.
fn live_keys_sql() -> String {
    format!(
        "SELECT * FROM todos WHERE endpoint_id = $1 AND idempotency_key = ANY($2) AND queue <> 'quarantine' \
         AND {LIVE_KEY}"
    )
}

statement! {
    static LIVE_KEYS = built(live_keys_sql);
}

/// A valid item, with the id it is inserted under.
struct Valid {
    at: usize,
    id: TodoId,
    new: NewTodo,
}

impl Store {
    /// Creates each todo as [`Store::create_todo`] would, in one transaction, every one on
    /// `endpoint`; answers per item, in order, and rings `todo.ready` (`created`) for each
    /// new one after the commit.
    pub async fn create_todos(
        &self,
        endpoint: EndpointId,
        items: Vec<NewTodo>,
    ) -> Result<Vec<ItemResult<CreateOutcome>>> {
        self.to_completion(move |s| async move { s.create_todos_now(endpoint, items).await }).await
    }

    /// [`Self::create_todos`], on the caller's task.
    async fn create_todos_now(
        &self,
        endpoint: EndpointId,
        items: Vec<NewTodo>,
    ) -> Result<Vec<ItemResult<CreateOutcome>>> {
        let mut answers = Answers::new(items.len());
        let mut valid = Vec::with_capacity(items.len());
        for (at, new) in items.into_iter().enumerate() {
            if new.endpoint_id != endpoint {
                return Err(Error::internal("a batch create names a todo of another endpoint"));
            }
            match new.validate() {
                Ok(()) => valid.push(Valid { at, id: TodoId::new(), new }),
                Err(e) => answers.set(at, Err(e)),
            }
        }
        let mut conn = self.conn().await?;
        let signals = conn
            .transaction::<_, Error, _>(async move |conn| {
                let signals = create_in_tx(conn, endpoint, valid, &mut answers).await?;
                Ok((answers.into_vec()?, signals))
            })
            .await;
        let (answers, signals) = signals?;
        self.emit(signals);
        Ok(answers)
    }
}

/// Inserts every valid item, answers each, and returns the signals in item order.
async fn create_in_tx(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    valid: Vec<Valid>,
    answers: &mut Answers<CreateOutcome>,
) -> Result<Vec<Signal>> {
    if valid.is_empty() {
        return Ok(Vec::new());
    }
    let mut inserted: HashMap<TodoId, Inserted> = insert_all(conn, endpoint, &valid).await?;
    let missing: Vec<String> =
        valid.iter().filter(|v| !inserted.contains_key(&v.id)).filter_map(|v| v.new.idempotency_key.clone()).collect();
    let live = live_todos_with_keys(conn, endpoint, missing).await?;
    let mut signals: Vec<(usize, Signal)> = Vec::new();
    for v in valid {
        if let Some(row) = inserted.remove(&v.id) {
            let (outcome, signal) = row.into_outcome();
            signals.extend(signal.map(|s| (v.at, s)));
            answers.set(v.at, Ok(outcome));
            continue;
        }
        if let Some(todo) = v.new.idempotency_key.as_ref().and_then(|k| live.get(k)) {
            answers.set(v.at, Ok(CreateOutcome { todo: todo.clone(), created: false }));
            continue;
        }
        // The endpoint is no longer active, or the key's todo ended since the insert
        // met it: what the single create answers, it answers.
        match insert_todo(conn, &v.new).await {
            Ok((outcome, signal)) => {
                signals.extend(signal.map(|s| (v.at, s)));
                answers.set(v.at, Ok(outcome));
            }
            Err(e) => answers.set(v.at, Err(item_error(e)?)),
        }
    }
    signals.sort_by_key(|(at, _)| *at);
    Ok(signals.into_iter().map(|(_, s)| s).collect())
}

/// The one insert of every valid item; returns the rows it inserted, by id.
async fn insert_all(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    valid: &[Valid],
) -> Result<HashMap<TodoId, Inserted>> {
    let col = |f: fn(&Valid) -> Option<String>| valid.iter().map(f).collect::<Vec<_>>();
    let q = INSERT_BATCH
        .query()
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<Array<SqlUuid>, _>(valid.iter().map(|v| v.id.0).collect::<Vec<_>>())
        .bind::<Array<Text>, _>(valid.iter().map(|v| v.new.queue.clone()).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(col(|v| v.new.source.clone()))
        .bind::<Array<Nullable<Text>>, _>(col(|v| v.new.kind.clone()))
        .bind::<Array<Text>, _>(valid.iter().map(|v| v.new.title.trim().to_owned()).collect::<Vec<_>>())
        .bind::<Array<Nullable<Jsonb>>, _>(valid.iter().map(|v| v.new.payload.clone()).collect::<Vec<_>>())
        .bind::<Array<Int4>, _>(valid.iter().map(|v| payload_size(&v.new)).collect::<Vec<_>>())
        .bind::<Array<Nullable<SqlUuid>>, _>(valid.iter().map(|v| v.new.event_id.map(|e| e.0)).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(col(|v| v.new.idempotency_key.clone()))
        .bind::<Array<Int4>, _>(
            valid.iter().map(|v| v.new.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS)).collect::<Vec<_>>(),
        )
        .bind::<Array<Nullable<Text>>, _>(valid.iter().map(|v| v.new.quarantine_reason).collect::<Vec<_>>())
        .bind::<Array<Nullable<Text>>, _>(col(|v| v.new.work_order.clone()))
        .bind::<Array<Int4>, _>(valid.iter().map(|v| v.at as i32).collect::<Vec<_>>());
    let rows: Vec<Inserted> = Prepared(q).load(conn).await?;
    Ok(rows.into_iter().map(|r| (r.todo.id, r)).collect())
}

/// The live todos of `endpoint` holding `keys`, by key.
async fn live_todos_with_keys(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    keys: Vec<String>,
) -> Result<HashMap<String, TodoRow>> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let q = LIVE_KEYS.query().bind::<SqlUuid, _>(endpoint.0).bind::<Array<Text>, _>(keys);
    let rows: Vec<TodoRow> = Prepared(q).load(conn).await?;
    Ok(rows.into_iter().filter_map(|t| t.idempotency_key.clone().map(|k| (k, t))).collect())
}
