//! The pill counts.
//!
//! Counted, not kept: each bucket is `count(*)` over at most `COUNT_CAP + 1` entries of
//! its partial index (an index-only scan once vacuum has marked the pages visible), and
//! a fuller bucket reads as `10 000+`. Why not exact counters kept in a table as rows
//! move: every transition (claim, complete, fail, release, the reapers, the retry
//! scheduler, revocation cascades, quarantine release, retention) would have to update
//! them in its own statement, so one forgotten path makes a count silently wrong; and
//! all of one owner's claims and completions would queue on the same counter rows,
//! serialising the hot path the queue is measured on. A capped count costs the reader
//! a bounded amount, costs writers nothing, and is never wrong.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Int8, Uuid as SqlUuid};

use super::super::Store;
use super::super::dead_letters::{DEAD_LETTER, scope_array};
use crate::db::statement::statement;
use crate::domain::ids::ScopeId;
use crate::domain::pills::{COUNT_CAP, PillCount, PillCounts};
use crate::error::Result;

/// One capped count over `todos t` in the scopes `$1`, at most `$2` rows.
fn capped(predicate: &str) -> String {
    format!("(SELECT count(*) FROM (SELECT 1 FROM todos t WHERE t.scope_id = ANY($1) AND {predicate} LIMIT $2) c)")
}

statement! {
    /// Every pill's capped count (`$1` scopes, `$2` the cap).
    static PILL_COUNTS = format!(
        "SELECT {} AS all_n, {} AS pending_n, {} AS claimed_n, {} AS done_n, {} AS failed_n, {} AS dead_n",
        capped("t.queue <> 'quarantine'"),
        capped("t.state = 'pending' AND t.queue <> 'quarantine'"),
        capped("t.state = 'claimed' AND t.queue <> 'quarantine'"),
        capped("t.state = 'done' AND t.queue <> 'quarantine'"),
        capped("t.state = 'failed' AND t.next_retry_at IS NOT NULL AND t.queue <> 'quarantine'"),
        capped(DEAD_LETTER),
    );
}

impl Store {
    /// Every pill's count across `scopes`, each exact up to [`COUNT_CAP`]; they count
    /// exactly what [`Store::list_todos_for`] and [`Store::list_dead_letters`] list.
    pub async fn pill_counts(&self, scopes: &[ScopeId]) -> Result<PillCounts> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = BigInt)]
            all_n: i64,
            #[diesel(sql_type = BigInt)]
            pending_n: i64,
            #[diesel(sql_type = BigInt)]
            claimed_n: i64,
            #[diesel(sql_type = BigInt)]
            done_n: i64,
            #[diesel(sql_type = BigInt)]
            failed_n: i64,
            #[diesel(sql_type = BigInt)]
            dead_n: i64,
        }
        let mut conn = self.conn().await?;
        let r: Row = PILL_COUNTS
            .query()
            .bind::<Array<SqlUuid>, _>(scope_array(scopes))
            .bind::<Int8, _>(i64::from(COUNT_CAP) + 1)
            .one_row(&mut conn)
            .await?;
        Ok(PillCounts {
            all: PillCount::from_capped(r.all_n),
            pending: PillCount::from_capped(r.pending_n),
            claimed: PillCount::from_capped(r.claimed_n),
            done: PillCount::from_capped(r.done_n),
            failed: PillCount::from_capped(r.failed_n),
            dead: PillCount::from_capped(r.dead_n),
        })
    }
}
