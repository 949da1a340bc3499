//! A sink's test send, against real Gotify- and Apprise-contract receivers on loopback:
//! the exact request each kind takes, what an error answer reports, the guard on every
//! dial, and the per-minute limit.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::config::CidrList;

use super::*;
use testkit::receiver::{Receiver, Reply};

/// The app allowed to post to loopback over plain http (where the receivers listen).
async fn spawn_local() -> TestApp {
    spawn_with(|s| {
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    })
    .await
}

async fn sink_at(app: &TestApp, o: &Owner, kind: &str, base: &str, secret: &str, mode: Option<&str>) -> String {
    let c = connection_at(app, o, &format!("{kind}-{}", base.len()), kind, secret, base).await;
    let mut body = json!({"name": format!("{kind} sink {}", mode.unwrap_or("default")), "kind": kind, "base_url": base, "connection_id": c["id"]});
    if let Some(mode) = mode {
        body["apprise_mode"] = json!(mode);
    }
    let (s, b) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{b}");
    b["id"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_gotify_test_send_posts_one_message_with_the_token_in_a_header_only() {
    let app = spawn_local().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let token = "AgOtIfYaPpToKeN";
    let sink = sink_at(&app, &o, "gotify", &rx.base(), token, None).await;
    let (s, answer) = app.post(&format!("/api/v1/sinks/{sink}/test"), &o.token, json!({})).await;
    assert_eq!((s, answer.clone()), (StatusCode::OK, json!({"ok": true, "error": null})));
    let got = rx.wait_for(1).await;
    assert_eq!((got[0].method.as_str(), got[0].path.as_str()), ("POST", "/message"));
    assert_eq!(got[0].header("x-gotify-key"), Some(token));
    let body = got[0].json();
    assert_eq!(body["priority"], 5, "a test is normal severity");
    assert!(body["title"].as_str().unwrap().contains("gotify sink"), "{body}");
    assert!(!String::from_utf8_lossy(&got[0].body).contains(token), "the token travels in the header only");
    assert_eq!(rx.seen().len(), 1, "exactly one message");
}

#[actix_web::test]
async fn an_apprise_test_send_uses_the_key_path_or_the_urls_body_and_reports_partial_and_configuration() {
    let app = spawn_local().await;
    let o = app.owner("a@example.com").await;
    let rx =
        Receiver::scripted(vec![Reply::Status(200), Reply::Status(424), Reply::Status(204)], Reply::Status(200)).await;
    let keyed = sink_at(&app, &o, "apprise", &rx.base(), "team-alerts", None).await;
    let (_, ok) = app.post(&format!("/api/v1/sinks/{keyed}/test"), &o.token, json!({})).await;
    assert_eq!(ok["ok"], true, "{ok}");
    let (_, partial) = app.post(&format!("/api/v1/sinks/{keyed}/test"), &o.token, json!({})).await;
    assert_eq!(
        (partial["ok"].clone(), partial["error"]["code"].clone()),
        (json!(false), json!("partial")),
        "{partial}"
    );
    let (_, config) = app.post(&format!("/api/v1/sinks/{keyed}/test"), &o.token, json!({})).await;
    assert_eq!(config["error"]["code"], "configuration", "{config}");
    let urls = "tgram://bottoken/chatid";
    let stateless = sink_at(&app, &o, "apprise", &format!("{}/", rx.base()), urls, Some("urls")).await;
    let (_, ok) = app.post(&format!("/api/v1/sinks/{stateless}/test"), &o.token, json!({})).await;
    assert_eq!(ok["ok"], true, "{ok}");
    let got = rx.wait_for(4).await;
    assert_eq!(got[0].path, "/notify/team-alerts");
    let keyed_body = got[0].json();
    assert_eq!((keyed_body["format"].clone(), keyed_body["type"].clone()), (json!("text"), json!("warning")));
    assert_eq!(got[3].path, "/notify/");
    assert_eq!(got[3].json()["urls"], urls);
}

#[actix_web::test]
async fn a_failing_sink_reports_its_class_and_no_secret() {
    let app = spawn_local().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![Reply::Status(401), Reply::Status(503)], Reply::Status(200)).await;
    let token = "sEcReT-tOkEn-x";
    let sink = sink_at(&app, &o, "gotify", &rx.base(), token, None).await;
    let path = format!("/api/v1/sinks/{sink}/test");
    let (_, auth) = app.post(&path, &o.token, json!({})).await;
    assert_eq!((auth["ok"].clone(), auth["error"]["code"].clone()), (json!(false), json!("auth")), "{auth}");
    let (_, down) = app.post(&path, &o.token, json!({})).await;
    assert_eq!(down["error"]["code"], "server_error", "{down}");
    assert!(!auth.to_string().contains(token) && !down.to_string().contains(token));
}

#[actix_web::test]
async fn the_guard_checks_the_test_dial_and_a_sink_takes_six_tests_a_minute() {
    // Saved while loopback was allowed; the instance now refuses it: the dial is refused.
    let app = spawn_local().await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_at(&app, &o, "gotify", &rx.base(), "token", None).await;
    // Where the dial goes is the connection's destination (the sink keeps a copy).
    app.db.exec("UPDATE connections SET base_url = 'http://10.1.2.3:9'").await;
    app.db.exec("UPDATE sinks SET base_url = 'http://10.1.2.3:9' WHERE name = 'gotify sink default'").await;
    let path = format!("/api/v1/sinks/{sink}/test");
    let (_, refused) = app.post(&path, &o.token, json!({})).await;
    assert_eq!(refused["error"]["code"], "forbidden_target", "{refused}");
    assert_eq!(refused["error"]["message"], switchboard::outbound::refusal::FORBIDDEN_TARGET_MESSAGE);
    for _ in 0..5 {
        assert_eq!(app.post(&path, &o.token, json!({})).await.0, StatusCode::OK);
    }
    let (s, limited) = app.post(&path, &o.token, json!({})).await;
    assert_eq!(
        (s, limited["error"]["code"].clone()),
        (StatusCode::TOO_MANY_REQUESTS, json!("rate_limited")),
        "{limited}"
    );
    assert!(rx.seen().is_empty(), "nothing ever reached the receiver");
}
