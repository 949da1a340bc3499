//! The REST verbs' rules hold over MCP because they are the same code: a rate limit counts
//! calls through both surfaces, and the notifications verbs (whose test send is bound to
//! its thread, so it runs on the MCP surface's own arbiter) reach the same sinks.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::grants::Verb;

use super::{Client, Mode, code_of, mcp_url};
use crate::harness::TestApp;
use crate::rings::spawn_with;
use testkit::receiver::Receiver;

#[actix_web::test]
async fn notify_owners_hourly_limit_counts_rest_and_mcp_calls_alike() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.endpoint(owner.scope, "pager", &[Verb::PageOwner]).await;
    for n in 0..3 {
        let (s, b) = app.post("/api/v1/agent/notify-owner", &ep.token, json!({"title": format!("rest {n}")})).await;
        assert_eq!(s, StatusCode::ACCEPTED, "{b}");
    }
    let mut mcp = Client::connect(&mcp_url(&app, "pager"), &ep.token, Mode::Legacy).await;
    for n in 0..2 {
        let answer = mcp.ok("notify_owner", json!({"title": format!("mcp {n}")})).await;
        assert_eq!(answer, json!({"enqueued": 0}), "no sink subscribes: {answer}");
    }
    let text = mcp.refused("notify_owner", json!({"title": "one too many"})).await;
    assert_eq!(code_of(&text), "rate_limited", "{text}");
    assert!(text.contains("retry after"), "{text}");
    let (s, b) = app.post("/api/v1/agent/notify-owner", &ep.token, json!({"title": "and over REST"})).await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{b}");
}

#[actix_web::test]
async fn the_notifications_verbs_manage_and_test_the_owners_sinks() {
    let app = spawn_with(|_| {}).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.endpoint(owner.scope, "ops", &[Verb::Notifications]).await;
    let rx = Receiver::start().await;
    let body = json!({"name": "phone", "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = app.post("/api/v1/connections", &owner.token, body).await;
    assert_eq!(s, 201, "{c}");
    let mut mcp = Client::connect(&mcp_url(&app, "ops"), &ep.token, Mode::Auto).await;

    // No URL: the sink posts to its connection's destination.
    let sink = mcp.ok("set_sink", json!({"name": "phone", "kind": "gotify", "connection_id": c["id"]})).await;
    assert_eq!((&sink["name"], &sink["enabled"]), (&json!("phone"), &json!(true)), "{sink}");
    let tested = mcp.ok("test_sink", json!({"name": "phone"})).await;
    assert_eq!(tested["ok"], true, "{tested}");
    assert_eq!(rx.wait_for(1).await.len(), 1, "one test message reached the sink");
    let subs = json!({"name": "phone", "subscriptions": [{"events": ["todo.dead_lettered"], "min_severity": "high"}]});
    let saved = mcp.ok("set_sink_subscriptions", subs).await;
    assert_eq!(saved["subscriptions"][0]["events"], json!(["todo.dead_lettered"]), "{saved}");
    let listed = mcp.ok("list_sinks", json!({})).await;
    assert_eq!(listed["sinks"].as_array().unwrap().len(), 1, "{listed}");
    let deleted = mcp.call("delete_sink", json!({"name": "phone"})).await;
    assert_eq!((&deleted["is_error"], &deleted["text"]), (&json!(false), &json!("deleted")), "{deleted}");
    let text = mcp.refused("test_sink", json!({"name": "phone"})).await;
    assert_eq!(code_of(&text), "not_found", "{text}");
}
