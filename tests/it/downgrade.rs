//! Down migrations that move data between tables while an instance of the older
//! release may still be writing: what a writer commits during the move is moved too.

use std::time::Duration;

use crate::harness::wait::wait_for_blocked;
use crate::harness::{DbSession, TestDb};

const DOWN_000036: &str = include_str!("../../migrations/2026-12-04-000036_completed_attempt_rules_validated/down.sql");
const DOWN_000035: &str = include_str!("../../migrations/2026-12-04-000035_completed_attempt_on_the_row/down.sql");
const DOWN_000034: &str = include_str!("../../migrations/2026-12-03-000034_attempt_written_at_close/down.sql");

/// `000034`'s down migration copies every attempt open on a todo row into a history row,
/// then drops the row's attempt columns. A claim that commits while the copy runs (made
/// by a release that keeps the open attempt on the row) must reach the history too, not
/// vanish with the columns.
#[actix_web::test]
async fn a_claim_committed_while_open_attempts_move_back_to_rows_keeps_its_attempt() {
    let (app, _owner, ep) = crate::harness::TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.stop().await;
    // A claim of the release before `000035`.
    let claim = format!(
        "UPDATE todos SET state = 'claimed', attempt = attempt + 1, attempts_total = attempts_total + 1, \
         claimed_by = endpoint_id, lease_expires_at = now() + interval '5 minutes', claimed_at = now(), \
         attempt_claimant = 'racing-claim', updated_at = now() WHERE id = '{}'",
        id.0
    );
    let after = down_beside_an_open_write(&app.db, &[DOWN_000036, DOWN_000035], &claim, DOWN_000034).await;
    let kept = format!(
        "SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' AND seq = 1 AND claimant = 'racing-claim' \
         AND ended_at IS NULL",
        id.0
    );
    assert_eq!(after.count(&kept).await, 1, "the claim's open attempt is a history row");
}

/// `000035`'s down migration copies the attempt each completed todo holds into a history
/// row, then drops those columns: a completion committed while the copy runs keeps its
/// attempt too.
#[actix_web::test]
async fn a_completion_committed_while_closed_attempts_move_back_to_rows_keeps_its_attempt() {
    let (app, _owner, ep) = crate::harness::TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    assert!(app.claim_next(&ep).await["lease_token"].is_string(), "claimed");
    app.stop().await;
    // A completion of the release that keeps the closed attempt on the row.
    let complete = format!(
        "UPDATE todos SET state = 'done', attempt_ended_at = now(), attempt_lease_expires_at = lease_expires_at, \
         lease_expires_at = NULL, lease_token_hash = NULL, attempt_summary = 'racing-completion', updated_at = now() \
         WHERE id = '{}'",
        id.0
    );
    let after = down_beside_an_open_write(&app.db, &[DOWN_000036], &complete, DOWN_000035).await;
    let kept = format!(
        "SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' AND seq = 1 AND outcome = 'completed' \
         AND summary = 'racing-completion' AND ended_at IS NOT NULL",
        id.0
    );
    assert_eq!(after.count(&kept).await, 1, "the completed attempt is a history row");
}

/// Runs the `before` down migrations, then `down` while `write` is open in another
/// transaction: the write commits once the migration waits on a lock (at its LOCK, or,
/// without one, at the column drop after a copy that could not see the write). Returns
/// a session for looking at the result.
async fn down_beside_an_open_write(db: &TestDb, before: &[&str], write: &str, down: &str) -> DbSession {
    let schema = db.session().await;
    for step in before {
        assert_eq!(schema.refusal(&format!("BEGIN; {step}; COMMIT")).await, None);
    }
    let writer = db.session().await;
    assert_eq!(writer.refusal(&format!("BEGIN; {write}")).await, None);
    let down = format!("BEGIN; {down}; COMMIT");
    let migrating = actix_rt::spawn(async move { schema.refusal(&down).await });

    // The down migration waits for the open write.
    wait_for_blocked(db, 1, Duration::from_secs(20)).await;
    let watcher = db.session().await;
    assert_eq!(writer.refusal("COMMIT").await, None);
    assert_eq!(migrating.await.expect("the migration task"), None, "the down migration ran");
    watcher
}
