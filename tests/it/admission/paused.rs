//! A paused queue defers every claim of its work: claim-next on the queue, claim-next on
//! any queue, and claim by id; other queues keep flowing; resuming restores claims.

use serde_json::json;

use super::*;

#[actix_web::test]
async fn a_paused_queue_defers_every_claim_and_resuming_restores_them() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let first = app.create_todo(&ep, "inbox", "first").await;
    app.create_todo(&ep, "inbox", "second").await;
    let settings = set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": true})).await;
    assert_eq!(
        settings,
        json!({"endpoint_id": ep.id.to_string(), "queue": "inbox", "paused": true, "max_in_flight": null, "per_hour": null})
    );

    let on_queue = claim_on(&app, &ep, Some("inbox")).await;
    assert_eq!(on_queue, json!({"empty": true, "deferred": "paused"}));
    assert_eq!(deferred(&claim_on(&app, &ep, None).await), Some("paused"), "any queue: only paused work is there");
    assert_eq!(claim_id(&app, &ep, first).await, json!({"empty": true, "deferred": "paused"}));
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'claimed'").await, 0, "nothing was claimed");
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempt_history").await, 0, "no attempt was opened");

    // Another queue keeps flowing, on its own name and through any queue (which skips
    // the paused one's older work).
    app.create_todo(&ep, "other", "elsewhere").await;
    let c = claim_on(&app, &ep, None).await;
    assert_eq!(c["todo"]["queue"], "other", "{c}");
    complete(&app, &ep, &c).await;

    let resumed = set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": false})).await;
    assert_eq!(resumed["paused"], false);
    assert_eq!(app.db.count("SELECT count(*) FROM queue_admission").await, 0, "a budget of defaults is no budget");
    assert_eq!(claimed(&claim_id(&app, &ep, first).await), first.to_string(), "claim by id works again");
    let next = claim_on(&app, &ep, Some("inbox")).await;
    assert_eq!(next["todo"]["title"], "second", "{next}");
}

#[actix_web::test]
async fn a_paused_queue_with_nothing_pending_answers_plain_empty_and_counts_nothing() {
    let (app, owner, ep) = TestApp::with_worker().await;
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"paused": true})).await;
    assert_eq!(claim_on(&app, &ep, Some("inbox")).await, json!({"empty": true}));
    assert_eq!(claim_on(&app, &ep, None).await, json!({"empty": true}));
    assert_eq!(app.db.count("SELECT count(*) FROM queue_deferrals").await, 0, "no work was held back");
}

#[actix_web::test]
async fn an_endpoints_budgets_are_listed_and_only_while_they_restrict_something() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let path = format!("/api/v1/endpoints/{}/admission", ep.id);
    assert_eq!(app.get(&path, &owner.token).await.1, json!({"queues": []}));
    set_admission(&app, &owner.token, ep.id, "builds", json!({"max_in_flight": 3, "per_hour": 100})).await;
    set_admission(&app, &owner.token, ep.id, "alerts", json!({"paused": true})).await;
    // A field left out is unchanged; null lifts a limit.
    let changed = set_admission(&app, &owner.token, ep.id, "builds", json!({"per_hour": null})).await;
    assert_eq!((changed["max_in_flight"].as_i64(), changed["per_hour"].is_null()), (Some(3), true), "{changed}");
    let (status, listed) = app.get(&path, &owner.token).await;
    assert_eq!(status, 200);
    let queues: Vec<(&str, bool, Option<i64>)> = listed["queues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| (q["queue"].as_str().unwrap(), q["paused"].as_bool().unwrap(), q["max_in_flight"].as_i64()))
        .collect();
    assert_eq!(queues, [("alerts", true, None), ("builds", false, Some(3))]);
    set_admission(&app, &owner.token, ep.id, "builds", json!({"max_in_flight": null})).await;
    assert_eq!(
        app.get(&path, &owner.token).await.1["queues"].as_array().unwrap().len(),
        1,
        "builds has no budget left"
    );
}
