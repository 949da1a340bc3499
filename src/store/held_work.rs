//! What revoking an endpoint would dead-letter, counted before the human confirms:
//! the same predicate as the revocation's cascade (pending, claimed or waiting for
//! input, failed with a retry scheduled; never quarantine). Each bucket is a capped
//! count (`LIMIT COUNT_CAP + 1`) on an index, so a busy endpoint costs no more than
//! the Todos view's pills.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Uuid as SqlUuid};

use super::Store;
use crate::db::models::EndpointRow;
use crate::db::statement::statement;
use crate::domain::pills::{COUNT_CAP, PillCount};
use crate::error::Result;

/// The work an endpoint holds, which revoking it turns into dead letters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldWork {
    /// Waiting in a queue.
    pub pending: PillCount,
    /// Claimed by an agent, or waiting for input or authorisation.
    pub claimed: PillCount,
    /// Failed, with a retry scheduled.
    pub retrying: PillCount,
}

impl HeldWork {
    /// Whether nothing would be dead-lettered.
    pub fn is_empty(&self) -> bool {
        self.pending.is_zero() && self.claimed.is_zero() && self.retrying.is_zero()
    }

    /// All of it (capped like its parts).
    pub fn total(&self) -> PillCount {
        let mut sum = 0u32;
        let mut capped = false;
        for part in [self.pending, self.claimed, self.retrying] {
            match part {
                PillCount::Exact(n) => sum = sum.saturating_add(n),
                PillCount::AtLeast(n) => {
                    sum = sum.saturating_add(n);
                    capped = true;
                }
            }
        }
        if capped { PillCount::AtLeast(sum) } else { PillCount::Exact(sum) }
    }
}

statement! {
    static HELD_COUNTS = "SELECT \
        (SELECT count(*) FROM (SELECT 1 FROM todos WHERE endpoint_id = $1 AND state = 'pending' \
        AND queue <> 'quarantine' LIMIT $3) p) AS pending, \
        (SELECT count(*) FROM (SELECT 1 FROM todos WHERE scope_id = $2 AND endpoint_id = $1 \
        AND state IN ('claimed', 'input_required', 'auth_required') AND queue <> 'quarantine' LIMIT $3) c) AS claimed, \
        (SELECT count(*) FROM (SELECT 1 FROM todos WHERE scope_id = $2 AND endpoint_id = $1 \
        AND state = 'failed' AND next_retry_at IS NOT NULL AND queue <> 'quarantine' LIMIT $3) r) AS retrying";
}

impl Store {
    /// Counts what `endpoint` holds (the caller has checked it is in the human's reach).
    pub async fn held_work(&self, endpoint: &EndpointRow) -> Result<HeldWork> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = BigInt)]
            pending: i64,
            #[diesel(sql_type = BigInt)]
            claimed: i64,
            #[diesel(sql_type = BigInt)]
            retrying: i64,
        }
        let mut conn = self.conn().await?;
        let row: Row = HELD_COUNTS
            .query()
            .bind::<SqlUuid, _>(endpoint.id.0)
            .bind::<SqlUuid, _>(endpoint.scope_id.0)
            .bind::<BigInt, _>(i64::from(COUNT_CAP) + 1)
            .one_row(&mut conn)
            .await?;
        Ok(HeldWork {
            pending: PillCount::from_capped(row.pending),
            claimed: PillCount::from_capped(row.claimed),
            retrying: PillCount::from_capped(row.retrying),
        })
    }
}
