//! Every deferral is counted: one `queue_deferrals` row per queue, clock hour (UTC) and
//! reason, whose count is the refusals; and `switchboard_claims_deferred_total{reason}`.

use serde_json::json;

use super::*;

#[actix_web::test]
async fn each_deferral_is_counted_per_queue_hour_and_reason_and_in_the_metric() {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(METRICS_TOKEN.into())).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let paused = app.create_todo(&ep, "held", "held back").await;
    app.create_todo(&ep, "busy", "one").await;
    app.create_todo(&ep, "busy", "two").await;
    app.create_todo(&ep, "hourly", "a").await;
    app.create_todo(&ep, "hourly", "b").await;
    set_admission(&app, &owner.token, ep.id, "held", json!({"paused": true})).await;
    set_admission(&app, &owner.token, ep.id, "busy", json!({"max_in_flight": 1})).await;
    set_admission(&app, &owner.token, ep.id, "hourly", json!({"per_hour": 1})).await;

    assert_eq!(deferred(&claim_on(&app, &ep, Some("held")).await), Some("paused"));
    assert_eq!(deferred(&claim_id(&app, &ep, paused).await), Some("paused"));
    claimed(&claim_on(&app, &ep, Some("busy")).await);
    assert_eq!(deferred(&claim_on(&app, &ep, Some("busy")).await), Some("in_flight_full"));
    claimed(&claim_on(&app, &ep, Some("hourly")).await);
    assert_eq!(deferred(&claim_on(&app, &ep, Some("hourly")).await), Some("window_exhausted"));
    assert_eq!(deferred(&claim_on(&app, &ep, Some("hourly")).await), Some("window_exhausted"));

    let rows = app
        .db
        .plan(
            "SELECT string_agg(format('%s %s %s', queue, reason, count), ', ' ORDER BY queue, reason) \
             FROM queue_deferrals WHERE hour = date_trunc('hour', now(), 'UTC')",
        )
        .await;
    assert_eq!(rows, "busy in_flight_full 1, held paused 2, hourly window_exhausted 2");
    let endpoints =
        app.db.count(&format!("SELECT count(*) FROM queue_deferrals WHERE endpoint_id <> '{}'", ep.id.0)).await;
    assert_eq!(endpoints, 0, "counted on the claiming endpoint");
    for (reason, n) in [("paused", 2), ("in_flight_full", 1), ("window_exhausted", 2)] {
        let series = format!(r#"switchboard_claims_deferred_total{{reason="{reason}"}}"#);
        assert_eq!(app.metric(METRICS_TOKEN, &series).await, n, "{series}");
    }
}
