//! `notify_owner` is capped at 5 calls an hour per endpoint, counted in the database:
//! the sixth answers 429 `rate_limited` with `Retry-After` and queues nothing, on one
//! server or spread over two, one call after another or all at once; another endpoint
//! has its own five; a call leaves the window an hour after it was made.

use futures_util::future::join_all;
use serde_json::json;
use switchboard::startup::Application;

use super::*;
use crate::harness::{Signals, test_settings};
use testkit::receiver::Reply;

/// Pages `ep` through the server at `base`; the status, the body and `Retry-After`.
async fn page_at(app: &TestApp, base: &str, ep: &Ep, title: &str) -> (u16, Value, Option<u64>) {
    let mut resp = app
        .client
        .post(format!("{base}/api/v1/agent/notify-owner"))
        .insert_header(("Authorization", format!("Bearer {}", ep.token)))
        .send_json(&json!({"title": title}))
        .await
        .expect("request");
    let retry_after =
        resp.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    let body = resp.body().await.expect("body");
    (resp.status().as_u16(), serde_json::from_slice(&body).unwrap_or(Value::Null), retry_after)
}

/// A second server on `app`'s database, with the same settings; its base URL and handle.
async fn second_instance(app: &TestApp) -> (String, actix_web::dev::ServerHandle) {
    let mut s = test_settings(&app.db);
    settings(&mut s);
    let signals = Signals::start();
    let second =
        Application::build_with_lookup(&s, &app.db.url, signals.emitter(), switchboard::outbound::SystemLookup)
            .await
            .expect("second instance");
    let base = format!("http://127.0.0.1:{}", second.port());
    let handle = second.handle();
    actix_rt::spawn(second.run_until_stopped());
    (base, handle)
}

#[actix_web::test]
async fn the_sixth_page_within_the_hour_is_rate_limited_with_retry_after_and_enqueues_nothing() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify"]}])).await;
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    for i in 1..=5 {
        let (s, b, _) = page_at(&app, &app.base, &pager, &format!("page {i}")).await;
        assert_eq!((s, b), (202, json!({"enqueued": 1})), "page {i}");
    }
    let (s, b, retry_after) = page_at(&app, &app.base, &pager, "page 6").await;
    assert_eq!((s, b["error"]["code"].as_str()), (429, Some("rate_limited")), "{b}");
    assert!(b["error"]["message"].as_str().unwrap().contains("5 notify_owner calls an hour"), "{b}");
    let retry_after = retry_after.expect("a Retry-After header");
    assert!((3500..=3600).contains(&retry_after), "the first page leaves the window in about an hour: {retry_after}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 5, "the sixth queued nothing");
    assert_eq!(app.db.count("SELECT count(*) FROM agent_notify_calls").await, 5, "nor counted");

    // Another endpoint of the same owner has five of its own.
    let other = agent(&app, &o, "other", &[Verb::PageOwner]).await;
    assert_eq!(page_at(&app, &app.base, &other, "mine").await.0, 202);

    // An hour on, the oldest call leaves the window and one more page goes out.
    app.db
        .exec(&format!(
            "UPDATE agent_notify_calls SET created_at = created_at - interval '1 hour' WHERE id = \
             (SELECT id FROM agent_notify_calls WHERE endpoint_id = '{}' ORDER BY created_at LIMIT 1)",
            pager.id.0
        ))
        .await;
    assert_eq!(page_at(&app, &app.base, &pager, "an hour later").await.0, 202);
    assert_eq!(page_at(&app, &app.base, &pager, "and no more").await.0, 429);
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status IN ('sent', 'held')", 7).await;
}

#[actix_web::test]
async fn the_hourly_limit_holds_across_two_server_instances_in_turn_and_at_once() {
    let app = spawn().await;
    let (second, handle) = second_instance(&app).await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify"]}])).await;

    // In turn: three pages through one server, two through the other, then neither.
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    for (i, base) in [&app.base, &second, &app.base, &second, &app.base].into_iter().enumerate() {
        assert_eq!(page_at(&app, base, &pager, &format!("page {i}")).await.0, 202, "page {i} through {base}");
    }
    assert_eq!(page_at(&app, &second, &pager, "sixth").await.0, 429);
    assert_eq!(page_at(&app, &app.base, &pager, "seventh").await.0, 429);

    // At once: twelve pages of a fresh endpoint racing through both servers.
    let racer = agent(&app, &o, "racer", &[Verb::PageOwner]).await;
    let racing = (0..12).map(|i| {
        let base = if i % 2 == 0 { app.base.clone() } else { second.clone() };
        let (app, racer) = (&app, &racer);
        async move { page_at(app, &base, racer, &format!("race {i}")).await.0 }
    });
    let statuses = join_all(racing).await;
    assert_eq!(statuses.iter().filter(|s| **s == 202).count(), 5, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 7, "{statuses:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 10, "five pages each, one sink");
    handle.stop(false).await;
}

#[actix_web::test]
async fn pages_spend_the_sinks_own_budget_and_what_it_cannot_pay_for_goes_out_coalesced_at_the_loudest_severity() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify"]}])).await;
    let small = json!({"burst": 2});
    let (s, b) = app.call("PATCH", &format!("/api/v1/sinks/{sink}"), Some(&o.token), Some(&small)).await;
    assert_eq!(s, 200, "{b}");
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    for (i, severity) in ["normal", "normal", "low", "high", "low"].into_iter().enumerate() {
        let (s, b) = page(&app, &pager, json!({"title": format!("page {i}"), "severity": severity})).await;
        assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 1})));
    }
    // The burst (2) goes out; the budget holds the other three.
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 2).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'held'", 3).await;
    let first: Vec<Value> = rx.wait_for(2).await.iter().map(|r| r.json()).collect();
    assert_eq!(first.len(), 2, "{first:?}");
    // A token returns (two minutes at 30 an hour): the held pages go out as one message.
    app.db.exec("UPDATE sinks SET tokens_at = tokens_at - interval '125 seconds'").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'coalesced'", 3).await;
    let got: Vec<Value> = rx.wait_for(3).await.iter().map(|r| r.json()).collect();
    assert_eq!(got.len(), 3, "burst + 1 messages: {got:?}");
    let last = &got[2];
    assert!(last["message"].as_str().unwrap_or_default().contains("3 agent notices"), "{got:?}");
    assert_eq!(last["priority"], 8, "the coalesced message is as loud as the loudest page it carries");
}
