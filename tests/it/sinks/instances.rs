//! The outbox across instances and restarts: several servers drain one outbox and each
//! row reaches its sink once; a row queued while no server runs is delivered by the next
//! one; a claim left by a worker that died is taken over once it lapses; a worker's pass
//! has several of a sink's rows on the wire at once.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;
use switchboard::config::{CidrList, Settings};
use switchboard::startup::Application;
use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

use super::*;
use crate::harness::wait::wait_until;
use crate::harness::{Signals, test_settings};
use testkit::receiver::{Receiver, Reply};

pub(super) fn outbox_settings(s: &mut Settings) {
    s.secret_encryption_key = Some(KEY);
    s.push_allow_http = true;
    s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    s.outbox_poll_ms = 50;
    s.outbox_retry_base_ms = 50;
}

/// Another server on `app`'s database; stopped when the handle is.
pub(super) async fn another_instance(app: &TestApp) -> actix_web::dev::ServerHandle {
    let mut settings = test_settings(&app.db);
    outbox_settings(&mut settings);
    let signals = Signals::start();
    let second =
        Application::build_with_lookup(&settings, &app.db.url, signals.emitter(), switchboard::outbound::SystemLookup)
            .await
            .expect("second instance");
    let handle = second.handle();
    actix_rt::spawn(second.run_until_stopped());
    handle
}

/// A sink of `o` posting to `rx` with every dead letter subscribed and its budget lifted.
pub(super) async fn open_sink(app: &TestApp, o: &Owner, rx: &Receiver) -> String {
    let c = connection_at(app, o, &format!("c-{}", rx.port()), "gotify", "token", &rx.base()).await;
    let body =
        json!({"name": format!("s-{}", rx.port()), "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (_, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    let id = sink["id"].as_str().unwrap().to_owned();
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    assert_eq!(app.call("PUT", &format!("/api/v1/sinks/{id}/subscriptions"), Some(&o.token), Some(&subs)).await.0, 200);
    let lift = json!({"budget_per_hour": 3600, "burst": 100});
    assert_eq!(app.call("PATCH", &format!("/api/v1/sinks/{id}"), Some(&o.token), Some(&lift)).await.0, 200);
    // A larger burst grants no tokens at once (the bucket refills): fill it for the test.
    app.db.exec("UPDATE sinks SET tokens = 100").await;
    id
}

/// Dead-letters a fresh todo on `endpoint` through the store (no HTTP server needed).
pub(super) async fn dead_letter_in_store(app: &TestApp, endpoint: switchboard::domain::ids::EndpointId, title: &str) {
    let new = NewTodo { max_attempts: Some(1), ..NewTodo::new(endpoint, "inbox", title) };
    let id = app.store.create_todo(new).await.unwrap().todo.id;
    app.store.claim(endpoint, id, ClaimRequest::default()).await.unwrap();
    app.store.fail(endpoint, id, Finish::default()).await.unwrap();
}

/// Stops `app`'s server and waits until its outbox worker is gone (its listener session
/// leaves the database).
pub(super) async fn stop_and_wait(app: &TestApp) {
    app.stop().await;
    wait_count(
        &app.db,
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'switchboard listener'",
        0,
    )
    .await;
}

/// The outbox's records and the todos, one line each, for an assertion's message.
async fn records(app: &TestApp) -> String {
    let records = app
        .db
        .lines(
            "SELECT format('record %s: todo %s, dead letter %s, claimed until %s, created %s (now %s)', \
             id, todo_id, dead_letter_count, claimed_until, created_at, now()) FROM outbox_events ORDER BY id",
        )
        .await;
    let todos = app
        .db
        .lines("SELECT format('todo %s: %s, dead letters %s, %s', id, state, dead_letter_count, title) FROM todos ORDER BY id")
        .await;
    format!("{records}\n{todos}")
}

fn titles(rx: &Receiver) -> Vec<String> {
    rx.seen().iter().map(|r| r.json()["title"].as_str().unwrap_or_default().to_owned()).collect()
}

#[actix_web::test]
async fn two_servers_draining_one_outbox_deliver_each_row_once() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let second = another_instance(&app).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "busy").await;
    for i in 0..40 {
        dead_letter_in_store(&app, ep.id, &format!("todo {i}")).await;
    }
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 40).await;
    let got = rx.wait_for(40).await;
    assert_eq!(got.len(), 40, "one message per row, none twice");
    let bodies: BTreeSet<String> =
        got.iter().map(|r| r.json()["message"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(bodies.len(), 40, "forty different todos");
    second.stop(false).await;
}

#[actix_web::test]
async fn a_row_queued_while_no_server_runs_is_delivered_once_by_the_next_one() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "w").await;
    // The server goes away (its outbox worker with it); the dead letter commits after.
    stop_and_wait(&app).await;
    dead_letter_in_store(&app, ep.id, "committed while down").await;
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 1, "recorded with the dead letter");
    assert_eq!(rx.count(), 0);
    let next = another_instance(&app).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    assert_eq!(titles(&rx).len(), 1, "exactly once");
    next.stop(false).await;
}

#[actix_web::test]
async fn a_claim_left_by_a_worker_that_died_is_taken_over_once_it_lapses() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![Reply::Hang], Reply::Status(200)).await;
    open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "w").await;
    dead_letter_in_store(&app, ep.id, "interrupted mid-call").await;
    rx.wait_for(1).await;
    // The worker is in the middle of its call when its server dies.
    stop_and_wait(&app).await;
    // Claimed straight from the dead letter's record: the record holds the claim, and
    // no row is written before the sink answers.
    let claimed = app.db.count("SELECT count(*) FROM outbox_events WHERE claimed_until > now()").await;
    assert_eq!(claimed, 1, "one record, claimed:\n{}", records(&app).await);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0);
    let next = another_instance(&app).await;
    // The claim holds until it lapses: a later dead letter, delivered by the next
    // worker, shows that worker has claimed past the live claim without taking it.
    dead_letter_in_store(&app, ep.id, "a later one").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    assert_eq!(rx.count(), 2, "a live claim is never taken over");
    // The later record is deleted by the statement after the one that wrote its row as
    // sent: wait for that, then the first record is the one left, still claimed.
    wait_count(&app.db, "SELECT count(*) FROM outbox_events", 1).await;
    let first_claimed = app
        .db
        .count(
            "SELECT count(*) FROM outbox_events e JOIN todos t ON t.id = e.todo_id \
             WHERE t.title = 'interrupted mid-call' AND e.claimed_until > now()",
        )
        .await;
    assert_eq!(first_claimed, 1, "the first record, still claimed:\n{}", records(&app).await);
    // Then the next worker takes the row over.
    app.db.exec("UPDATE outbox_events SET claimed_until = now() - interval '1 second'").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 2).await;
    assert_eq!(rx.count(), 3, "sent again after the lapse (the first call never finished)");
    wait_count(&app.db, "SELECT count(*) FROM outbox_events", 0).await;
    next.stop(false).await;
}

#[actix_web::test]
async fn a_pass_posts_several_rows_of_a_sink_before_the_sink_answers_any() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::HeldThen(200)).await;
    open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "w").await;
    // Queued while no server runs, so the next server's first pass claims all four.
    stop_and_wait(&app).await;
    for i in 0..4 {
        dead_letter_in_store(&app, ep.id, &format!("todo {i}")).await;
    }
    let next = another_instance(&app).await;
    // One row at a time would leave the other three waiting out the first call
    // (answered only once the receiver opens, or after the 10 s attempt timeout).
    wait_until("4 rows posted while the sink held its answers", Duration::from_secs(5), async || {
        let posted = rx.count();
        if posted >= 4 { Ok(()) } else { Err(format!("{posted} of 4 posted")) }
    })
    .await;
    rx.open();
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 4).await;
    assert_eq!(rx.count(), 4, "each row once");
    next.stop(false).await;
}
