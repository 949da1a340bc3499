//! Cairn publication against a Cairn-contract receiver: a 201 gives the sinks a short
//! message linking the artifact; a 5xx gives them the full text and records the
//! failure; the request carries the specified headers and TTL. A cairn connection's
//! test asks the Cairn's whoami with the token and says what a refusal means.

use serde_json::json;

use super::*;
use testkit::receiver::Reply;

/// A cairn connection of `o` publishing to `cairn`; its id.
async fn cairn_connection(app: &TestApp, o: &Owner, cairn: &Receiver) -> String {
    let body = json!({"name": "cairn", "kind": "cairn", "secret": "cairn_pat_secret", "base_url": cairn.base()});
    let (s, c) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{c}");
    c["id"].as_str().unwrap().to_owned()
}

#[actix_web::test]
async fn a_published_digest_sends_a_short_message_linking_the_artifact_with_the_specified_headers() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let created = r#"{"id":"art_1","url":"https://cairn.example/a/art_1","mcp":"mcp://cairn/art_1","expires_at":"2026-12-09T09:00:00Z"}"#;
    let cairn = Receiver::scripted(vec![], Reply::Json(201, created.into())).await;
    let phone = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &phone).await;
    let conn = cairn_connection(&app, &o, &cairn).await;
    let d = digest(
        &app,
        &o,
        json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink], "cairn_connection_id": conn,
               "cairn_ttl_seconds": 86400, "skip_when_quiet": false}),
    )
    .await;
    let id = d["id"].as_str().unwrap();
    make_due(&app, id, "0 seconds").await;
    let published = cairn.wait_for(1).await;
    let told = phone.wait_for(1).await;
    let r = &published[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v1/artifacts"));
    assert_eq!(r.header("authorization"), Some("Bearer cairn_pat_secret"));
    assert_eq!(r.header("content-type"), Some("text/markdown"));
    assert_eq!(r.header("x-cairn-type"), Some("markdown"));
    assert_eq!(r.header("x-cairn-tags"), Some("switchboard-digest"));
    assert_eq!(r.header("x-cairn-ttl-seconds"), Some("86400"));
    assert!(
        r.header("x-cairn-title").unwrap().starts_with("Switchboard digest - morning"),
        "{:?}",
        r.header("x-cairn-title")
    );
    assert!(String::from_utf8_lossy(&r.body).contains("Dead letters:"), "the raw digest is the body");
    let m = told[0].json();
    assert_eq!(
        m["message"].as_str().unwrap().lines().next(),
        Some("The full digest: https://cairn.example/a/art_1"),
        "{m}"
    );
    wait_runs(&app, id, "sent", 1).await;
    let url = app.db.count(&format!("SELECT count(*) FROM digest_runs WHERE artifact_url = 'https://cairn.example/a/art_1' AND digest_id = '{}'", &id[3..])).await;
    assert_eq!(url, 1);
}

#[actix_web::test]
async fn a_cairn_failure_sends_the_full_text_to_the_sinks_and_is_recorded() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let cairn =
        Receiver::scripted(vec![], Reply::Json(503, r#"{"error":{"code":"unavailable","message":"down"}}"#.into()))
            .await;
    let phone = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &phone).await;
    let conn = cairn_connection(&app, &o, &cairn).await;
    dead_letter(&app, &o, "ci-bot", "Lost in the outage").await;
    let d = digest(
        &app,
        &o,
        json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink], "cairn_connection_id": conn}),
    )
    .await;
    let id = d["id"].as_str().unwrap();
    make_due(&app, id, "0 seconds").await;
    let told = phone.wait_for(1).await;
    let text = told[0].json()["message"].as_str().unwrap().to_owned();
    assert!(text.starts_with("Publishing this digest to Cairn failed (cairn answered 503 (unavailable))"), "{text}");
    assert!(text.contains("ci-bot/builds: 1 dead letter"), "the full text follows: {text}");
    let (_, shown) = app.get(&format!("/api/v1/digests/{id}"), &o.token).await;
    assert_eq!(shown["runs"][0]["cairn_error"], "cairn answered 503 (unavailable)", "{shown}");
    assert_eq!(shown["runs"][0]["outcome"], "sent");
}

#[actix_web::test]
async fn testing_a_cairn_connection_asks_whoami_with_its_token_and_reports_a_refused_token() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let refused = r#"{"error":{"code":"unauthenticated","message":"no such token cairn_pat_secret"}}"#;
    let cairn = Receiver::scripted(
        vec![Reply::Json(200, r#"{"id":"usr_1","name":"switchboard"}"#.into()), Reply::Json(401, refused.into())],
        Reply::Status(503),
    )
    .await;
    let conn = cairn_connection(&app, &o, &cairn).await;
    let test = format!("/api/v1/connections/{conn}/test");

    let (s, known) = app.post(&test, &o.token, json!({})).await;
    assert_eq!((s.as_u16(), known), (200, json!({"ok": true, "error": null})));
    let (s, unknown) = app.post(&test, &o.token, json!({})).await;
    assert_eq!(s, 200, "{unknown}");
    assert_eq!((unknown["ok"].clone(), unknown["error"]["code"].clone()), (json!(false), json!("auth")), "{unknown}");
    assert!(!unknown.to_string().contains("cairn_pat_secret"), "neither the token nor Cairn's text: {unknown}");
    let (_, down) = app.post(&test, &o.token, json!({})).await;
    assert_eq!(down["error"]["code"], "server_error", "{down}");

    let asked = cairn.wait_for(3).await;
    for r in &asked {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/v1/whoami"), "a test publishes nothing");
        assert_eq!(r.header("authorization"), Some("Bearer cairn_pat_secret"));
        assert!(r.body.is_empty());
    }
    assert_eq!(cairn.count(), 3, "one call per test");

    // A gotify connection (bound to its Gotify) is tested through a sink, not on its own.
    let body = json!({"name": "phone", "kind": "gotify", "secret": "app-token", "base_url": "https://203.0.113.10"});
    let (_, gotify) = app.post("/api/v1/connections", &o.token, body).await;
    let (s, answer) =
        app.post(&format!("/api/v1/connections/{}/test", gotify["id"].as_str().unwrap()), &o.token, json!({})).await;
    assert_eq!((s.as_u16(), answer["error"]["code"].as_str()), (409, Some("conflict")), "{answer}");
}
