//! The running `switchboard serve` binary announces to hooks: the store's emitter is
//! wired to the dispatcher in the real server, not only in the test harness.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use base64::Engine;
use serde_json::json;
use switchboard::store::signals::Emitter;

use super::*;
use crate::harness::TestDb;
use testkit::receiver::Receiver;

/// The server process, stopped (SIGTERM, then waited for) however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.0.id() as i32);
        if nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).is_err() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

#[actix_web::test]
async fn the_serve_binary_delivers_a_verified_todo_ready_to_a_hook() {
    let db = TestDb::new().await;
    let owner = db.store(Emitter::none()).create_human("ops@example.com", "Ops", None).await.unwrap();
    let key = base64::engine::general_purpose::STANDARD.encode([3u8; 32]);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    cmd.env("SWITCHBOARD_DATABASE_URL", &db.url)
        .env("SWITCHBOARD_ADDR", "127.0.0.1:0")
        .env("SWITCHBOARD_SECRET_ENCRYPTION_KEY", &key)
        .env("SWITCHBOARD_PUSH_ALLOW_HTTP", "1")
        .env("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", "127.0.0.1/32")
        .env("SWITCHBOARD_WORKERS", "1")
        .env("SWITCHBOARD_DB_POOL_SIZE", "4")
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut server = Server(cmd.spawn().expect("spawn switchboard serve"));
    let stdout = server.0.stdout.take().unwrap();
    // Reading blocks: do it off the test's runtime.
    let base = actix_rt::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout).lines();
        let started = Instant::now();
        loop {
            assert!(started.elapsed() < DEADLINE * 3, "serve did not start");
            let line = lines.next().expect("serve exited before it was running").unwrap();
            if let Some(url) = line.strip_prefix("Switchboard is running at ") {
                return url.trim().to_owned();
            }
        }
    })
    .await
    .unwrap();

    let client = awc::Client::default();
    let post = async |path: &str, token: &str, body: serde_json::Value| {
        let mut resp = client
            .post(format!("{base}{path}"))
            .insert_header(("Authorization", format!("Bearer {token}")))
            .send_json(&body)
            .await
            .unwrap();
        let status = resp.status().as_u16();
        let answer: serde_json::Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap();
        (status, answer)
    };
    let (s, ep) = post("/api/v1/endpoints", &owner.token, json!({"slug": "worker"})).await;
    assert_eq!(s, 201, "{ep}");
    let ep_id = ep["id"].as_str().unwrap();
    let (s, w) = post(
        "/api/v1/webhooks",
        &owner.token,
        json!({"endpoint_id": ep_id, "source_type": "generic", "queue": "builds"}),
    )
    .await;
    assert_eq!(s, 201, "{w}");
    let rx = Receiver::start().await;
    let (s, hook) = post(&format!("/api/v1/endpoints/{ep_id}/hooks"), &owner.token, json!({"url": rx.url()})).await;
    assert_eq!(s, 201, "{hook}");

    let ingest = w["ingest_url"].as_str().unwrap();
    let path = ingest.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut resp = client
        .post(format!("{base}{path}"))
        .insert_header(("X-Event", "build.done"))
        .insert_header(("X-Delivery-Id", "startup-1"))
        .send_body(r#"{"ok":true}"#)
        .await
        .unwrap();
    let answer: serde_json::Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap();
    let todo = routed_todo(resp.status().as_u16(), &answer);

    let got = rx.wait_for(1).await.remove(0);
    got.verify(hook["signing_secret"].as_str().unwrap()).expect("a verified notification");
    let body = got.json();
    assert_eq!((body["type"].as_str(), body["reason"].as_str()), (Some("todo.ready"), Some("created")));
    assert_eq!(body["todo_id"], todo.to_string());
    assert_eq!(body["endpoint"], "worker");
    drop(server);
}
