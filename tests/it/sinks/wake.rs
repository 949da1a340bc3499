//! The outbox's wake-up NOTIFY is sent only when the outbox was idle: an insert that
//! finds another due row nobody has claimed does not notify (the worker that woke for
//! that row keeps passing until a pass claims nothing), so busy dead-letter commits do
//! not queue on the server's notification lock. A row that is not due yet (a retry
//! waiting) or already claimed does not count: the insert notifies.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::AsyncMessage;

use crate::harness::TestDb;

/// Counts the `switchboard_outbox` notifications `db` delivers, as they come.
async fn listen(db: &TestDb) -> (tokio_postgres::Client, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let (client, mut connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    actix_rt::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message
                && n.channel() == "switchboard_outbox"
            {
                let _ = tx.send(());
            }
        }
    });
    client.batch_execute("LISTEN switchboard_outbox").await.unwrap();
    (client, rx)
}

/// Waits for the next notification (a deadline, not a guess: a missing one fails).
async fn next(rx: &mut tokio::sync::mpsc::UnboundedReceiver<()>) {
    tokio::time::timeout(Duration::from_secs(10), rx.recv()).await.expect("a notification").unwrap();
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
    // Everything sent: c finds an idle outbox again and notifies. Notifications arrive
    // in commit order, so had b notified, it would be counted before c's.
    db.exec("UPDATE outbox SET status = 'sent'").await;
    db.exec(&insert("c", "")).await;
    next(&mut rx).await;
    assert!(rx.try_recv().is_err(), "b notified although a waited unclaimed");
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
    assert!(rx.try_recv().is_err());
}

#[actix_web::test]
async fn a_dead_letter_notifies_only_when_no_other_work_waits_for_the_worker() {
    use super::instances::{dead_letter_in_store, open_sink, outbox_settings, stop_and_wait};
    use crate::notify::receiver::{Receiver, Reply};
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
    app.db.exec("DELETE FROM outbox_events").await;
    // Nothing waits: the third notifies (had the second, it would come first).
    dead_letter_in_store(&app, ep.id, "third").await;
    next(&mut rx).await;
    assert!(rx.try_recv().is_err(), "the second notified although the first waited");
    // A due outbox row nobody claimed is waiting work too: the fourth does not notify.
    app.db.exec("DELETE FROM outbox_events").await;
    app.store.fan_out_outbox(1).await.unwrap();
    app.db
        .exec(&format!(
            "INSERT INTO outbox (scope_id, event, severity, dedup_key) VALUES ('{}', 'todo.dead_lettered', 'high', 'k')",
            o.scope.0
        ))
        .await;
    next(&mut rx).await;
    dead_letter_in_store(&app, ep.id, "fourth").await;
    app.db.exec("DELETE FROM outbox_events").await;
    app.db.exec("UPDATE outbox SET status = 'sent'").await;
    dead_letter_in_store(&app, ep.id, "fifth").await;
    next(&mut rx).await;
    assert!(rx.try_recv().is_err(), "the fourth notified although a due row waited");
}
