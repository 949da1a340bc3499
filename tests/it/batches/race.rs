//! Batches and single verbs racing on the same todos: never a deadlock, never a 5xx,
//! never a todo finished twice or lost.

use std::cell::RefCell;
use std::collections::HashMap;

use futures_util::future::join_all;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use switchboard::domain::ids::TodoId;

use crate::harness::{Ep, TestApp};

/// Every status a racer saw, and each item's ok per (verb, todo).
#[derive(Default)]
struct Seen {
    statuses: Vec<(String, u16, Value)>,
    /// How many finishes (complete or fail answered `ok`) each todo had per claim it got.
    finished: HashMap<TodoId, i32>,
    claimed: HashMap<TodoId, i32>,
}

async fn post(app: &TestApp, ep: &Ep, seen: &RefCell<Seen>, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(path, &ep.token, body).await;
    seen.borrow_mut().statuses.push((path.to_owned(), status.as_u16(), answer.clone()));
    answer
}

fn note_claims(seen: &RefCell<Seen>, ids: impl IntoIterator<Item = TodoId>) {
    let mut seen = seen.borrow_mut();
    for id in ids {
        *seen.claimed.entry(id).or_default() += 1;
    }
}

fn note_finishes(seen: &RefCell<Seen>, answer: &Value) {
    let mut seen = seen.borrow_mut();
    for r in answer["results"].as_array().into_iter().flatten() {
        if r["ok"] == true {
            *seen.finished.entry(r["id"].as_str().unwrap().parse().unwrap()).or_default() += 1;
        }
    }
}

/// Claims a batch, then finishes what it claimed together with todos others may hold,
/// shuffled, without lease tokens, half by complete and half by fail.
async fn batch_racer(app: &TestApp, ep: &Ep, all: &[TodoId], seen: &RefCell<Seen>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..6 {
        let answer = post(app, ep, seen, "/api/v1/agent/todos/claim-next", json!({"limit": 8})).await;
        let mut ids: Vec<TodoId> = super::claims_of(&answer).into_iter().map(|c| c.0).collect();
        note_claims(seen, ids.clone());
        ids.extend((0..6).map(|_| *all.choose(&mut rng).unwrap()));
        ids.shuffle(&mut rng);
        let (complete, fail) = ids.split_at(ids.len() / 2);
        for (verb, part) in [("complete", complete), ("fail", fail)] {
            if part.is_empty() {
                continue;
            }
            let items: Vec<Value> = part.iter().map(|id| json!({"id": id.to_string()})).collect();
            let answer = post(app, ep, seen, &format!("/api/v1/agent/todos/{verb}"), json!({"items": items})).await;
            note_finishes(seen, &answer);
        }
    }
}

/// Claims one at a time and finishes each with the single verbs.
async fn single_racer(app: &TestApp, ep: &Ep, seen: &RefCell<Seen>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..12 {
        let answer = post(app, ep, seen, "/api/v1/agent/todos/claim-next", json!({})).await;
        let Some(id) = answer["todo"]["id"].as_str() else { continue };
        let id: TodoId = id.parse().unwrap();
        note_claims(seen, [id]);
        let verb = if rng.gen_bool(0.5) { "complete" } else { "fail" };
        let answer = post(app, ep, seen, &format!("/api/v1/agent/todos/{id}/{verb}"), json!({})).await;
        if answer["id"].is_string() {
            *seen.borrow_mut().finished.entry(id).or_default() += 1;
        }
    }
}

/// Two batches naming the same claimed todos in opposite orders, at once: one of them
/// finishes each todo, the other is told it is no longer claimed.
async fn mirrored_racers(app: &TestApp, ep: &Ep, seen: &RefCell<Seen>) {
    for _ in 0..6 {
        let answer = post(app, ep, seen, "/api/v1/agent/todos/claim-next", json!({"limit": 12})).await;
        let ids: Vec<TodoId> = super::claims_of(&answer).into_iter().map(|c| c.0).collect();
        note_claims(seen, ids.clone());
        let forward: Vec<Value> = ids.iter().map(|id| json!({"id": id.to_string()})).collect();
        let backward: Vec<Value> = forward.iter().rev().cloned().collect();
        let (a, b) = futures_util::future::join(
            post(app, ep, seen, "/api/v1/agent/todos/complete", json!({"items": forward})),
            post(app, ep, seen, "/api/v1/agent/todos/fail", json!({"items": backward})),
        )
        .await;
        note_finishes(seen, &a);
        note_finishes(seen, &b);
    }
}

/// Batch creates racing on the same idempotency keys in opposite orders.
async fn create_racers(app: &TestApp, ep: &Ep, seen: &RefCell<Seen>) {
    let keys: Vec<Value> =
        (0..30).map(|k| json!({"queue": "keyed", "title": "k", "idempotency_key": format!("k{k}")})).collect();
    let reversed: Vec<Value> = keys.iter().rev().cloned().collect();
    futures_util::future::join(
        post(app, ep, seen, "/api/v1/agent/todos/batch", json!({"items": keys})),
        post(app, ep, seen, "/api/v1/agent/todos/batch", json!({"items": reversed})),
    )
    .await;
}

#[actix_web::test]
async fn batches_and_single_verbs_racing_on_the_same_todos_never_deadlock_fail_with_5xx_or_lose_a_todo() {
    let (app, _, ep) = TestApp::with_worker().await;
    let mut all = Vec::new();
    for _ in 0..3 {
        let items: Vec<Value> =
            (0..100).map(|i| json!({"queue": "q", "title": format!("t{i}"), "max_attempts": 2})).collect();
        let results = super::create_many(&app, &ep, json!(items)).await;
        all.extend(results.iter().map(|r| r["todo"]["id"].as_str().unwrap().parse::<TodoId>().unwrap()));
    }
    let seen = RefCell::new(Seen::default());
    let mut racers: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + '_>>> = Vec::new();
    for seed in 0..3 {
        racers.push(Box::pin(batch_racer(&app, &ep, &all, &seen, seed)));
        racers.push(Box::pin(single_racer(&app, &ep, &seen, 100 + seed)));
    }
    racers.push(Box::pin(mirrored_racers(&app, &ep, &seen)));
    racers.push(Box::pin(create_racers(&app, &ep, &seen)));
    join_all(racers).await;

    let seen = seen.into_inner();
    let failures: Vec<_> = seen.statuses.iter().filter(|(_, s, _)| *s >= 500).collect();
    assert!(failures.is_empty(), "{} of {} requests failed: {failures:?}", failures.len(), seen.statuses.len());
    for (id, finished) in &seen.finished {
        let claimed = seen.claimed.get(id).copied().unwrap_or(0);
        assert!(*finished <= claimed, "{id} was finished {finished} times on {claimed} claims");
    }
    let db = &app.db;
    assert_eq!(db.count("SELECT count(*) FROM todos WHERE queue = 'q'").await, 300, "nothing lost");
    assert_eq!(db.count("SELECT count(*) FROM todos WHERE queue = 'keyed'").await, 30, "each key once");
    let broken = [
        (
            "a history row left open (an open attempt is held on its todo row)",
            "SELECT count(*) FROM todo_attempts WHERE ended_at IS NULL",
        ),
        (
            "attempts_total that is not the history's length with the open attempt",
            "SELECT count(*) FROM todos t WHERE t.attempts_total <> (SELECT count(*) FROM todo_attempt_history a WHERE a.todo_id = t.id) \
               + CASE WHEN t.state IN ('claimed', 'input_required', 'auth_required') THEN 1 ELSE 0 END",
        ),
        (
            "done whose last attempt did not complete",
            "SELECT count(*) FROM todos t WHERE t.state = 'done' AND (SELECT outcome FROM todo_attempt_history a WHERE a.todo_id = t.id ORDER BY seq DESC LIMIT 1) IS DISTINCT FROM 'completed'",
        ),
        (
            "failed whose last attempt did not fail",
            "SELECT count(*) FROM todos t WHERE t.state = 'failed' AND (SELECT outcome FROM todo_attempt_history a WHERE a.todo_id = t.id ORDER BY seq DESC LIMIT 1) IS DISTINCT FROM 'failed'",
        ),
        (
            "a dead letter below the cap or a retry at it",
            "SELECT count(*) FROM todos WHERE state = 'failed' AND ((next_retry_at IS NULL) <> (attempt >= max_attempts))",
        ),
    ];
    for (what, sql) in broken {
        assert_eq!(db.count(sql).await, 0, "{what}");
    }
    let finished_rows =
        db.count("SELECT count(*) FROM todo_attempt_history WHERE outcome IN ('completed', 'failed')").await;
    assert_eq!(
        finished_rows,
        seen.finished.values().map(|n| i64::from(*n)).sum::<i64>(),
        "every ok is one closed attempt"
    );
}
