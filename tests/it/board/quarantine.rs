//! The quarantine pages over real HTTP: the list and the detail (payload as text),
//! release (by the rules or to a queue), discard, scope and CSRF.

use awc::http::StatusCode;
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use switchboard::config::SecretKey;

use super::{Page, Session, board_owner, get, post_form, sign_in};
use crate::harness::{Ep, Owner, TestApp};

/// The app with a signed-in owner, their endpoint `worker`, and a GitHub webhook on it
/// (default queue `builds`) that trusts no one.
async fn setup() -> (TestApp, Owner, Session, Ep, Value) {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = Some(SecretKey([5; 32]))).await;
    let owner = board_owner(&app, "ada@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let body = json!({"endpoint_id": ep.id.to_string(), "source_type": "github", "queue": "builds",
                      "trusted_actors": {"logins": []}});
    let (status, webhook) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(status, 201, "{webhook}");
    let session = sign_in(&app, "ada@example.com").await;
    (app, owner, session, ep, webhook)
}

/// Sends a signed GitHub delivery to the webhook; an untrusted sender's is held.
async fn send(app: &TestApp, webhook: &Value, delivery: &str, body: &[u8]) {
    let mut mac = Hmac::<Sha256>::new_from_slice(webhook["signing_secret"].as_str().unwrap().as_bytes()).unwrap();
    mac.update(body);
    let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
    let url = webhook["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let resp = app
        .client
        .post(format!("{}{}", app.base, path))
        .insert_header(("X-GitHub-Event", "push"))
        .insert_header(("X-GitHub-Delivery", delivery))
        .insert_header(("X-Hub-Signature-256", signature))
        .send_body(body.to_vec())
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
}

/// The ids of the held deliveries, newest first.
async fn held_ids(app: &TestApp, owner: &Owner) -> Vec<String> {
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    list["held"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_owned()).collect()
}

async fn still_held(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND state = 'pending'").await
}

async fn post(app: &TestApp, s: &Session, path: &str, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, path, Some(&s.cookie), &form).await
}

#[actix_web::test]
async fn the_list_shows_a_held_delivery_and_the_detail_shows_its_markup_as_text() {
    let (app, owner, s, _ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"stranger"},"comment":"<script>alert(1)</script>"}"#).await;
    let id = held_ids(&app, &owner).await.remove(0);

    let list = get(&app, "/quarantine", Some(&s.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    for want in ["stranger", "sender not trusted", "github → builds", "worker", "in 30 d", id.as_str()] {
        assert!(list.body.contains(want), "{want} missing from {}", list.body);
    }

    let detail = get(&app, &format!("/quarantine/{id}"), Some(&s.cookie)).await;
    assert_eq!(detail.status, StatusCode::OK, "{}", detail.body);
    assert!(detail.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{}", detail.body);
    assert!(!detail.body.contains("<script>"), "{}", detail.body);
    assert!(detail.body.contains(&format!(r#"action="/quarantine/{id}/release""#)));
    assert!(detail.body.contains("x-github-event"), "headers shown: {}", detail.body);
}

#[actix_web::test]
async fn release_to_a_queue_moves_the_held_delivery_there_and_without_one_the_rules_decide() {
    let (app, owner, s, ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"},"n":1}"#).await;
    send(&app, &w, "d-2", br#"{"sender":{"login":"y"},"n":2}"#).await;
    let ids = held_ids(&app, &owner).await;

    let to_triage = post(&app, &s, &format!("/quarantine/{}/release", ids[0]), &[("queue", "triage")]).await;
    assert_eq!(to_triage.status, StatusCode::SEE_OTHER, "{}", to_triage.body);
    assert_eq!(to_triage.location(), "/quarantine");
    assert!(to_triage.set_cookie("sb_notice").is_some());
    let by_rules = post(&app, &s, &format!("/quarantine/{}/release", ids[1]), &[("queue", "")]).await;
    assert_eq!(by_rules.status, StatusCode::SEE_OTHER, "{}", by_rules.body);

    assert_eq!(still_held(&app).await, 0);
    let on = |q: &str| {
        format!("SELECT count(*) FROM todos WHERE queue = '{q}' AND state = 'pending' AND endpoint_id = '{}'", ep.id.0)
    };
    assert_eq!(app.db.count(&on("triage")).await, 1);
    assert_eq!(app.db.count(&on("builds")).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE result = '{\"released\": true}'::jsonb").await, 2);
    let list = get(&app, "/quarantine", Some(&s.cookie)).await;
    assert!(list.body.contains("Nothing is held."), "{}", list.body);
}

#[actix_web::test]
async fn a_refused_release_returns_to_the_delivery_with_the_reason_and_changes_nothing() {
    let (app, owner, s, _ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    let id = held_ids(&app, &owner).await.remove(0);
    for queue in ["quarantine", "Not A Queue"] {
        let page = post(&app, &s, &format!("/quarantine/{id}/release"), &[("queue", queue)]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        assert_eq!(page.location(), format!("/quarantine/{id}"));
        assert!(page.set_cookie("sb_notice").is_some());
    }
    assert_eq!(still_held(&app).await, 1);
}

#[actix_web::test]
async fn discard_closes_the_held_delivery() {
    let (app, owner, s, _ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    let id = held_ids(&app, &owner).await.remove(0);
    let page = post(&app, &s, &format!("/quarantine/{id}/discard"), &[]).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/quarantine");
    assert_eq!(still_held(&app).await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE result = '{\"discarded\": true}'::jsonb").await, 1);
    let detail = get(&app, &format!("/quarantine/{id}"), Some(&s.cookie)).await;
    assert!(detail.body.contains("has left quarantine") && !detail.body.contains("/discard\""), "{}", detail.body);
}

#[actix_web::test]
async fn another_scopes_held_ids_answer_404_and_a_post_without_csrf_is_refused() {
    let (app, owner, s, _ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    let id = held_ids(&app, &owner).await.remove(0);
    board_owner(&app, "eve@example.com").await;
    let eve = sign_in(&app, "eve@example.com").await;

    assert!(!get(&app, "/quarantine", Some(&eve.cookie)).await.body.contains(&id));
    assert_eq!(get(&app, &format!("/quarantine/{id}"), Some(&eve.cookie)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(&app, "/quarantine/td_nope", Some(&eve.cookie)).await.status, StatusCode::NOT_FOUND);
    for action in ["release", "discard"] {
        let page = post(&app, &eve, &format!("/quarantine/{id}/{action}"), &[]).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{action}");
        let no_token = post_form(&app, &format!("/quarantine/{id}/{action}"), Some(&s.cookie), &[]).await;
        assert_eq!(no_token.status, StatusCode::FORBIDDEN, "{action}");
    }
    assert_eq!(still_held(&app).await, 1);
}
