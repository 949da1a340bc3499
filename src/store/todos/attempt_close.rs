//! Where an attempt's history row is written: once, by the statement that closes the
//! attempt. While an attempt is open the todo row holds it (`attempts_total` is its
//! number; `claimed_at`, the lease or interrupt lease, `attempt_claimant`,
//! `attempt_relay` and `attempt_heartbeat_at` its facts), so a claim writes one row and
//! a fail or release two (the todo and the history row) instead of a claim inserting an
//! open attempt that a heartbeat, an interrupt, a resume and the close each update again
//! (migration `attempt_written_at_close`; issue 14, less database work per cycle).
//!
//! A completion writes no history row at all: it is final, so the attempt it closes is
//! the todo's last, and its facts stay on the todo row the completion writes anyway
//! ([`completed_on_row`], migration `completed_attempt_on_the_row`). The view
//! `todo_attempt_history` puts the two together for a reader that names one todo (a
//! todo's detail). A reader that joins many todos (the doorbell check below, the
//! admission seed) tests the todo row itself instead: PostgreSQL cannot probe the view's
//! second branch by key from a join, and would read it whole.

/// The CTE `closed` of a statement whose CTE `moved` (a data-modifying CTE over
/// `todos`) ended attempts: for each moved todo that had one open, its history row,
/// returned as the signals' final attempt (`todo_id, seq, outcome, summary, artifact,
/// ended_at`).
///
/// - `key`: a condition on `o.id` naming the statement's todos by key (`= $1`,
///   `= ANY($1)`), so that the read of the rows as they were is a primary-key lookup in
///   any plan;
/// - `join`: further joins (the batch verbs' items, alias `i`), or empty;
/// - `ended`: the SQL of `outcome, disposition, summary, summary_truncated, artifact`.
///
/// The open attempt's facts are read from the todo row as it was when the statement
/// began (`todos o`: the statement's own changes are not visible to its other parts),
/// since the move clears the lease. A heartbeat that committed between that moment and
/// the move's lock is the one thing such a read misses: the history then keeps the
/// lease and heartbeat time before it.
///
/// An attempt opened before this migration (or by an earlier release still running
/// beside this one) already has an open history row: it is closed in place (`ON
/// CONFLICT`) instead, with the lease and heartbeat the todo row holds.
pub(crate) fn closed_cte(key: &str, join: &str, ended: &str) -> String {
    format!(
        "closed AS ( \
           INSERT INTO todo_attempts AS a (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, \
             last_heartbeat_at, lease_expires_at, ended_at, outcome, disposition, summary, summary_truncated, artifact) \
           SELECT o.id, o.attempts_total, o.endpoint_id, o.attempt_claimant, o.attempt_relay, o.claimed_at, \
             o.attempt_heartbeat_at, COALESCE(o.lease_expires_at, o.interrupt_expires_at), now(), {ended} \
           FROM moved m JOIN todos o ON o.id = m.id AND o.id {key}{join} \
           WHERE {OPEN} \
           ON CONFLICT (todo_id, seq) DO UPDATE SET ended_at = EXCLUDED.ended_at, outcome = EXCLUDED.outcome, \
             disposition = EXCLUDED.disposition, summary = EXCLUDED.summary, \
             summary_truncated = EXCLUDED.summary_truncated, artifact = EXCLUDED.artifact, \
             lease_expires_at = EXCLUDED.lease_expires_at, \
             last_heartbeat_at = COALESCE(EXCLUDED.last_heartbeat_at, a.last_heartbeat_at) \
             WHERE a.ended_at IS NULL \
           RETURNING a.todo_id, a.seq, a.outcome, a.summary, a.artifact, a.ended_at)"
    )
}

/// The SET items of a completion (on `todos t`) that keep the attempt it closes on the
/// row: `report` is the SQL of the agent's summary, whether it was cut, and artifact. Read
/// from the row as it was (`t.lease_expires_at` before the SET clears it).
pub(crate) fn completed_on_row(report: [&str; 3]) -> String {
    let [summary, truncated, artifact] = report;
    format!(
        "attempt_ended_at = now(), attempt_lease_expires_at = t.lease_expires_at, attempt_summary = {summary}, \
         attempt_summary_truncated = {truncated}, attempt_artifact = {artifact}"
    )
}

/// The CTE `closed` of a completion (CTE `moved`, as for [`closed_cte`]): an attempt an
/// earlier release opened as a history row is closed in place; with no such row (every
/// attempt this release opens) it looks up the todo and the history row by key and
/// writes nothing.
/// `report` is the SQL of the agent's summary, whether it was cut, and artifact.
pub(crate) fn closed_in_place_cte(key: &str, join: &str, report: [&str; 3]) -> String {
    let [summary, truncated, artifact] = report;
    format!(
        "closed AS ( \
           UPDATE todo_attempts a SET ended_at = now(), outcome = 'completed', disposition = 'done', \
             summary = {summary}, summary_truncated = {truncated}, artifact = {artifact}, \
             lease_expires_at = COALESCE(o.lease_expires_at, o.interrupt_expires_at), \
             last_heartbeat_at = COALESCE(o.attempt_heartbeat_at, a.last_heartbeat_at) \
           FROM moved m JOIN todos o ON o.id = m.id AND o.id {key}{join} \
           WHERE a.todo_id = o.id AND a.seq = o.attempts_total AND a.ended_at IS NULL AND {OPEN} \
           RETURNING a.todo_id)"
    )
}

/// Whether the todo aliased `o` holds an open attempt: claimed or interrupted after a
/// claim (as [`crate::db::models::TodoRow::open_attempt`] judges it). `COLLATE "C"`
/// keeps the planner from proving `todos_lapse_idx`'s predicate with it (store/mod.rs,
/// plans that do not depend on the statistics).
const OPEN: &str = "o.state COLLATE \"C\" IN ('claimed', 'input_required', 'auth_required') \
    AND o.claimed_at IS NOT NULL AND o.attempts_total >= 1";

/// Whether the todo aliased `$t` holds an attempt on its own row, with no history row
/// for it (unless an earlier release wrote one): open (claimed, or interrupted after a
/// claim), or closed by its completion ([`completed_on_row`]). What the view
/// `todo_attempt_history` adds to the stored rows, for readers that join many todos and
/// so cannot read the view by key (the doorbell check, the admission seed).
macro_rules! holds_attempt_sql {
    ($t:literal) => {
        concat!(
            "(",
            $t,
            ".state COLLATE \"C\" IN ('claimed', 'input_required', 'auth_required') OR ",
            $t,
            ".attempt_ended_at IS NOT NULL)"
        )
    };
}
pub(crate) use holds_attempt_sql;

/// Whether the todo whose id is the SQL `$todo` was claimed at or before the SQL
/// `$deadline`: by an attempt in its history, or by the attempt its row holds
/// ([`holds_attempt_sql`]).
macro_rules! claimed_by_sql {
    ($todo:literal, $deadline:literal) => {
        concat!(
            "(EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = ",
            $todo,
            " AND a.claimed_at <= ",
            $deadline,
            ") OR EXISTS (SELECT 1 FROM todos h WHERE h.id = ",
            $todo,
            " AND ",
            $crate::store::todos::holds_attempt_sql!("h"),
            " AND h.claimed_at <= ",
            $deadline,
            "))"
        )
    };
}
pub(crate) use claimed_by_sql;
