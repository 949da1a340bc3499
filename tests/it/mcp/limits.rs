//! The MCP surface's bounds: a body over 1 MiB is refused as REST refuses it, sessions are
//! bounded per endpoint and per instance, one owner's endpoints hold at most their fair
//! share and another owner still opens sessions, an idle session closes and gives its place back,
//! a session is its endpoint's only, and a claim_next waiting for work writes nothing on
//! its stream until it answers.

use std::time::{Duration, Instant};

use awc::http::StatusCode;
use futures_util::StreamExt;
use serde_json::json;

use super::{initialize_request, wire_to};
use crate::harness::wait::wait_until_every;
use crate::harness::{Ep, TestApp};
use crate::long_poll::{self, wait_for_waiters};

#[actix_web::test]
async fn a_body_over_one_mebibyte_is_refused_with_413_as_rest_refuses_it() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let wire = wire_to(&app, "worker", &ep);
    let padding = "x".repeat(1024 * 1024);
    let mut message = initialize_request();
    message["params"]["padding"] = json!(padding);
    let posted = wire.post(&message).await.unwrap();
    assert_eq!(posted.status, StatusCode::PAYLOAD_TOO_LARGE);
    let body: serde_json::Value = serde_json::from_slice(&posted.body).unwrap();
    assert_eq!(body["error"]["code"], "payload_too_large", "the REST envelope: {body}");
    let (status, rest) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": "t", "payload": padding})).await;
    assert_eq!((status, &rest["error"]["code"]), (StatusCode::PAYLOAD_TOO_LARGE, &json!("payload_too_large")));
}

#[actix_web::test]
async fn sessions_are_bounded_per_endpoint_and_per_instance_and_a_deleted_one_frees_its_place() {
    let app = TestApp::spawn_with(|s| {
        s.mcp_max_sessions = 3;
        s.mcp_max_sessions_per_endpoint = 2;
        // One owner fills the instance here: no share kept for others (fair shares below).
        s.mcp_reserve_percent = 0;
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let (a, b) = (app.agent(owner.scope, "a").await, app.agent(owner.scope, "b").await);
    let mut first = wire_to(&app, "a", &a);
    first.initialize().await.unwrap();
    wire_to(&app, "a", &a).initialize().await.unwrap();
    let third = wire_to(&app, "a", &a).post(&initialize_request()).await.unwrap();
    assert_eq!(third.status, StatusCode::TOO_MANY_REQUESTS, "{}", String::from_utf8_lossy(&third.body));
    assert!(third.session.is_none());
    wire_to(&app, "b", &b).initialize().await.unwrap();
    let full = wire_to(&app, "b", &b).post(&initialize_request()).await.unwrap();
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE, "the instance holds its most");

    // The stateless revision opens no session, so a full instance still serves it.
    let stateless = wire_to(&app, "b", &b)
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
        .await
        .unwrap();
    assert_ne!(stateless.status, StatusCode::SERVICE_UNAVAILABLE);

    let session = first.session.clone().unwrap();
    delete_session(&app, "a", &a, &session).await;
    wire_to(&app, "a", &a).initialize().await.unwrap();
}

#[actix_web::test]
async fn one_owner_filling_its_share_of_sessions_is_refused_with_429_and_another_owner_still_opens_sessions() {
    let app = long_poll::spawn_with(|s| s.mcp_max_sessions = 8).await;
    let (greedy, other) = (app.owner("greedy@example.com").await, app.owner("other@example.com").await);
    let mut slugs = Vec::new();
    for n in 0..4 {
        let slug = format!("greedy-{n}");
        slugs.push((app.agent(greedy.scope, &slug).await, slug));
    }
    // Six of eight places (the default keeps a quarter), two on each of three endpoints.
    let mut held = Vec::new();
    for (ep, slug) in slugs.iter().take(3) {
        for _ in 0..2 {
            let mut wire = wire_to(&app, slug, ep);
            wire.initialize().await.unwrap();
            held.push(wire);
        }
    }
    // Its seventh, on any of its endpoints (a fresh one too), is refused: 429 rate_limited.
    for (ep, slug) in &slugs {
        let refused = wire_to(&app, slug, ep).post(&initialize_request()).await.unwrap();
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", String::from_utf8_lossy(&refused.body));
        let body: serde_json::Value = serde_json::from_slice(&refused.body).unwrap();
        assert_eq!(body["error"]["code"], "rate_limited", "{body}");
        assert!(refused.session.is_none());
    }
    let scope_share = r#"switchboard_places_refused_total{place="mcp_session",reason="scope_share"}"#;
    assert_eq!(long_poll::metric(&app.base, scope_share).await, 4);

    // Another owner opens sessions in the places kept, and calls tools in them.
    let theirs = app.agent(other.scope, "theirs").await;
    for id in 1..=2 {
        let mut wire = wire_to(&app, "theirs", &theirs);
        wire.initialize().await.unwrap();
        let (status, answer) = wire.call(id, "list_todos", json!({})).await.unwrap();
        assert_eq!((status, &answer["result"]["isError"]), (StatusCode::OK, &json!(false)), "{answer}");
    }
    // Then the instance is full, for everyone.
    let full = wire_to(&app, "theirs", &theirs).post(&initialize_request()).await.unwrap();
    assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
    let instance_full = r#"switchboard_places_refused_total{place="mcp_session",reason="instance_full"}"#;
    assert_eq!(long_poll::metric(&app.base, instance_full).await, 1);

    // The first owner's calls still work, and a session it ends gives its place back.
    let (status, _) = held[0].call(1, "list_todos", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    let session = held[0].session.clone().unwrap();
    delete_session(&app, &slugs[0].1, &slugs[0].0, &session).await;
    wire_to(&app, &slugs[3].1, &slugs[3].0).initialize().await.unwrap();
    assert_eq!(long_poll::metric(&app.base, scope_share).await, 4);
}

#[actix_web::test]
async fn an_idle_session_closes_and_gives_its_place_back() {
    let app = TestApp::spawn_with(|s| {
        s.mcp_session_idle_seconds = 1;
        s.mcp_max_sessions_per_endpoint = 1;
    })
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut idle = wire_to(&app, "worker", &ep);
    idle.initialize().await.unwrap();
    // While it lives its place is taken; an attempt to open another does not touch it.
    wait_until_every("the idle session to close", Duration::from_secs(15), Duration::from_millis(100), async || {
        let other = wire_to(&app, "worker", &ep).post(&initialize_request()).await.unwrap();
        if other.status == StatusCode::OK {
            return Ok(());
        }
        assert_eq!(other.status, StatusCode::TOO_MANY_REQUESTS);
        Err(format!("another session refused with {}", other.status))
    })
    .await;
    let (status, _) = idle.call(1, "list_todos", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "the closed session is gone");
}

#[actix_web::test]
async fn a_session_is_its_endpoints_only() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let (a, b) = (app.agent(owner.scope, "a").await, app.agent(owner.scope, "b").await);
    let mut mine = wire_to(&app, "a", &a);
    mine.initialize().await.unwrap();
    let mut theirs = wire_to(&app, "b", &b);
    theirs.session = mine.session.clone();
    let (status, _) = theirs.call(1, "list_todos", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::NOT_FOUND, "another endpoint's session is unknown to it");
    let (status, answer) = mine.call(2, "list_todos", json!({})).await.unwrap();
    assert_eq!((status, &answer["result"]["isError"]), (StatusCode::OK, &json!(false)));
}

#[actix_web::test]
async fn a_claim_next_waiting_for_work_writes_nothing_until_it_answers_with_the_claim() {
    let app = long_poll::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut wire = wire_to(&app, "worker", &ep);
    wire.initialize().await.unwrap();
    let session = wire.session.clone().unwrap();
    let (url, token) = (super::mcp_url(&app, "worker"), ep.token.clone());
    let waiting = actix_rt::spawn(async move {
        let client = awc::Client::builder().timeout(Duration::from_secs(60)).finish();
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                          "params": {"name": "claim_next", "arguments": {"wait_seconds": 30}}});
        let mut resp = client
            .post(url)
            .insert_header(("Authorization", format!("Bearer {token}")))
            .insert_header(("Accept", "application/json, text/event-stream"))
            .insert_header(("Content-Type", "application/json"))
            .insert_header(("Mcp-Session-Id", session.as_str()))
            .insert_header(("MCP-Protocol-Version", "2025-06-18"))
            .send_body(call.to_string())
            .await
            .unwrap();
        // The first bytes on the stream, whenever they come.
        let first = resp.next().await.expect("a chunk").unwrap();
        String::from_utf8_lossy(&first).into_owned()
    });
    wait_for_waiters(&app.base, 1).await;
    let id = app.create_todo(&ep, "inbox", "arrived").await;
    let first = waiting.await.unwrap();
    assert!(first.contains("\"result\"") && first.contains(&id.to_string()), "the first bytes are the claim: {first}");
}

#[actix_web::test]
async fn a_session_client_that_hangs_up_while_claim_next_waits_gives_up_its_wait_and_claims_nothing() {
    let app = long_poll::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut wire = wire_to(&app, "worker", &ep);
    wire.initialize().await.unwrap();
    // The call, sent by hand so that the test owns the socket.
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "claim_next", "arguments": {"wait_seconds": 30}}})
    .to_string();
    let addr = app.base.trim_start_matches("http://");
    let request = format!(
        "POST /mcp/worker HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nAccept: application/json, \
         text/event-stream\r\nContent-Type: application/json\r\nMcp-Session-Id: {}\r\nMCP-Protocol-Version: \
         2025-06-18\r\nContent-Length: {}\r\n\r\n{body}",
        ep.token,
        wire.session.clone().unwrap(),
        body.len()
    );
    hang_up_while_waiting(&app, &ep, &request).await;
    // And the session goes on.
    let (status, answer) = wire.call(10, "list_todos", json!({})).await.unwrap();
    assert_eq!((status, &answer["result"]["isError"]), (StatusCode::OK, &json!(false)));
}

/// The same for a client of the stateless 2026-07-28 revision (the Python SDK's default):
/// rmcp ends the call when its connection goes, so the waiting claim gives up its place.
#[actix_web::test]
async fn a_stateless_client_that_hangs_up_while_claim_next_waits_gives_up_its_wait_and_claims_nothing() {
    let app = long_poll::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    // What the revision asks of every request: the client's context in `_meta`, and the
    // method and tool named in headers.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "claim_next", "arguments": {"wait_seconds": 30}, "_meta": meta}})
    .to_string();
    let addr = app.base.trim_start_matches("http://");
    let request = format!(
        "POST /mcp/worker HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nAccept: application/json, \
         text/event-stream\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: claim_next\r\nContent-Length: {}\r\n\r\n{body}",
        ep.token,
        body.len()
    );
    hang_up_while_waiting(&app, &ep, &request).await;
}

/// Sends `request` (a waiting `claim_next` call) on a socket of its own, hangs up once it
/// waits, and checks that the wait ended with the client, not with its 30 s, and that
/// the next todo goes to an agent still there.
async fn hang_up_while_waiting(app: &TestApp, ep: &Ep, request: &str) {
    use tokio::io::AsyncWriteExt;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    wait_for_waiters(&app.base, 1).await;
    socket.set_zero_linger().unwrap();
    drop(socket);
    let hung_up = Instant::now();
    wait_for_waiters(&app.base, 0).await;
    assert!(hung_up.elapsed() < Duration::from_secs(10), "the wait outlived its client: {:?}", hung_up.elapsed());
    let id = app.create_todo(ep, "inbox", "for someone still there").await;
    let claimed = app.claim_next(ep).await;
    assert_eq!(claimed["todo"]["id"], id.to_string(), "nobody gone took it: {claimed}");
}

/// Ends MCP session `session` of endpoint `ep` (`slug`) with a DELETE, asserting it went.
async fn delete_session(app: &TestApp, slug: &str, ep: &Ep, session: &str) {
    let deleted = app
        .client
        .delete(super::mcp_url(app, slug))
        .insert_header(("Authorization", format!("Bearer {}", ep.token)))
        .insert_header(("Mcp-Session-Id", session))
        .insert_header(("MCP-Protocol-Version", "2025-06-18"))
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
}
