//! What a worker does with the rows it claimed: a hanging sink holds up only its own
//! messages; rows its claim has no time left for are given back unsent and uncounted;
//! an answer that comes after the claim lapsed and another worker took the row changes
//! nothing.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use switchboard::domain::ids::SinkId;
use switchboard::outbound::Guard;
use switchboard::sinks::rules::outcome::RetryPolicy;
use switchboard::sinks::rules::vocabulary::OutboxStatus;
use switchboard::sinks::statements::outbox::{Record, SendOutcome};
use switchboard::sinks::worker::{OutboxDeps, SinkShare, Tally, drain_sink};
use switchboard::vault::Vault;

use super::instances::{another_instance, dead_letter_in_store, open_sink, outbox_settings, stop_and_wait};
use super::*;
use crate::harness::test_settings;
use testkit::receiver::{Receiver, Reply};

/// A worker's dependencies for `app`'s database, as the server builds them.
fn deps(app: &TestApp) -> OutboxDeps {
    let mut settings = test_settings(&app.db);
    outbox_settings(&mut settings);
    let listen: SocketAddr = "127.0.0.1:9".parse().unwrap();
    OutboxDeps {
        store: app.store.clone(),
        vault: Vault::new(Some(&KEY)),
        guard: Guard::from_settings(&settings, listen).expect("guard"),
        base_url: "https://switchboard.test".into(),
        retry: RetryPolicy { base: Duration::from_millis(50), max_attempts: 3 },
        poll: Duration::from_millis(50),
        metrics: switchboard::metrics::Metrics::new(&switchboard::store::signals::Emitter::none()),
        schemes: switchboard::sinks::rules::schemes::SchemePolicy::from_setting(&settings.apprise_allowed_schemes),
    }
}

/// An app whose server is stopped (its outbox worker with it) after one owner opened a
/// Gotify sink on each of `receivers`, with one dead letter titled `title` recorded for
/// the outbox since: the sinks, in `receivers`' order.
async fn dead_letter_recorded_for(receivers: &[&Receiver], title: &str) -> (TestApp, Vec<SinkId>) {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let mut sinks = Vec::new();
    for rx in receivers {
        sinks.push(open_sink(&app, &o, rx).await.parse().expect("a sink id"));
    }
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    dead_letter_in_store(&app, ep.id, title).await;
    (app, sinks)
}

#[actix_web::test]
async fn a_hanging_sink_holds_up_only_its_own_messages() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let hanging = Receiver::scripted(vec![], Reply::Hang).await;
    let healthy = Receiver::scripted(vec![], Reply::Status(200)).await;
    let stuck: SinkId = open_sink(&app, &o, &hanging).await.parse().unwrap();
    open_sink(&app, &o, &healthy).await;
    let ep = app.agent(o.scope, "w").await;
    dead_letter_in_store(&app, ep.id, "first").await;
    // The hanging sink's attempt is on the wire (it ends only at its 10 s timeout).
    hanging.wait_for(1).await;
    healthy.wait_for(1).await;
    dead_letter_in_store(&app, ep.id, "second").await;
    // Drained one sink after another, the second message would wait for that timeout.
    healthy.wait_for(2).await;
    let unanswered = app
        .db
        .count(&format!(
            "SELECT count(*) FROM outbox_events e JOIN todos t ON t.id = e.todo_id WHERE t.title = 'first' \
             AND e.claimed_until > now() \
             AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.todo_id = e.todo_id AND o.sink_id = '{}'::uuid)",
            stuck.0
        ))
        .await;
    assert_eq!(unanswered, 1, "the healthy sink got both while the hanging sink's first attempt was still open");
}

#[actix_web::test]
async fn rows_a_claim_has_no_time_left_for_are_given_back_unsent_and_uncounted() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    for i in 0..3 {
        dead_letter_in_store(&app, ep.id, &format!("todo {i}")).await;
    }
    assert_eq!(app.store.fan_out_outbox(256).await.unwrap(), 3, "each dead letter fanned out");
    let rows = app.store.claim_outbox(&[]).await.unwrap();
    assert_eq!(rows.len(), 3);
    // A claim taken 50 s ago: 10 s left, less than one attempt (10 s) and its record.
    let claimed_at = Instant::now().checked_sub(Duration::from_secs(50)).expect("uptime");
    let share = SinkShare {
        sink: sink.parse().unwrap(),
        due: rows,
        claimed_at,
        tally: Tally::default(),
        known: Default::default(),
    };
    let deps = deps(&app);
    let report = drain_sink(&deps, &deps.guard.client(), share).await.unwrap();
    assert_eq!(report.sent, 0);
    assert_eq!(rx.count(), 0, "nothing was posted");
    let back = app
        .db
        .count("SELECT count(*) FROM outbox WHERE status = 'pending' AND claimed_until IS NULL AND attempts = 0")
        .await;
    assert_eq!(back, 3, "every row is claimable again, its attempt uncounted");
    assert_eq!(app.store.claim_outbox(&[]).await.unwrap().len(), 3);
}

#[actix_web::test]
async fn an_answer_after_the_claim_lapsed_and_was_taken_again_changes_nothing() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx).await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    dead_letter_in_store(&app, ep.id, "late").await;
    app.store.fan_out_outbox(256).await.unwrap();
    let first = app.store.claim_outbox(&[]).await.unwrap().remove(0);
    app.db.exec("UPDATE outbox SET claimed_until = now() - interval '1 second'").await;
    let second = app.store.claim_outbox(&[]).await.unwrap().remove(0);
    assert_eq!((first.id, first.attempts, second.attempts), (second.id, 1, 2));
    let late = Record::of(&first, SendOutcome::Done(OutboxStatus::Sent, None));
    assert_eq!(app.store.record_outbox(&[late]).await.unwrap(), 0, "the first claim's answer is fenced off");
    let open = app.db.count("SELECT count(*) FROM outbox WHERE status = 'pending' AND claimed_until > now()").await;
    assert_eq!(open, 1, "the second claim still owns the row");
    let current = Record::of(&second, SendOutcome::RetryAfter(Duration::from_secs(30), "timeout"));
    assert_eq!(app.store.record_outbox(&[current]).await.unwrap(), 1);
    let retry = app
        .db
        .count("SELECT count(*) FROM outbox WHERE last_error = 'timeout' AND next_attempt_at > now() + interval '20 seconds'")
        .await;
    assert_eq!(retry, 1);
}

#[actix_web::test]
async fn a_deleted_sinks_due_and_held_rows_end_undeliverable_and_stay_on_record() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink: SinkId = open_sink(&app, &o, &rx).await.parse().unwrap();
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    dead_letter_in_store(&app, ep.id, "due").await;
    dead_letter_in_store(&app, ep.id, "held").await;
    assert_eq!(app.store.fan_out_outbox(256).await.unwrap(), 2);
    app.db.exec("UPDATE outbox o SET status = 'held' FROM todos t WHERE t.id = o.todo_id AND t.title = 'held'").await;
    app.store.delete_sink(o.scope, sink).await.unwrap();
    let next = another_instance(&app).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'undeliverable' AND last_error = 'sink_gone'", 2)
        .await;
    assert_eq!(rx.count(), 0, "nothing reaches a deleted sink");
    next.stop(false).await;
}

#[actix_web::test]
async fn a_dead_letter_is_recorded_once_whatever_its_sinks_and_fanned_out_to_each_subscribed_one() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let receivers = [
        Receiver::scripted(vec![], Reply::Status(200)).await,
        Receiver::scripted(vec![], Reply::Status(200)).await,
        Receiver::scripted(vec![], Reply::Status(200)).await,
    ];
    for rx in &receivers {
        open_sink(&app, &o, rx).await;
    }
    // A fourth sink subscribed to another queue only.
    let elsewhere = Receiver::scripted(vec![], Reply::Status(200)).await;
    let other: SinkId = open_sink(&app, &o, &elsewhere).await.parse().unwrap();
    app.db.exec(&format!("UPDATE sink_subscriptions SET queues = '{{builds}}' WHERE sink_id = '{}'", other.0)).await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    dead_letter_in_store(&app, ep.id, "one record").await;
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0, "no sink row in the dead letter's transaction");
    assert_eq!(app.store.fan_out_outbox(256).await.unwrap(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 0);
    assert_eq!(
        app.db.count("SELECT count(DISTINCT sink_id) FROM outbox WHERE event = 'todo.dead_lettered'").await,
        3,
        "one row per matching sink"
    );
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", other.0)).await, 0);
    assert_eq!(app.store.fan_out_outbox(256).await.unwrap(), 0, "nothing left");
}

#[actix_web::test]
async fn a_lone_held_row_goes_out_as_itself_when_a_token_returns() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx).await;
    // A burst of 2, one token a second: of three dead letters at once, two go out and
    // the third is held until a token returns.
    app.db.exec("UPDATE sinks SET burst = 2, tokens = 2, budget_per_hour = 3600").await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    for i in 0..3 {
        dead_letter_in_store(&app, ep.id, &format!("todo {i}")).await;
    }
    let next = another_instance(&app).await;
    let got = rx.wait_for(3).await;
    let titles: Vec<String> = got.iter().map(|r| r.json()["title"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert!(titles.iter().all(|t| t.starts_with("Dead letter")), "the held one went out as itself: {titles:?}");
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 3).await;
    next.stop(false).await;
}

#[actix_web::test]
async fn a_held_sink_without_a_token_is_asked_once_per_poll_not_in_a_loop() {
    let app = TestApp::spawn_with(|s| {
        outbox_settings(s);
        s.outbox_poll_ms = 1000;
    })
    .await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink: SinkId = open_sink(&app, &o, &rx).await.parse().unwrap();
    // No token, one an hour: what comes is held.
    app.db.exec("UPDATE sinks SET tokens = 0, budget_per_hour = 1, burst = 1").await;
    let ep = app.agent(o.scope, "w").await;
    dead_letter_in_store(&app, ep.id, "held").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'held'", 1).await;
    // Each ask of the budget rewrites the sink's row (a new xmin). Over three seconds
    // of a 1 s poll the row changes a handful of times; a claim that re-asked at once
    // rewrote it on every round trip (hundreds of times). A late tick of the poll
    // (a loaded machine) can bring the next one closer, so the rate is what is pinned,
    // not the gap between two asks. Deliberately a fixed three-second window, not a wait
    // for an event: the rows's versions are sampled every 5 ms and counted.
    let version = format!("SELECT xmin::text::bigint FROM sinks WHERE id = '{}'", sink.0);
    let mut last = app.db.count(&version).await;
    let mut asks = 0;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(3) {
        let now = app.db.count(&version).await;
        if now != last {
            asks += 1;
            last = now;
        }
        actix_rt::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(asks >= 1, "the held sink's budget was never asked again");
    assert!(asks <= 6, "asked {asks} times in 3 s of a 1 s poll: a loop, not the poll");
    assert_eq!(rx.count(), 0);
}

#[actix_web::test]
async fn a_dead_letter_is_sent_straight_from_its_record_and_each_sinks_row_written_once_with_the_answer() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (app, sinks) = dead_letter_recorded_for(&[&rx], "straight").await;
    let sink = sinks[0];
    let claimed = app.store.claim_outbox_events(256).await.unwrap();
    assert_eq!(claimed.rows.len(), 1);
    // The claim reads what the message says, so the drain reads nothing more for it.
    let facts: Vec<_> = claimed.facts.values().collect();
    assert_eq!(facts.len(), 1, "the claim reads the message's facts");
    assert_eq!(
        (facts[0].todo_title.as_str(), facts[0].queue.as_str(), facts[0].cause.as_str()),
        ("straight", "inbox", "attempts_exhausted")
    );
    assert_eq!((facts[0].attempts, facts[0].max_attempts), (1, 1));
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0, "claimed, not written");
    let tally = Tally::of(&claimed.rows);
    let known = std::sync::Arc::new(claimed.facts);
    let share = SinkShare { sink, due: claimed.rows, claimed_at: Instant::now(), tally, known };
    let deps = deps(&app);
    let report = drain_sink(&deps, &deps.guard.client(), share).await.unwrap();
    assert_eq!(report.sent, 1);
    assert_eq!(rx.count(), 1);
    assert_eq!(
        app.db
            .count(&format!(
                "SELECT count(*) FROM outbox o JOIN todos t ON t.id = o.todo_id WHERE t.title = 'straight' \
                 AND o.sink_id = '{}' AND o.status = 'sent' AND o.attempts = 1 AND o.sent_at IS NOT NULL \
                 AND o.claimed_until IS NULL AND o.dedup_key = 'dead_letter:' || t.id || ':1'",
                sink.0
            ))
            .await,
        1,
        "one row, written ended"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 0, "the record is deleted");
}

#[actix_web::test]
async fn a_record_whose_worker_died_is_claimed_again_only_for_the_sinks_still_owed_a_row() {
    let a = Receiver::scripted(vec![], Reply::Status(200)).await;
    let b = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (app, sinks) = dead_letter_recorded_for(&[&a, &b], "two sinks").await;
    let (sink_a, sink_b) = (sinks[0], sinks[1]);
    let first = app.store.claim_outbox_events(256).await.unwrap();
    assert_eq!(first.rows.len(), 2, "one row per subscribed sink");
    assert!(app.store.claim_outbox_events(256).await.unwrap().rows.is_empty(), "the record is claimed");
    // The worker wrote sink a's row, then died before sink b's.
    let row_a = first.rows.iter().find(|r| r.sink_id == Some(sink_a)).unwrap();
    let sent = Record::of(row_a, SendOutcome::Done(OutboxStatus::Sent, None));
    assert_eq!(app.store.record_outbox(&[sent]).await.unwrap(), 1);
    assert_eq!(app.store.record_outbox(&[sent]).await.unwrap(), 0, "a second writer of the same row is a no-op");
    app.db.exec("UPDATE outbox_events SET claimed_until = now() - interval '1 second'").await;
    let again = app.store.claim_outbox_events(256).await.unwrap();
    let sinks: Vec<_> = again.rows.iter().map(|r| r.sink_id).collect();
    assert_eq!(sinks, vec![Some(sink_b)], "only the sink still owed a row");
    assert_eq!(again.rows[0].id, first.rows.iter().find(|r| r.sink_id == Some(sink_b)).unwrap().id);
    let retry = Record::of(&again.rows[0], SendOutcome::RetryAfter(Duration::from_secs(30), "timeout"));
    app.store.record_outbox(&[retry]).await.unwrap();
    assert_eq!(
        app.db
            .count(&format!(
                "SELECT count(*) FROM outbox WHERE sink_id = '{}' AND status = 'pending' AND last_error = 'timeout' \
                 AND next_attempt_at > now() + interval '20 seconds'",
                sink_b.0
            ))
            .await,
        1,
        "a retry is written pending, for the outbox's claim"
    );
    app.db.exec("UPDATE outbox_events SET claimed_until = now() - interval '1 second'").await;
    let settled = app.store.claim_outbox_events(256).await.unwrap();
    assert!(settled.rows.is_empty());
    assert_eq!(settled.settled.len(), 1, "a record owed nothing comes back to be deleted");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 2);
}

#[actix_web::test]
async fn a_dead_letters_message_says_what_the_dead_letter_was_when_it_was_decided() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (app, _) = dead_letter_recorded_for(&[&rx], "as decided").await;
    // The todo changes before any worker gets to the record (an operator's edit or
    // retry): the message describes the dead letter, not the todo's later state.
    app.db.exec("UPDATE todos SET title = 'changed later', attempt = 0, max_attempts = 9").await;
    let claimed = app.store.claim_outbox_events(256).await.unwrap();
    assert_eq!(claimed.rows.len(), 1);
    let facts: Vec<_> = claimed.facts.values().collect();
    assert_eq!(facts.len(), 1, "the record carries the message's facts");
    assert_eq!((facts[0].todo_title.as_str(), facts[0].attempts, facts[0].max_attempts), ("as decided", 1, 1));
}

#[actix_web::test]
async fn a_record_an_older_release_wrote_without_facts_is_sent_with_its_todos_facts() {
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (app, sinks) = dead_letter_recorded_for(&[&rx], "older record").await;
    let sink = sinks[0];
    // As the trigger before migration `outbox_record_facts` wrote it.
    app.db
        .exec(
            "UPDATE outbox_events SET title = NULL, dead_reason = NULL, attempt = NULL, max_attempts = NULL, \
             source = NULL, webhook_id = NULL, summary = NULL, artifact = NULL, relay = NULL",
        )
        .await;
    let claimed = app.store.claim_outbox_events(256).await.unwrap();
    assert_eq!(claimed.rows.len(), 1, "routed as any record");
    assert!(claimed.facts.is_empty(), "no facts on the record: the drain reads the todo");
    let tally = Tally::of(&claimed.rows);
    let known = std::sync::Arc::new(claimed.facts);
    let share = SinkShare { sink, due: claimed.rows, claimed_at: Instant::now(), tally, known };
    let deps = deps(&app);
    assert_eq!(drain_sink(&deps, &deps.guard.client(), share).await.unwrap().sent, 1);
    let message = rx.seen()[0].json()["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("older record") && message.contains("Failed 1 of 1 attempts"), "{message}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE status = 'sent'").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox_events").await, 0, "the record is deleted");
}

#[actix_web::test]
async fn a_write_that_finds_one_of_its_rows_already_written_writes_the_others() {
    let a = Receiver::scripted(vec![], Reply::Status(200)).await;
    let b = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (app, sinks) = dead_letter_recorded_for(&[&a, &b], "raced").await;
    let sink_a = sinks[0];
    let claimed = app.store.claim_outbox_events(256).await.unwrap();
    assert_eq!(claimed.rows.len(), 2);
    let records: Vec<Record> =
        claimed.rows.iter().map(|row| Record::of(row, SendOutcome::Done(OutboxStatus::Sent, None))).collect();
    // Another writer (a second claimant after this claim lapsed) wrote sink a's row first.
    let a_first: Vec<Record> = records.iter().filter(|r| r.fresh.is_some_and(|f| f.sink == sink_a)).copied().collect();
    assert_eq!(app.store.record_outbox(&a_first).await.unwrap(), 1);
    assert_eq!(app.store.record_outbox(&records).await.unwrap(), 1, "sink b's row is written, sink a's left as it was");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE status = 'sent'").await, 2);
}

#[actix_web::test]
async fn a_claimed_record_stays_on_its_page_so_the_claim_adds_no_index_entry() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    // More records than one page holds, as a burst of dead letters writes them.
    app.db
        .exec(&format!(
            "INSERT INTO outbox_events (scope_id, todo_id, endpoint_id, queue, dead_letter_count, title, dead_reason, \
                                        attempt, max_attempts, source, summary, relay) \
             SELECT '{}', gen_random_uuid(), '{}', 'deploys', 1, 'a dead letter of a burst ' || g, 'max_attempts', \
                    1, 1, 'agent', 'deploy failed: exit status 1', false \
             FROM generate_series(1, 200) g",
            o.scope.0, ep.id.0
        ))
        .await;
    let page = "SELECT count(*) FROM outbox_events WHERE id = (SELECT min(id) FROM outbox_events) \
                AND (ctid::text::point)[0] = 0";
    assert_eq!(app.db.count(page).await, 1, "the first record is on the first page");
    assert!(
        app.db.count("SELECT count(*) FROM outbox_events WHERE (ctid::text::point)[0] > 0").await > 0,
        "the records fill more than one page"
    );
    let claimed = app.store.claim_outbox_events(1).await.unwrap();
    assert_eq!(claimed.settled.len(), 1, "the record (no sink: owed nothing) is claimed");
    assert_eq!(app.db.count(page).await, 1, "its claimed version is on the same page: a heap-only update");
}
