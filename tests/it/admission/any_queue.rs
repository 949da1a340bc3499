//! Claim-next on any queue takes the oldest todo among the queues whose budgets admit a
//! claim: a full or exhausted queue's older work waits, another queue's newer work goes.

use serde_json::json;

use super::*;

#[actix_web::test]
async fn a_claim_on_any_queue_skips_full_and_exhausted_queues_for_the_oldest_admissible_work() {
    let (app, owner, ep) = TestApp::with_worker().await;
    for i in 0..3 {
        app.create_todo(&ep, "builds", &format!("build {i}")).await;
    }
    app.create_todo(&ep, "hourly", "hourly 0").await;
    app.create_todo(&ep, "hourly", "hourly 1").await;
    app.create_todo(&ep, "free", "free 0").await;
    set_admission(&app, &owner.token, ep.id, "builds", json!({"max_in_flight": 1})).await;
    set_admission(&app, &owner.token, ep.id, "hourly", json!({"per_hour": 1})).await;

    let titles = async || {
        let c = claim_on(&app, &ep, None).await;
        claimed(&c);
        c["todo"]["title"].as_str().unwrap().to_owned()
    };
    assert_eq!(titles().await, "build 0", "the oldest todo, its queue admitting");
    assert_eq!(titles().await, "hourly 0", "builds is full: the next oldest elsewhere");
    assert_eq!(titles().await, "free 0", "builds full, hourly spent: the queue without a budget");
    // Nothing admissible is left: the oldest held-back work says why.
    assert_eq!(claim_on(&app, &ep, None).await, json!({"empty": true, "deferred": "in_flight_full"}));
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await, 3);
}
