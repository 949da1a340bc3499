//! The operator API of digests: what is refused (naming the field and token, changing
//! nothing), what a digest answers, and the preview.

use awc::http::StatusCode;
use serde_json::json;

use super::*;

#[actix_web::test]
async fn an_invalid_schedule_is_refused_naming_the_field_and_the_offending_token() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    for (schedule, message) in [
        ("Mon-Fri 25:00", "schedule: hour 25 out of range"),
        ("TZ=Mars/Base Mon 09:00", "schedule: unknown time zone \"Mars/Base\""),
    ] {
        let (s, b) =
            app.post("/api/v1/digests", &o.token, json!({"name": "d", "schedule": schedule, "sink_ids": [sink]})).await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_argument")),
            "{b}"
        );
        assert_eq!(b["error"]["message"], message, "{schedule}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM digests").await, 0, "nothing stored");
}

#[actix_web::test]
async fn a_digest_naming_another_owners_sink_is_refused_and_nothing_is_stored() {
    let app = spawn_with(|_| {}).await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let rx = Receiver::start().await;
    let bs_sink = sink_to(&app, &b, &rx).await;
    let (s, body) = app
        .post("/api/v1/digests", &a.token, json!({"name": "d", "schedule": "Mon 09:00", "sink_ids": [bs_sink]}))
        .await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("reference_out_of_scope")),
        "{body}"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM digests").await, 0);
}

#[actix_web::test]
async fn an_owner_holds_at_most_five_digests() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    for i in 0..5 {
        digest(&app, &o, json!({"name": format!("d{i}"), "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    }
    let (s, b) =
        app.post("/api/v1/digests", &o.token, json!({"name": "d5", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    assert_eq!(s, StatusCode::CONFLICT, "{b}");
}

#[actix_web::test]
async fn a_digest_answers_its_next_send_time_in_its_zone_and_in_utc() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(
        &app,
        &o,
        json!({"name": "morning", "schedule": "TZ=Pacific/Auckland Mon-Fri 09:00", "sink_ids": [sink]}),
    )
    .await;
    let next: chrono::DateTime<chrono::Utc> = d["next_send_at"].as_str().unwrap().parse().unwrap();
    assert!(next > chrono::Utc::now());
    let local = d["next_send_local"].as_str().unwrap();
    assert!(local.ends_with("09:00 Pacific/Auckland"), "{local}");
    let (s, shown) = app.get(&format!("/api/v1/digests/{}", d["id"].as_str().unwrap()), &o.token).await;
    assert_eq!((s, shown["runs"].clone()), (StatusCode::OK, json!([])), "{shown}");
}

#[actix_web::test]
async fn the_preview_lists_a_dead_letter_with_its_link_and_sends_nothing() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(&app, &o, json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    let todo = dead_letter(&app, &o, "ci-bot", "Nightly build broke").await;
    let (s, p) =
        app.call("POST", &format!("/api/v1/digests/{}/preview", d["id"].as_str().unwrap()), Some(&o.token), None).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    assert_eq!(p["quiet"], false);
    let text = p["text"].as_str().unwrap();
    assert!(text.contains("ci-bot/builds: 1 dead letter"), "{text}");
    assert!(text.contains(&format!("/todos/{todo}")), "{text}");
    assert!(text.contains("\"Nightly build broke\""), "{text}");
    let dead: Vec<&serde_json::Value> =
        p["sections"].as_array().unwrap().iter().filter(|s| s["name"] == "dead_letters").collect();
    assert_eq!((dead[0]["status"].as_str(), dead[0]["dead_letters"].as_i64()), (Some("ok"), Some(1)), "{dead:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM digest_runs").await, 0, "a preview records nothing");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox WHERE event = 'digest'").await, 0, "and sends nothing");
}

#[actix_web::test]
async fn the_preview_shows_the_title_and_the_body_in_the_schedules_zone() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    let schedule = "TZ=Europe/Berlin Mon 09:00";
    let d = digest(&app, &o, json!({"name": "morning", "schedule": schedule, "sink_ids": [sink]})).await;
    let before = chrono::Utc::now();
    let (s, p) =
        app.call("POST", &format!("/api/v1/digests/{}/preview", d["id"].as_str().unwrap()), Some(&o.token), None).await;
    assert_eq!(s, StatusCode::OK, "{p}");
    let text = p["text"].as_str().unwrap();
    let first = text.lines().next().unwrap();
    // A first digest covers the day before: its start, in Berlin (CET in December,
    // CEST in summer), with the zone's name, abbreviation and offset; never UTC.
    let since = (before - chrono::Duration::hours(24)).with_timezone(&chrono_tz::Europe::Berlin);
    let abbreviation = since.format("%Z (%:z)").to_string().replace(" (", ", ");
    let zone = format!("Europe/Berlin ({abbreviation}");
    assert!(first.starts_with(&format!("Since {}", since.format("%a %d %b"))), "{first}");
    assert!(first.contains(&zone), "{zone} in {first}");
    assert!(!text.contains("UTC"), "{text}");
}

#[actix_web::test]
async fn the_cli_previews_a_digest_as_one_json_object() {
    let app = spawn_with(|_| {}).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    let sink = sink_to(&app, &o, &rx).await;
    let d = digest(&app, &o, json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]})).await;
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SWITCHBOARD_DATABASE_URL", &app.db.url)
        .args(["digest", "preview", "--id", d["id"].as_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["quiet"], true, "{json}");
    assert!(json["text"].as_str().unwrap().contains("nothing needs attention"), "{json}");
}
