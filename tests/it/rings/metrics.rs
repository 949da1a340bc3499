//! The channel's counters on `GET /metrics`: notifications by type and outcome (the
//! dead letter a type of its own), attempts by result, drops over the hook's rate.

use std::num::NonZeroU32;

use serde_json::json;

use super::*;
use testkit::receiver::Receiver;

#[actix_web::test]
async fn a_delivered_dead_letter_is_counted_under_its_own_type_with_its_attempt() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    for kind in ["todo.ready", "todo.dead_lettered"] {
        assert_eq!(metric(&app, &notifications(kind, "delivered")).await, 0, "{kind}: nothing yet");
    }
    let id = generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;
    fail_to_dead_letter(&app, &ep, id).await;
    rx.wait_for(2).await;

    wait_metric(&app, METRICS_TOKEN, &notifications("todo.dead_lettered", "delivered"), 1).await;
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "delivered"), 1).await;
    assert_eq!(metric(&app, &attempts("2xx")).await, 2, "one attempt each");
    for (kind, outcome) in
        [("todo.dead_lettered", "failed"), ("todo.dead_lettered", "dropped"), ("todo.ready", "failed")]
    {
        assert_eq!(metric(&app, &notifications(kind, outcome)).await, 0, "{kind} {outcome}");
    }
}

#[actix_web::test]
async fn a_notification_over_the_hooks_rate_is_dropped_and_counted_whatever_its_type() {
    let app = spawn_with(|s| s.notify_hook_rate_per_minute = NonZeroU32::new(1).unwrap()).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    hook(&app, &owner, &ep, &rx.url(), &[]).await;
    // Two notifications for one hook within the minute: the ready spends the only
    // token, the dead letter finds none (the same limiter for both types).
    let id = generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;
    rx.wait_for(1).await;
    fail_to_dead_letter(&app, &ep, id).await;

    wait_metric(&app, METRICS_TOKEN, &notifications("todo.dead_lettered", "dropped"), 1).await;
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "delivered"), 1).await;
    assert_eq!(metric(&app, &notifications("todo.dead_lettered", "delivered")).await, 0);
    assert_eq!(metric(&app, &attempts("2xx")).await, 1, "a dropped notification is never attempted");
    assert_eq!(rx.count(), 1);
    assert_eq!(rx.seen()[0].kind(), "todo.ready");
}
