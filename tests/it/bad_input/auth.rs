//! Credentials that do not authenticate (401) and verbs that were not granted (403).

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::TodoId;

use super::{CLAIM_NEXT, Snapshot, TODOS, claimed, expect_error, state_of, todo_path};
use crate::harness::TestApp;

// ---------------------------------------------------------------------------------
// 401: no credential, or one that does not authenticate on this route
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn missing_garbage_and_wrong_kind_tokens_are_unauthenticated_and_change_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let (id, _) = claimed(&app, &ep).await;
    let before = Snapshot::take(&app).await;
    let long = format!("sbk_{}", "a".repeat(400));
    let agent_routes = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "t"}))),
        ("POST", CLAIM_NEXT.to_owned(), Some(json!({}))),
        ("GET", format!("{TODOS}/{id}"), None),
        ("POST", todo_path(id, "claim"), Some(json!({}))),
        ("POST", todo_path(id, "heartbeat"), Some(json!({}))),
        ("POST", todo_path(id, "complete"), Some(json!({}))),
        ("POST", todo_path(id, "fail"), Some(json!({}))),
        ("POST", todo_path(id, "release"), Some(json!({}))),
        ("POST", todo_path(id, "interrupt"), Some(json!({"state": "input_required"}))),
        ("POST", todo_path(id, "resume"), Some(json!({}))),
        ("POST", "/api/v1/agent/presence/clock-in".to_owned(), None),
        ("POST", "/api/v1/agent/presence/clock-out".to_owned(), None),
    ];
    let operator_routes = [
        ("GET", "/api/v1/endpoints".to_owned(), None),
        ("POST", "/api/v1/endpoints".to_owned(), Some(json!({"slug": "new"}))),
        ("POST", format!("/api/v1/endpoints/{}/revoke", ep.id), None),
        ("GET", format!("/api/v1/todos/{id}"), None),
        ("POST", format!("/api/v1/todos/{id}/fail"), Some(json!({}))),
        ("POST", format!("/api/v1/todos/{id}/retry"), Some(json!({}))),
        ("GET", "/api/v1/dead-letters".to_owned(), None),
    ];
    let garbage = ["", "garbage", "sbk_", "sbo_", "sbk_doesnotexist", "sbo_doesnotexist", long.as_str(), "Bearer"];
    for (routes, wrong_kind) in [(&agent_routes[..], o.token.as_str()), (&operator_routes[..], ep.token.as_str())] {
        for (method, path, body) in routes.iter() {
            let what = format!("{method} {path}");
            let got = app.call(method, path, None, body.as_ref()).await;
            expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{what} without a token"));
            for token in garbage.iter().chain([&wrong_kind]) {
                let got = app.call(method, path, Some(token), body.as_ref()).await;
                expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{what} with {token:?}"));
            }
        }
    }
    // Not a bearer scheme, or a token with trailing junk.
    for header in [
        format!("Basic {}", ep.token),
        format!("Token {}", ep.token),
        ep.token.clone(),
        format!("Bearer {}x", ep.token),
    ] {
        let mut resp = app
            .client
            .get(format!("{}{TODOS}", app.base))
            .insert_header(("Authorization", header.clone()))
            .send()
            .await
            .unwrap();
        let body: Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap_or(Value::Null);
        expect_error(&(resp.status(), body), StatusCode::UNAUTHORIZED, "unauthenticated", &header);
        assert_eq!(resp.headers().get("www-authenticate").and_then(|v| v.to_str().ok()), Some("Bearer"));
    }
    // A header that is not even text.
    let mut resp = app
        .client
        .get(format!("{}{TODOS}", app.base))
        .insert_header(("Authorization", awc::http::header::HeaderValue::from_bytes(b"Bearer sbk_\xff\xfe").unwrap()))
        .send()
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap_or(Value::Null);
    expect_error(&(resp.status(), body), StatusCode::UNAUTHORIZED, "unauthenticated", "non-UTF-8 header");
    before.assert_unchanged(&app, "unauthenticated calls").await;
}

#[actix_web::test]
async fn a_revoked_endpoint_token_is_unauthenticated_and_changes_nothing_more() {
    let (app, o, ep) = TestApp::with_worker().await;
    let pending = app.create_todo(&ep, "q", "t").await;
    // Use the token once so that any cache holds it.
    let (s, _) = app.get(TODOS, &ep.token).await;
    assert_eq!(s, StatusCode::OK);
    let (s, r) = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&o.token), None).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["dead_lettered"], 1);
    let before = Snapshot::take(&app).await;
    let calls = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "t"}))),
        ("POST", CLAIM_NEXT.to_owned(), Some(json!({}))),
        ("GET", format!("{TODOS}/{pending}"), None),
        ("POST", todo_path(pending, "claim"), Some(json!({}))),
        ("POST", "/api/v1/agent/presence/clock-in".to_owned(), None),
    ];
    for (method, path, body) in &calls {
        let got = app.call(method, path, Some(&ep.token), body.as_ref()).await;
        expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", &format!("{method} {path}"));
    }
    // Revoking twice is a conflict, not a second cascade.
    let got = app.call("POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), Some(&o.token), None).await;
    expect_error(&got, StatusCode::CONFLICT, "conflict", "second revocation");
    before.assert_unchanged(&app, "revoked token").await;
}

#[actix_web::test]
async fn expired_endpoints_and_revoked_operator_tokens_are_unauthenticated() {
    let (app, o, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{}'", ep.id.0))
        .await;
    let before = Snapshot::take(&app).await;
    let got = app.post(TODOS, &ep.token, json!({"queue": "q", "title": "t"})).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "expired endpoint");
    before.assert_unchanged(&app, "expired endpoint").await;
    app.db.exec(&format!("UPDATE operator_tokens SET revoked_at = now() WHERE human_id = '{}'", o.id.0)).await;
    let before_revoked = Snapshot::take(&app).await;
    let got = app.post("/api/v1/endpoints", &o.token, json!({"slug": "new"})).await;
    expect_error(&got, StatusCode::UNAUTHORIZED, "unauthenticated", "revoked operator token");
    before_revoked.assert_unchanged(&app, "revoked operator token").await;
}

// ---------------------------------------------------------------------------------
// 403: a verb the endpoint was not granted
// ---------------------------------------------------------------------------------

#[actix_web::test]
async fn a_verb_outside_the_endpoints_grants_is_forbidden_and_changes_nothing() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let narrow = app.endpoint(o.scope, "narrow", &[Verb::ClaimNext]).await;
    // The narrow endpoint may not create work, so its todo comes through the store.
    let id: TodoId =
        app.store.create_todo(switchboard::store::todos::NewTodo::new(narrow.id, "q", "t")).await.unwrap().todo.id;
    let c = app.claim_next(&narrow).await;
    assert_eq!(c["todo"]["id"], id.to_string());
    let lease = c["lease_token"].as_str().unwrap().to_owned();
    let before = Snapshot::take(&app).await;
    let calls = [
        ("GET", TODOS.to_owned(), None),
        ("POST", TODOS.to_owned(), Some(json!({"queue": "q", "title": "sneaky"}))),
        ("GET", format!("{TODOS}/{id}"), None),
        ("POST", todo_path(id, "claim"), Some(json!({}))),
        ("POST", todo_path(id, "heartbeat"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "complete"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "fail"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "release"), Some(json!({"lease_token": lease}))),
        ("POST", todo_path(id, "interrupt"), Some(json!({"state": "input_required", "lease_token": lease}))),
        ("POST", todo_path(id, "resume"), Some(json!({"lease_token": lease}))),
    ];
    for (method, path, body) in &calls {
        let got = app.call(method, path, Some(&narrow.token), body.as_ref()).await;
        expect_error(&got, StatusCode::FORBIDDEN, "forbidden", &format!("{method} {path}"));
    }
    // The grant is checked before the id: an unknown id is still forbidden, so a
    // narrow token learns nothing about which ids exist.
    let got = app.post(&todo_path(TodoId::new(), "complete"), &narrow.token, json!({})).await;
    expect_error(&got, StatusCode::FORBIDDEN, "forbidden", "complete an unknown id");
    before.assert_unchanged(&app, "missing grants").await;
    assert_eq!(state_of(&app, id).await, "claimed");
}
