//! Transactions that change state. The store never calls the network: it commits, then
//! emits [`signals`]. Every transition is one conditional statement (or one
//! transaction), so racing instances move a row once.
//!
//! # Lock order
//!
//! Every statement and transaction that locks rows of more than one table takes them in
//! this order, and only in these modes:
//!
//! 1. **the endpoint row** — `FOR NO KEY UPDATE` by whoever ends or guards it
//!    (revocation, the expiry sweep, the hook ceiling, presence), `FOR SHARE` by whoever
//!    adds work that must not outlive it (todo creation, intake, retry now, bulk retry).
//!    Never `FOR UPDATE`: the only plain `UPDATE` of a key column (`rotate_endpoint_token`
//!    changes the unique `token_hash`) is a statement of its own that touches nothing else;
//! 2. **admission budget rows** (`queue_admission`) — `FOR NO KEY UPDATE`, only by a
//!    claim on a budgeted queue (one queue's row; a claim on any queue takes every row of
//!    its endpoint, `ORDER BY queue`), by a resume of an interrupted todo of a budgeted
//!    queue (its queue's row, as a claim by id) and by a change of a budget (one row,
//!    through its `UPDATE` or `INSERT … ON CONFLICT DO UPDATE`). A claim or resume takes
//!    them in a statement of its own *before* anything else, then counts and claims in
//!    the next statement (`todos/admitted.rs`; a batch claim in the next statements, one
//!    per todo, under the same locks). Nobody locks a budget row while holding a
//!    todo row: the unbudgeted claim and resume statements only read the table (and end
//!    before the budgeted path begins), and a budget change reads todos and attempts (to
//!    start its hour window) without locking them;
//! 3. **todo rows** — one row by id, or a batch through `FOR UPDATE … SKIP LOCKED`
//!    (claim-next, also with a `limit`, the reapers, the retry scheduler, bulk retry);
//!    the revocation and expiry cascade locks every live todo of the endpoint in
//!    ascending id order first (its own statement, like the batch verbs), and it holds
//!    nothing a single-row locker waits for. The agent's batch complete and fail wait on rows too:
//!    they lock every row they name in one statement, in ascending id order, before they
//!    write any (`todos/batch`), so two of them, or one and a single-row locker, never
//!    wait on each other in a cycle. Group-committed single completions
//!    (`todos/batch/each.rs`) are one statement that visits its rows in id order (the
//!    items sorted, joined to `todos` by primary key); were a plan ever to take them
//!    otherwise and meet another in a cycle, PostgreSQL aborts one statement, which
//!    changed nothing, and its callers complete alone, one row each
//!    (`service/group_commit.rs`). A batch create inserts its rows in idempotency-key
//!    order, so two racing on the same keys wait on each other's insert in one order;
//! 4. **their attempt rows** (`todo_attempts`), through the todo they belong to: a
//!    history row is inserted by the statement that closes its attempt (or, for a row an
//!    earlier release left open, closed in place through `ON CONFLICT`); a completion
//!    inserts none (its attempt stays on the todo row) and only closes in place a row an
//!    earlier release left open;
//! 5. **deferral counts** (`queue_deferrals`), upserted (`ON CONFLICT … DO UPDATE`) by a
//!    refused claim (or resume) as the last write of its transaction, which holds that
//!    queue's budget row: every writer of a count holds the budget row first, so a count
//!    never waits. Whoever prunes or reads them (the digest, retention) must lock nothing
//!    else while it does.
//!
//! Sinks live apart from that chain: a sink's creation locks its **owner scope row**
//! (`FOR NO KEY UPDATE`, counting the per-owner cap) and then inserts the sink; the
//! replacement of a sink's subscriptions locks **the sink row** (`FOR NO KEY UPDATE`),
//! reads endpoints and webhooks without locking them, then rewrites the subscriptions.
//! Neither takes an endpoint, todo or attempt lock, so neither can meet the chain above.
//!
//! An agent's page of its owner (`notify_owner`, [`crate::sinks::statements::owner_pages`])
//! takes **the endpoint row** `FOR NO KEY UPDATE` (its calls are counted one at a time),
//! reads the todo it names without locking it, then writes its call record and its
//! outbox rows.
//!
//! **Outbox rows** come last: the quarantine trigger (and the revocation cascade) write
//! them while their transaction holds todo rows, folding a repeat into an open row
//! (`ON CONFLICT … DO UPDATE` locks that row); the dead-letter trigger only appends an
//! `outbox_events` row, which locks nothing. The outbox worker claims those (locking
//! event rows `SKIP LOCKED`; it inserts each sink's outbox row, new, once the sink has
//! answered, and deletes a record whose rows are all written), locks a sink row, then that
//! sink's held outbox rows (`SKIP LOCKED`), records answers in one statement per batch
//! (rows it claimed, which no other worker holds unless that claim lapsed), and never
//! locks a todo, endpoint or attempt, so a trigger
//! waiting on an outbox row never waits on a transaction that waits on it.
//!
//! **Digests** live apart too: creating one locks its owner scope row (counting the cap
//! of 5); a scheduler's commit of a send time locks the **digest row** (the conditional
//! `UPDATE … WHERE next_send_at = <due>` that makes it the one instance deciding that
//! time), then inserts its run and its outbox rows (`ON CONFLICT … DO NOTHING`), reading
//! sinks without locking them. A Cairn publication's finish locks the **run row**, then
//! inserts outbox rows. None of them takes an endpoint, todo or attempt lock. Doorbell
//! rings are inserted alone (`ON CONFLICT DO NOTHING`), outside any other transaction.
//!
//! Foreign keys from todos, budgets and deferral counts to the endpoint (`endpoint_id`)
//! make PostgreSQL take `FOR KEY SHARE` on the endpoint row *after* the todo (or budget,
//! or count) row is locked, which is against the order above (a claim does not: it
//! changes no key column, and `claimed_by` / `claimer_endpoint_id` hold no key since
//! migration `cycle_costs`). That is safe only
//! because `FOR KEY SHARE` conflicts with nothing but `FOR UPDATE`, which no statement
//! takes on an endpoint. A revocation that took `FOR UPDATE` deadlocked with claims in
//! flight (pinned by `tests/it/revocation_under_load.rs`).
//!
//! # Plans that do not depend on the statistics
//!
//! A statement about todos it names by id finds them by primary key whatever the
//! planner's statistics say, and closes their attempts through the same ids:
//!
//! - its state test is written `t.state = 'claimed' COLLATE "C"` (or `t.state COLLATE
//!   "C" IN (…)`): equal for a text column under any deterministic collation, but it
//!   proves no partial index's `WHERE state = …`. Without it, statistics taken while no
//!   todo was claimed (an idle queue, a vacuum between bursts) make the partial indexes
//!   of claimed todos (`todos_in_flight_idx`, `todos_lapse_idx`) look empty, the
//!   planner walks one instead of the primary key, and every completion visited every
//!   claimed todo of the endpoint and every dead entry since the last vacuum (in the
//!   throughput benchmark, 1 036 batch completes of 100 over 15 ms averaged 170 ms);
//! - the history row of an attempt a statement closes is written from the todo row as it
//!   was, read with `o.id = $1` (`= ANY($1)` for a batch) beside the join on the moved
//!   row, so that read is a primary-key lookup in any join order (`attempt_close`).

pub mod admission;
pub mod board;
pub mod board_sessions;
pub mod claim_notices;
pub mod dead_letters;
pub mod deliveries;
pub mod endpoints;
pub mod fanout;
pub mod held_work;
pub mod quarantine;
pub mod retention;
pub mod signals;
pub mod tenancy;
pub mod todos;
pub mod webhooks;

use crate::db::statement::statement;
use crate::db::{DbConn, DbPool};
use crate::error::Result;
use signals::{Emitter, Signal};

/// The store: a pool and where to send signals after commit.
#[derive(Clone)]
pub struct Store {
    pub(crate) pool: DbPool,
    pub(crate) emitter: Emitter,
}

statement! {
    static PING = "SELECT 1";
}

impl Store {
    /// A store over `pool` that emits to `emitter`.
    pub fn new(pool: DbPool, emitter: Emitter) -> Self {
        Store { pool, emitter }
    }

    /// The pool (for callers composing their own transactions, such as intake).
    pub fn pool(&self) -> &DbPool {
        &self.pool
    }

    /// The emitter (for callers composing their own transactions).
    pub fn emitter(&self) -> &Emitter {
        &self.emitter
    }

    /// Checks a connection out of the pool.
    pub async fn conn(&self) -> Result<DbConn> {
        Ok(self.pool.get().await?)
    }

    /// Runs a call that commits and then emits on a task of its own, so that the commit
    /// and the signals after it happen together even when the caller stops waiting:
    /// actix-web drops a request's future when its client hangs up, and a dropped
    /// future would leave a committed dead letter unannounced.
    pub(crate) async fn to_completion<T, Fut>(&self, work: impl FnOnce(Store) -> Fut) -> Result<T>
    where
        Fut: std::future::Future<Output = Result<T>> + Send + 'static,
        T: Send + 'static,
    {
        tokio::spawn(work(self.clone()))
            .await
            .map_err(|e| crate::error::Error::internal_from("store task ended early", e))?
    }

    /// Sends what a committed transaction produced.
    pub(crate) fn emit(&self, signals: Vec<Signal>) {
        if !signals.is_empty() {
            self.emitter.emit(signals);
        }
    }

    /// Round-trips the database (readiness).
    pub async fn ping(&self) -> Result<()> {
        use diesel_async::RunQueryDsl;
        let mut conn = self.conn().await?;
        PING.query().execute(&mut conn).await?;
        Ok(())
    }
}
