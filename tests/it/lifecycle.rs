//! The todo lifecycle over the agent REST API against a real database.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;

use crate::harness::TestApp;

fn secs_between(a: &serde_json::Value, b: &serde_json::Value) -> i64 {
    let a: chrono::DateTime<chrono::Utc> = a.as_str().unwrap().parse().unwrap();
    let b: chrono::DateTime<chrono::Utc> = b.as_str().unwrap().parse().unwrap();
    (b - a).num_seconds()
}

#[actix_web::test]
async fn claim_next_claims_the_oldest_pending_todo_and_opens_an_attempt() {
    let (app, _, ep) = TestApp::with_worker().await;
    let first = app.create_todo(&ep, "builds", "first").await;
    let _second = app.create_todo(&ep, "builds", "second").await;

    let c = app.claim_next(&ep).await;
    assert_eq!(c["empty"], false);
    assert_eq!(c["todo"]["id"], first.to_string());
    assert_eq!(c["todo"]["state"], "claimed");
    assert_eq!(c["todo"]["attempt"], 1);
    assert_eq!(c["attempt_seq"], 1);
    assert_eq!(c["lease_token"].as_str().unwrap().len(), 22);
    // Default lease is 300 s.
    let lease = secs_between(&c["todo"]["updated_at"], &c["todo"]["lease_expires_at"]);
    assert!((299..=300).contains(&lease), "lease {lease}");

    let (s, t) = app.get(&format!("/api/v1/agent/todos/{first}"), &ep.token).await;
    assert_eq!(s, StatusCode::OK);
    let attempts = t["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0]["seq"], 1);
    assert!(attempts[0]["ended_at"].is_null());
}

#[actix_web::test]
async fn claim_next_on_an_empty_queue_answers_empty() {
    let (app, _, ep) = TestApp::with_worker().await;
    let c = app.claim_next(&ep).await;
    assert_eq!(c, json!({"empty": true}));
}

#[actix_web::test]
async fn claim_next_with_a_queue_only_claims_from_that_queue() {
    let (app, _, ep) = TestApp::with_worker().await;
    app.create_todo(&ep, "a", "in a").await;
    let in_b = app.create_todo(&ep, "b", "in b").await;
    let (_, c) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"queue": "b"})).await;
    assert_eq!(c["todo"]["id"], in_b.to_string());
    let (_, c) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"queue": "b"})).await;
    assert_eq!(c["empty"], true);
}

#[actix_web::test]
async fn complete_closes_the_attempt_as_completed_with_summary_and_artifact() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let c = app.claim_next(&ep).await;
    let (s, row) = app
        .post(
            &format!("/api/v1/agent/todos/{id}/complete"),
            &ep.token,
            json!({"result": {"ok": true}, "summary": "green", "artifact": "mcp://cairn/abc", "lease_token": c["lease_token"]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{row}");
    assert_eq!(row["state"], "done");
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(t["result"], json!({"ok": true}));
    let a = &t["attempts"][0];
    assert_eq!(a["outcome"], "completed");
    assert_eq!(a["disposition"], "done");
    assert_eq!(a["summary"], "green");
    assert_eq!(a["artifact"], "mcp://cairn/abc");
    // A second complete is a conflict and changes nothing.
    let (s, e) = app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert_eq!(e["error"]["code"], "conflict");
}

/// A completion is final, so the attempt it closes stays on the todo row: no history row
/// is written for it, and the history (API and `todo_attempt_history`) still shows it,
/// newest, after the stored rows of the attempts before it.
#[actix_web::test]
async fn a_completion_writes_no_history_row_and_its_attempt_still_heads_the_history() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.claim_next(&ep).await;
    let (s, row) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "red"})).await;
    assert_eq!(s, StatusCode::OK, "{row}");
    app.make_retry_due(id).await;
    assert_eq!(app.store.requeue_due_retries().await.unwrap().requeued, 1);
    let (s, c) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"claimant": "w-7"})).await;
    assert_eq!((s, &c["todo"]["id"]), (StatusCode::OK, &json!(id.to_string())), "{c}");
    let body = json!({"summary": "green", "artifact": "mcp://cairn/x", "lease_token": c["lease_token"]});
    let (s, row) = app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, body).await;
    assert_eq!(s, StatusCode::OK, "{row}");

    let stored = format!("SELECT count(*) FROM todo_attempts WHERE todo_id = '{}'", id.0);
    assert_eq!(app.db.count(&stored).await, 1, "only the failed attempt has a history row");
    let whole = app
        .db
        .lines(&format!(
            "SELECT concat_ws(' ', seq, outcome, disposition, summary, coalesce(artifact, '-'), coalesce(claimant, '-')) \
             FROM todo_attempt_history WHERE todo_id = '{}' ORDER BY seq",
            id.0
        ))
        .await;
    assert_eq!(whole, "1 failed retry_scheduled red - -\n2 completed done green mcp://cairn/x w-7");
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    let shown: Vec<_> =
        t["attempts"].as_array().unwrap().iter().map(|a| (a["seq"].clone(), a["outcome"].clone())).collect();
    assert_eq!(shown, [(json!(2), json!("completed")), (json!(1), json!("failed"))], "{t}");
    assert_eq!(t["attempts"][0]["claimant"], "w-7");
    assert_eq!(t["attempts"][0]["ended_at"], row["updated_at"], "it ended when the todo completed");
}

#[actix_web::test]
async fn fail_below_the_cap_schedules_a_retry_with_doubling_backoff() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let mut expected = [30i64, 60, 120].into_iter();
    for attempt in 1..=3 {
        let c = app.claim_next(&ep).await;
        assert_eq!(c["todo"]["attempt"], attempt, "{c}");
        let (s, row) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "red"})).await;
        assert_eq!(s, StatusCode::OK, "{row}");
        assert_eq!(row["state"], "failed");
        assert_eq!(row["dead_letter"], false);
        let wait = secs_between(&row["updated_at"], &row["next_retry_at"]);
        let want = expected.next().unwrap();
        assert!((want - 1..=want).contains(&wait), "attempt {attempt}: waited {wait}, want {want}");
        // The open retry window keeps it from being claimed...
        assert_eq!(app.claim_next(&ep).await["empty"], true);
        // ...until the scheduler finds it due.
        app.make_retry_due(id).await;
        let report = app.store.requeue_due_retries().await.unwrap();
        assert_eq!(report.requeued, 1);
    }
}

#[actix_web::test]
async fn fail_at_the_cap_makes_a_dead_letter_that_no_sweep_revives() {
    let (app, _, ep) = TestApp::with_worker().await;
    let (s, b) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": "t", "max_attempts": 2})).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    let id: TodoId = b["id"].as_str().unwrap().parse().unwrap();
    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
    app.make_retry_due(id).await;
    app.store.requeue_due_retries().await.unwrap();
    app.claim_next(&ep).await;
    let (_, row) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "still red"})).await;
    assert_eq!(row["state"], "failed");
    assert_eq!(row["dead_letter"], true);
    assert_eq!(row["dead_reason"], "attempts_exhausted");
    assert!(row["next_retry_at"].is_null());
    assert!(row.as_object().unwrap().contains_key("next_retry_at"), "next_retry_at is always present");
    assert_eq!(app.store.requeue_due_retries().await.unwrap().requeued, 0);
    assert_eq!(app.claim_next(&ep).await["empty"], true);
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(t["attempts"][0]["disposition"], "dead_lettered");
    assert_eq!(t["attempts"][1]["disposition"], "retry_scheduled");
}

#[actix_web::test]
async fn release_requeues_without_spending_an_attempt_but_keeps_the_history() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.claim_next(&ep).await;
    let (s, row) =
        app.post(&format!("/api/v1/agent/todos/{id}/release"), &ep.token, json!({"summary": "not mine"})).await;
    assert_eq!(s, StatusCode::OK, "{row}");
    assert_eq!(row["state"], "pending");
    assert_eq!(row["attempt"], 0);
    let c = app.claim_next(&ep).await;
    assert_eq!(c["todo"]["attempt"], 1);
    assert_eq!(c["attempt_seq"], 2, "seq is never reused");
    assert_eq!(c["prior_attempts"][0]["outcome"], "released");
}

#[actix_web::test]
async fn heartbeat_extends_the_lease_and_stamps_the_attempt() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let c = app.claim_next(&ep).await;
    let (s, row) = app
        .post(
            &format!("/api/v1/agent/todos/{id}/heartbeat"),
            &ep.token,
            json!({"lease_ttl_seconds": 900, "lease_token": c["lease_token"]}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{row}");
    let lease = secs_between(&row["updated_at"], &row["lease_expires_at"]);
    assert!((899..=900).contains(&lease), "{lease}");
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert!(!t["attempts"][0]["last_heartbeat_at"].is_null());
    assert_eq!(t["attempts"][0]["lease_expires_at"], row["lease_expires_at"]);
}

#[actix_web::test]
async fn a_lease_token_mismatch_is_a_conflict_and_changes_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.claim_next(&ep).await;
    for verb in ["heartbeat", "complete", "fail", "release"] {
        let (s, e) = app
            .post(
                &format!("/api/v1/agent/todos/{id}/{verb}"),
                &ep.token,
                json!({"lease_token": "AAAAAAAAAAAAAAAAAAAAAA"}),
            )
            .await;
        assert_eq!(s, StatusCode::CONFLICT, "{verb}: {e}");
        assert!(e["error"]["message"].as_str().unwrap().contains("lease token"), "{e}");
    }
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(t["state"], "claimed");
    assert!(t["attempts"][0]["ended_at"].is_null());
}

#[actix_web::test]
async fn lease_length_per_call_beats_the_endpoint_default_which_beats_300() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let (s, v) = app
        .post(
            "/api/v1/endpoints",
            &o.token,
            json!({"slug": "slow", "grants": ["claim_next", "create_todo"], "default_lease_seconds": 600}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    let ep = crate::harness::Ep {
        id: v["id"].as_str().unwrap().parse().unwrap(),
        token: v["token"].as_str().unwrap().into(),
    };
    app.create_todo(&ep, "q", "a").await;
    app.create_todo(&ep, "q", "b").await;
    let c = app.claim_next(&ep).await;
    let lease = secs_between(&c["todo"]["updated_at"], &c["todo"]["lease_expires_at"]);
    assert!((599..=600).contains(&lease), "{lease}");
    let (_, c) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"lease_ttl_seconds": 42})).await;
    let lease = secs_between(&c["todo"]["updated_at"], &c["todo"]["lease_expires_at"]);
    assert!((41..=42).contains(&lease), "{lease}");
}

#[actix_web::test]
async fn interrupt_and_resume_keep_the_same_attempt_and_heartbeat_renews_the_wait() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    app.claim_next(&ep).await;
    let (s, row) = app
        .post(
            &format!("/api/v1/agent/todos/{id}/interrupt"),
            &ep.token,
            json!({"state": "input_required", "wait_seconds": 120, "reason": "need\na human"}),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{row}");
    assert_eq!(row["state"], "input_required");
    assert!(row["lease_expires_at"].is_null());
    assert_eq!(row["interrupt_reason"], "needa human");
    assert_eq!(secs_between(&row["updated_at"], &row["interrupt_expires_at"]), 120);
    // An interrupted todo cannot be completed or claimed.
    let (s, _) = app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::CONFLICT);
    // A heartbeat renews the interrupt lease by the wait it asked for.
    let (_, row) = app.post(&format!("/api/v1/agent/todos/{id}/heartbeat"), &ep.token, json!({})).await;
    assert_eq!(row["state"], "input_required");
    assert_eq!(secs_between(&row["updated_at"], &row["interrupt_expires_at"]), 120);
    let (s, row) = app.post(&format!("/api/v1/agent/todos/{id}/resume"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{row}");
    assert_eq!(row["state"], "claimed");
    assert_eq!(row["attempt"], 1);
    assert!(row["interrupt_expires_at"].is_null());
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(t["attempts"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn an_idempotency_key_returns_the_live_todo_and_a_dead_letter_releases_it() {
    let (app, _, ep) = TestApp::with_worker().await;
    let body = json!({"queue": "q", "title": "t", "idempotency_key": "k1", "max_attempts": 1});
    let (s1, a) = app.post("/api/v1/agent/todos", &ep.token, body.clone()).await;
    let (s2, b) = app.post("/api/v1/agent/todos", &ep.token, body.clone()).await;
    assert_eq!((s1, s2), (StatusCode::CREATED, StatusCode::OK));
    assert_eq!(a["id"], b["id"]);
    assert_eq!(b["created"], false);
    // A parked retry would keep the key; a dead letter releases it.
    app.claim_next(&ep).await;
    let id = a["id"].as_str().unwrap();
    let (_, row) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
    assert_eq!(row["dead_letter"], true);
    let (s3, c) = app.post("/api/v1/agent/todos", &ep.token, body).await;
    assert_eq!(s3, StatusCode::CREATED);
    assert_ne!(c["id"], a["id"]);
}

#[actix_web::test]
async fn claim_by_id_takes_a_pending_todo_or_a_due_retry_and_refuses_the_rest() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let (s, c) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({"claimant": "w-1"})).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    let (s, _) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::CONFLICT);
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
    let (s, _) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::CONFLICT, "retry not yet due");
    app.make_retry_due(id).await;
    let (s, c) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["todo"]["attempt"], 2);
    assert_eq!(c["prior_attempts"][0]["claimant"], "w-1");
}

#[actix_web::test]
async fn list_todos_shows_only_this_endpoints_drainable_work_newest_first() {
    let (app, o, ep) = TestApp::with_worker().await;
    let other = app.agent(o.scope, "other").await;
    let done = app.create_todo(&ep, "q", "done").await;
    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{done}/complete"), &ep.token, json!({})).await;
    let p1 = app.create_todo(&ep, "q", "p1").await;
    let p2 = app.create_todo(&ep, "r", "p2").await;
    app.create_todo(&other, "q", "not mine").await;
    let (s, l) = app.get("/api/v1/agent/todos", &ep.token).await;
    assert_eq!(s, StatusCode::OK);
    let ids: Vec<&str> = l["todos"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, vec![p2.to_string(), p1.to_string()]);
    assert!(l["todos"][0].get("payload").is_none(), "no payload in lists");
    let (_, l) = app.get("/api/v1/agent/todos?queue=q", &ep.token).await;
    assert_eq!(l["todos"].as_array().unwrap().len(), 1);
    let (s, _) = app.get("/api/v1/agent/todos?state=done", &ep.token).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY);
    // Another endpoint's todo is unknown here.
    let (_, theirs) = app.get("/api/v1/agent/todos", &other.token).await;
    let their_id = theirs["todos"][0]["id"].as_str().unwrap();
    let (s, e) = app.get(&format!("/api/v1/agent/todos/{their_id}"), &ep.token).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(e["error"]["code"], "not_found");
}

#[actix_web::test]
async fn presence_clock_in_and_out_is_recorded_for_any_valid_endpoint_token() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    // Presence needs no grant beyond a valid token.
    let ep = app.endpoint(o.scope, "bare", &[switchboard::domain::grants::Verb::ClaimNext]).await;
    let (s, p) = app.post("/api/v1/agent/presence/clock-in", &ep.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!((p["endpoint"].as_str(), p["presence"].as_str()), (Some("bare"), Some("in")));
    let (_, p) = app.post("/api/v1/agent/presence/clock-out", &ep.token, json!({})).await;
    assert_eq!(p["presence"], "out");
    let (_, list) = app.get("/api/v1/endpoints", &o.token).await;
    assert_eq!(list["endpoints"][0]["presence"], "out");
    assert!(list["endpoints"][0].get("token").is_none(), "a listing never shows a token");
}

#[actix_web::test]
async fn the_store_itself_refuses_nul_characters_that_postgres_cannot_hold() {
    let (app, _, ep) = TestApp::with_worker().await;
    let new = |title: &str, payload: serde_json::Value| switchboard::store::todos::NewTodo {
        source: Some("github".into()),
        payload: Some(payload),
        ..switchboard::store::todos::NewTodo::new(ep.id, "q", title)
    };
    for bad in [new("a\0b", json!({})), new("ok", json!({"k": "v\u{0}"}))] {
        let err = app.store.create_todo(bad).await.unwrap_err();
        assert!(matches!(err, switchboard::error::Error::InvalidArgument(_)), "{err:?}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}

/// A completion of an attempt this release opened is one update of `todos`: it does not
/// touch `todo_attempts`, so it goes through while another session holds that table
/// locked against writers. (The statement that closes an earlier release's history row
/// in place would wait for that lock: this fails if the claim stops marking its attempt
/// in `attempt_on_row` or the completion stops trying the one-statement path first.)
#[actix_web::test]
async fn a_completion_of_an_attempt_this_release_opened_leaves_the_history_table_alone() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let claim = app.claim_next(&ep).await;
    let locker = app.db.session().await;
    assert_eq!(locker.refusal("BEGIN; LOCK TABLE todo_attempts IN EXCLUSIVE MODE").await, None);

    let path = format!("/api/v1/agent/todos/{id}/complete");
    let complete = app.post(&path, &ep.token, json!({"lease_token": claim["lease_token"]}));
    // A watch for what must not happen, polled until the completion answers (the select
    // ends it then), rather than a wait with a deadline of its own.
    let waits_for_the_history = async {
        let watcher = app.db.session().await;
        let waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'todo_attempts'::regclass";
        while watcher.count(waiting).await == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    };
    tokio::select! {
        (s, row) = complete => assert_eq!((s, &row["state"]), (StatusCode::OK, &json!("done")), "{row}"),
        () = waits_for_the_history => panic!("the completion waited for a lock on todo_attempts"),
    }
    assert_eq!(locker.refusal("COMMIT").await, None);
    let history =
        format!("SELECT count(*) FROM todo_attempt_history WHERE todo_id = '{}' AND outcome = 'completed'", id.0);
    assert_eq!(app.db.count(&history).await, 1, "the attempt is still in the history, on the todo row");
}
