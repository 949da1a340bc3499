//! A waiting request's end when nothing arrives: its client hangs up (its place is freed
//! at once), or the server stops (it answers empty at once instead of holding the stop
//! up and then being cut off).

use std::time::Instant;

use tokio::io::AsyncWriteExt;

use super::{Instance, METRICS_TOKEN, WAITERS, WITHIN, answered, spawn, wait_for_waiters, wait_on_any};
use crate::harness::TestDb;
use crate::harness::wait::{wait_backends_gone, wait_metric_at};

#[actix_web::test]
async fn a_client_that_closes_its_connection_while_waiting_frees_its_place() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let body = r#"{"wait_seconds": 30}"#;
    let addr = app.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "POST /api/v1/agent/todos/claim-next HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        ep.token,
        body.len()
    );
    socket.write_all(request.as_bytes()).await.expect("send");
    wait_for_waiters(&app.base, 1).await;

    // An orderly close (FIN), as a client that gives up or exits sends: the place is
    // freed well before the 30 s the request asked to wait.
    drop(socket);
    wait_metric_at(&app.base, METRICS_TOKEN, WAITERS, 0, std::time::Duration::from_secs(20)).await;
    // The place is free for the next agent, and no work was claimed for nobody.
    let id = app.create_todo(&ep, "inbox", "t").await;
    let answer = answered(wait_on_any(&app.base, &ep, 30)).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
}

#[actix_web::test]
async fn stopping_the_server_answers_waiting_agents_empty_at_once() {
    let db = TestDb::new().await;
    let instance = Instance::start(&db).await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let owner = store.create_human("a@example.com", "A", None).await.expect("human");
    let vended = store
        .vend_endpoint(switchboard::store::endpoints::VendEndpoint {
            scope: owner.scope,
            slug: "worker".into(),
            grants: switchboard::domain::grants::Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        })
        .await
        .expect("vend");
    let ep = crate::harness::Ep { id: vended.endpoint.id, token: vended.token };
    let waiting = wait_on_any(&instance.base, &ep, 30);
    wait_for_waiters(&instance.base, 1).await;

    // A graceful stop waits for requests in flight (up to 10 s, then cuts them off): the
    // waiting one answers at once instead, so the stop completes with it answered.
    let started = Instant::now();
    instance.stopper.stop(true).await;
    let answer = answered(waiting).await;
    assert_eq!(answer.status, 200, "{:?}", answer.body);
    assert_eq!(answer.body, serde_json::json!({"empty": true}));
    assert!(started.elapsed() < WITHIN);
}

#[actix_web::test]
async fn waiting_agents_whose_database_connections_are_all_terminated_answer_200_or_503_never_500() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let waiting: Vec<_> = (0..3).map(|_| wait_on_any(&app.base, &ep, 3)).collect();
    wait_for_waiters(&app.base, 3).await;

    // What a database restart does to the instance: every connection (the pool's and the
    // claim listener's) ends. The listener connects again and the waiters look again.
    let terminated = app
        .db
        .plan(
            "WITH victims AS MATERIALIZED (SELECT pid FROM pg_stat_activity \
               WHERE datname = current_database() AND pid <> pg_backend_pid()) \
             SELECT coalesce(string_agg(pid::text, ','), '0') FROM victims WHERE pg_terminate_backend(pid)",
        )
        .await;
    for w in waiting {
        let answer = answered(w).await;
        match answer.status {
            200 => assert_eq!(answer.body, serde_json::json!({"empty": true})),
            503 => assert_eq!(answer.body["error"]["code"], "unavailable"),
            other => panic!("{other}: {:?}", answer.body),
        }
    }
    // And waiting works again once the terminated sessions are gone (the pool hands out
    // no broken connection: pinned by `db_restart`).
    let pids: Vec<i32> = terminated.split(',').map(|pid| pid.parse().unwrap()).collect();
    wait_backends_gone(&app.db, &pids, WITHIN).await;
    let waiting = wait_on_any(&app.base, &ep, 30);
    wait_for_waiters(&app.base, 1).await;
    let id = app.create_todo(&ep, "inbox", "after the restart").await;
    let answer = answered(waiting).await;
    assert_eq!(answer.todo(), Some(id.to_string().as_str()), "{:?}", answer.body);
}
