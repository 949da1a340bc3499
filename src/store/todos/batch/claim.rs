//! Claim-next of up to `limit` todos in one transaction, oldest pending first, each
//! claimed exactly as a single claim-next would claim it.
//!
//! A queue (or, on any queue, an endpoint) without admission budgets is claimed in one
//! statement: the `limit` oldest pending todos (`FOR UPDATE SKIP LOCKED`), each moved to
//! `claimed` under a lease token of its own, each with its attempt opened. With budgets,
//! the budget rows are locked once and the budgeted claim statement runs once per todo
//! in the same transaction (each statement's snapshot counts the claims before it), so
//! every budget judges every claim; the batch stops at the first claim that finds
//! nothing, or that a budget refuses (that refusal is counted once, as a single
//! claim-next's would be, and reported).

use diesel::pg::Pg;
use diesel::sql_types::{Array, Bytea, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::super::super::Store;
use super::super::admitted::{Admitted, Form, admit_locked, lock_budgets};
use super::super::claim::{ClaimRequest, Claimed, FastRow};
use super::super::claim_parts::BATCH_CLAIM_CTES;
use super::CLAIM_LIMIT_MAX;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::admission::Deferral;
use crate::domain::ids::EndpointId;
use crate::domain::tokens::mint_lease_token;
use crate::error::{Error, Result};

/// What a batch claim came to.
#[derive(Debug, Clone, Default)]
pub struct BatchClaim {
    /// The todos claimed, oldest first (none: nothing was claimable), each as a single
    /// claim answers it but without earlier attempts (a batch answer does not carry them).
    pub claims: Vec<Claimed>,
    /// Why the batch stopped short when an admission budget held back work that was
    /// there (the refusal is counted in `queue_deferrals`).
    pub deferred: Option<Deferral>,
}

/// The statement of an unbudgeted batch: `$1` endpoint, `$2` queue (null: any queue),
/// `$3`–`$6` as every claim (`$4` an array of hashes, one per candidate), `$7` limit.
/// As a single claim-next, a budget of the queue (any budget of the endpoint, on any
/// queue) makes it claim nothing and say so. `ctes` moves the candidates to `claimed`
/// (`BATCH_CLAIM_CTES`, or `EACH_CLAIM_CTES` for several callers' claims).
pub(super) fn next_batch(any_queue: bool, ctes: &str) -> String {
    let (budget, queue) = if any_queue {
        ("", "queue <> 'quarantine' AND $2::text IS NULL")
    } else {
        (" AND a.queue = $2", "queue = $2")
    };
    format!(
        "WITH budget AS (SELECT EXISTS (SELECT 1 FROM queue_admission a WHERE a.endpoint_id = $1{budget}) \
           AS budgeted), \
         candidate AS (SELECT x.id, row_number() OVER (ORDER BY x.created_at, x.id) AS n FROM ( \
           SELECT id, created_at FROM todos WHERE endpoint_id = $1 AND state = 'pending' AND {queue} \
             AND NOT (SELECT budgeted FROM budget) ORDER BY created_at, id LIMIT $7 FOR UPDATE SKIP LOCKED) x), \
         {ctes} \
         SELECT b.budgeted, c.* FROM budget b LEFT JOIN claimed c ON true ORDER BY c.created_at, c.id"
    )
}

statement! {
    static NEXT_BATCH_ON_QUEUE = built(|| next_batch(false, BATCH_CLAIM_CTES));
    static NEXT_BATCH_ON_ANY_QUEUE = built(|| next_batch(true, BATCH_CLAIM_CTES));
}

impl Store {
    /// Claims up to `limit` (1–100) of the endpoint's oldest pending todos (optionally of
    /// one queue) in one transaction, within the admission budgets of its queues.
    pub async fn claim_next_batch(&self, endpoint: EndpointId, req: ClaimRequest, limit: i32) -> Result<BatchClaim> {
        if !(1..=CLAIM_LIMIT_MAX).contains(&limit) {
            return Err(Error::invalid("limit", format!("must be between 1 and {CLAIM_LIMIT_MAX}")));
        }
        let params = req.params()?;
        let tokens: Vec<(String, [u8; 32])> = (0..limit).map(|_| mint_lease_token()).collect();
        let hashes: Vec<&[u8]> = tokens.iter().map(|(_, h)| h.as_slice()).collect();
        let statement = if req.queue.is_some() { &NEXT_BATCH_ON_QUEUE } else { &NEXT_BATCH_ON_ANY_QUEUE };
        let q = statement
            .query()
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Text>, _>(req.queue.as_deref())
            .bind::<Int4, _>(params.lease)
            .bind::<Array<Bytea>, _>(hashes)
            .bind::<Nullable<Text>, _>(params.claimant.as_deref())
            .bind::<diesel::sql_types::Bool, _>(params.relay)
            .bind::<Int4, _>(limit);
        let mut conn = self.conn().await?;
        let rows: Vec<FastRow> = Prepared(q).load(&mut conn).await?;
        if !rows.as_slice().first().is_some_and(|r| r.budgeted) {
            // The candidates were numbered in the order the rows come back in: the n-th
            // row holds the n-th token.
            let claims = rows
                .into_iter()
                .filter_map(|r| r.todo)
                .zip(tokens)
                .map(|(todo, (lease_token, _))| Claimed {
                    attempt_seq: todo.attempts_total,
                    todo,
                    lease_token,
                    prior_attempts: Vec::new(),
                })
                .collect();
            return Ok(BatchClaim { claims, deferred: None });
        }
        conn.transaction::<_, Error, _>(async move |conn| {
            let form = Form::next(endpoint, req.queue.as_deref());
            lock_budgets(conn, form).await?;
            let mut batch = BatchClaim::default();
            while batch.claims.len() < limit as usize {
                let params = req.params()?;
                match admit_locked(conn, form, &params).await? {
                    Admitted::Claimed(todo) => batch.claims.push(Claimed {
                        attempt_seq: todo.attempts_total,
                        todo: *todo,
                        lease_token: params.token,
                        prior_attempts: Vec::new(),
                    }),
                    Admitted::Nothing => break,
                    Admitted::Deferred(why) => {
                        batch.deferred = Some(why);
                        break;
                    }
                }
            }
            Ok(batch)
        })
        .await
    }
}
