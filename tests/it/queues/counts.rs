//! Every column of the overview against the store's own counts on seeded data: a
//! queue with each kind of todo, a paused one, a stalled lease and a clocked-out
//! endpoint; then the same after more censuses (nothing counted twice) and after a
//! transaction that was open across a census.

use serde_json::{Value, json};

use super::{app, claim, next_census, overview, row, todo, verb};
use crate::board::{board_owner, sign_in};
use crate::harness::TestApp;

/// The column `column` of `endpoint_slug/queue` as the store counts it, straight from
/// `todos` and `todo_attempts`, at `measured_at` (the row's, as the API answered it).
async fn store_count(app: &TestApp, slug: &str, queue: &str, column: &str, measured_at: &str) -> i64 {
    let at = format!("'{measured_at}'::timestamptz");
    let filter = format!("t.endpoint_id = (SELECT id FROM endpoints WHERE slug = '{slug}') AND t.queue = '{queue}'");
    let sql = match column {
        "pending" => format!("SELECT count(*) FROM todos t WHERE {filter} AND state = 'pending'"),
        "claimed" => format!("SELECT count(*) FROM todos t WHERE {filter} AND state = 'claimed'"),
        "stalled" => {
            format!("SELECT count(*) FROM todos t WHERE {filter} AND state = 'claimed' AND lease_expires_at < {at}")
        }
        "interrupted" => {
            format!("SELECT count(*) FROM todos t WHERE {filter} AND state IN ('input_required', 'auth_required')")
        }
        "retrying" => {
            format!("SELECT count(*) FROM todos t WHERE {filter} AND state = 'failed' AND next_retry_at IS NOT NULL")
        }
        "done_last_hour" => format!(
            "SELECT count(*) FROM todos t WHERE {filter} AND state = 'done' AND completed_at > {at} - interval '1 hour'"
        ),
        "failed_attempts_last_hour" => format!(
            "SELECT count(*) FROM todo_attempts a JOIN todos t ON t.id = a.todo_id WHERE {filter} \
             AND a.outcome IN ('failed', 'lease_expired', 'reaped', 'interrupt_expired') \
             AND a.ended_at > {at} - interval '1 hour'"
        ),
        "dead_last_24h" => format!(
            "SELECT count(*) FROM todos t WHERE {filter} AND state = 'failed' AND next_retry_at IS NULL \
             AND dead_lettered_at > {at} - interval '24 hours'"
        ),
        "oldest_pending_seconds" => format!(
            "SELECT coalesce(extract(epoch FROM {at} - min(created_at)), 0)::int8 FROM todos t \
             WHERE {filter} AND state = 'pending'"
        ),
        other => panic!("no column {other}"),
    };
    app.db.count(&sql).await
}

const COLUMNS: [&str; 9] = [
    "pending",
    "claimed",
    "stalled",
    "interrupted",
    "retrying",
    "done_last_hour",
    "failed_attempts_last_hour",
    "dead_last_24h",
    "oldest_pending_seconds",
];

/// Asserts every column of every listed queue equals the store's count.
async fn agrees_with_the_store(app: &TestApp, rows: &[Value]) {
    for r in rows {
        let (slug, queue) = (r["endpoint_slug"].as_str().unwrap(), r["queue"].as_str().unwrap());
        for column in COLUMNS {
            let stored = store_count(app, slug, queue, column, r["measured_at"].as_str().unwrap()).await;
            let shown = r[column].as_i64().unwrap_or_else(|| panic!("{column} missing in {r}"));
            if column == "oldest_pending_seconds" {
                // Whole seconds on both sides, truncated at different instants.
                assert!((shown - stored).abs() <= 1, "{slug}/{queue} {column}: shown {shown}, store {stored}");
            } else {
                assert_eq!(shown, stored, "{slug}/{queue} {column}");
            }
        }
    }
}

/// The cell of column `label` in the Board row of `queue` (its text, tags stripped).
fn board_cell(html: &str, queue: &str, label: &str) -> String {
    let start = html.find(&format!("<strong>{queue}</strong>")).unwrap_or_else(|| panic!("no row {queue}"));
    let row = &html[start..start + html[start..].find("</tr>").unwrap()];
    let marker = format!("data-label=\"{label}\">");
    let from = row.find(&marker).unwrap_or_else(|| panic!("no cell {label} in {row}")) + marker.len();
    let cell = &row[from..from + row[from..].find("</td>").unwrap()];
    let mut text = String::new();
    let mut in_tag = false;
    for c in cell.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.trim().to_owned()
}

#[actix_web::test]
async fn the_page_and_the_api_agree_with_the_stores_counts_for_every_column() {
    let app = app().await;
    let owner = board_owner(&app, "owner@example.com").await;
    let busy = app.agent(owner.scope, "busy").await;
    let idle = app.agent(owner.scope, "idle").await;
    let (s, b) = app.post("/api/v1/agent/presence/clock-in", &busy.token, json!({})).await;
    assert_eq!(s.as_u16(), 200, "{b}");

    // busy/builds: 3 pending, 2 claimed (one lease lapsed), 1 interrupted, 2 done,
    // one failed once and waiting for its retry, one dead after its only attempt.
    let mut pending = Vec::new();
    for _ in 0..3 {
        pending.push(todo(&app, &busy, "builds", 5).await);
    }
    for _ in 0..2 {
        let id = todo(&app, &busy, "builds", 5).await;
        let lease = claim(&app, &busy, &id).await;
        verb(&app, &busy, &id, "complete", &lease, json!({})).await;
    }
    let held = todo(&app, &busy, "builds", 5).await;
    claim(&app, &busy, &held).await;
    let lapsed = todo(&app, &busy, "builds", 5).await;
    claim(&app, &busy, &lapsed).await;
    app.lapse_lease(lapsed.parse().unwrap()).await;
    let waiting = todo(&app, &busy, "builds", 5).await;
    let lease = claim(&app, &busy, &waiting).await;
    verb(&app, &busy, &waiting, "interrupt", &lease, json!({"state": "input_required", "wait_seconds": 600})).await;
    let retried = todo(&app, &busy, "builds", 5).await;
    let lease = claim(&app, &busy, &retried).await;
    verb(&app, &busy, &retried, "fail", &lease, json!({"summary": "red"})).await;
    let dead = todo(&app, &busy, "builds", 1).await;
    let lease = claim(&app, &busy, &dead).await;
    verb(&app, &busy, &dead, "fail", &lease, json!({"summary": "red for good"})).await;
    // busy/paused: one pending, paused by its admin.
    todo(&app, &busy, "paused", 5).await;
    let (s, b) = app
        .call(
            "PUT",
            &format!("/api/v1/endpoints/{}/queues/paused/admission", busy.id),
            Some(&owner.token),
            Some(&json!({"paused": true})),
        )
        .await;
    assert_eq!(s.as_u16(), 200, "{b}");
    // idle/deploys: one pending on an endpoint that never clocked in.
    todo(&app, &idle, "deploys", 5).await;

    next_census(&app).await;
    let rows = overview(&app, &owner.token).await;
    let names: Vec<String> = rows.iter().map(|r| format!("{}/{}", r["endpoint_slug"], r["queue"])).collect();
    assert_eq!(
        names,
        ["\"busy\"/\"builds\"", "\"busy\"/\"paused\"", "\"idle\"/\"deploys\""],
        "trouble first: the dead letter, then the older pending work"
    );
    let builds = row(&rows, "busy", "builds").unwrap();
    for (column, want) in [
        ("pending", 3),
        ("claimed", 2),
        ("stalled", 1),
        ("interrupted", 1),
        ("retrying", 1),
        ("done_last_hour", 2),
        ("failed_attempts_last_hour", 2),
        ("dead_last_24h", 1),
    ] {
        assert_eq!(builds[column], want, "busy/builds {column}: {builds}");
    }
    assert_eq!(builds["admission"], Value::Null, "{builds}");
    assert_eq!(builds["clocked_in"], true);
    let paused = row(&rows, "busy", "paused").unwrap();
    assert_eq!(paused["admission"], json!({"paused": true, "max_in_flight": null, "per_hour": null}));
    assert_eq!(row(&rows, "idle", "deploys").unwrap()["clocked_in"], false);
    agrees_with_the_store(&app, &rows).await;

    // The Board's page shows the same figures.
    let session = sign_in(&app, "owner@example.com").await;
    let page = testkit::board::get(&testkit::board::browser(), &format!("{}/queues", app.base), Some(&session.cookie))
        .await
        .unwrap();
    assert_eq!(page.status.as_u16(), 200, "{}", page.body);
    for (label, column) in [
        ("Pending", "pending"),
        ("Claimed", "claimed"),
        ("Stalled", "stalled"),
        ("Interrupted", "interrupted"),
        ("Done 1 h", "done_last_hour"),
        ("Failed 1 h", "failed_attempts_last_hour"),
        ("Dead 24 h", "dead_last_24h"),
    ] {
        for r in &rows {
            let queue = r["queue"].as_str().unwrap();
            assert_eq!(board_cell(&page.body, queue, label), r[column].to_string(), "{queue} {label}");
        }
    }
    assert!(board_cell(&page.body, "paused", "Admission").starts_with("paused"), "{}", page.body);
    assert_eq!(board_cell(&page.body, "deploys", "Agent"), "clocked out");
    assert_eq!(board_cell(&page.body, "builds", "Agent"), "clocked in");
    assert!(page.body.contains("aria-label=\"last hour, per minute: 2 done, 2 failed attempts, 1 dead letter\""));

    // More censuses count nothing twice; new work is counted once.
    next_census(&app).await;
    next_census(&app).await;
    let again = overview(&app, &owner.token).await;
    assert_eq!(row(&again, "busy", "builds").unwrap()["done_last_hour"], 2, "a completion is counted once");
    let lease = claim(&app, &busy, &pending[0]).await;
    verb(&app, &busy, &pending[0], "complete", &lease, json!({})).await;
    next_census(&app).await;
    let after = overview(&app, &owner.token).await;
    assert_eq!(row(&after, "busy", "builds").unwrap()["done_last_hour"], 3);
    assert_eq!(row(&after, "busy", "builds").unwrap()["pending"], 2);
    agrees_with_the_store(&app, &after).await;
}

#[actix_web::test]
async fn a_completion_whose_transaction_was_open_across_a_census_is_counted_once_it_commits() {
    let app = app().await;
    let owner = board_owner(&app, "owner@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let early = todo(&app, &ep, "q", 5).await;
    let late = todo(&app, &ep, "q", 5).await;
    let early_lease = claim(&app, &ep, &early).await;
    claim(&app, &ep, &late).await;
    // A writer that started before the census and commits after it: its row's
    // updated_at is its start time, below where that census stops counting.
    let writer = app
        .db
        .hold(&format!(
            "SELECT pg_sleep(0.01); UPDATE todos SET state = 'done', completed_at = now(), updated_at = now(), \
             result = '{{}}'::jsonb, lease_expires_at = NULL, lease_token_hash = NULL, \
             attempt_ended_at = now(), attempt_lease_expires_at = lease_expires_at \
             WHERE id = '{}'",
            late.trim_start_matches("td_")
        ))
        .await;
    verb(&app, &ep, &early, "complete", &early_lease, json!({})).await;
    next_census(&app).await;
    next_census(&app).await;
    let rows = overview(&app, &owner.token).await;
    assert_eq!(row(&rows, "worker", "q").unwrap()["done_last_hour"], 0, "held back behind the open writer");
    writer.commit().await;
    next_census(&app).await;
    next_census(&app).await;
    let rows = overview(&app, &owner.token).await;
    assert_eq!(row(&rows, "worker", "q").unwrap()["done_last_hour"], 2, "both, each once");
}

#[actix_web::test]
async fn a_backlog_past_ten_thousand_is_counted_to_the_cap_and_said_to_be_more() {
    let app = app().await;
    let owner = board_owner(&app, "owner@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, max_attempts, attempts_total) \
             SELECT gen_random_uuid(), '{}', '{}', 'backlog', 'bulk #' || g, 'pending', 0, 5, 0 \
             FROM generate_series(1, 10005) g",
            ep.id.0, owner.scope.0
        ))
        .await;
    todo(&app, &ep, "small", 5).await;
    next_census(&app).await;
    let rows = overview(&app, &owner.token).await;
    let backlog = row(&rows, "worker", "backlog").unwrap();
    assert_eq!((backlog["pending"].as_i64(), backlog["pending_capped"].as_bool()), (Some(10_000), Some(true)));
    let small = row(&rows, "worker", "small").unwrap();
    assert_eq!((small["pending"].as_i64(), small["pending_capped"].as_bool()), (Some(1), Some(false)));
    let session = sign_in(&app, "owner@example.com").await;
    let page = testkit::board::get(&testkit::board::browser(), &format!("{}/queues", app.base), Some(&session.cookie))
        .await
        .unwrap();
    assert_eq!(board_cell(&page.body, "backlog", "Pending"), "10 000+");
    assert_eq!(board_cell(&page.body, "small", "Pending"), "1");
}
