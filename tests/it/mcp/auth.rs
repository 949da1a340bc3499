//! Who may speak MCP at `/mcp/{slug}`: only the bearer of that slug's endpoint, checked
//! on every request before any MCP exchange (a missing, foreign, revoked or expired
//! token answers 401, a revocation through another instance at once), and its grants
//! checked on every call (a grant removed while a session is open refuses the next call).

use awc::http::StatusCode;
use serde_json::json;
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};

use super::{Client, Mode, code_of, initialize_request, mcp_url, wire_to};
use crate::auth_coherence::{Peer, Sql, call, spawn, wait_until_cached};
use crate::harness::{Ep, TestApp};

/// Posts an `initialize` with `token` (none: no Authorization header); its status and body.
async fn initialize_with(app: &TestApp, slug: &str, token: Option<&str>) -> (StatusCode, serde_json::Value) {
    let mut req = app
        .client
        .post(mcp_url(app, slug))
        .insert_header(("Accept", "application/json, text/event-stream"))
        .insert_header(("Content-Type", "application/json"));
    if let Some(t) = token {
        req = req.insert_header(("Authorization", format!("Bearer {t}")));
    }
    let mut resp = req.send_body(initialize_request().to_string()).await.unwrap();
    let body = resp.body().await.unwrap();
    (resp.status(), serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null))
}

#[actix_web::test]
async fn a_missing_foreign_or_unknown_token_is_refused_with_401_before_any_mcp_exchange() {
    let (app, owner, ep) = TestApp::with_worker().await;
    let other = app.agent(owner.scope, "other").await;
    for (what, token) in [
        ("no token", None),
        ("another endpoint's token", Some(other.token.as_str())),
        ("an unknown token", Some("sbk_0000000000000000000000000000000000000000000")),
        ("an operator token", Some(owner.token.as_str())),
    ] {
        let (status, body) = initialize_with(&app, "worker", token).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
        assert_eq!(body["error"]["code"], "unauthenticated", "{what}: the error envelope: {body}");
    }
    let (status, body) = initialize_with(&app, "worker", Some(&ep.token)).await;
    assert_eq!(status, StatusCode::OK, "the endpoint's own token: {body}");
    let (status, _) = initialize_with(&app, "nobody", Some(&ep.token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "a slug that is not the token's");
}

#[actix_web::test]
async fn a_token_revoked_through_another_instance_is_refused_on_the_next_mcp_request() {
    let app = spawn().await;
    let peer = Peer::start(&app.db).await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut wire = wire_to(&app, "worker", &ep);
    wire.initialize().await.unwrap();
    let (status, answer) = wire.call(1, "list_todos", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    // This instance now answers the token from its cache (a change it did not hear of
    // would go unseen): only the eviction the revocation announces can refuse it.
    wait_until_cached(&app.base, &sql, &ep).await;

    let (status, body) = call(&peer.base, "POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let refused = wire.post(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})).await.unwrap();
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{}", String::from_utf8_lossy(&refused.body));
    let (status, _) = wire.call(3, "claim_next", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn an_expired_token_is_refused_with_401() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{}'", ep.id.0))
        .await;
    let (status, body) = initialize_with(&app, "worker", Some(&ep.token)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}

#[actix_web::test]
async fn a_grant_removed_while_a_session_is_open_refuses_the_next_call_and_leaves_the_list() {
    let app = spawn().await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.push(Verb::CreateTodo);
    let ep = app.endpoint(owner.scope, "worker", &grants).await;
    let mut mcp = Client::connect(&mcp_url(&app, "worker"), &ep.token, Mode::Legacy).await;
    assert!(mcp.tool_names().await.contains(&"create_todo".to_owned()));
    mcp.ok("create_todo", json!({"queue": "inbox", "title": "allowed"})).await;
    wait_until_cached(&app.base, &sql, &ep).await;

    sql.run_heard(
        &format!("UPDATE endpoints SET grants = array_remove(grants, 'create_todo') WHERE id = '{}'", ep.id.0),
        ep.id.0,
    )
    .await;

    let text = mcp.refused("create_todo", json!({"queue": "inbox", "title": "no longer"})).await;
    assert_eq!(code_of(&text), "forbidden", "{text}");
    assert!(text.contains("create_todo"), "it names the verb: {text}");
    assert!(!mcp.tool_names().await.contains(&"create_todo".to_owned()), "nor is it listed any more");
    let listed = mcp.ok("list_todos", json!({})).await;
    assert_eq!(listed["todos"].as_array().unwrap().len(), 1, "the refused call created nothing: {listed}");
}

#[actix_web::test]
async fn a_verb_the_endpoint_lacks_is_hidden_and_refused_as_forbidden_whatever_its_arguments() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep: Ep = app.endpoint(owner.scope, "worker", &[]).await;
    let mut mcp = Client::connect(&mcp_url(&app, "worker"), &ep.token, Mode::Legacy).await;
    let names = mcp.tool_names().await;
    for hidden in ["create_todo", "interrupt", "resume", "create_hook", "notify_owner", "set_sink", "create_todos"] {
        assert!(!names.contains(&hidden.to_owned()), "{hidden} is listed");
    }
    for (tool, args) in [
        ("create_todo", json!({"queue": "inbox", "title": "t"})),
        ("create_todo", json!({"nonsense": true})),
        ("notify_owner", json!({"title": "help"})),
        ("list_sinks", json!({})),
    ] {
        let text = mcp.refused(tool, args).await;
        assert!(text.starts_with("forbidden: "), "{tool}: {text}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 0);
}
