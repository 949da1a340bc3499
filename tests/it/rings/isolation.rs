//! A receiver that hangs or is down costs only its own hooks' delivery slots: claims
//! and another endpoint's hooks are served while its attempts are still held open.

use serde_json::json;

use super::*;
use testkit::receiver::{Receiver, Reply, down_url};

#[actix_web::test]
async fn a_hanging_or_down_receiver_slows_neither_claims_nor_another_endpoints_hooks() {
    let (app, owner, stuck) = with_worker().await;
    let healthy = app.agent(owner.scope, "healthy").await;
    let hanging = Receiver::scripted(vec![], Reply::Hang).await;
    let fine = Receiver::start().await;
    hook(&app, &owner, &stuck, &hanging.url(), &[]).await;
    hook(&app, &owner, &stuck, &down_url(), &[]).await;
    hook(&app, &owner, &healthy, &fine.url(), &[]).await;

    let stuck_intake = generic(&app, &owner, &stuck, "builds", 3).await;
    let mut todos = Vec::new();
    for n in 0..5 {
        todos.push(stuck_intake.deliver(&app, &format!("stuck-{n}"), json!({})).await);
    }
    // Five deliveries are now held open by the hanging receiver (each until its attempt
    // times out), and five more are failing and waiting to retry against the one that
    // is down.
    hanging.wait_for(5).await;

    for _ in 0..5 {
        let claimed = app.claim_next(&stuck).await;
        assert!(claimed["todo"]["id"].is_string(), "{claimed}");
    }

    let healthy_intake = generic(&app, &owner, &healthy, "builds", 3).await;
    let id = healthy_intake.deliver(&app, "prompt", json!({})).await;
    let got = fine.wait_for(1).await;
    assert_eq!(got[0].todo_id(), id.to_string());
    // All of this happened while the hanging receiver still held every first attempt:
    // none has timed out (and none was tried again).
    assert_eq!(metric(&app, &attempts("timeout")).await, 0, "the claims and the other hook waited for a timeout");
    assert_eq!(hanging.count(), 5, "the hanging receiver is still holding its first attempts");
}
