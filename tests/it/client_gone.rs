//! A client that goes away while its request waits on the database does not take the
//! outcome with it: the transition still commits, and its post-commit signal is still
//! emitted (a dead letter is still announced).

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::harness::TestApp;
use crate::harness::wait::{wait_for_blocked, wait_until_every};

/// How long the server may take to notice the hang-up and to finish the transition.
const WITHIN: Duration = Duration::from_secs(30);

const METRICS_TOKEN: &str = "metrics-token-0123456789abcdef0123456789";

/// `switchboard_http_requests_abandoned_total`, scraped.
async fn abandoned(app: &TestApp) -> u64 {
    app.metric(METRICS_TOKEN, "switchboard_http_requests_abandoned_total").await
}

#[actix_web::test]
async fn a_fail_at_the_cap_whose_client_hung_up_still_commits_and_announces_the_dead_letter() {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(METRICS_TOKEN.into())).await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let (s, b) =
        app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": "t", "max_attempts": 1})).await;
    assert_eq!(s, 201, "{b}");
    let id = b["id"].as_str().unwrap().to_owned();
    let uuid = id.parse::<switchboard::domain::ids::TodoId>().unwrap().0;
    let claim = app.claim_next(&ep).await;
    let lease = claim["lease_token"].as_str().unwrap().to_owned();
    app.signals.take().await;

    let blocker = app.db.hold(&format!("SELECT 1 FROM todos WHERE id = '{uuid}' FOR UPDATE")).await;
    // The fail, sent by hand so that the test owns the socket.
    let body = json!({"lease_token": lease, "summary": "gave up"}).to_string();
    let addr = app.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "POST /api/v1/agent/todos/{id}/fail HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        ep.token,
        body.len()
    );
    socket.write_all(request.as_bytes()).await.expect("send");
    wait_for_blocked(&app.db, 1, WITHIN).await;
    // Hang up hard (a reset, as a killed client does), and wait until the server has
    // dropped the request: it counts every request it abandons.
    socket.set_zero_linger().expect("linger");
    drop(socket);
    wait_until_every("the server to notice the hang-up", WITHIN, Duration::from_millis(10), async || match abandoned(
        &app,
    )
    .await
    {
        0 => Err("no abandoned request counted".into()),
        _ => Ok(()),
    })
    .await;
    blocker.commit().await;

    // The fail commits on its own and the dead letter is announced.
    let dead =
        wait_until_every("a DeadLettered after the client hung up", WITHIN, Duration::from_millis(10), async || {
            let dead = app.signals.take_dead().await;
            if dead.is_empty() { Err("none".into()) } else { Ok(dead) }
        })
        .await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].todo.id.to_string(), id);
    let state = app.db.count(&format!("SELECT count(*) FROM todos WHERE id = '{uuid}' AND state = 'failed'")).await;
    assert_eq!(state, 1, "the fail committed");
}
