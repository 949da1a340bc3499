//! Each send time decided once: a quiet digest is skipped (and the skip recorded), a
//! digest with a dead letter is sent once listing it, a section that cannot be
//! measured is shown as unavailable and the digest is sent even when it skips quiet
//! ones, and send times missed while no server ran are sent (30 minutes late) or
//! skipped and recorded (2 hours late).

use std::time::Duration;

use serde_json::json;

use super::*;
use testkit::receiver::Reply;

use crate::harness::wait::wait_count_at_least;

#[actix_web::test]
async fn a_quiet_digest_is_skipped_and_the_skip_is_recorded() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(&app, &o, json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    let id = d["id"].as_str().unwrap();
    make_due(&app, id, "0 seconds").await;
    wait_runs(&app, id, "skipped_quiet", 1).await;
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE event = 'digest'").await, 0);
    assert_eq!(rx.count(), 0, "nothing reached the sink");
    let next =
        app.db.count(&format!("SELECT count(*) FROM digests WHERE id = '{}' AND next_send_at > now()", &id[3..])).await;
    assert_eq!(next, 1, "the next send time moved on");
}

#[actix_web::test]
async fn a_digest_with_one_dead_letter_is_sent_once_listing_it_with_its_link() {
    let app = spawn_with(|s| s.metrics_token = Some(METRICS_TOKEN.into())).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(&app, &o, json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    let id = d["id"].as_str().unwrap();
    let todo = dead_letter(&app, &o, "ci-bot", "Deploy failed").await;
    make_due(&app, id, "0 seconds").await;
    let got = rx.wait_for(1).await;
    wait_runs(&app, id, "sent", 1).await;
    let m = got[0].json();
    assert!(m["title"].as_str().unwrap().starts_with("Switchboard digest · morning ·"), "{m}");
    let text = m["message"].as_str().unwrap();
    assert!(text.contains("ci-bot/builds: 1 dead letter"), "{text}");
    assert!(text.contains(&format!("/todos/{todo}")), "{text}");
    assert_eq!(got[0].header("x-gotify-key"), Some("app-token"));
    // Everything that could send it again is over: its delivery has ended, and a whole
    // scheduler tick ran after the send time was decided (any tick that saw it due
    // has finished; a later one finds it decided). Then it is one run, one outbox row,
    // one message.
    digest_outbox_ended(&app.db).await;
    two_more_ticks(|| app.metric(METRICS_TOKEN, TICKS)).await;
    let digest_id = &id[3..];
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM digest_runs WHERE digest_id = '{digest_id}'")).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE event = 'digest'").await, 1, "one row for one sink");
    assert_eq!(rx.count(), 1, "sent once");
}

#[actix_web::test]
async fn an_unmeasurable_doorbell_section_reads_unavailable_and_the_digest_is_sent_despite_skip_when_quiet() {
    let app = spawn_with(|s| s.digest_section_timeout_ms = 200).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(
        &app,
        &o,
        json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink], "skip_when_quiet": true}),
    )
    .await;
    let id = d["id"].as_str().unwrap();
    // Another session holds the doorbell table: the section's query cannot finish.
    let (client, connection) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(connection);
    client.batch_execute("BEGIN; LOCK TABLE doorbell_rings IN ACCESS EXCLUSIVE MODE").await.unwrap();
    // A scheduler tick is now stuck deciding rings (it waits out its lock timeout):
    // the send time comes due during that tick, which must still send it (a tick that
    // read the clock before the wait once skipped it as if it lay in the future).
    let waiting =
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%doorbell_rings%'";
    wait_count_at_least(&app.db, waiting, 1, Duration::from_secs(10)).await;
    make_due(&app, id, "0 seconds").await;
    let got = rx.wait_for(1).await;
    client.batch_execute("ROLLBACK").await.unwrap();
    let text = got[0].json()["message"].as_str().unwrap().to_owned();
    assert!(text.contains("Unheard doorbells: unavailable: timed out after 200 ms"), "{text}");
    assert!(!text.contains("Unheard doorbells: 0"), "{text}");
    let unavailable =
        app.db.count(&format!("SELECT unavailable::int8 FROM digest_runs WHERE digest_id = '{}'", &id[3..])).await;
    assert_eq!(unavailable, 1);
}

#[actix_web::test]
async fn a_send_time_missed_by_thirty_minutes_is_sent_once_at_start_up() {
    let app = spawn_with(|s| s.digest_interval_ms = 3_600_000).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &rx).await;
    dead_letter(&app, &o, "ci-bot", "Missed while down").await;
    // Sent whatever it finds: the send time is half an hour before the dead letter.
    let d = digest(
        &app,
        &o,
        json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink], "skip_when_quiet": false}),
    )
    .await;
    let id = d["id"].as_str().unwrap().to_owned();
    app.stop().await;
    make_due(&app, &id, "30 minutes").await;
    // The next server decides it at start-up (its ticks are an hour apart).
    let _next = another_server(&app, |s| s.digest_interval_ms = 3_600_000).await;
    rx.wait_for(1).await;
    wait_runs(&app, &id, "sent", 1).await;
    assert_eq!(rx.count(), 1);
}

#[actix_web::test]
async fn a_send_time_missed_by_two_hours_is_skipped_and_recorded() {
    let app = spawn_with(|s| s.digest_interval_ms = 3_600_000).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let sink = sink_to(&app, &o, &rx).await;
    dead_letter(&app, &o, "ci-bot", "Missed long ago").await;
    let d = digest(&app, &o, json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    let id = d["id"].as_str().unwrap().to_owned();
    app.stop().await;
    make_due(&app, &id, "2 hours").await;
    let next = another_server(&app, |s| s.digest_interval_ms = 3_600_000).await;
    wait_runs(&app, &id, "skipped_late", 1).await;
    let mut answer =
        app.client.get(format!("{}/api/v1/digests/{id}", next.base)).bearer_auth(&o.token).send().await.unwrap();
    let shown: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(shown["runs"][0]["outcome"], "skipped_late", "{shown}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE event = 'digest'").await, 0);
    assert_eq!(rx.count(), 0);
}
