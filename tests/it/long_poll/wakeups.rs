//! What wakes a waiting agent: a todo created on its instance or on another, work back
//! from a lapsed lease or a retry now, a pause lifted, and, after the claim listener lost
//! its connection, the reconnection itself (notices sent meanwhile were missed).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{CLAIM_LISTENER, Instance, WAKEUPS, answered, claim_next, metric, spawn, wait_for_waiters, wait_on_any};
use crate::admission::set_admission;
use crate::harness::wait::wait_for_listener;

#[actix_web::test]
async fn a_waiting_agent_gets_a_todo_created_on_its_own_instance() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;

    let id = app.create_todo(&ep, "inbox", "new work").await;
    let answer = answered(waiting).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
    assert!(answer.body["lease_token"].is_string());
    assert_eq!(metric(&app.base, WAKEUPS).await, 1);
    wait_for_waiters(&app.base, 0).await;
}

#[actix_web::test]
async fn a_todo_created_through_one_instance_wakes_an_agent_waiting_on_another() {
    let app = spawn().await;
    let other = Instance::start(&app.db).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting = wait_on_any(&other.base, &ep, 30);
    wait_for_waiters(&other.base, 1).await;

    let id = app.create_todo(&ep, "inbox", "made on the first instance").await;
    let answer = answered(waiting).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
    assert_eq!(metric(&other.base, WAKEUPS).await, 1);
}

#[actix_web::test]
async fn a_waiter_on_one_queue_is_not_woken_by_work_on_another_and_gets_its_own() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting = claim_next(&app.base, &ep, json!({"queue": "builds", "wait_seconds": 30}));
    wait_for_waiters(&app.base, 1).await;

    app.create_todo(&ep, "inbox", "not for it").await;
    // The notice for `inbox` is heard and passed over: the marker below travels the same
    // path after it, so once the marker's waiter is answered, `inbox`'s notice was handled.
    let marker = app.agent(owner.scope, "marker").await;
    let marker_waits = wait_on_any(&app.base, &marker, 30);
    wait_for_waiters(&app.base, 2).await;
    app.create_todo(&marker, "m", "marker").await;
    assert!(answered(marker_waits).await.todo().is_some());
    assert_eq!(metric(&app.base, WAKEUPS).await, 1, "only the marker's waiter was woken");
    wait_for_waiters(&app.base, 1).await;

    let id = app.create_todo(&ep, "builds", "its own").await;
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
}

#[actix_web::test]
async fn work_back_from_a_lapsed_lease_or_a_retry_now_wakes_a_waiting_agent() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = app.create_todo(&ep, "inbox", "t").await;
    let claimed = app.claim_next(&ep).await;
    assert_eq!(claimed["todo"]["id"], id.to_string());

    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    app.lapse_lease(id).await;
    let report = app.store.reap_expired_leases().await.expect("reap");
    assert_eq!(report.requeued, 1);
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);

    // Failed, then retried now by its owner: no doorbell rings, the waiter still hears it.
    let lease = answer.body["lease_token"].as_str().unwrap().to_owned();
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"lease_token": lease})).await;
    assert_eq!(s, 200, "{b}");
    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    let (s, b) = app.post(&format!("/api/v1/todos/{id}/retry"), &owner.token, json!({})).await;
    assert_eq!(s, 200, "{b}");
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
}

#[actix_web::test]
async fn an_agent_deferred_by_a_paused_queue_waits_and_gets_the_work_when_the_pause_lifts() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": true})).await;
    let id = app.create_todo(&ep, "inbox", "held back").await;

    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": false})).await;
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);

    // Paused again with nothing else to claim: the wait ends in the deferred form.
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": true})).await;
    app.create_todo(&ep, "inbox", "held back too").await;
    let answer = answered(wait_on_any(&app.base, &ep, 1)).await;
    assert_eq!(answer.body, json!({"empty": true, "deferred": "paused"}));
}

#[actix_web::test]
async fn a_claim_listener_that_lost_its_connection_makes_every_waiter_look_again() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let pid = wait_for_listener(&app.db, CLAIM_LISTENER, 0).await;
    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;

    // Work that arrives unannounced, as while nobody listened: only a look finds it.
    let id = uuid::Uuid::new_v4();
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state) \
             SELECT '{id}', id, scope_id, 'inbox', 'missed', 'pending' FROM endpoints WHERE id = '{}'",
            ep.id.0
        ))
        .await;
    app.db.exec(&format!("SELECT pg_terminate_backend({pid})")).await;

    let answer = answered(waiting).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let want = switchboard::domain::ids::TodoId(id).to_string();
    assert_eq!(answer.todo(), Some(want.as_str()), "{:?}", answer.body);
    assert!(answer.took < Duration::from_secs(30), "found by a look, not at the end of the wait");
}

/// The README's batch loop: `limit` and `wait_seconds` together. A waiting batch claim
/// woken by a batch of three todos made in one transaction answers all three, each under
/// a lease of its own; with nothing arriving it answers the batch form's empty answer.
#[actix_web::test]
async fn a_waiting_batch_claim_is_woken_and_answers_the_batch_that_arrived() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting = claim_next(&app.base, &ep, json!({"limit": 5, "wait_seconds": 30}));
    wait_for_waiters(&app.base, 1).await;

    let items =
        json!({"items": [{"queue": "q", "title": "a"}, {"queue": "q", "title": "b"}, {"queue": "q", "title": "c"}]});
    let (status, made) = app.post("/api/v1/agent/todos/batch", &ep.token, items).await;
    assert_eq!(status, 200, "{made}");
    let answer = answered(waiting).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    let claims = answer.body["claims"].as_array().expect("the batch form");
    let mut ids: Vec<&str> = claims.iter().filter_map(|c| c["todo"]["id"].as_str()).collect();
    let mut made: Vec<&str> =
        made["results"].as_array().expect("results").iter().filter_map(|r| r["todo"]["id"].as_str()).collect();
    ids.sort_unstable();
    made.sort_unstable();
    assert_eq!(ids, made, "the three todos of the batch, claimed together: {:?}", answer.body);
    let leases: std::collections::HashSet<_> = claims.iter().filter_map(|c| c["lease_token"].as_str()).collect();
    assert_eq!(leases.len(), 3, "a lease per todo");
    assert_eq!(answer.body["empty"], false);
    assert_eq!(metric(&app.base, WAKEUPS).await, 1);

    let started = Instant::now();
    let idle = answered(claim_next(&app.base, &ep, json!({"limit": 5, "wait_seconds": 1}))).await;
    assert_eq!(
        (idle.status, &idle.body["claims"], &idle.body["empty"]),
        (200, &json!([]), &json!(true)),
        "{:?}",
        idle.body
    );
    assert!(started.elapsed() >= Duration::from_millis(900), "it waited its second: {:?}", started.elapsed());
}

/// A waiter held back by a full `max_in_flight` is woken by no notice when a slot frees
/// (a completion makes no new work): its own look every 2 s finds the work.
#[actix_web::test]
async fn a_waiter_held_back_by_a_full_max_in_flight_gets_the_work_once_a_slot_frees() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"max_in_flight": 1})).await;
    let first = app.create_todo(&ep, "inbox", "first").await;
    let claimed = app.claim_next(&ep).await;
    assert_eq!(claimed["todo"]["id"], first.to_string());
    let second = app.create_todo(&ep, "inbox", "second").await;

    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    let lease = claimed["lease_token"].as_str().expect("a lease");
    let (s, b) =
        app.post(&format!("/api/v1/agent/todos/{first}/complete"), &ep.token, json!({"lease_token": lease})).await;
    assert_eq!(s, 200, "{b}");
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(second.to_string().as_str()), "{:?}", answer.body);
}

/// A bulk retry of dead letters (the Board's "Retry all") rings the claim bell itself:
/// a waiting agent gets the todo back.
#[actix_web::test]
async fn a_bulk_retry_of_dead_letters_wakes_a_waiting_agent() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let (s, made) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "inbox", "title": "t", "max_attempts": 1})).await;
    assert_eq!(s, 201, "{made}");
    let id = made["id"].as_str().expect("an id").to_owned();
    let claimed = app.claim_next(&ep).await;
    let lease = claimed["lease_token"].as_str().expect("a lease");
    let (s, failed) =
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"lease_token": lease})).await;
    assert_eq!((s.as_u16(), &failed["dead_letter"]), (200, &json!(true)), "{failed}");

    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    let retried = app.store.retry_dead_letters(&[owner.scope], None, None).await.expect("bulk retry");
    assert_eq!(retried.retried, 1);
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.as_str()), "{:?}", answer.body);
}
