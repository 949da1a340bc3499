//! A dispatcher that panics is restarted behind the same address: hooks keep ringing,
//! and what must outlive it (the hook-change listener, the metrics) is kept.

use switchboard::hooks::worker::CrashForTest;

use super::*;
use testkit::receiver::Receiver;

#[actix_web::test]
async fn a_dispatcher_that_panicked_is_restarted_and_a_later_todo_ready_still_rings() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    let before = intake.deliver(&app, "before", json!({})).await;
    assert_eq!(rx.wait_for(1).await[0].todo_id(), before.to_string());
    let listener = wait_for_listener(&app.db, HOOK_LISTENER_NAME, 0).await;

    let dispatcher = app.dispatcher.clone().expect("hooks are on");
    // The panic drops the message unanswered: the error is the sign it was handled.
    assert!(dispatcher.send(CrashForTest).await.is_err(), "the dispatcher panicked");

    let after = intake.deliver(&app, "after", json!({})).await;
    let got = rx.wait_for(2).await;
    assert_eq!(got[1].todo_id(), after.to_string(), "the restarted dispatcher rang the hook");
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "delivered"), 2).await;
    assert_eq!(
        wait_for_listener(&app.db, HOOK_LISTENER_NAME, 0).await,
        listener,
        "the same listener session, kept across the restart"
    );
    assert!(dispatcher.connected(), "the address every emitter holds still reaches it");
}
