//! The Sinks page over real HTTP: a connection stored (its fingerprint shown, its
//! secret never, in any page, redirect or cookie), a sink added, disabled and enabled,
//! its subscriptions edited (a refused set changes nothing), its delivery log after a
//! dead letter reached a loopback Gotify receiver; a team member sees the team's
//! sinks without forms and is refused a change; an outsider finds nothing.

use awc::http::StatusCode;
use serde_json::json;
use switchboard::board::respond::{NOTICE_COOKIE, Notice, Tone};
use switchboard::config::{CidrList, SecretKey, Settings};
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};
use switchboard::domain::todo_state::TeamRole;

use super::{Page, Session, board_owner, get, post_form, sign_in};
use crate::harness::TestApp;
use crate::harness::wait::wait_count;
use testkit::receiver::Receiver;

const KEY: SecretKey = SecretKey([5; 32]);
const SECRET: &str = "gotify-app-token-ALPHA-7f3a";
const ROTATED: &str = "gotify-app-token-BRAVO-91c2";

/// A vault key, loopback receivers allowed, a fast outbox.
async fn spawn() -> TestApp {
    TestApp::spawn_with(|s: &mut Settings| {
        s.secret_encryption_key = Some(KEY);
        s.push_allow_http = true;
        s.notify_hook_allow_cidrs = CidrList(vec![("127.0.0.1".parse().unwrap(), 32)]);
        s.outbox_poll_ms = 50;
        s.outbox_retry_base_ms = 50;
    })
    .await
}

/// A connection's fingerprint: a keyed HMAC under the instance's master key.
fn fingerprint(secret: &str) -> String {
    switchboard::vault::Vault::new(Some(&KEY)).fingerprint(secret.as_bytes()).unwrap()
}

/// Every part of an answer a secret could leak through: status line aside, the
/// headers (`Location`, the notice cookie) and the body.
fn never_shows(page: &Page, secrets: &[&str]) {
    let headers = format!("{:?}", page.headers);
    for secret in secrets {
        assert!(!page.body.contains(secret) && !headers.contains(secret), "a secret leaked: {headers} {}", page.body);
    }
}

/// The notice a redirect carries.
fn notice(page: &Page) -> Notice {
    let cookie = page.set_cookie(NOTICE_COOKIE).expect("a notice");
    Notice::decode(cookie.value()).expect("a notice that decodes")
}

async fn post(app: &TestApp, s: &Session, path: &str, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, path, Some(&s.cookie), &form).await
}

#[actix_web::test]
async fn an_admin_stores_a_connection_adds_a_sink_edits_it_and_reads_its_delivery_log() {
    let app = spawn().await;
    let ada = board_owner(&app, "ada@example.com").await;
    let s = sign_in(&app, "ada@example.com").await;
    let rx = Receiver::start().await;
    let mut seen = Vec::new();

    let page = get(&app, "/sinks", Some(&s.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("No connections yet") && page.body.contains(r#"type="password""#), "{}", page.body);

    // Store a connection bound to the loopback receiver: the page shows its destination
    // and fingerprint, never the secret.
    let stored = post(
        &app,
        &s,
        "/sinks/connections",
        &[
            ("name", "ada-gotify"),
            ("kind", "gotify"),
            ("secret", SECRET),
            ("base_url", &rx.base()),
            ("owner", "ada@example.com"),
        ],
    )
    .await;
    assert_eq!((stored.status, stored.location()), (StatusCode::SEE_OTHER, "/sinks"), "{}", stored.body);
    let page = get(&app, "/sinks", Some(&s.cookie)).await;
    assert!(page.body.contains("ada-gotify") && page.body.contains(&fingerprint(SECRET)), "{}", page.body);
    assert!(page.body.contains("Destination") && page.body.contains(&rx.base()), "{}", page.body);
    // The connection's id, as its rotate form names it.
    let marker = "/sinks/connections/";
    let at = page.body.find(marker).expect("a rotate form") + marker.len();
    let connection = page.body[at..].split('/').next().unwrap().to_owned();
    assert!(connection.starts_with("cn_"), "{connection}");
    seen.extend([stored, page]);

    // Add a sink posting with it (so to the loopback receiver): the form has no URL.
    let added = post(
        &app,
        &s,
        "/sinks",
        &[
            ("name", "ada-phone"),
            ("kind", "gotify"),
            ("connection_id", &connection),
            ("apprise_mode", ""),
            ("owner", "ada@example.com"),
        ],
    )
    .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let sink_page = added.location().to_owned();
    assert!(sink_page.starts_with("/sinks/sk_"), "{sink_page}");
    let sink = sink_page.trim_start_matches("/sinks/").to_owned();
    seen.push(added);

    // Disable it, then enable it again.
    let off = post(&app, &s, &format!("/sinks/{sink}/update"), &[("enabled", "false")]).await;
    assert_eq!(off.status, StatusCode::SEE_OTHER, "{}", off.body);
    assert_eq!(app.db.count("SELECT count(*) FROM sinks WHERE NOT enabled").await, 1);
    let page = get(&app, "/sinks", Some(&s.cookie)).await;
    assert!(page.body.contains(r#"name="enabled" value="true""#), "an Enable button: {}", page.body);
    let on = post(&app, &s, &format!("/sinks/{sink}/update"), &[("enabled", "true")]).await;
    assert_eq!(on.status, StatusCode::SEE_OTHER, "{}", on.body);
    assert_eq!(app.db.count("SELECT count(*) FROM sinks WHERE enabled").await, 1);
    let budget = post(&app, &s, &format!("/sinks/{sink}/update"), &[("budget_per_hour", "0"), ("burst", "5")]).await;
    assert_eq!(budget.status, StatusCode::UNPROCESSABLE_ENTITY, "a budget out of bounds: {}", budget.body);
    assert!(budget.body.contains("Refused, nothing changed"), "{}", budget.body);
    assert_eq!(app.db.count("SELECT count(*) FROM sinks WHERE burst = 5").await, 0, "nothing changed");
    seen.extend([off, page, on, budget]);

    // Subscriptions naming another owner's endpoint are refused, and nothing is saved.
    let bob = app.owner("bob@example.com").await;
    let bobs = app.agent(bob.scope, "bobs").await;
    let foreign = json!({"subscriptions": [{"events": ["todo.dead_lettered"], "endpoint_ids": [bobs.id]}]}).to_string();
    let refused = post(&app, &s, &format!("/sinks/{sink}/subscriptions"), &[("subscriptions", &foreign)]).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", refused.body);
    assert!(refused.body.contains("reference_out_of_scope"), "{}", refused.body);
    // The add form gave the sink the default (the dead letters); the refusal kept it.
    let default_events = "SELECT count(*) FROM sink_subscriptions \
        WHERE events = ARRAY['todo.dead_lettered', 'relay.exhausted']";
    assert_eq!(app.db.count(default_events).await, 1, "nothing changed");
    assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions").await, 1, "nothing changed");
    let all = r#"{"subscriptions": [{"events": ["todo.dead_lettered"]}]}"#;
    let saved = post(&app, &s, &format!("/sinks/{sink}/subscriptions"), &[("subscriptions", all)]).await;
    assert_eq!((saved.status, saved.location()), (StatusCode::SEE_OTHER, sink_page.as_str()), "{}", saved.body);
    assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions").await, 1);
    assert_eq!(app.db.count(default_events).await, 0, "the saved list replaced the default");
    seen.extend([refused, saved]);

    // A dead letter reaches the receiver; the delivery log shows it sent, linking the todo.
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.push(Verb::CreateTodo);
    let ep = app.endpoint(ada.scope, "builder", &grants).await;
    let body = json!({"queue": "builds", "title": "nightly", "max_attempts": 1});
    let (st, created) = app.post("/api/v1/agent/todos", &ep.token, body).await;
    assert_eq!(st, 201, "{created}");
    let todo = created["id"].as_str().unwrap().to_owned();
    let (st, b) = app.post(&format!("/api/v1/agent/todos/{todo}/claim"), &ep.token, json!({})).await;
    assert_eq!(st, 200, "{b}");
    let (st, b) = app.post(&format!("/api/v1/agent/todos/{todo}/fail"), &ep.token, json!({"summary": "broke"})).await;
    assert_eq!(st, 200, "{b}");
    rx.wait_for(1).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let log = get(&app, &sink_page, Some(&s.cookie)).await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.body);
    assert!(log.body.contains("todo.dead_lettered") && log.body.contains("sb-chip-sent"), "{}", log.body);
    assert!(log.body.contains(&format!(r#"href="/todos/{todo}""#)), "{}", log.body);
    assert!(log.body.contains("<textarea") && log.body.contains("todo.dead_lettered"), "{}", log.body);
    seen.push(log);

    // A test send: back to the page with ok.
    let tested = post(&app, &s, &format!("/sinks/{sink}/test"), &[]).await;
    assert_eq!((tested.status, tested.location()), (StatusCode::SEE_OTHER, "/sinks"), "{}", tested.body);
    assert_eq!(notice(&tested).tone, Tone::Done, "{:?}", notice(&tested));
    rx.wait_for(2).await;
    seen.push(tested);
    for _ in 0..5 {
        post(&app, &s, &format!("/sinks/{sink}/test"), &[]).await;
    }
    let limited = post(&app, &s, &format!("/sinks/{sink}/test"), &[]).await;
    assert_eq!(limited.status, StatusCode::SEE_OTHER, "the seventh in a minute: {}", limited.body);
    let said = notice(&limited);
    assert!(said.tone == Tone::Warn && said.text.contains("rate_limited"), "{said:?}");
    assert_eq!(rx.count(), 7, "six test sends and the dead letter");

    // Rotate: the new fingerprint, neither secret.
    let rotated = post(&app, &s, &format!("/sinks/connections/{connection}/rotate"), &[("secret", ROTATED)]).await;
    assert_eq!(rotated.status, StatusCode::SEE_OTHER, "{}", rotated.body);
    let page = get(&app, "/sinks", Some(&s.cookie)).await;
    assert!(page.body.contains(&fingerprint(ROTATED)), "{}", page.body);
    seen.extend([rotated, page]);

    // Deleting the connection while the sink posts with it is refused on the page.
    let kept = post(&app, &s, &format!("/sinks/connections/{connection}/delete"), &[]).await;
    assert_eq!(kept.status, StatusCode::CONFLICT, "{}", kept.body);
    assert_eq!(app.db.count("SELECT count(*) FROM connections").await, 1);
    seen.push(kept);

    for page in &seen {
        never_shows(page, &[SECRET, ROTATED]);
    }
}

#[actix_web::test]
async fn a_member_sees_the_teams_sinks_without_forms_and_an_outsider_finds_nothing() {
    let app = spawn().await;
    let ada = board_owner(&app, "ada@example.com").await;
    let (team, _, _) = app.store.create_team("ops", "ada@example.com").await.unwrap();
    let bob = board_owner(&app, "bob@example.com").await;
    app.store.add_team_member(team, bob.id, TeamRole::Member).await.unwrap();
    board_owner(&app, "carol@example.com").await;
    let body = json!({"name": "ops-gotify", "kind": "gotify", "secret": SECRET, "base_url": "https://203.0.113.10",
                      "owner": "team:ops"});
    let (st, c) = app.post("/api/v1/connections", &ada.token, body).await;
    assert_eq!(st, 201, "{c}");
    let body = json!({"name": "ops-phone", "kind": "gotify", "base_url": "https://203.0.113.10",
                      "connection_id": c["id"], "owner": "team:ops"});
    let (st, sink) = app.post("/api/v1/sinks", &ada.token, body).await;
    assert_eq!(st, 201, "{sink}");
    let (sink, connection) = (sink["id"].as_str().unwrap().to_owned(), c["id"].as_str().unwrap().to_owned());

    let b = sign_in(&app, "bob@example.com").await;
    let page = get(&app, "/sinks", Some(&b.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("ops-phone") && page.body.contains("ops-gotify"), "{}", page.body);
    assert!(page.body.contains(&fingerprint(SECRET)), "{}", page.body);
    for form in
        [format!("/sinks/{sink}/update"), format!("/sinks/{sink}/test"), format!("/sinks/connections/{connection}/")]
    {
        assert!(!page.body.contains(&form), "no {form} for a member: {}", page.body);
    }
    let detail = get(&app, &format!("/sinks/{sink}"), Some(&b.cookie)).await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.body);
    assert!(!detail.body.contains("<textarea") && detail.body.contains("Only an admin"), "{}", detail.body);
    let refused = post(&app, &b, &format!("/sinks/{sink}/update"), &[("enabled", "false")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(app.db.count("SELECT count(*) FROM sinks WHERE enabled").await, 1, "nothing changed");
    never_shows(&page, &[SECRET]);

    let c = sign_in(&app, "carol@example.com").await;
    let page = get(&app, "/sinks", Some(&c.cookie)).await;
    assert!(!page.body.contains("ops-phone"), "{}", page.body);
    assert_eq!(get(&app, &format!("/sinks/{sink}"), Some(&c.cookie)).await.status, StatusCode::NOT_FOUND);
    let refused = post(&app, &c, &format!("/sinks/{sink}/update"), &[("enabled", "false")]).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
}
