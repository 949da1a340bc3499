//! Crash safety with the real binary: a server killed outright (SIGKILL) loses nothing
//! the outbox holds. The dead letter commits after the kill, while no server runs;
//! the next server delivers it, once.

use std::time::Duration;

use serde_json::json;
use switchboard::domain::ids::{EndpointId, TodoId};
use switchboard::store::todos::Finish;

use super::logs::Served;
use crate::harness::TestDb;
use crate::harness::wait::wait_count_within;
use testkit::receiver::{Receiver, Reply};

#[actix_web::test]
async fn a_dead_letter_committed_after_a_sigkill_reaches_its_sink_once_from_the_next_server() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let operator = store.create_human("a@example.com", "A", None).await.unwrap().token;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let first = Served::start(&db);
    let body = json!({"name": "p", "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = first.call("POST", "/api/v1/connections", &operator, body).await;
    assert_eq!(s, 201, "{c}");
    let body = json!({"name": "s", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (s, sink) = first.call("POST", "/api/v1/sinks", &operator, body).await;
    assert_eq!(s, 201, "{sink}");
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    let path = format!("/api/v1/sinks/{}/subscriptions", sink["id"].as_str().unwrap());
    assert_eq!(first.call("PUT", &path, &operator, subs).await.0, 200);
    let (_, ep) = first
        .call("POST", "/api/v1/endpoints", &operator, json!({"slug": "w", "grants": ["create_todo", "claim"]}))
        .await;
    let agent = ep["token"].as_str().unwrap().to_owned();
    let todo = json!({"queue": "q", "title": "dies while nobody serves", "max_attempts": 1});
    let (_, created) = first.call("POST", "/api/v1/agent/todos", &agent, todo).await;
    let id: TodoId = created["id"].as_str().unwrap().parse().unwrap();
    assert_eq!(first.call("POST", &format!("/api/v1/agent/todos/{id}/claim"), &agent, json!({})).await.0, 200);
    first.kill();
    // The agent's fail commits with no server running: only the outbox remembers.
    let endpoint: EndpointId = ep["id"].as_str().unwrap().parse().unwrap();
    store.fail(endpoint, id, Finish::default()).await.unwrap();
    assert_eq!(db.count("SELECT count(*) FROM outbox_events").await, 1, "recorded with the dead letter");
    assert_eq!(rx.count(), 0);
    let next = Served::start(&db);
    // The next server delivers it.
    wait_count_within(&db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1, Duration::from_secs(20)).await;
    assert_eq!(rx.count(), 1, "exactly once");
    assert!(rx.seen()[0].json()["message"].as_str().unwrap().contains(&id.to_string()));
    next.kill();
}
