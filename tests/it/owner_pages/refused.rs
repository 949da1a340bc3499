//! Off by default: an endpoint vended with the default grants (the drain family) is
//! refused `notify_owner` and every `notifications` verb with 403, and nothing is
//! queued, created, changed or sent. Neither grant implies the other.

use serde_json::json;

use super::*;
use testkit::receiver::Reply;

/// Everything the refused calls could have changed, counted.
async fn footprint(app: &TestApp) -> [i64; 4] {
    [
        app.db.count("SELECT count(*) FROM outbox").await,
        app.db.count("SELECT count(*) FROM sinks").await,
        app.db.count("SELECT count(*) FROM sink_subscriptions").await,
        app.db.count("SELECT count(*) FROM agent_notify_calls").await,
    ]
}

#[actix_web::test]
async fn an_endpoint_with_the_default_grants_is_refused_notify_owner_and_every_sink_verb_and_nothing_is_enqueued() {
    let app = spawn().await;
    let o = app.owner("owner@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify", "todo.dead_lettered"]}])).await;
    let spare = connection(&app, &o, "spare", "spare-token", &rx.base()).await;
    let plain = app.endpoint(o.scope, "plain", &[]).await;
    let todo = app.create_todo(&app.agent(o.scope, "filler").await, "inbox", "a todo").await;
    let before = footprint(&app).await;

    let put = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": spare});
    let subs = json!({"subscriptions": [{"events": ["agent.notify"]}]});
    let calls = [
        ("POST", "/api/v1/agent/notify-owner".to_owned(), Some(json!({"title": "wake up", "severity": "high"}))),
        ("POST", "/api/v1/agent/notify-owner".to_owned(), Some(json!({"title": "about", "todo_id": todo}))),
        ("GET", "/api/v1/agent/sinks".to_owned(), None),
        ("PUT", "/api/v1/agent/sinks/phone".to_owned(), Some(put.clone())),
        ("PUT", "/api/v1/agent/sinks/another".to_owned(), Some(put)),
        ("DELETE", "/api/v1/agent/sinks/phone".to_owned(), None),
        ("POST", "/api/v1/agent/sinks/phone/test".to_owned(), None),
        ("PUT", "/api/v1/agent/sinks/phone/subscriptions".to_owned(), Some(subs)),
    ];
    for (method, path, body) in &calls {
        let (s, b) = app.call(method, path, Some(&plain.token), body.as_ref()).await;
        assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (403, Some("forbidden")), "{method} {path}: {b}");
        assert!(b["error"]["message"].as_str().unwrap().contains("not granted"), "{b}");
    }
    assert_eq!(footprint(&app).await, before, "nothing queued, created, changed or recorded");
    assert_eq!(rx.count(), 0, "no message and no test send reached the sink");
}

#[actix_web::test]
async fn the_notifications_grant_does_not_imply_notify_owner_nor_the_reverse() {
    let app = spawn().await;
    let o = app.owner("owner@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify"]}])).await;
    let manager = agent(&app, &o, "manager", &[Verb::Notifications]).await;
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    let before = footprint(&app).await;
    let (s, b) = page(&app, &manager, json!({"title": "hello"})).await;
    assert_eq!(s, 403, "{b}");
    let (s, b) = app.get("/api/v1/agent/sinks", &pager.token).await;
    assert_eq!(s, 403, "{b}");
    assert_eq!(footprint(&app).await, before);
    assert_eq!(rx.count(), 0);
}
