//! Endpoint tokens: revoked or changed behind an instance, refused by it at once.

use std::time::Duration;

use awc::http::StatusCode;
use serde_json::json;

use super::{Peer, Sql, admin, call, list_todos, spawn, wait_until_cached};
use crate::harness::Ep;
use crate::harness::wait::wait_until_every;

#[actix_web::test]
async fn a_token_revoked_through_the_cli_is_refused_by_a_running_server_on_the_very_next_request() {
    let app = spawn().await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    wait_until_cached(&app.base, &sql, &ep).await;

    let revoked = admin(&app.db.url, &["revoke-endpoint", "--slug", "worker"], None);
    assert_eq!(revoked["revoked"], true);

    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::UNAUTHORIZED);
}

#[actix_web::test]
async fn a_token_revoked_through_another_instance_is_refused_here_on_the_very_next_request() {
    let app = spawn().await;
    let peer = Peer::start(&app.db).await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    wait_until_cached(&app.base, &sql, &ep).await;
    wait_until_cached(&peer.base, &sql, &ep).await;

    let (status, body) = call(&peer.base, "POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::UNAUTHORIZED);
    assert_eq!(list_todos(&peer.base, &ep).await, StatusCode::UNAUTHORIZED, "and on the revoking instance");
}

#[actix_web::test]
async fn grants_rotation_and_expiry_changed_in_the_database_reach_a_cached_token_at_once() {
    let app = spawn().await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = ep.id.0;

    wait_until_cached(&app.base, &sql, &ep).await;
    sql.run_heard(&format!("UPDATE endpoints SET grants = array_remove(grants, 'list_todos') WHERE id = '{id}'"), id)
        .await;
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::FORBIDDEN, "a withdrawn grant");
    sql.run_heard(&format!("UPDATE endpoints SET grants = array_append(grants, 'list_todos') WHERE id = '{id}'"), id)
        .await;

    wait_until_cached(&app.base, &sql, &ep).await;
    // The token is rotated behind the instance (the statement `rotate_endpoint_token` runs).
    let token = switchboard::domain::tokens::mint(switchboard::domain::tokens::ENDPOINT_TOKEN_PREFIX);
    let rotation = format!(
        "UPDATE endpoints SET token_hash = '\\x{}', token_prefix = '{}' WHERE id = '{id}'",
        hex::encode(token.hash),
        token.display_prefix
    );
    sql.run_heard(&rotation, id).await;
    let rotated = Ep { id: ep.id, token: token.plaintext };
    assert_eq!(list_todos(&app.base, &ep).await, StatusCode::UNAUTHORIZED, "the old token after a rotation");
    assert_eq!(list_todos(&app.base, &rotated).await, StatusCode::OK);

    wait_until_cached(&app.base, &sql, &rotated).await;
    sql.run_heard(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{id}'"), id)
        .await;
    assert_eq!(list_todos(&app.base, &rotated).await, StatusCode::UNAUTHORIZED, "an expiry moved into the past");

    // Nothing else about the endpoint was touched by the checks above.
    let (status, body) = app.post("/api/v1/agent/todos", &rotated.token, json!({"queue": "q", "title": "t"})).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
}

/// A revocation holds one pooled connection while it waits for the listeners'
/// acknowledgements and commits on another: with a pool of one it cannot wait, so it
/// commits unconfirmed (the NOTIFY still evicts) instead of waiting on itself.
#[actix_web::test]
async fn with_a_pool_of_one_connection_a_revocation_answers_without_waiting_and_is_still_heard() {
    let app = crate::harness::TestApp::spawn_with(|s| {
        super::long_ttl(s);
        s.db_pool_size = 1;
    })
    .await;
    let sql = Sql::connect(&app.db.url).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    wait_until_cached(&app.base, &sql, &ep).await;

    let (status, body) = call(&app.base, "POST", &format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until_every(
        "the revoked token to be refused",
        Duration::from_secs(30),
        Duration::from_millis(10),
        async || match list_todos(&app.base, &ep).await {
            StatusCode::UNAUTHORIZED => Ok(()),
            other => Err(format!("list_todos answered {other}")),
        },
    )
    .await;
}

/// A session that calls itself an auth listener but never acknowledges (an instance
/// frozen mid-eviction) holds a revocation up for at most the 5 s limit; one that goes
/// away is not waited for at all.
#[actix_web::test]
async fn a_revocation_waits_at_most_five_seconds_for_a_silent_listener_and_not_for_a_gone_one() {
    use std::time::{Duration, Instant};
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let (first, second) = (app.agent(owner.scope, "first").await, app.agent(owner.scope, "second").await);
    let mut config: tokio_postgres::Config = app.db.url.parse().expect("a url");
    // Named as the previous release's auth listener: a rolling upgrade runs one beside this release.
    config.application_name("switchboard auth listener");
    let (silent, conn) = config.connect(tokio_postgres::NoTls).await.expect("connect");
    let driver = actix_rt::spawn(async move {
        let _ = conn.await;
    });

    let started = Instant::now();
    let (status, body) = call(&app.base, "POST", &format!("/api/v1/endpoints/{}/revoke", first.id), &owner.token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(4_500), "it waited for the silent listener: {took:?}");
    assert!(took < Duration::from_secs(10), "for at most the limit: {took:?}");
    assert_eq!(list_todos(&app.base, &first).await, StatusCode::UNAUTHORIZED);

    drop(silent);
    driver.await.expect("the silent session ended");
    let started = Instant::now();
    let (status, body) =
        call(&app.base, "POST", &format!("/api/v1/endpoints/{}/revoke", second.id), &owner.token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        started.elapsed() < Duration::from_millis(4_500),
        "a gone listener is not waited for: {:?}",
        started.elapsed()
    );
}
