//! Two server processes on one database send one digest per send time: each claims the
//! send time by a conditional update, and only one commits it. "No more" is checked
//! once both schedulers have ticked past the last decision, not after a guessed pause.

use std::time::Duration;

use serde_json::json;

use crate::harness::TestDb;
use crate::harness::wait::wait_count_at_least;
use crate::sinks::logs::Served;
use testkit::receiver::{Receiver, Reply};

#[actix_web::test]
async fn two_server_processes_send_one_digest_per_send_time() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let operator = store.create_human("a@example.com", "A", None).await.unwrap().token;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let fast = [("SWITCHBOARD_DIGEST_INTERVAL_MS", "20"), ("SWITCHBOARD_METRICS_TOKEN", super::METRICS_TOKEN)];
    let first = Served::start_with(&db, &fast);
    let second = Served::start_with(&db, &fast);
    let body = json!({"name": "p", "kind": "gotify", "secret": "t", "base_url": rx.base()});
    let (s, c) = first.call("POST", "/api/v1/connections", &operator, body).await;
    assert_eq!(s, 201, "{c}");
    let (s, sink) = first
        .call(
            "POST",
            "/api/v1/sinks",
            &operator,
            json!({"name": "s", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]}),
        )
        .await;
    assert_eq!(s, 201, "{sink}");
    // Fifteen messages in a minute: past the default burst of 10, so lift the budget
    // (a held digest would be coalesced, not lost, but this test counts messages).
    let path = format!("/api/v1/sinks/{}", sink["id"].as_str().unwrap());
    assert_eq!(first.call("PATCH", &path, &operator, json!({"budget_per_hour": 3600, "burst": 100})).await.0, 200);
    db.exec("UPDATE sinks SET tokens = 100").await;
    // Five digests, all due at once, each sent whether quiet or not: ten racing
    // decisions a round, five send times.
    for i in 0..5 {
        let body = json!({"name": format!("d{i}"), "schedule": "Mon 09:00", "sink_ids": [sink["id"]], "skip_when_quiet": false});
        let (s, d) = second.call("POST", "/api/v1/digests", &operator, body).await;
        assert_eq!(s, 201, "{d}");
    }
    for round in 0..3 {
        db.exec("UPDATE digests SET next_send_at = now()").await;
        let want = 5 * (round + 1);
        let sent = "SELECT count(*) FROM digest_runs WHERE outcome = 'sent'";
        wait_count_at_least(&db, sent, want, Duration::from_secs(20)).await;
        rx.wait_for(want as usize).await;
    }
    // Everything that could send one again is over: every digest delivery has ended,
    // and on both instances a whole scheduler tick ran after the last send time was
    // decided (a tick that saw one due has finished; a later one finds it decided).
    super::digest_outbox_ended(&db).await;
    for server in [&first, &second] {
        super::two_more_ticks(|| ticks(server)).await;
    }
    assert_eq!(db.count("SELECT count(*) FROM digest_runs").await, 15, "one run per send time");
    assert_eq!(db.count("SELECT count(*) FROM outbox WHERE event = 'digest'").await, 15, "one row per send time");
    assert_eq!(rx.count(), 15, "one message per send time");
    first.kill();
    second.kill();
}

/// The server's finished digest scheduler ticks, from its metrics.
async fn ticks(server: &Served) -> u64 {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let mut resp = client
        .get(format!("{}/metrics", server.base))
        .insert_header(("Authorization", format!("Bearer {}", super::METRICS_TOKEN)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let text = String::from_utf8(resp.body().await.unwrap().to_vec()).unwrap();
    let line = text.lines().find(|l| l.starts_with(super::TICKS)).unwrap_or_else(|| panic!("no ticks in\n{text}"));
    line[super::TICKS.len()..].trim().parse().unwrap()
}
