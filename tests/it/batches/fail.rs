//! `POST /api/v1/agent/todos/fail`.

use serde_json::json;
use switchboard::domain::ids::TodoId;
use switchboard::domain::todo_state::{AttemptOutcome, DeadReason};
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

use super::{claim_many, finish_many, outcomes, todo};
use crate::harness::{Signals, TestApp, TestDb};

/// Creates a todo with `cap` attempts on `ep`; answers its id.
async fn todo_with_cap(app: &TestApp, ep: &crate::harness::Ep, title: &str, cap: i32) -> TodoId {
    let (s, b) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": title, "max_attempts": cap})).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_str().unwrap().parse().unwrap()
}

fn secs_between(a: &serde_json::Value, b: &serde_json::Value) -> i64 {
    let a: chrono::DateTime<chrono::Utc> = a.as_str().unwrap().parse().unwrap();
    let b: chrono::DateTime<chrono::Utc> = b.as_str().unwrap().parse().unwrap();
    (b - a).num_seconds()
}

#[actix_web::test]
async fn a_batch_fail_retries_below_the_cap_and_dead_letters_at_it_announcing_each_dead_letter_once() {
    let (app, _, ep) = TestApp::with_worker().await;
    let dies = todo_with_cap(&app, &ep, "dies", 1).await;
    let retries = todo_with_cap(&app, &ep, "retries", 3).await;
    let claims = claim_many(&app, &ep, 2).await;
    app.signals.take().await;
    let items = json!([
        {"id": dies.to_string(), "lease_token": claims[0].1, "summary": "out of luck", "artifact": "mcp://cairn/x",
         "result": {"why": "boom"}},
        {"id": retries.to_string(), "lease_token": claims[1].1, "summary": "try again"},
        {"id": TodoId::new().to_string()},
        {"id": dies.to_string()},
    ]);
    let results = finish_many(&app, &ep, "fail", items).await;
    assert_eq!(outcomes(&results), ["ok", "ok", "not_found", "conflict"], "{results:?}");
    assert_eq!(results[3]["error"]["message"], "todo is a dead letter; it cannot be failed now");

    let dead = &results[0]["todo"];
    assert_eq!(
        (&dead["state"], &dead["dead_letter"], &dead["dead_reason"]),
        (&json!("failed"), &json!(true), &json!("attempts_exhausted"))
    );
    assert!(dead["next_retry_at"].is_null());
    let retry = &results[1]["todo"];
    assert_eq!((&retry["dead_letter"], &retry["attempt"]), (&json!(false), &json!(1)));
    let wait = secs_between(&retry["updated_at"], &retry["next_retry_at"]);
    assert!((29..=30).contains(&wait), "backoff {wait}");

    let t = todo(&app, &ep, dies).await;
    assert_eq!(t["result"], json!({"why": "boom"}));
    assert_eq!(
        (&t["attempts"][0]["outcome"], &t["attempts"][0]["disposition"]),
        (&json!("failed"), &json!("dead_lettered"))
    );
    let t = todo(&app, &ep, retries).await;
    assert_eq!(t["attempts"][0]["disposition"], "retry_scheduled");
    assert_eq!(t["attempts"][0]["summary"], "try again");

    let dead = app.signals.take_dead().await;
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!((dead[0].todo.id, dead[0].reason), (dies, DeadReason::AttemptsExhausted));
    let last = dead[0].final_attempt.as_ref().unwrap();
    assert_eq!((last.seq, last.outcome), (1, AttemptOutcome::Failed));
    assert_eq!((last.summary.as_deref(), last.artifact.as_deref()), (Some("out of luck"), Some("mcp://cairn/x")));
}

#[actix_web::test]
async fn a_wrong_lease_token_or_a_todo_not_claimed_fails_alone() {
    let (app, _, ep) = TestApp::with_worker().await;
    let a = app.create_todo(&ep, "q", "a").await;
    let b = app.create_todo(&ep, "q", "b").await;
    let pending = app.create_todo(&ep, "q", "pending").await;
    let claims = claim_many(&app, &ep, 2).await;
    let items = json!([
        {"id": a.to_string(), "lease_token": claims[1].1},
        {"id": pending.to_string()},
        {"id": b.to_string(), "lease_token": claims[1].1},
        {"id": a.to_string(), "summary": "\u{0}"},
    ]);
    // A NUL anywhere is refused with the body as a whole.
    let (status, _) = app.post("/api/v1/agent/todos/fail", &ep.token, json!({"items": items})).await;
    assert_eq!(status, 422);
    let items = json!([
        {"id": a.to_string(), "lease_token": claims[1].1},
        {"id": pending.to_string()},
        {"id": b.to_string(), "lease_token": claims[1].1},
        {"id": a.to_string(), "artifact": "javascript:alert(1)"},
    ]);
    let results = finish_many(&app, &ep, "fail", items).await;
    assert_eq!(outcomes(&results), ["conflict", "conflict", "ok", "invalid_argument"]);
    assert_eq!(results[1]["error"]["message"], "todo is pending; it cannot be failed now");
    assert_eq!(todo(&app, &ep, a).await["state"], "claimed");
    assert_eq!(todo(&app, &ep, pending).await["state"], "pending");
    assert!(app.signals.take_dead().await.is_empty());
}

/// Store level: the dead-letter trigger records a batch's dead letters for the sinks in
/// the batch's own transaction, one record each.
#[actix_web::test]
async fn a_batch_dead_letter_is_recorded_for_the_sinks_in_its_transaction() {
    let db = TestDb::new().await;
    let signals = Signals::start();
    let store = db.store(signals.emitter());
    let human = store.create_human("a@example.com", "A", None).await.unwrap();
    let ep = super::equivalence::endpoint(&store, human.scope, "w").await;
    super::equivalence::sink(&db, human.scope).await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let new = NewTodo { max_attempts: Some(1), ..NewTodo::new(ep, "q", format!("t{i}")) };
        ids.push(store.create_todo(new).await.unwrap().todo.id);
    }
    let claimed = store.claim_next_batch(ep, ClaimRequest::default(), 3).await.unwrap();
    assert_eq!(claimed.claims.len(), 3);
    let items = ids.iter().map(|id| (Some(*id), Finish::default())).collect();
    let answers = store.fail_batch(ep, items).await.unwrap();
    assert!(answers.iter().all(Result::is_ok));
    assert_eq!(db.count("SELECT count(*) FROM outbox_events").await, 3);
    assert_eq!(
        db.count("SELECT count(DISTINCT todo_id) FROM outbox_events WHERE dead_letter_count = 1").await,
        3,
        "one record per dead letter"
    );
    assert_eq!(signals.take_dead().await.len(), 3);
}
