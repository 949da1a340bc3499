//! The outbox's wake-up NOTIFY is sent only when the outbox was idle: an insert that
//! finds another due row nobody has claimed does not notify (the worker that woke for
//! that row keeps passing until a pass claims nothing), so busy dead-letter commits do
//! not queue on the server's notification lock. A row that is not due yet (a retry
//! waiting) or already claimed does not count: the insert notifies. That nothing
//! notified is shown by a marker notification arriving first (commit order).

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::harness::TestDb;

/// The `switchboard_outbox` notifications `db` delivers (their payloads), as they come.
async fn listen(db: &TestDb) -> (tokio_postgres::Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    let (client, mut connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    actix_rt::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message
                && n.channel() == "switchboard_outbox"
            {
                let _ = tx.send(n.payload().to_owned());
            }
        }
    });
    client.batch_execute("LISTEN switchboard_outbox").await.unwrap();
    (client, rx)
}

/// Waits for the next notification (a deadline, not a guess: a missing one fails).
async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) {
    let payload = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("a notification").unwrap();
    assert_ne!(payload, MARKER, "a wake-up was expected before the marker");
}

/// The payload of the test's own marker notification.
const MARKER: &str = "test-marker";

/// Asserts that nothing committed so far notified: a marker notification is sent now
/// and, notifications arriving in commit order, any wake-up sent before it arrives
/// first.
async fn no_wake_up_so_far(db: &TestDb, rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>, why: &str) {
    db.exec(&format!("NOTIFY switchboard_outbox, '{MARKER}'")).await;
    let payload = tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("the marker").unwrap();
    assert_eq!(payload, MARKER, "{why}");
}

#[actix_web::test]
async fn an_insert_notifies_only_when_no_other_due_row_waits_unclaimed() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let scope = store.create_human("a@example.com", "A", None).await.unwrap().scope;
    let (_listener, mut rx) = listen(&db).await;
    let insert = |key: &str, extra: &str| {
        format!(
            "INSERT INTO outbox (scope_id, event, severity, dedup_key{}) VALUES ('{}', 'todo.dead_lettered', 'high', '{key}'{})",
            if extra.is_empty() { "" } else { ", next_attempt_at" },
            scope.0,
            extra
        )
    };
    // An idle outbox: the first row notifies.
    db.exec(&insert("a", "")).await;
    next(&mut rx).await;
    // Row a waits unclaimed: b does not notify.
    db.exec(&insert("b", "")).await;
    no_wake_up_so_far(&db, &mut rx, "b notified although a waited unclaimed").await;
    // Everything sent: c finds an idle outbox again and notifies.
    db.exec("UPDATE outbox SET status = 'sent'").await;
    db.exec(&insert("c", "")).await;
    next(&mut rx).await;
    // A retry not yet due does not count as waiting work: e notifies.
    db.exec("UPDATE outbox SET status = 'sent'").await;
    db.exec(&insert("d", ", now() + interval '1 hour'")).await;
    next(&mut rx).await;
    db.exec(&insert("e", "")).await;
    next(&mut rx).await;
    // A row a worker has claimed does not count either: f notifies.
    db.exec("UPDATE outbox SET claimed_until = now() + interval '1 minute' WHERE dedup_key = 'e'").await;
    db.exec(&insert("f", "")).await;
    next(&mut rx).await;
    no_wake_up_so_far(&db, &mut rx, "one wake-up per insert into an idle outbox").await;
}

#[actix_web::test]
async fn a_dead_letter_notifies_only_when_no_other_work_waits_for_the_worker() {
    use super::instances::{dead_letter_in_store, open_sink, outbox_settings, stop_and_wait};
    use testkit::receiver::{Receiver, Reply};
    let app = crate::harness::TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx_sink = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx_sink).await;
    let ep = app.agent(o.scope, "w").await;
    // No worker: what the dead letters record stays where they put it.
    stop_and_wait(&app).await;
    let (_listener, mut rx) = listen(&app.db).await;
    dead_letter_in_store(&app, ep.id, "first").await;
    next(&mut rx).await;
    // The first waits for fan-out: the second does not notify.
    dead_letter_in_store(&app, ep.id, "second").await;
    no_wake_up_so_far(&app.db, &mut rx, "the second notified although the first waited").await;
    app.db.exec("DELETE FROM outbox_events").await;
    // Nothing waits: the third notifies.
    dead_letter_in_store(&app, ep.id, "third").await;
    next(&mut rx).await;
    // A due outbox row nobody claimed is waiting work too: the fourth does not notify.
    app.db.exec("DELETE FROM outbox_events").await;
    app.db
        .exec(&format!(
            "INSERT INTO outbox (scope_id, event, severity, dedup_key) VALUES ('{}', 'todo.dead_lettered', 'high', 'k')",
            o.scope.0
        ))
        .await;
    next(&mut rx).await;
    dead_letter_in_store(&app, ep.id, "fourth").await;
    no_wake_up_so_far(&app.db, &mut rx, "the fourth notified although a due row waited").await;
    app.db.exec("DELETE FROM outbox_events").await;
    app.db.exec("UPDATE outbox SET status = 'sent'").await;
    dead_letter_in_store(&app, ep.id, "fifth").await;
    next(&mut rx).await;
}

#[actix_web::test]
async fn the_workers_own_fan_out_sends_no_wake_up() {
    use super::instances::{dead_letter_in_store, open_sink, outbox_settings, stop_and_wait};
    use testkit::receiver::{Receiver, Reply};
    let app = crate::harness::TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx_sink = Receiver::scripted(vec![], Reply::Status(200)).await;
    open_sink(&app, &o, &rx_sink).await;
    let ep = app.agent(o.scope, "w").await;
    stop_and_wait(&app).await;
    let (_listener, mut rx) = listen(&app.db).await;
    dead_letter_in_store(&app, ep.id, "fanned out").await;
    next(&mut rx).await;
    // Into an idle outbox, but by the worker, which claims right after: no wake-up.
    assert_eq!(app.store.fan_out_outbox(256).await.unwrap(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 1);
    no_wake_up_so_far(&app.db, &mut rx, "the fan-out notified").await;
}

#[actix_web::test]
async fn rows_the_worker_writes_ended_or_held_wake_nobody() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let scope = store.create_human("a@example.com", "A", None).await.unwrap().scope;
    let (_listener, mut rx) = listen(&db).await;
    let insert = |key: &str, status: &str| {
        format!(
            "INSERT INTO outbox (scope_id, event, severity, dedup_key, status) \
             VALUES ('{}', 'todo.dead_lettered', 'high', '{key}', '{status}')",
            scope.0
        )
    };
    for (key, status) in [("a", "sent"), ("b", "undeliverable"), ("c", "held")] {
        db.exec(&insert(key, status)).await;
    }
    no_wake_up_so_far(&db, &mut rx, "an ended or held row notified").await;
    db.exec(&insert("d", "pending")).await;
    next(&mut rx).await;
}
