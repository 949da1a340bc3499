//! Down migrations that move data between tables while an instance of the older
//! release may still be writing: what a writer commits during the move is moved too.

use std::time::{Duration, Instant};

use crate::harness::{DbSession, TestApp};

const DOWN_000036: &str = include_str!("../../migrations/2026-12-04-000036_completed_attempt_rules_validated/down.sql");
const DOWN_000035: &str = include_str!("../../migrations/2026-12-04-000035_completed_attempt_on_the_row/down.sql");
const DOWN_000034: &str = include_str!("../../migrations/2026-12-03-000034_attempt_written_at_close/down.sql");

/// `000034`'s down migration copies every attempt open on a todo row into a history row,
/// then drops the row's attempt columns. A claim that commits while the copy runs (made
/// by a release that keeps the open attempt on the row) must reach the history too, not
/// vanish with the columns.
#[actix_web::test]
async fn a_claim_committed_while_open_attempts_move_back_to_rows_keeps_its_attempt() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.stop().await;
    let schema = app.db.session().await;
    assert_eq!(schema.refusal(&format!("BEGIN; {DOWN_000036}; {DOWN_000035}; COMMIT")).await, None);

    // A claim of the release before `000035`, left uncommitted.
    let claimer = app.db.session().await;
    let claim = format!(
        "BEGIN; UPDATE todos SET state = 'claimed', attempt = attempt + 1, attempts_total = attempts_total + 1, \
         claimed_by = endpoint_id, lease_expires_at = now() + interval '5 minutes', claimed_at = now(), \
         attempt_claimant = 'racing-claim', updated_at = now() WHERE id = '{}'",
        id.0
    );
    assert_eq!(claimer.refusal(&claim).await, None);

    let down = actix_rt::spawn(async move { schema.refusal(&format!("BEGIN; {DOWN_000034}; COMMIT")).await });
    // The migration waits on the claim's lock (at its LOCK, or without one at the DROP
    // COLUMN, after a copy that could not see the claim).
    let watcher = app.db.session().await;
    wait_for_a_lock_wait(&watcher).await;
    assert_eq!(claimer.refusal("COMMIT").await, None);
    assert_eq!(down.await.expect("the migration task"), None, "the down migration ran");

    let kept = format!(
        "SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' AND seq = 1 AND claimant = 'racing-claim' \
         AND ended_at IS NULL",
        id.0
    );
    assert_eq!(watcher.count(&kept).await, 1, "the claim's open attempt is a history row");
}

/// `000035`'s down migration copies the attempt each completed todo holds into a history
/// row, then drops those columns: a completion committed while the copy runs keeps its
/// attempt too.
#[actix_web::test]
async fn a_completion_committed_while_closed_attempts_move_back_to_rows_keeps_its_attempt() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    assert!(app.claim_next(&ep).await["lease_token"].is_string(), "claimed");
    app.stop().await;
    let schema = app.db.session().await;
    assert_eq!(schema.refusal(&format!("BEGIN; {DOWN_000036}; COMMIT")).await, None);

    // A completion of the release that keeps the closed attempt on the row, uncommitted.
    let completer = app.db.session().await;
    let complete = format!(
        "BEGIN; UPDATE todos SET state = 'done', attempt_ended_at = now(), attempt_lease_expires_at = lease_expires_at, \
         lease_expires_at = NULL, lease_token_hash = NULL, attempt_summary = 'racing-completion', updated_at = now() \
         WHERE id = '{}'",
        id.0
    );
    assert_eq!(completer.refusal(&complete).await, None);

    let down = actix_rt::spawn(async move { schema.refusal(&format!("BEGIN; {DOWN_000035}; COMMIT")).await });
    let watcher = app.db.session().await;
    wait_for_a_lock_wait(&watcher).await;
    assert_eq!(completer.refusal("COMMIT").await, None);
    assert_eq!(down.await.expect("the migration task"), None, "the down migration ran");

    let kept = format!(
        "SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' AND seq = 1 AND outcome = 'completed' \
         AND summary = 'racing-completion' AND ended_at IS NOT NULL",
        id.0
    );
    assert_eq!(watcher.count(&kept).await, 1, "the completed attempt is a history row");
}

/// Returns once a session of the test's database waits on a lock.
async fn wait_for_a_lock_wait(watcher: &DbSession) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while watcher
        .count("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
        .await
        == 0
    {
        assert!(Instant::now() < deadline, "the down migration never waited for the open write");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
