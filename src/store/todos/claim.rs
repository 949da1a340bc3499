//! Claiming: `claim_next` (oldest pending, `FOR UPDATE SKIP LOCKED`) and `claim` by id.
//! One statement moves the todo to `claimed`, counts the attempt and opens it in the
//! history, so a crash can never leave a claim without its attempt.
//!
//! A queue without an admission budget is claimed from here, in that one statement,
//! which also looks up (by primary key, without locking) whether the queue has a budget.
//! When it has, the statement claims nothing; a claim that came back empty asks whether a
//! budget is why, and if so the claim is made again under the budget's lock by
//! [`super::admitted`].

use crate::db::one_row::OneRow;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

use super::super::Store;
use super::admitted::{Admitted, Form, admit};
use super::claim_parts::{CLAIM_CTES, CLAIM_SET, CLAIMABLE, ClaimParams};
use super::{Caller, explain_miss, todo_query};
use crate::db::models::{AttemptRow, TodoRow};
use crate::db::prepared::Prepared;
use crate::db::schema::todo_attempts;
use crate::db::statement::statement;
use crate::domain::admission::Deferral;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::text::{QUARANTINE_QUEUE, claimant_label, is_relay_claimant, valid_queue_name};
use crate::domain::tokens::mint_lease_token;
use crate::domain::transitions::{LEASE_SECONDS_RANGE, lease_seconds, within};
use crate::error::{Error, Result};

/// What a claim asks for.
#[derive(Debug, Clone, Default)]
pub struct ClaimRequest {
    /// Only this queue (claim_next).
    pub queue: Option<String>,
    /// Lease length for this claim (1–86 400 s).
    pub lease_ttl_seconds: Option<i32>,
    /// Free-form label of who claimed (≤128 bytes, control characters removed).
    pub claimant: Option<String>,
    /// Marks the attempt as a relay attempt.
    pub relay: bool,
    /// The endpoint's default lease.
    pub endpoint_default_lease: Option<i32>,
}

impl ClaimRequest {
    /// Validates, mints the lease token and resolves lease, label and relay flag.
    pub(super) fn params(&self) -> Result<ClaimParams> {
        self.validate()?;
        let (token, hash) = mint_lease_token();
        let claimant = self.claimant.as_deref().and_then(claimant_label);
        let relay = self.relay || claimant.as_deref().is_some_and(is_relay_claimant);
        Ok(ClaimParams {
            token,
            hash,
            lease: lease_seconds(self.lease_ttl_seconds, self.endpoint_default_lease),
            claimant,
            relay,
        })
    }

    fn validate(&self) -> Result<()> {
        if let Some(l) = self.lease_ttl_seconds
            && !within(l, LEASE_SECONDS_RANGE)
        {
            return Err(Error::invalid("lease_ttl_seconds", "must be between 1 and 86400"));
        }
        if let Some(q) = &self.queue
            && (!valid_queue_name(q) || q == QUARANTINE_QUEUE)
        {
            return Err(Error::invalid("queue", "not a drainable queue name"));
        }
        Ok(())
    }
}

/// A successful claim. Its Debug form leaves out the lease token.
#[derive(Clone)]
pub struct Claimed {
    /// The todo, now `claimed`.
    pub todo: TodoRow,
    /// The lease token (fencing); shown only here.
    pub lease_token: String,
    /// The attempt's sequence number.
    pub attempt_seq: i32,
    /// Up to five earlier attempts, newest first (none in a batch claim, whose answer
    /// does not carry them).
    pub prior_attempts: Vec<AttemptRow>,
}

impl std::fmt::Debug for Claimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("todo", &self.todo.id)
            .field("attempt_seq", &self.attempt_seq)
            .finish_non_exhaustive()
    }
}

/// What a claim came to.
#[derive(Debug, Clone)]
pub enum ClaimOutcome {
    /// The todo is the caller's, under a lease.
    Claimed(Box<Claimed>),
    /// Nothing was claimable (claim-next only: a claim by id that finds nothing is an
    /// error saying why).
    Empty,
    /// A queue's admission budget held back work that was there to claim; the refusal
    /// is counted in `queue_deferrals`.
    Deferred(Deferral),
}

impl ClaimOutcome {
    /// The claim, if one was made.
    pub fn claimed(self) -> Option<Claimed> {
        match self {
            ClaimOutcome::Claimed(c) => Some(*c),
            ClaimOutcome::Empty | ClaimOutcome::Deferred(_) => None,
        }
    }
}

/// A claim (or resume) statement's one row: whether the queue has a budget (then nothing
/// was claimed, and the claim goes through [`super::admitted`]), and the claimed todo.
#[derive(QueryableByName)]
pub(super) struct FastRow {
    #[diesel(sql_type = Bool)]
    pub(super) budgeted: bool,
    #[diesel(embed)]
    pub(super) todo: Option<TodoRow>,
}

statement! {
    /// Claim-next on one queue: one update of the oldest pending todo, chosen `FOR UPDATE
    /// SKIP LOCKED`, at no cost beyond the bare claim but one probe of the budget table's
    /// primary key, made once per statement. A queue with a budget claims nothing here (the
    /// candidate search does not even run); a claim that came back empty asks
    /// [`BUDGETED_QUEUE`] why. A plain update with a subquery, not CTEs: each CTE is a plan
    /// node more for PostgreSQL to set up on every execution, and the claim is the hottest
    /// statement there is. The cycle probe runs it (`bench/cycle_probe/product.sql`, which
    /// the integration test `statements` holds to this text).
    static NEXT_ON_QUEUE = format!(
        "UPDATE todos t {CLAIM_SET} WHERE t.id = (SELECT id FROM todos \
           WHERE endpoint_id = $1 AND state = 'pending' AND queue = $2 \
             AND NOT EXISTS (SELECT 1 FROM queue_admission a WHERE a.endpoint_id = $1 AND a.queue = $2) \
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING t.*"
    );

    /// Claim-next on any queue: as [`NEXT_ON_QUEUE`], with any budget of the endpoint's
    /// sending the claim to [`super::admitted`]. `$2` is bound (null) but unused so that both
    /// forms share one parameter list.
    static NEXT_ON_ANY_QUEUE = format!(
        "UPDATE todos t {CLAIM_SET} WHERE t.id = (SELECT id FROM todos \
           WHERE endpoint_id = $1 AND state = 'pending' AND queue <> 'quarantine' AND $2::text IS NULL \
             AND NOT EXISTS (SELECT 1 FROM queue_admission a WHERE a.endpoint_id = $1) \
           ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING t.*"
    );

    /// Why a claim-next came back empty: whether a budget held it back (on queue `$2`, or on
    /// any queue of endpoint `$1` when `$2` is null). Asked only after an empty claim.
    static BUDGETED_QUEUE = "SELECT EXISTS (SELECT 1 FROM queue_admission a \
        WHERE a.endpoint_id = $1 AND ($2::text IS NULL OR a.queue = $2)) AS budgeted";

    /// Claim by id: the todo is locked and its queue's budget looked up in one step; a
    /// budgeted todo is left as it was.
    static BY_ID = format!(
        "WITH target AS (SELECT t.id, EXISTS (SELECT 1 FROM queue_admission a \
             WHERE a.endpoint_id = t.endpoint_id AND a.queue = t.queue) AS budgeted \
           FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND {CLAIMABLE} FOR UPDATE OF t), \
         candidate AS (SELECT id FROM target WHERE NOT budgeted), \
         {CLAIM_CTES} \
         SELECT coalesce((SELECT budgeted FROM target), false) AS budgeted, c.* \
         FROM (SELECT 1) one LEFT JOIN claimed c ON true"
    );
}

/// [`BUDGETED_QUEUE`]'s answer.
#[derive(QueryableByName)]
struct BudgetedRow {
    #[diesel(sql_type = Bool)]
    budgeted: bool,
}

/// Whether a budget is why a claim-next by `endpoint` (on `queue`, or any queue) came
/// back empty ([`BUDGETED_QUEUE`]).
async fn budgeted(conn: &mut AsyncPgConnection, endpoint: EndpointId, queue: Option<&str>) -> Result<bool> {
    let q = BUDGETED_QUEUE.query().into_boxed::<Pg>().bind::<SqlUuid, _>(endpoint.0).bind::<Nullable<Text>, _>(queue);
    let row: BudgetedRow = Prepared(q).one_row(conn).await?;
    Ok(row.budgeted)
}

impl Store {
    /// Claims the oldest pending todo of the endpoint (optionally on one queue), within
    /// the admission budgets of its queues.
    pub async fn claim_next(&self, endpoint: EndpointId, req: ClaimRequest) -> Result<ClaimOutcome> {
        let params = req.params()?;
        let sql = if req.queue.is_some() { &NEXT_ON_QUEUE } else { &NEXT_ON_ANY_QUEUE };
        let head = sql
            .query()
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Text>, _>(req.queue.as_deref());
        let mut conn = self.conn().await?;
        let claimed: Option<TodoRow> = Prepared(params.bind_tail(head)).one_row(&mut conn).await.optional()?;
        let admitted = match claimed {
            Some(todo) => Admitted::Claimed(Box::new(todo)),
            None if budgeted(&mut conn, endpoint, req.queue.as_deref()).await? => {
                admit(&mut conn, Form::next(endpoint, req.queue.as_deref()), &params).await?
            }
            None => Admitted::Nothing,
        };
        match admitted {
            Admitted::Claimed(todo) => {
                Ok(ClaimOutcome::Claimed(Box::new(self.finish_claim(&mut conn, *todo, params.token).await?)))
            }
            Admitted::Nothing => Ok(ClaimOutcome::Empty),
            Admitted::Deferred(why) => Ok(ClaimOutcome::Deferred(why)),
        }
    }

    /// Claims one todo by id: a pending todo, or a failed one whose retry is due, within
    /// its queue's admission budget. Never [`ClaimOutcome::Empty`]: a todo that cannot be
    /// claimed is an error saying why.
    pub async fn claim(&self, endpoint: EndpointId, id: TodoId, req: ClaimRequest) -> Result<ClaimOutcome> {
        let params = req.params()?;
        let mut conn = self.conn().await?;
        let head = todo_query(&BY_ID, id).bind::<SqlUuid, _>(endpoint.0);

        let row: FastRow = Prepared(params.bind_tail(head)).one_row(&mut conn).await?;
        let admitted = match (row.budgeted, row.todo) {
            (_, Some(todo)) => Admitted::Claimed(Box::new(todo)),
            (false, None) => Admitted::Nothing,
            (true, None) => admit(&mut conn, Form::ById { endpoint, id }, &params).await?,
        };
        match admitted {
            Admitted::Claimed(todo) => {
                Ok(ClaimOutcome::Claimed(Box::new(self.finish_claim(&mut conn, *todo, params.token).await?)))
            }
            Admitted::Deferred(why) => Ok(ClaimOutcome::Deferred(why)),
            Admitted::Nothing => Err(explain_miss(
                &mut conn,
                &Caller::Endpoint(endpoint),
                id,
                None,
                "pending (or failed with its retry due)",
            )
            .await),
        }
    }

    pub(super) async fn finish_claim(
        &self,
        conn: &mut diesel_async::AsyncPgConnection,
        todo: TodoRow,
        lease_token: String,
    ) -> Result<Claimed> {
        let attempt_seq = todo.attempts_total;
        // Only a todo that ran before has history worth a second round trip. The stored
        // rows are all of it: a claimable todo was never completed (`done` is final), so
        // none of its attempts is kept on its row (`todo_attempt_history`'s other part).
        let prior_attempts = if attempt_seq > 1 {
            todo_attempts::table
                .filter(todo_attempts::todo_id.eq(todo.id.0))
                .filter(todo_attempts::seq.lt(attempt_seq))
                .order(todo_attempts::seq.desc())
                .limit(5)
                .select(AttemptRow::as_select())
                .load(conn)
                .await?
        } else {
            Vec::new()
        };
        Ok(Claimed { todo, lease_token, attempt_seq, prior_attempts })
    }
}
