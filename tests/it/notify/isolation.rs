//! A receiver that hangs or is down costs only its own hooks' delivery slots: claims
//! stay fast and another endpoint's hooks hear their notifications at once.

use std::time::{Duration, Instant};

use serde_json::json;

use super::receiver::{Receiver, Reply, down_url};
use super::*;

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
    // Five deliveries are now held open by the hanging receiver (each for up to 5 s),
    // and five more are failing and waiting to retry against the one that is down.
    hanging.wait_for(5).await;
    let hung_at = Instant::now();

    for _ in 0..5 {
        let started = Instant::now();
        let claimed = app.claim_next(&stuck).await;
        let took = started.elapsed();
        assert!(claimed["todo"]["id"].is_string(), "{claimed}");
        assert!(took < Duration::from_millis(1000), "a claim took {took:?} while a receiver hangs");
    }

    let healthy_intake = generic(&app, &owner, &healthy, "builds", 3).await;
    let started = Instant::now();
    let id = healthy_intake.deliver(&app, "prompt", json!({})).await;
    let got = fine.wait_for(1).await;
    let latency = got[0].at.duration_since(started);
    assert_eq!(got[0].todo_id(), id.to_string());
    assert!(latency < Duration::from_secs(2), "another endpoint's hook waited {latency:?}");
    assert!(hung_at.elapsed() < Duration::from_secs(4), "all of this happened while the receiver hung");
    assert_eq!(hanging.count(), 5, "the hanging receiver is still holding its first attempts");
}
