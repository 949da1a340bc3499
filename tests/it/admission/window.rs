//! `per_hour`: a queue admits that many claims per clock hour (UTC); past it every claim
//! of its work is deferred (`window_exhausted`) until the next hour. Claims the queue
//! made earlier in the hour, before the budget existed, count too.

use serde_json::json;

use super::*;

#[actix_web::test]
async fn per_hour_defers_claims_past_the_window_until_the_next_hour() {
    let (app, owner, ep) = TestApp::with_worker().await;
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"per_hour": 2})).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        ids.push(app.create_todo(&ep, "inbox", &format!("t{i}")).await);
    }
    let a = claim_on(&app, &ep, Some("inbox")).await;
    claimed(&a);
    complete(&app, &ep, &a).await;
    claimed(&claim_on(&app, &ep, None).await);

    assert_eq!(claim_on(&app, &ep, Some("inbox")).await, json!({"empty": true, "deferred": "window_exhausted"}));
    assert_eq!(deferred(&claim_on(&app, &ep, None).await), Some("window_exhausted"));
    assert_eq!(deferred(&claim_id(&app, &ep, ids[3]).await), Some("window_exhausted"));
    assert_eq!(app.db.count("SELECT sum(attempts_total)::int8 FROM todos").await, 2, "two claims in the hour, no more");

    // The next hour: the window the row keeps belongs to the hour before.
    app.db.exec("UPDATE queue_admission SET window_hour = window_hour - interval '1 hour'").await;
    claimed(&claim_id(&app, &ep, ids[3]).await);
    assert_eq!(app.db.count("SELECT window_claims::bigint FROM queue_admission").await, 1, "a fresh window");
    claimed(&claim_on(&app, &ep, Some("inbox")).await);
    assert_eq!(deferred(&claim_on(&app, &ep, Some("inbox")).await), None, "nothing left to hold back");
}

#[actix_web::test]
async fn claims_made_this_hour_before_the_budget_existed_count_against_it() {
    let (app, owner, ep) = TestApp::with_worker().await;
    for i in 0..3 {
        app.create_todo(&ep, "inbox", &format!("t{i}")).await;
    }
    let first = claim_on(&app, &ep, Some("inbox")).await;
    complete(&app, &ep, &first).await;
    claimed(&claim_on(&app, &ep, Some("inbox")).await);
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"per_hour": 2})).await;
    assert_eq!(deferred(&claim_on(&app, &ep, Some("inbox")).await), Some("window_exhausted"));
    // Raising the cap admits the next claim at once.
    set_admission(&app, &owner.token, ep.id, "inbox", json!({"per_hour": 3})).await;
    claimed(&claim_on(&app, &ep, Some("inbox")).await);
}
