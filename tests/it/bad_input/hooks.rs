//! Notify-hook routes: bad URLs, queue filters and bodies (422), unknown, malformed and
//! foreign ids (404), and missing credentials (401). Every refusal writes nothing.

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::config::SecretKey;
use switchboard::domain::ids::{HookId, TodoId};

use super::{JSON, Snapshot, assert_alive, expect_error};
use crate::harness::TestApp;

const AGENT_HOOKS: &str = "/api/v1/agent/hooks";

async fn spawn() -> TestApp {
    TestApp::spawn_with(|s| s.secret_encryption_key = Some(SecretKey([8; 32]))).await
}

#[actix_web::test]
async fn a_hook_with_a_bad_url_queue_filter_or_body_is_invalid_argument_and_writes_nothing() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let operator_path = format!("/api/v1/endpoints/{}/hooks", ep.id);
    let too_long = format!("https://203.0.113.10/{}", "a".repeat(2_048));
    let too_many: Vec<String> = (0..33).map(|i| format!("q{i}")).collect();
    let bodies: Vec<Value> = vec![
        json!({}),
        json!({"url": null}),
        json!({"url": 42}),
        json!({"url": ""}),
        json!({"url": "example.com/hook"}),
        json!({"url": "http://203.0.113.10/hook"}),
        json!({"url": "ftp://example.com/hook"}),
        json!({"url": "file:///etc/passwd"}),
        json!({"url": "https://user:pw@example.com/hook"}),
        json!({"url": "https://user@example.com/hook"}),
        json!({"url": "https://exa mple.com/hook"}),
        json!({"url": "https://203.0.113.10/ho\nok"}),
        json!({"url": "https://203.0.113.10/\u{0000}"}),
        json!({"url": "https:///nohost"}),
        json!({"url": "https://203.0.113.10\\@evil.example/"}),
        json!({"url": too_long}),
        json!({"url": "https://203.0.113.10/hook", "queues": "builds"}),
        json!({"url": "https://203.0.113.10/hook", "queues": [null]}),
        json!({"url": "https://203.0.113.10/hook", "queues": [""]}),
        json!({"url": "https://203.0.113.10/hook", "queues": ["Builds"]}),
        json!({"url": "https://203.0.113.10/hook", "queues": ["has space"]}),
        json!({"url": "https://203.0.113.10/hook", "queues": ["quarantine"]}),
        json!({"url": "https://203.0.113.10/hook", "queues": too_many}),
        json!({"url": "https://203.0.113.10/hook", "ignore_presence": true}),
        json!({"url": "https://203.0.113.10/hook", "secret": "whsec_mine"}),
        json!(["https://203.0.113.10/hook"]),
    ];
    let before = Snapshot::take(&app).await;
    for body in &bodies {
        for (path, token) in [(&operator_path, &o.token), (&AGENT_HOOKS.to_owned(), &ep.token)] {
            let got = app.post(path, token, body.clone()).await;
            expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", &format!("{path} {body}"));
        }
    }
    for (content_type, raw) in [(JSON, b"".to_vec()), (JSON, b"{\"url\":".to_vec()), ("text/plain", b"{}".to_vec())] {
        let got = app.call_raw("POST", &operator_path, Some(&o.token), content_type, raw.clone()).await;
        expect_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "invalid_argument", content_type);
    }
    before.assert_unchanged(&app, "refused hook creations").await;
    assert_alive(&app).await;
}

#[actix_web::test]
async fn unknown_malformed_and_foreign_hook_and_endpoint_ids_are_not_found_and_change_nothing() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let stranger = app.owner("b@example.com").await;
    let strangers_agent = app.agent(stranger.scope, "stranger").await;
    let (s, created) = app
        .post(&format!("/api/v1/endpoints/{}/hooks", ep.id), &o.token, json!({"url": "https://203.0.113.10/h"}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let real: HookId = created["id"].as_str().unwrap().parse().unwrap();
    let before = Snapshot::take(&app).await;

    let unknown = HookId::new().to_string();
    let bare_uuid = real.0.simple().to_string();
    let hyphenated = format!("nh_{}", real.0.hyphenated());
    let todo_kind = format!("td_{}", real.0.simple());
    let endpoint_id = ep.id.to_string();
    let ids = [
        unknown.as_str(),
        "nh_xyz",
        "nh_",
        &bare_uuid,
        &hyphenated,
        &todo_kind,
        &endpoint_id,
        "%00",
        "..",
        "%F0%9F%92%A5",
    ];
    let reference = app.call("DELETE", &format!("/api/v1/hooks/{unknown}"), Some(&o.token), None).await;
    expect_error(&reference, StatusCode::NOT_FOUND, "not_found", "unknown hook");
    for id in ids {
        for (method, path, token) in [
            ("POST", format!("/api/v1/hooks/{id}/rotate"), &o.token),
            ("POST", format!("/api/v1/hooks/{id}/enable"), &o.token),
            ("POST", format!("/api/v1/hooks/{id}/disable"), &o.token),
            ("DELETE", format!("/api/v1/hooks/{id}"), &o.token),
            ("POST", format!("{AGENT_HOOKS}/{id}/rotate"), &ep.token),
            ("DELETE", format!("{AGENT_HOOKS}/{id}"), &ep.token),
        ] {
            let got = app.call(method, &path, Some(token), None).await;
            expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{method} {path}"));
            assert_eq!(got.1, reference.1, "{method} {path}: a malformed id answers like an unknown one");
        }
    }
    // The real hook, asked for by someone it does not belong to.
    for (method, path, token) in [
        ("POST", format!("/api/v1/hooks/{real}/rotate"), &stranger.token),
        ("POST", format!("/api/v1/hooks/{real}/disable"), &stranger.token),
        ("DELETE", format!("/api/v1/hooks/{real}"), &stranger.token),
        ("POST", format!("{AGENT_HOOKS}/{real}/rotate"), &strangers_agent.token),
        ("DELETE", format!("{AGENT_HOOKS}/{real}"), &strangers_agent.token),
    ] {
        let got = app.call(method, &path, Some(token), None).await;
        expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("foreign {method} {path}"));
        assert_eq!(got.1, reference.1, "{method} {path}");
    }
    // Endpoint ids: unknown, malformed, of another kind, or someone else's.
    let unknown_todo = TodoId::new().to_string();
    for id in [ep.id.0.simple().to_string(), "ep_xyz".into(), unknown_todo, real.to_string(), ep.id.to_string()] {
        let token = if id == ep.id.to_string() { &stranger.token } else { &o.token };
        for (method, body) in [("GET", None), ("POST", Some(json!({"url": "https://203.0.113.10/x"})))] {
            let path = format!("/api/v1/endpoints/{id}/hooks");
            let got = app.call(method, &path, Some(token), body.as_ref()).await;
            expect_error(&got, StatusCode::NOT_FOUND, "not_found", &format!("{method} {path}"));
        }
    }
    before.assert_unchanged(&app, "unknown hook ids").await;
}

#[actix_web::test]
async fn hook_routes_without_a_valid_token_are_unauthenticated_and_change_nothing() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let (s, created) = app
        .post(&format!("/api/v1/endpoints/{}/hooks", ep.id), &o.token, json!({"url": "https://203.0.113.10/h"}))
        .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let before = Snapshot::take(&app).await;
    let create = Some(json!({"url": "https://203.0.113.10/other"}));
    let operator_routes = [
        ("POST", format!("/api/v1/endpoints/{}/hooks", ep.id), create.clone()),
        ("GET", format!("/api/v1/endpoints/{}/hooks", ep.id), None),
        ("POST", format!("/api/v1/hooks/{id}/rotate"), None),
        ("POST", format!("/api/v1/hooks/{id}/enable"), None),
        ("POST", format!("/api/v1/hooks/{id}/disable"), None),
        ("DELETE", format!("/api/v1/hooks/{id}"), None),
    ];
    let agent_routes = [
        ("POST", AGENT_HOOKS.to_owned(), create.clone()),
        ("GET", AGENT_HOOKS.to_owned(), None),
        ("POST", format!("{AGENT_HOOKS}/{id}/rotate"), None),
        ("DELETE", format!("{AGENT_HOOKS}/{id}"), None),
    ];
    for (routes, wrong_kind) in [(&operator_routes[..], ep.token.as_str()), (&agent_routes[..], o.token.as_str())] {
        for (method, path, body) in routes {
            for token in [None, Some("garbage"), Some("sbo_doesnotexist"), Some("sbk_doesnotexist"), Some(wrong_kind)] {
                let got = app.call(method, path, token, body.as_ref()).await;
                expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{method} {path} {token:?}"));
            }
        }
    }
    before.assert_unchanged(&app, "unauthenticated hook calls").await;
}
