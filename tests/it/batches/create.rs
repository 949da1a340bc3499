//! `POST /api/v1/agent/todos/batch`.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::ids::TodoId;
use switchboard::domain::todo_state::ReadyReason;

use super::{claim_many, create_many, finish_many, outcomes};
use crate::harness::TestApp;

fn id_of(result: &serde_json::Value) -> TodoId {
    result["todo"]["id"].as_str().unwrap().parse().unwrap()
}

#[actix_web::test]
async fn a_batch_create_answers_each_item_in_order_and_rings_ready_for_each_new_todo() {
    let (app, _, ep) = TestApp::with_worker().await;
    let items = json!([
        {"queue": "q", "title": "first", "kind": "build", "payload": {"n": 1}, "max_attempts": 2},
        {"queue": "quarantine", "title": "not for agents"},
        {"queue": "q", "title": "   "},
        {"queue": "q", "title": "second"},
    ]);
    let results = create_many(&app, &ep, items).await;
    assert_eq!(outcomes(&results), ["ok", "invalid_argument", "invalid_argument", "ok"], "{results:?}");
    assert_eq!(results[0]["created"], true);
    let first = &results[0]["todo"];
    assert_eq!(
        (&first["title"], &first["kind"], &first["source"]),
        (&json!("first"), &json!("build"), &json!("agent"))
    );
    assert_eq!(
        (&first["payload"], &first["max_attempts"], &first["state"]),
        (&json!({"n": 1}), &json!(2), &json!("pending"))
    );
    assert_eq!(first["payload_size"], json!({"n": 1}).to_string().len());
    assert!(results[1].get("todo").is_none() && results[1].get("created").is_none());
    let ready = app.signals.take_ready().await;
    assert_eq!(ready.iter().map(|r| r.todo.id).collect::<Vec<_>>(), [id_of(&results[0]), id_of(&results[3])]);
    assert!(ready.iter().all(|r| r.reason == ReadyReason::Created && r.todo.endpoint_slug == "worker"));
}

#[actix_web::test]
async fn idempotency_keys_are_honoured_per_item_against_live_todos_and_earlier_items() {
    let (app, _, ep) = TestApp::with_worker().await;
    let (s, live) = app
        .post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": "live", "idempotency_key": "k"}))
        .await;
    assert_eq!(s, StatusCode::CREATED);
    app.signals.take().await;
    let items = json!([
        {"queue": "q", "title": "again", "idempotency_key": "k"},
        {"queue": "q", "title": "new", "idempotency_key": "m"},
        {"queue": "q", "title": "new again", "idempotency_key": "m"},
        {"queue": "q", "title": "no key"},
    ]);
    let results = create_many(&app, &ep, items).await;
    assert_eq!(outcomes(&results), ["ok", "ok", "ok", "ok"]);
    let created: Vec<&serde_json::Value> = results.iter().map(|r| &r["created"]).collect();
    assert_eq!(created, [&json!(false), &json!(true), &json!(false), &json!(true)]);
    assert_eq!(results[0]["todo"]["id"], live["id"], "the live todo that holds the key");
    assert_eq!(results[0]["todo"]["title"], "live");
    assert_eq!(results[2]["todo"]["id"], results[1]["todo"]["id"], "the earlier item's todo");
    assert_eq!(app.signals.take_ready().await.len(), 2, "only new todos ring");
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 3);
}

#[actix_web::test]
async fn a_dead_letter_releases_its_key_to_a_batch_create() {
    let (app, _, ep) = TestApp::with_worker().await;
    let results =
        create_many(&app, &ep, json!([{"queue": "q", "title": "t", "idempotency_key": "k", "max_attempts": 1}])).await;
    let claims = claim_many(&app, &ep, 1).await;
    assert_eq!(outcomes(&finish_many(&app, &ep, "fail", json!([{"id": claims[0].0}])).await), ["ok"]);
    let again = create_many(&app, &ep, json!([{"queue": "q", "title": "t", "idempotency_key": "k"}])).await;
    assert_eq!(again[0]["created"], true);
    assert_ne!(again[0]["todo"]["id"], results[0]["todo"]["id"]);
}

#[actix_web::test]
async fn claim_next_takes_a_batchs_todos_in_the_order_they_were_sent() {
    let (app, _, ep) = TestApp::with_worker().await;
    let before = app.create_todo(&ep, "q", "before").await;
    let items: Vec<serde_json::Value> = (0..40).map(|i| json!({"queue": "q", "title": format!("t{i}")})).collect();
    let results = create_many(&app, &ep, json!(items)).await;
    let after = app.create_todo(&ep, "q", "after").await;
    let mut sent: Vec<TodoId> = vec![before];
    sent.extend(results.iter().map(id_of));
    sent.push(after);
    let claimed: Vec<TodoId> = claim_many(&app, &ep, 100).await.into_iter().map(|c| c.0).collect();
    assert_eq!(claimed, sent);
}

#[actix_web::test]
async fn a_batch_create_of_no_items_or_of_more_than_500_is_refused_whole() {
    let (app, _, ep) = TestApp::with_worker().await;
    let one = json!({"queue": "q", "title": "t"});
    for items in [json!([]), json!(vec![one.clone(); 501])] {
        let (status, answer) = app.post("/api/v1/agent/todos/batch", &ep.token, json!({"items": items})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        assert_eq!(answer["error"]["code"], "invalid_argument");
    }
    assert_eq!(create_many(&app, &ep, json!(vec![one; 500])).await.len(), 500);
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 500);
}

#[actix_web::test]
async fn a_batch_create_on_a_revoked_endpoint_creates_nothing() {
    let (app, owner, ep) = TestApp::with_worker().await;
    // Revoked after its token was checked: the insert itself finds the endpoint inactive.
    let store = app.store.clone();
    let items: Vec<switchboard::store::todos::NewTodo> =
        (0..3).map(|i| switchboard::store::todos::NewTodo::new(ep.id, "q", format!("t{i}"))).collect();
    let (s, _) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK);
    let answers = store.create_todos(ep.id, items).await.unwrap();
    assert!(answers.iter().all(|a| matches!(a, Err(switchboard::error::Error::Conflict(_)))), "{answers:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}
