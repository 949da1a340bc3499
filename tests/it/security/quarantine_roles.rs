//! Release and discard are admin actions: a plain team member sees the team's held
//! deliveries but may not let them out (a release overrides the admin's trusted-actor
//! list and may fan out). One test per route, member refused (403, nothing changed),
//! admin allowed.

use awc::http::StatusCode;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use switchboard::config::SecretKey;
use switchboard::domain::todo_state::TeamRole;

use crate::board::{Page, Session, board_owner, get, post_form, sign_in};
use crate::harness::{Owner, TestApp};

/// A team `crew` (admin `boss`, plain member `mel`, both able to sign in), a GitHub
/// webhook trusting no one on the team's endpoint, and one held delivery.
struct Team {
    app: TestApp,
    admin: Owner,
    member: Owner,
    held: String,
}

async fn team_with_a_held_delivery() -> Team {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = Some(SecretKey([7; 32]))).await;
    let admin = board_owner(&app, "boss@example.com").await;
    let member = board_owner(&app, "mel@example.com").await;
    let (team, _, team_scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(team_scope, "crew-worker").await;
    let body = json!({"endpoint_id": ep.id.to_string(), "source_type": "github", "queue": "builds",
                      "trusted_actors": {"logins": []}});
    let (status, webhook) = app.post("/api/v1/webhooks", &admin.token, body).await;
    assert_eq!(status, 201, "{webhook}");
    send_untrusted(&app, &webhook).await;
    let (status, list) = app.get("/api/v1/quarantine", &member.token).await;
    assert_eq!(status, 200, "{list}");
    let held = list["held"][0]["id"].as_str().expect("the member sees the team's held delivery").to_owned();
    Team { app, admin, member, held }
}

/// A signed delivery from a sender nobody trusts: held.
async fn send_untrusted(app: &TestApp, webhook: &Value) {
    let body = br#"{"sender":{"login":"stranger"}}"#;
    let mut mac = Hmac::<Sha256>::new_from_slice(webhook["signing_secret"].as_str().unwrap().as_bytes()).unwrap();
    mac.update(body);
    let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    let url = webhook["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let resp = app
        .client
        .post(format!("{}{}", app.base, path))
        .insert_header(("X-GitHub-Event", "push"))
        .insert_header(("X-GitHub-Delivery", "held-1"))
        .insert_header(("X-Hub-Signature-256", signature))
        .send_body(body.to_vec())
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
}

async fn still_held(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND state = 'pending'").await
}

async fn board_post(app: &TestApp, s: &Session, path: &str) -> Page {
    post_form(app, path, Some(&s.cookie), &[("csrf_token", s.csrf.as_str())]).await
}

#[actix_web::test]
async fn a_team_member_may_not_release_a_held_delivery_through_the_api_and_an_admin_may() {
    let t = team_with_a_held_delivery().await;
    let path = format!("/api/v1/quarantine/{}/release", t.held);
    let (s, b) = t.app.post(&path, &t.member.token, json!({})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
    assert_eq!(b["error"]["code"], "forbidden");
    let (s, b) = t.app.post(&path, &t.member.token, json!({"queue": "builds"})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "to a named queue alike: {b}");
    assert_eq!(still_held(&t.app).await, 1, "nothing left quarantine");
    assert_eq!(t.app.db.count("SELECT count(*) FROM todos WHERE queue = 'builds'").await, 0);

    let (s, b) = t.app.post(&path, &t.admin.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(still_held(&t.app).await, 0);
}

#[actix_web::test]
async fn a_team_member_may_not_discard_a_held_delivery_through_the_api_and_an_admin_may() {
    let t = team_with_a_held_delivery().await;
    let path = format!("/api/v1/quarantine/{}/discard", t.held);
    let (s, b) = t.app.post(&path, &t.member.token, json!({})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{b}");
    assert_eq!(still_held(&t.app).await, 1);

    let (s, b) = t.app.post(&path, &t.admin.token, json!({})).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{b}");
    assert_eq!(still_held(&t.app).await, 0);
}

#[actix_web::test]
async fn a_team_member_may_not_release_a_held_delivery_on_the_board_and_an_admin_may() {
    let t = team_with_a_held_delivery().await;
    let member = sign_in(&t.app, "mel@example.com").await;
    let detail = get(&t.app, &format!("/quarantine/{}", t.held), Some(&member.cookie)).await;
    assert_eq!(detail.status, StatusCode::OK, "the member sees it");
    assert!(!detail.body.contains("/release\"") && detail.body.contains("Only an admin"), "{}", detail.body);
    let path = format!("/quarantine/{}/release", t.held);
    assert_eq!(board_post(&t.app, &member, &path).await.status, StatusCode::FORBIDDEN);
    assert_eq!(still_held(&t.app).await, 1);

    let admin = sign_in(&t.app, "boss@example.com").await;
    let page = board_post(&t.app, &admin, &path).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/quarantine");
    assert_eq!(still_held(&t.app).await, 0);
}

#[actix_web::test]
async fn a_team_member_may_not_discard_a_held_delivery_on_the_board_and_an_admin_may() {
    let t = team_with_a_held_delivery().await;
    let member = sign_in(&t.app, "mel@example.com").await;
    let path = format!("/quarantine/{}/discard", t.held);
    assert_eq!(board_post(&t.app, &member, &path).await.status, StatusCode::FORBIDDEN);
    assert_eq!(still_held(&t.app).await, 1);

    let admin = sign_in(&t.app, "boss@example.com").await;
    let page = board_post(&t.app, &admin, &path).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(still_held(&t.app).await, 0);
}
