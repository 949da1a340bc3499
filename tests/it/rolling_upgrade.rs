//! A rolling upgrade: this release keeps serving while a newer release's migration
//! changes a table under it.

use futures_util::future::join_all;

use crate::db_restart::{Seen, cycle};
use crate::harness::TestApp;
use serde_json::json;
use switchboard::domain::ids::TodoId;

/// Concurrent agents: enough to have several pooled connections prepare the hot
/// statements before the schema changes.
const AGENTS: usize = 4;

#[actix_web::test]
async fn a_running_instance_keeps_serving_when_a_newer_release_adds_a_column_to_todos() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let mut agents = Vec::new();
    for i in 0..AGENTS {
        agents.push(app.agent(owner.scope, &format!("agent-{i}")).await);
    }
    let seen = Seen::default();
    let warm = join_all(agents.iter().map(|ep| async { cycle(&app, ep, &seen).await })).await;
    assert!(warm.iter().all(|ok| *ok), "{:?}", seen.statuses.take());

    // What an additive migration of the next release does while this one runs.
    app.db.exec("ALTER TABLE todos ADD COLUMN added_by_a_newer_release integer").await;

    let mut last = Vec::new();
    for _ in 0..6 {
        last = join_all(agents.iter().map(|ep| cycle(&app, ep, &seen))).await;
    }
    let statuses = seen.statuses.take();
    let errors: Vec<_> = statuses.iter().filter(|(_, s, _)| *s >= 500 && *s != 503).collect();
    assert!(errors.is_empty(), "{} server errors other than 503, e.g. {:?}", errors.len(), errors.first());
    assert!(last.iter().all(|ok| *ok), "agents still failing after the change: {:?}", &statuses[statuses.len() - 6..]);
}

/// An earlier release stored an attempt as an open row when it claimed; this release
/// keeps the open attempt on the todo row, and a completion keeps the attempt it closes
/// there too. A todo claimed by the earlier release and completed by this one (alone or
/// in a batch) ends with that one row, closed in place with the agent's report, and the
/// detail shows the attempt once, open and then closed.
///
/// An earlier release's claim after this release's (`attempt_on_row` then names an older
/// attempt) is closed in place too: the completion's one-statement path takes only the
/// attempt the row says this release opened.
#[actix_web::test]
async fn an_attempt_an_earlier_release_opened_as_a_row_is_closed_in_place() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    for batch in [false, true] {
        let id = app.create_todo(&ep, "q", "t").await;
        let claim = app.claim_next(&ep).await;
        let token = claim["lease_token"].as_str().expect("a claim").to_owned();
        // What the earlier release's claim wrote beside the todo row, and what it left on
        // the row: it never writes `attempt_on_row` (a fresh todo's is empty).
        app.db.exec(&format!("UPDATE todos SET attempt_on_row = NULL WHERE id = '{}'", id.0)).await;
        open_history_row_as_the_earlier_release(&app, id).await;
        let (status, detail) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
        assert_eq!(status, actix_web::http::StatusCode::OK, "{detail}");
        let attempts = detail["attempts"].as_array().expect("attempts");
        assert_eq!(attempts.len(), 1, "the open attempt shown once: {detail}");
        let report = json!({"lease_token": token, "summary": format!("batch {batch}"), "artifact": "mcp://cairn/up"});
        let (status, body) = match batch {
            false => app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, report).await,
            true => {
                let mut item = report;
                item["id"] = json!(id.to_string());
                app.post("/api/v1/agent/todos/complete", &ep.token, json!({"items": [item]})).await
            }
        };
        assert_eq!(status, actix_web::http::StatusCode::OK, "{body}");
        let rows = |cond: &str| format!("SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' {cond}", id.0);
        assert_eq!(app.db.count(&rows("")).await, 1, "one row for the one attempt");
        let closed = format!(
            "AND outcome = 'completed' AND disposition = 'done' AND claimant = 'earlier-release' \
             AND summary = 'batch {batch}' AND artifact = 'mcp://cairn/up' AND ended_at IS NOT NULL"
        );
        assert_eq!(app.db.count(&rows(&closed)).await, 1, "closed in place with the report (batch: {batch})");
        let history = format!("SELECT count(*) FROM todo_attempt_history WHERE todo_id = '{}'", id.0);
        assert_eq!(app.db.count(&history).await, 1, "the whole history holds the attempt once");
        let (_, detail) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
        let attempts = detail["attempts"].as_array().expect("attempts");
        assert_eq!(attempts.len(), 1, "the closed attempt shown once: {detail}");
        assert_eq!(
            (&attempts[0]["outcome"], &attempts[0]["claimant"], &attempts[0]["summary"]),
            (&json!("completed"), &json!("earlier-release"), &json!(format!("batch {batch}")))
        );
    }
}

/// The same, when this release claimed the todo's first attempt and the earlier release
/// its second (after a failed first): the row still names attempt 1, so the completion
/// closes attempt 2's stored row in place; attempt 1's row (written by the fail) stays.
#[actix_web::test]
async fn an_earlier_release_claim_after_this_release_failed_attempt_is_closed_in_place() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let first = app.claim_next(&ep).await;
    let token = first["lease_token"].as_str().expect("a claim");
    let (status, body) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"lease_token": token})).await;
    assert_eq!(status, actix_web::http::StatusCode::OK, "{body}");
    // The earlier release's claim of attempt 2: the row's claim, its open row beside it,
    // and `attempt_on_row` left at 1.
    let token = "sbl_earlier_release_lease";
    app.db
        .exec(&format!(
            "UPDATE todos SET state = 'claimed', attempt = attempt + 1, attempts_total = attempts_total + 1, \
               next_retry_at = NULL, claimed_at = now(), lease_expires_at = now() + interval '5 minutes', \
               lease_token_hash = sha256('{token}'::bytea), claimed_by = endpoint_id WHERE id = '{}'",
            id.0
        ))
        .await;
    open_history_row_as_the_earlier_release(&app, id).await;
    let marker =
        format!("SELECT count(*) FROM todos WHERE id = '{}' AND attempt_on_row = 1 AND attempts_total = 2", id.0);
    assert_eq!(app.db.count(&marker).await, 1, "the row names this release's attempt 1");
    let (status, body) = app
        .post(
            &format!("/api/v1/agent/todos/{id}/complete"),
            &ep.token,
            json!({"lease_token": token, "summary": "done by this release"}),
        )
        .await;
    assert_eq!(status, actix_web::http::StatusCode::OK, "{body}");
    let rows = |cond: &str| format!("SELECT count(*) FROM todo_attempts WHERE todo_id = '{}' {cond}", id.0);
    assert_eq!(app.db.count(&rows("")).await, 2, "attempt 1 (the fail's) and attempt 2 (the earlier release's)");
    let closed = "AND seq = 2 AND outcome = 'completed' AND claimant = 'earlier-release' AND summary = 'done by this release' \
        AND ended_at IS NOT NULL";
    assert_eq!(app.db.count(&rows(closed)).await, 1, "attempt 2 closed in place with the report");
    assert_eq!(app.db.count(&rows("AND ended_at IS NULL")).await, 0, "no attempt left open");
}

/// The open history row an earlier release's claim wrote beside the todo row, for the
/// attempt the row holds (claimant `earlier-release`).
async fn open_history_row_as_the_earlier_release(app: &TestApp, id: TodoId) {
    app.db
        .exec(&format!(
            "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, lease_expires_at) \
             SELECT id, attempts_total, endpoint_id, 'earlier-release', false, claimed_at, lease_expires_at \
             FROM todos WHERE id = '{}'",
            id.0
        ))
        .await;
}
