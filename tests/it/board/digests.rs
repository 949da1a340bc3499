//! The Digests page over real HTTP: a digest added through the form (a bad schedule is
//! refused beside the form and nothing is stored), listed with its next send time in
//! its zone and in UTC, previewed (nothing sent, nothing recorded), a send time skipped
//! for being late shown as such, edited and deleted; a team member reads and previews
//! the team's digests but may not add, change or delete them; an outsider finds nothing.

use awc::http::StatusCode;
use chrono::{DateTime, Utc};
use serde_json::json;
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::domain::todo_state::TeamRole;

use super::{Page, Session, board_owner, get, post_form, sign_in};
use crate::harness::{Owner, TestApp};

const KEY: SecretKey = SecretKey([6; 32]);
const SECRET: &str = "gotify-app-token-DIGEST-4e1b";

/// A vault key, loopback receivers allowed.
async fn spawn() -> TestApp {
    TestApp::spawn_with(|s: &mut Settings| {
        s.secret_encryption_key = Some(KEY);
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
    })
    .await
}

async fn post(app: &TestApp, s: &Session, path: &str, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, path, Some(&s.cookie), &form).await
}

/// A gotify sink of `owner` (`None`: the token holder's own scope) named `name`; its id.
async fn sink(app: &TestApp, o: &Owner, name: &str, owner: Option<&str>) -> String {
    let mut body = json!({"name": format!("{name}-conn"), "kind": "gotify", "secret": SECRET,
                          "base_url": "https://203.0.113.10"});
    if let Some(owner) = owner {
        body["owner"] = json!(owner);
    }
    let (st, c) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(st, 201, "{c}");
    let mut body =
        json!({"name": name, "kind": "gotify", "base_url": "https://203.0.113.10", "connection_id": c["id"]});
    if let Some(owner) = owner {
        body["owner"] = json!(owner);
    }
    let (st, s) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(st, 201, "{s}");
    s["id"].as_str().unwrap().to_owned()
}

/// The stored next send time of digest `id` (`dg_…`).
async fn next_send(app: &TestApp, o: &Owner, id: &str) -> DateTime<Utc> {
    let (st, d) = app.call("GET", &format!("/api/v1/digests/{id}"), Some(&o.token), None).await;
    assert_eq!(st, 200, "{d}");
    d["next_send_at"].as_str().unwrap().parse().unwrap()
}

fn uuid(id: &str) -> &str {
    id.strip_prefix("dg_").unwrap()
}

#[actix_web::test]
async fn an_admin_adds_a_digest_sees_its_next_send_time_previews_edits_and_deletes_it() {
    let app = spawn().await;
    let ada = board_owner(&app, "ada@example.com").await;
    let phone = sink(&app, &ada, "ada-phone", None).await;
    let s = sign_in(&app, "ada@example.com").await;

    let page = get(&app, "/digests", Some(&s.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("No digests yet") && page.body.contains(r#"href="/digests" aria-current="page""#));
    assert!(page.body.contains(&format!(r#"name="sink_ids" value="{phone}""#)), "{}", page.body);
    assert!(page.body.contains("TZ=Europe/Berlin Mon-Fri 09:00,17:00"), "the grammar's hint: {}", page.body);

    // A bad schedule is refused beside the form, with what was typed; nothing is stored.
    let fields = |schedule: &'static str| {
        vec![
            ("name", "morning"),
            ("schedule", schedule),
            ("queues", "builds, deploys"),
            ("sink_ids", phone.as_str()),
            ("skip_when_quiet", "on"),
            ("age_threshold_seconds", "3600"),
            ("cairn_connection_id", ""),
            ("owner", "ada@example.com"),
        ]
    };
    let refused = post(&app, &s, "/digests", &fields("Mon-Fri 25:00")).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(
        refused.body.contains("Refused, nothing changed: invalid_argument: schedule: hour 25 out of range"),
        "{}",
        refused.body
    );
    assert!(refused.body.contains(r#"value="Mon-Fri 25:00""#) && refused.body.contains(r#"value="morning""#));
    assert_eq!(app.db.count("SELECT count(*) FROM digests").await, 0, "nothing stored");

    // Added: on to its page, with a notice naming the next send time.
    let added = post(&app, &s, "/digests", &fields("TZ=Europe/Berlin Mon-Fri 09:00,17:00")).await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let id = added.location().trim_start_matches("/digests/").to_owned();
    assert!(id.starts_with("dg_"), "{}", added.location());
    assert_eq!(
        app.db.count("SELECT count(*) FROM digests WHERE skip_when_quiet AND queues = '{builds,deploys}'").await,
        1
    );

    // Listed with its next send time in Berlin and in UTC, and linked.
    let next = next_send(&app, &ada, &id).await;
    let berlin = next.with_timezone(&chrono_tz::Europe::Berlin).format("%a %d %b %Y %H:%M Europe/Berlin").to_string();
    let utc = next.format("%a %d %b %Y %H:%M UTC").to_string();
    assert!(berlin.contains("09:00") || berlin.contains("17:00"), "{berlin}");
    let list = get(&app, "/digests", Some(&s.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    for want in [berlin.as_str(), utc.as_str(), "morning", "ada-phone", "TZ=Europe/Berlin Mon-Fri 09:00,17:00"] {
        assert!(list.body.contains(want), "{want}: {}", list.body);
    }
    assert!(list.body.contains(&format!(r#"href="/digests/{id}""#)), "{}", list.body);
    assert!(list.body.contains(&format!(r#"href="/digests/{id}/preview""#)), "{}", list.body);
    assert!(list.body.contains("not sent yet"), "{}", list.body);
    assert!(!list.body.contains(SECRET) && !list.body.contains("203.0.113.10"), "{}", list.body);

    // The preview: the title and text in a <pre>, each section's status; nothing sent or recorded.
    let preview = get(&app, &format!("/digests/{id}/preview"), Some(&s.cookie)).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(preview.body.contains("<pre>Switchboard digest · morning · "), "{}", preview.body);
    assert!(preview.body.contains(r#"<tr id="section-unheard_doorbells">"#), "{}", preview.body);
    assert!(preview.body.contains("Nothing was sent and nothing was recorded"), "{}", preview.body);
    assert_eq!(app.db.count("SELECT count(*) FROM digest_runs").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0);

    // A send time skipped for being late reads as such on its page.
    app.db
        .exec(&format!(
            "INSERT INTO digest_runs (id, digest_id, send_at, outcome, quiet, body, title) \
             VALUES (gen_random_uuid(), '{}', now() - interval '3 hours', 'skipped_late', false, '', '')",
            uuid(&id)
        ))
        .await;
    let detail = get(&app, &format!("/digests/{id}"), Some(&s.cookie)).await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.body);
    assert!(
        detail.body.contains("skipped: late") && detail.body.contains("missed by an hour or more"),
        "{}",
        detail.body
    );
    assert!(detail.body.contains(&format!(r#"action="/digests/{id}/update""#)), "{}", detail.body);
    let list = get(&app, "/digests", Some(&s.cookie)).await;
    assert!(list.body.contains("skipped: late"), "the list's last send: {}", list.body);

    // Edited (the whole digest replaced); a refused edit changes nothing.
    let bad = post(
        &app,
        &s,
        &format!("/digests/{id}/update"),
        &[("name", "morning"), ("schedule", "Mon 9am"), ("sink_ids", &phone)],
    )
    .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert!(bad.body.contains("Refused, nothing changed: invalid_argument: schedule:"), "{}", bad.body);
    assert!(bad.body.contains(r#"value="Mon 9am""#), "what was typed: {}", bad.body);
    let edited = post(
        &app,
        &s,
        &format!("/digests/{id}/update"),
        &[("name", "morning"), ("schedule", "TZ=America/Los_Angeles Mon 08:00"), ("sink_ids", &phone), ("queues", "")],
    )
    .await;
    assert_eq!(
        (edited.status, edited.location()),
        (StatusCode::SEE_OTHER, format!("/digests/{id}").as_str()),
        "{}",
        edited.body
    );
    let sql = "SELECT count(*) FROM digests WHERE schedule = 'TZ=America/Los_Angeles Mon 08:00' \
               AND NOT skip_when_quiet AND queues = '{}'";
    assert_eq!(app.db.count(sql).await, 1, "replaced as a whole");
    let detail = get(&app, &format!("/digests/{id}"), Some(&s.cookie)).await;
    assert!(
        detail.body.contains("America/Los_Angeles") && detail.body.contains("sent even when quiet"),
        "{}",
        detail.body
    );

    // Deleted.
    let deleted = post(&app, &s, &format!("/digests/{id}/delete"), &[]).await;
    assert_eq!((deleted.status, deleted.location()), (StatusCode::SEE_OTHER, "/digests"), "{}", deleted.body);
    assert_eq!(app.db.count("SELECT count(*) FROM digests").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM digest_runs").await, 0, "its history went with it");
}

#[actix_web::test]
async fn a_member_reads_and_previews_the_teams_digest_but_may_not_change_it_and_an_outsider_finds_nothing() {
    let app = spawn().await;
    let ada = board_owner(&app, "ada@example.com").await;
    let (team, _, _) = app.store.create_team("ops", "ada@example.com").await.unwrap();
    let bob = board_owner(&app, "bob@example.com").await;
    app.store.add_team_member(team, bob.id, TeamRole::Member).await.unwrap();
    board_owner(&app, "carol@example.com").await;
    let ops_phone = sink(&app, &ada, "ops-phone", Some("team:ops")).await;
    let body = json!({"name": "ops-morning", "schedule": "TZ=Europe/Berlin Mon-Fri 09:00", "sink_ids": [ops_phone],
                      "owner": "team:ops"});
    let (st, d) = app.post("/api/v1/digests", &ada.token, body).await;
    assert_eq!(st, 201, "{d}");
    let id = d["id"].as_str().unwrap().to_owned();

    let b = sign_in(&app, "bob@example.com").await;
    let list = get(&app, "/digests", Some(&b.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body.contains("ops-morning") && list.body.contains("team:ops"), "{}", list.body);
    assert!(!list.body.contains(&format!("/digests/{id}/delete")), "no delete button for a member: {}", list.body);
    assert!(!list.body.contains(r#"<option value="team:ops""#), "ops is not his to add to: {}", list.body);
    let detail = get(&app, &format!("/digests/{id}"), Some(&b.cookie)).await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.body);
    assert!(detail.body.contains("Only an admin") && !detail.body.contains("/update"), "{}", detail.body);
    let preview = get(&app, &format!("/digests/{id}/preview"), Some(&b.cookie)).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);

    // Adding to the team reads like adding to an owner that does not exist (as in the
    // API); changing or deleting the team's digest is forbidden. Nothing changes.
    let fields = [("name", "bobs"), ("schedule", "Mon 09:00"), ("sink_ids", ops_phone.as_str()), ("owner", "team:ops")];
    let added = post(&app, &b, "/digests", &fields).await;
    assert_eq!(added.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", added.body);
    assert!(added.body.contains("no such owner that you administer"), "{}", added.body);
    let deleted = post(&app, &b, &format!("/digests/{id}/delete"), &[]).await;
    assert_eq!(deleted.status, StatusCode::FORBIDDEN, "{}", deleted.body);
    let edit = [("name", "bobs"), ("schedule", "Mon 09:00"), ("sink_ids", ops_phone.as_str())];
    let edited = post(&app, &b, &format!("/digests/{id}/update"), &edit).await;
    assert_eq!(edited.status, StatusCode::FORBIDDEN, "{}", edited.body);
    assert_eq!(app.db.count("SELECT count(*) FROM digests WHERE name = 'ops-morning'").await, 1, "nothing changed");
    assert_eq!(app.db.count("SELECT count(*) FROM digests").await, 1, "nothing added");

    let c = sign_in(&app, "carol@example.com").await;
    let list = get(&app, "/digests", Some(&c.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(!list.body.contains("ops-morning") && !list.body.contains(&id), "{}", list.body);
    for path in [format!("/digests/{id}"), format!("/digests/{id}/preview")] {
        assert_eq!(get(&app, &path, Some(&c.cookie)).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let deleted = post(&app, &c, &format!("/digests/{id}/delete"), &[]).await;
    assert_eq!(deleted.status, StatusCode::NOT_FOUND, "{}", deleted.body);
    let edited = post(&app, &c, &format!("/digests/{id}/update"), &edit).await;
    assert_eq!(edited.status, StatusCode::NOT_FOUND, "{}", edited.body);
    assert_eq!(get(&app, "/digests/dg_nope", Some(&c.cookie)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(app.db.count("SELECT count(*) FROM digests WHERE name = 'ops-morning'").await, 1);
}
