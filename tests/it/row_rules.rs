//! The rules a stored todo and attempt must keep, enforced by the database itself
//! (migration `row_checks_in_one`: one CHECK per table, calling one function, instead of
//! 19 constraints that every write parsed again; `completed_attempt_on_the_row` added the
//! rules of the attempt a completed todo holds). Each case breaks exactly one rule, so
//! a rule dropped from the function lets its case through.

use crate::harness::{DbSession, TestApp};

/// `check_violation`.
const REFUSED: &str = "23514";

/// Runs each `(rule, SET list)` as an UPDATE of `table` rows matching `row` and expects
/// every one refused as a check violation (and so changing nothing).
async fn each_refused(db: &DbSession, table: &str, row: &str, cases: &[(&str, &str)]) {
    for (rule, set) in cases {
        let sql = format!("UPDATE {table} SET {set} WHERE {row}");
        assert_eq!(db.refusal(&sql).await.as_deref(), Some(REFUSED), "{rule}: {sql}");
    }
}

#[actix_web::test]
async fn every_rule_of_a_todo_row_refuses_a_row_that_breaks_only_it() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let db = app.db.session().await;
    let row = format!("id = '{}'", id.0);
    assert_eq!(db.refusal(&format!("UPDATE todos SET title = 'renamed' WHERE {row}")).await, None, "a valid change");
    each_refused(
        &db,
        "todos",
        &row,
        &[
            ("state is one of the seven", "state = 'asleep'"),
            ("attempt is not negative", "attempt = -1"),
            ("max_attempts is at least 1", "max_attempts = 0"),
            ("max_attempts is at most 100", "max_attempts = 101"),
            ("attempts_total is not negative", "attempts_total = -1"),
            (
                "an interrupt waits at least a second",
                "state = 'input_required', interrupt_expires_at = now(), interrupt_wait_seconds = 0",
            ),
            (
                "an interrupt waits at most a week",
                "state = 'input_required', interrupt_expires_at = now(), interrupt_wait_seconds = 604801",
            ),
            ("a dead reason is one of the four", "state = 'failed', dead_reason = 'bored', dead_lettered_at = now()"),
            ("a quarantine reason is one of the three", "quarantine_reason = 'disliked'"),
            ("a work order is at most 4 096 bytes", "work_order = repeat('x', 4097)"),
            ("a dead letter knows why and when", "state = 'failed'"),
            (
                "a reason and time of death only on a dead letter",
                "dead_reason = 'lease_expired', dead_lettered_at = now()",
            ),
            ("a claimed todo has a lease", "state = 'claimed'"),
            ("only a claimed todo has a lease", "lease_expires_at = now()"),
            ("an interrupted todo has an interrupt lease", "state = 'auth_required'"),
            ("an interrupt lease comes with its wait", "interrupt_wait_seconds = 60"),
            ("only a failed todo has a retry time", "next_retry_at = now()"),
            (
                "only a completed todo holds a closed attempt",
                "attempt_ended_at = now(), attempt_lease_expires_at = now()",
            ),
            ("a held attempt ended with a lease", "state = 'done', attempt_ended_at = now()"),
            ("a held attempt's lease only with its end", "state = 'done', attempt_lease_expires_at = now()"),
            (
                "a held attempt's summary is at most 2 048 bytes",
                "state = 'done', attempt_ended_at = now(), attempt_lease_expires_at = now(), attempt_summary = repeat('x', 2049)",
            ),
            (
                "a held attempt's artifact is at most 512 bytes",
                "state = 'done', attempt_ended_at = now(), attempt_lease_expires_at = now(), attempt_artifact = repeat('x', 513)",
            ),
        ],
    )
    .await;
    assert_eq!(db.count(&format!("SELECT count(*) FROM todos WHERE {row} AND state = 'pending'")).await, 1);
    let held = "state = 'done', attempt_ended_at = now(), attempt_lease_expires_at = now(), \
                attempt_summary = repeat('x', 2048), attempt_artifact = repeat('x', 512)";
    assert_eq!(db.refusal(&format!("UPDATE todos SET {held} WHERE {row}")).await, None, "a completed todo's attempt");
}

#[actix_web::test]
async fn every_rule_of_an_attempt_row_refuses_a_row_that_breaks_only_it() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let db = app.db.session().await;
    assert_eq!(
        db.refusal(&format!(
            "INSERT INTO todo_attempts (todo_id, seq, claimed_at, lease_expires_at, ended_at, outcome, disposition) \
             VALUES ('{}', 1, now(), now(), now(), 'completed', 'done')",
            id.0
        ))
        .await,
        None,
        "a valid closed attempt"
    );
    let row = format!("todo_id = '{}' AND seq = 1", id.0);
    each_refused(
        &db,
        "todo_attempts",
        &row,
        &[
            ("seq counts from 1", "seq = 0"),
            ("an outcome is one of the eight", "outcome = 'vanished'"),
            ("a disposition is one of the five", "disposition = 'mislaid'"),
            ("a summary is at most 2 048 bytes", "summary = repeat('x', 2049)"),
            ("an artifact is at most 512 bytes", "artifact = repeat('x', 513)"),
            ("closed is when, how and to what effect together", "ended_at = NULL"),
            ("open is none of them", "ended_at = NULL, outcome = NULL"),
        ],
    )
    .await;
    assert_eq!(db.refusal(&format!("UPDATE todo_attempts SET summary = 'fine' WHERE {row}")).await, None);
}

/// What the cycle's cost depends on: PostgreSQL prepares every CHECK constraint of a
/// table again for each statement that writes it.
#[actix_web::test]
async fn the_tables_a_claim_cycle_writes_carry_one_validated_check_each() {
    let app = TestApp::spawn().await;
    let db = app.db.session().await;
    for table in ["todos", "todo_attempts"] {
        let sql = format!(
            "SELECT count(*) FROM pg_constraint WHERE conrelid = '{table}'::regclass AND contype = 'c' AND convalidated"
        );
        assert_eq!(db.count(&sql).await, 1, "{table}");
        let all = format!("SELECT count(*) FROM pg_constraint WHERE conrelid = '{table}'::regclass AND contype = 'c'");
        assert_eq!(db.count(&all).await, 1, "{table}");
    }
}
