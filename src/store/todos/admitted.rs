//! Claiming under an admission budget (SPEC section 11), exactly, across instances; and
//! resuming an interrupted todo under one, which puts work back in flight as a claim does.
//!
//! One transaction of two statements:
//!
//! 1. lock the budget rows the claim may take from (`queue_admission`, `FOR NO KEY
//!    UPDATE`: one queue's row, or every row of the endpoint in queue order for a claim on
//!    any queue);
//! 2. in one statement, with a snapshot taken *after* the locks were granted (READ
//!    COMMITTED takes one per statement), so it sees every claim committed by whoever
//!    held them before: decide each locked queue's verdict (paused; `max_in_flight` of
//!    its todos claimed; `per_hour` claims admitted in this clock hour), claim the oldest
//!    pending todo of a queue that admits it, count the claim in its queue's hour
//!    window, or, when a refusal held back pending work, count the deferral in
//!    `queue_deferrals` and answer its reason.
//!
//! Counting in the statement that took the lock would not do: its snapshot predates the
//! wait, so two claimers queued on the lock would both count the same in-flight todos.
//! The lock order is in [`crate::store`]'s documentation.

use crate::db::one_row::OneRow;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::{Bytea, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::claim_parts::{CLAIM_CTES, CLAIMABLE, ClaimParams, RESUMABLE};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::admission::Deferral;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::{Error, Result};

/// Which claim is being admitted.
#[derive(Debug, Clone, Copy)]
pub(super) enum Form<'q> {
    /// Claim-next on one queue.
    Queue {
        /// The claiming endpoint.
        endpoint: EndpointId,
        /// The queue.
        queue: &'q str,
    },
    /// Claim-next on any queue of the endpoint.
    AnyQueue {
        /// The claiming endpoint.
        endpoint: EndpointId,
    },
    /// Claim of one todo.
    ById {
        /// The claiming endpoint.
        endpoint: EndpointId,
        /// The todo.
        id: TodoId,
    },
}

impl<'q> Form<'q> {
    /// The form of a claim-next by `endpoint`: on `queue`, or on any of its queues.
    pub(super) fn next(endpoint: EndpointId, queue: Option<&'q str>) -> Self {
        match queue {
            Some(queue) => Form::Queue { endpoint, queue },
            None => Form::AnyQueue { endpoint },
        }
    }
}

/// What the budgeted claim came to.
#[derive(Debug)]
pub(super) enum Admitted {
    /// This todo was claimed (or, for a resume, is back in flight).
    Claimed(Box<TodoRow>),
    /// Nothing was there to claim (or, by id, the todo was not claimable).
    Nothing,
    /// A budget held back work that was there; the deferral is counted.
    Deferred(Deferral),
}

/// The admission statement's one row.
#[derive(QueryableByName)]
struct AdmittedRow {
    #[diesel(sql_type = Nullable<Text>)]
    deferred: Option<Deferral>,
    #[diesel(embed)]
    todo: Option<TodoRow>,
}

impl From<AdmittedRow> for Admitted {
    fn from(row: AdmittedRow) -> Self {
        match (row.todo, row.deferred) {
            (Some(todo), _) => Admitted::Claimed(Box::new(todo)),
            (None, Some(why)) => Admitted::Deferred(why),
            (None, None) => Admitted::Nothing,
        }
    }
}

/// The clock hour (UTC) windows and deferral counts belong to.
const HOUR: &str = "date_trunc('hour', now(), 'UTC')";

/// The verdict of each budget row `filter` selects (alias `a`), and those that refuse.
/// In flight is counted on `todos_in_flight_idx`, at most `max_in_flight` entries.
fn verdicts(filter: &str) -> String {
    format!(
        "adm AS (SELECT a.queue, CASE \
             WHEN a.paused THEN 'paused' \
             WHEN a.max_in_flight IS NOT NULL AND (SELECT count(*) FROM (SELECT 1 FROM todos f \
                 WHERE f.endpoint_id = a.endpoint_id AND f.queue = a.queue AND f.state = 'claimed' \
                 LIMIT a.max_in_flight) x) >= a.max_in_flight THEN 'in_flight_full' \
             WHEN a.per_hour IS NOT NULL AND a.window_hour = {HOUR} AND a.window_claims >= a.per_hour \
               THEN 'window_exhausted' \
           END AS refusal \
           FROM queue_admission a WHERE {filter}), \
         refused AS (SELECT queue, refusal FROM adm WHERE refusal IS NOT NULL)"
    )
}

/// After the candidate and the claim: the claim counted in its queue's window, the
/// refusal that held back work (`held`, from `held_select`) counted per queue, hour and
/// reason, and the one answer row. `{e}` is the endpoint's parameter.
fn tail(e: &str, held_select: &str) -> String {
    format!(
        "windowed AS (UPDATE queue_admission a SET \
             window_claims = CASE WHEN a.window_hour = {HOUR} THEN a.window_claims + 1 ELSE 1 END, \
             window_hour = {HOUR} \
           FROM claimed c WHERE a.endpoint_id = c.endpoint_id AND a.queue = c.queue), \
         held AS ({held_select}), \
         counted AS (INSERT INTO queue_deferrals AS d (endpoint_id, queue, hour, reason, count) \
           SELECT {e}, queue, {HOUR}, refusal, 1 FROM held \
           ON CONFLICT (endpoint_id, queue, hour, reason) DO UPDATE SET count = d.count + 1) \
         SELECT (SELECT refusal FROM held) AS deferred, c.* FROM (SELECT 1) one LEFT JOIN claimed c ON true"
    )
}

/// The refusal holding back the oldest pending todo among the refused queues, when
/// nothing was claimed. `$1` is the endpoint.
const HELD_OLDEST: &str = "SELECT r.queue, r.refusal FROM refused r \
    CROSS JOIN LATERAL (SELECT p.created_at, p.id FROM todos p \
      WHERE p.endpoint_id = $1 AND p.queue = r.queue AND p.state = 'pending' \
      ORDER BY p.created_at, p.id LIMIT 1) o \
    WHERE NOT EXISTS (SELECT 1 FROM claimed) ORDER BY o.created_at, o.id LIMIT 1";

/// Claim-next on one queue (`$1` endpoint, `$2` queue).
fn on_queue() -> String {
    format!(
        "WITH {}, \
         candidate AS (SELECT id FROM todos WHERE endpoint_id = $1 AND state = 'pending' AND queue = $2 \
           AND NOT EXISTS (SELECT 1 FROM refused) ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED), \
         {CLAIM_CTES}, {}",
        verdicts("a.endpoint_id = $1 AND a.queue = $2"),
        tail("$1", HELD_OLDEST)
    )
}

/// Claim-next on any queue (`$1` endpoint, `$2` null). Every queue with pending work is
/// found by a loose scan of `todos_claim_queue_idx` (one probe per queue), and the head
/// of each queue that admits a claim is locked (`SKIP LOCKED`); the oldest head is
/// claimed. Walking the any-queue index instead would step over every pending todo of
/// a paused queue's backlog on every claim.
fn on_any_queue() -> String {
    format!(
        "WITH RECURSIVE {}, \
         queues AS ( \
           SELECT min(queue) AS queue FROM todos WHERE endpoint_id = $1 AND state = 'pending' AND $2::text IS NULL \
           UNION ALL \
           SELECT (SELECT min(t.queue) FROM todos t WHERE t.endpoint_id = $1 AND t.state = 'pending' \
             AND t.queue > q.queue) FROM queues q WHERE q.queue IS NOT NULL), \
         heads AS (SELECT h.id, h.created_at FROM queues q \
           CROSS JOIN LATERAL (SELECT t.id, t.created_at FROM todos t \
             WHERE t.endpoint_id = $1 AND t.state = 'pending' AND t.queue = q.queue \
             ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE SKIP LOCKED) h \
           WHERE q.queue IS NOT NULL AND q.queue <> 'quarantine' \
             AND NOT EXISTS (SELECT 1 FROM refused r WHERE r.queue = q.queue)), \
         candidate AS (SELECT id FROM heads ORDER BY created_at, id LIMIT 1), \
         {CLAIM_CTES}, {}",
        verdicts("a.endpoint_id = $1 AND $2::text IS NULL"),
        tail("$1", HELD_OLDEST)
    )
}

/// Claim of one todo (`$1` todo, `$2` endpoint).
fn by_id() -> String {
    let held = format!(
        "SELECT r.queue, r.refusal FROM refused r JOIN todos t ON t.queue = r.queue \
         WHERE t.id = $1 AND t.endpoint_id = $2 AND {CLAIMABLE} AND NOT EXISTS (SELECT 1 FROM claimed)"
    );
    format!(
        "WITH {}, \
         candidate AS (SELECT t.id FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' \
           AND {CLAIMABLE} AND NOT EXISTS (SELECT 1 FROM refused r WHERE r.queue = t.queue) FOR UPDATE OF t), \
         {CLAIM_CTES}, {}",
        verdicts(
            "a.endpoint_id = $2 AND a.queue = (SELECT t.queue FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2)"
        ),
        tail("$2", &held)
    )
}

/// Resume of one interrupted todo (`$1` todo, `$2` endpoint, `$3` lease seconds, `$4` the
/// lease token's hash or null). Putting the todo back in flight is judged as a claim of
/// its queue is: paused, `max_in_flight` (the interrupted todo is not counted until it is
/// claimed again) and `per_hour` (a resume starts work again, so it takes from the window
/// like a claim; no attempt opens, the interrupted attempt goes on). A refusal leaves the
/// todo interrupted under its interrupt lease and is counted like a refused claim's.
fn resume() -> String {
    let held = format!(
        "SELECT r.queue, r.refusal FROM refused r JOIN todos t ON t.queue = r.queue \
         WHERE t.id = $1 AND t.endpoint_id = $2 AND {RESUMABLE} AND NOT EXISTS (SELECT 1 FROM claimed)"
    );
    format!(
        "WITH {}, \
         claimed AS (UPDATE todos t SET state = 'claimed', lease_expires_at = now() + $3 * interval '1 second', \
             interrupt_expires_at = NULL, interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
             attempt_heartbeat_at = now(), updated_at = now() \
           WHERE t.id = $1 AND t.endpoint_id = $2 AND {RESUMABLE} \
             AND NOT EXISTS (SELECT 1 FROM refused r WHERE r.queue = t.queue) \
           RETURNING t.*), \
         {}",
        verdicts(
            "a.endpoint_id = $2 AND a.queue = (SELECT t.queue FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2)"
        ),
        tail("$2", &held)
    )
}

statement! {
    /// Claim-next on one queue under its budget ([`on_queue`]).
    static ON_QUEUE = built(on_queue);
    /// Claim-next on any queue under their budgets ([`on_any_queue`]).
    static ON_ANY_QUEUE = built(on_any_queue);
    /// Claim of one todo under its queue's budget ([`by_id`]).
    static BY_ID = built(by_id);
    /// Resume under the queue's budget ([`resume`]).
    static RESUME = built(resume);
    /// Step 1 of a claim-next on one queue: its budget row (`$1` endpoint, `$2` queue).
    static LOCK_QUEUE = "SELECT 1 FROM queue_admission WHERE endpoint_id = $1 AND queue = $2 FOR NO KEY UPDATE";
    /// Step 1 of a claim-next on any queue: every budget row of endpoint `$1`, in queue
    /// order.
    static LOCK_ANY_QUEUE = "SELECT 1 FROM queue_admission WHERE endpoint_id = $1 ORDER BY queue FOR NO KEY UPDATE";
    /// Step 1 of a claim (or resume) by id: the budget row of todo `$1`'s queue (`$2`
    /// endpoint).
    static LOCK_BY_ID = "SELECT 1 FROM queue_admission a JOIN todos t ON t.endpoint_id = a.endpoint_id AND t.queue = a.queue \
             WHERE t.id = $1 AND t.endpoint_id = $2 FOR NO KEY UPDATE OF a";
}

/// Locks the budget rows `form` may claim under (step 1).
pub(super) async fn lock_budgets(conn: &mut AsyncPgConnection, form: Form<'_>) -> Result<()> {
    let q = match form {
        Form::Queue { endpoint, queue } => {
            LOCK_QUEUE.query().into_boxed::<Pg>().bind::<SqlUuid, _>(endpoint.0).bind::<Text, _>(queue)
        }
        Form::AnyQueue { endpoint } => LOCK_ANY_QUEUE.query().into_boxed::<Pg>().bind::<SqlUuid, _>(endpoint.0),
        Form::ById { endpoint, id } => {
            LOCK_BY_ID.query().into_boxed::<Pg>().bind::<SqlUuid, _>(id.0).bind::<SqlUuid, _>(endpoint.0)
        }
    };
    Prepared(q).execute(conn).await?;
    Ok(())
}

/// Claims under the budgets `form` names, in one transaction (see the module's
/// documentation). A budget removed meanwhile simply admits the claim.
pub(super) async fn admit(conn: &mut AsyncPgConnection, form: Form<'_>, params: &ClaimParams) -> Result<Admitted> {
    conn.transaction::<_, Error, _>(async move |conn| {
        lock_budgets(conn, form).await?;
        admit_locked(conn, form, params).await
    })
    .await
}

/// Step 2 alone: judges and claims (or counts the refusal) in one statement, inside a
/// transaction that already holds the budget rows of `form` ([`lock_budgets`]). A batch
/// claim runs it once per todo under one lock (`super::batch::claim`): each statement's
/// snapshot sees the claims before it.
pub(super) async fn admit_locked(
    conn: &mut AsyncPgConnection,
    form: Form<'_>,
    params: &ClaimParams,
) -> Result<Admitted> {
    let head = match form {
        Form::Queue { endpoint, queue } => {
            ON_QUEUE.query().into_boxed::<Pg>().bind::<SqlUuid, _>(endpoint.0).bind::<Nullable<Text>, _>(Some(queue))
        }
        Form::AnyQueue { endpoint } => ON_ANY_QUEUE
            .query()
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Text>, _>(None::<&str>),
        Form::ById { endpoint, id } => {
            BY_ID.query().into_boxed::<Pg>().bind::<SqlUuid, _>(id.0).bind::<SqlUuid, _>(endpoint.0)
        }
    };
    let row: AdmittedRow = Prepared(params.bind_tail(head)).one_row(conn).await?;
    Ok(row.into())
}

/// Resumes an interrupted todo under its queue's budget, in one transaction as a claim
/// (the budget row locked first, then judged and resumed in one statement): `Claimed`
/// when the todo is back in flight, `Deferred` when the budget refused it (the todo stays
/// interrupted and the refusal is counted), `Nothing` when it was not resumable.
pub(super) async fn admit_resume(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    id: TodoId,
    lease: i32,
    token_hash: Option<[u8; 32]>,
) -> Result<Admitted> {
    conn.transaction::<_, Error, _>(async move |conn| {
        lock_budgets(conn, Form::ById { endpoint, id }).await?;
        let q = RESUME
            .query()
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(id.0)
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Int4, _>(lease)
            .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec()));
        let row: AdmittedRow = Prepared(q).one_row(conn).await?;
        Ok(row.into())
    })
    .await
}
