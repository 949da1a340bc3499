//! Bulk "retry now": every dead letter in the caller's scopes that matches the Dead
//! view's search goes back to pending, with the one-todo retry's semantics (attempt
//! counter reset, history kept, nothing rung).
//!
//! Set-wise, in batches of [`BULK_RETRY_BATCH`] rows (one statement each, so no
//! transaction holds hundreds of thousands of row locks), up to [`BULK_RETRY_MAX`] per
//! call. Rows another transaction holds are skipped (`SKIP LOCKED`), as are dead
//! letters that cannot go back: their endpoint is revoked or expired, or a live todo
//! has since taken their idempotency key. Of several dead letters sharing one key, the
//! newest goes back and the rest stay dead (only one may hold the key). What stays is
//! reported, so the operator sees it.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::super::dead_letters::{BySearch, DEAD_LETTER, Searching, and, bind_search, scope_array, search_condition};
use super::LIVE_KEY;
use super::operator::{ENDPOINT_LIVE, RETRY_NOW_SET};
use chrono::{DateTime, Utc};

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::domain::pills::PillCount;
use crate::domain::todo_search::TodoSearch;
use crate::domain::wakeups::Arrived;
use crate::error::{Error, Result};

/// Dead letters moved per statement.
pub const BULK_RETRY_BATCH: i64 = 500;
/// Most dead letters one bulk retry moves (the pill count's cap: what the confirmation
/// can state exactly).
pub const BULK_RETRY_MAX: u64 = 10_000;
/// Times a batch is re-run after losing a race for an idempotency key.
const KEY_RACES: u32 = 3;

/// What a bulk retry did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkRetried {
    /// Dead letters returned to pending.
    pub retried: u64,
    /// Dead letters that still match afterwards: beyond [`BULK_RETRY_MAX`], held by
    /// another transaction, or unable to go back (endpoint revoked or expired, key
    /// held by a live todo).
    pub still_dead: PillCount,
}

/// One batch: lock up to `$2` matching dead letters (dead by `$3`, if given) that may go
/// back, keep the newest per idempotency key, and return them to pending.
fn batch_sql(searching: Searching) -> String {
    format!(
        "WITH picked AS ( \
           SELECT t.id, t.endpoint_id, t.idempotency_key, t.dead_lettered_at FROM todos t \
           WHERE t.scope_id = ANY($1) AND {DEAD_LETTER}{search} AND {ENDPOINT_LIVE} \
             AND ($3::timestamptz IS NULL OR t.dead_lettered_at <= $3) \
             AND (t.idempotency_key IS NULL OR NOT EXISTS ( \
               SELECT 1 FROM todos WHERE todos.endpoint_id = t.endpoint_id \
                 AND todos.idempotency_key = t.idempotency_key AND {LIVE_KEY})) \
           ORDER BY t.dead_lettered_at DESC, t.id DESC LIMIT $2 \
           FOR UPDATE OF t SKIP LOCKED), \
         chosen AS ( \
           SELECT DISTINCT ON (p.endpoint_id, p.idempotency_key, CASE WHEN p.idempotency_key IS NULL THEN p.id END) \
             p.id FROM picked p \
           ORDER BY p.endpoint_id, p.idempotency_key, CASE WHEN p.idempotency_key IS NULL THEN p.id END, \
             p.dead_lettered_at DESC) \
         UPDATE todos t SET {RETRY_NOW_SET} FROM chosen WHERE t.id = chosen.id AND {DEAD_LETTER} \
         RETURNING t.endpoint_id, t.queue",
        search = and(search_condition(searching, 4))
    )
}

statement! {
    static BATCH_EVERYTHING = built(|| batch_sql(Searching::Everything));
    static BATCH_BY_ID = built(|| batch_sql(Searching::Id));
    static BATCH_BY_TEXT = built(|| batch_sql(Searching::Text));
}

/// One batch of a bulk retry, per kind of search.
static BATCH: BySearch = BySearch { everything: &BATCH_EVERYTHING, id: &BATCH_BY_ID, text: &BATCH_BY_TEXT };

impl Store {
    /// Returns to pending every dead letter in `scopes` matching `query` (as the Dead
    /// view reads it) that died by `died_by` (the moment a confirmation counted them;
    /// none: any time), up to [`BULK_RETRY_MAX`]; rings no doorbell (only the claim bell). Says how many moved and
    /// how many still match.
    pub async fn retry_dead_letters(
        &self,
        scopes: &[ScopeId],
        query: Option<&str>,
        died_by: Option<DateTime<Utc>>,
    ) -> Result<BulkRetried> {
        /// Where a moved todo waits now (for the claim bell).
        #[derive(QueryableByName)]
        struct Moved {
            #[diesel(sql_type = SqlUuid)]
            endpoint_id: EndpointId,
            #[diesel(sql_type = Text)]
            queue: String,
        }
        let search = TodoSearch::parse(query)?;
        let batch_statement = BATCH.pick(&search);
        let scope_ids = scope_array(scopes);
        let mut retried = 0u64;
        let mut races = 0u32;
        let mut conn = self.conn().await?;
        while retried < BULK_RETRY_MAX {
            let batch = BULK_RETRY_BATCH.min((BULK_RETRY_MAX - retried) as i64);
            let q = batch_statement
                .query()
                .into_boxed::<Pg>()
                .bind::<Array<SqlUuid>, _>(scope_ids.clone())
                .bind::<Int8, _>(batch)
                .bind::<Nullable<Timestamptz>, _>(died_by);
            match bind_search(q, &search).load::<Moved>(&mut conn).await {
                Ok(moved) if moved.is_empty() => break,
                Ok(moved) => {
                    retried += moved.len() as u64;
                    // Committed (one statement): agents waiting on these queues may claim.
                    for m in &moved {
                        self.emitter().claimable(m.endpoint_id, &m.queue, Arrived::Todos(1));
                    }
                }
                // A todo with the same key went live between the check and the update:
                // the batch rolled back whole; run it again (the check now sees it).
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) if races < KEY_RACES => {
                    races += 1;
                }
                Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    return Err(Error::Conflict(format!(
                        "retried {retried}; the rest keep losing their idempotency keys to new todos, try again"
                    )));
                }
                Err(e) => return Err(e.into()),
            }
        }
        drop(conn);
        let still_dead = self.count_dead_letters(scopes, query).await?;
        Ok(BulkRetried { retried, still_dead })
    }
}
