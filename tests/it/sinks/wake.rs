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
