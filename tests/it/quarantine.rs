//! The quarantine: held out of agents' sight, and left only by release, discard or
//! 30-day expiry.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::harness::TestApp;

fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// An app with a GitHub webhook trusting no one, and a way to send it signed deliveries.
async fn setup() -> (TestApp, crate::harness::Owner, crate::harness::Ep, Value) {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = Some(switchboard::config::SecretKey([6; 32]))).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let (s, w) = app
        .post(
            "/api/v1/webhooks",
            &owner.token,
            json!({"endpoint_id": ep.id.to_string(), "source_type": "github", "queue": "builds", "trusted_actors": {"logins": []}}),
        )
        .await;
    assert_eq!(s, 201, "{w}");
    (app, owner, ep, w)
}

async fn send(app: &TestApp, w: &Value, delivery: &str, body: &[u8]) -> Value {
    let url = w["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut resp = app
        .client
        .post(format!("{}{}", app.base, path))
        .insert_header(("X-GitHub-Event", "push"))
        .insert_header(("X-GitHub-Delivery", delivery))
        .insert_header(("X-Hub-Signature-256", sign(w["signing_secret"].as_str().unwrap(), body)))
        .send_body(body.to_vec())
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    serde_json::from_slice(&resp.body().await.unwrap()).unwrap()
}

#[actix_web::test]
async fn a_released_delivery_is_routed_again_and_rings_and_can_leave_only_once() {
    let (app, owner, ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"stranger"},"ref":"main"}"#).await;
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    let held = &list["held"][0];
    assert_eq!((held["reason"].as_str(), held["queue"].as_str()), (Some("untrusted_actor"), Some("quarantine")));
    assert_eq!(app.claim_next(&ep).await["empty"], true, "agents never see quarantine");
    let id = held["id"].as_str().unwrap().to_owned();
    app.signals.take().await;

    let (s, released) = app.post(&format!("/api/v1/quarantine/{id}/release"), &owner.token, json!({})).await;
    assert_eq!(s, 200, "{released}");
    assert_eq!(released["todos"].as_array().unwrap().len(), 1);
    let ready = app.signals.take_ready().await;
    assert_eq!(ready.len(), 1);
    assert!(ready[0].todo.sender_gate, "the released todo keeps its verified delivery");
    let c = app.claim_next(&ep).await;
    assert_eq!((c["todo"]["queue"].as_str(), c["todo"]["payload"]["ref"].as_str()), (Some("builds"), Some("main")));
    let (s, _) = app.post(&format!("/api/v1/quarantine/{id}/release"), &owner.token, json!({})).await;
    assert_eq!(s, 409, "it has already left");
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    assert!(list["held"].as_array().unwrap().is_empty());
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE result = '{\"released\": true}'::jsonb").await, 1);
}

#[actix_web::test]
async fn discard_and_expiry_close_held_deliveries_and_foreign_ones_are_unknown() {
    let (app, owner, _ep, w) = setup().await;
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    send(&app, &w, "d-2", br#"{"sender":{"login":"y"}}"#).await;
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    let ids: Vec<String> =
        list["held"].as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap().to_owned()).collect();
    let other = app.owner("b@example.com").await;
    assert_eq!(app.post(&format!("/api/v1/quarantine/{}/discard", ids[0]), &other.token, json!({})).await.0, 404);
    assert_eq!(app.post(&format!("/api/v1/quarantine/{}/discard", ids[0]), &owner.token, json!({})).await.0, 204);
    app.db
        .exec(
            "UPDATE todos SET created_at = now() - interval '31 days' WHERE queue = 'quarantine' AND state = 'pending'",
        )
        .await;
    assert_eq!(app.store.expire_quarantine().await.unwrap(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE result = '{\"discarded\": true}'::jsonb").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE result = '{\"expired\": true}'::jsonb").await, 1);
    assert_eq!(app.post(&format!("/api/v1/quarantine/{}/release", ids[1]), &owner.token, json!({})).await.0, 409);
}

#[actix_web::test]
async fn a_release_the_rules_would_quarantine_again_is_refused_and_changes_nothing() {
    let (app, owner, _ep, w) = setup().await;
    let rules = json!({"rules": [{"id": "hold-all", "match": {"pointer": "", "exists": true}, "action": {"quarantine": true}}]});
    let path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    assert_eq!(app.call("PUT", &path, Some(&owner.token), Some(&rules)).await.0, 200);
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    let id = list["held"][0]["id"].as_str().unwrap().to_owned();
    let (s, e) = app.post(&format!("/api/v1/quarantine/{id}/release"), &owner.token, json!({})).await;
    assert_eq!(s, 409, "{e}");
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND state = 'pending'").await, 1);
}

#[actix_web::test]
async fn a_release_to_a_named_queue_skips_the_rules_and_a_bad_queue_is_refused_and_changes_nothing() {
    let (app, owner, ep, w) = setup().await;
    // The rules would quarantine it again; a named queue goes around them.
    let rules = json!({"rules": [{"id": "hold-all", "match": {"pointer": "", "exists": true}, "action": {"quarantine": true}}]});
    let path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    assert_eq!(app.call("PUT", &path, Some(&owner.token), Some(&rules)).await.0, 200);
    send(&app, &w, "d-1", br#"{"sender":{"login":"x"}}"#).await;
    let (_, list) = app.get("/api/v1/quarantine", &owner.token).await;
    let id = list["held"][0]["id"].as_str().unwrap().to_owned();
    let release = format!("/api/v1/quarantine/{id}/release");

    for bad in ["quarantine", "no spaces allowed", ""] {
        let (s, e) = app.post(&release, &owner.token, json!({"queue": bad})).await;
        assert!(s == 400 || s == 422, "{bad:?}: {s} {e}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND state = 'pending'").await, 1);

    let (s, released) = app.post(&release, &owner.token, json!({"queue": "triage"})).await;
    assert_eq!(s, 200, "{released}");
    let c = app.claim_next(&ep).await;
    assert_eq!(c["todo"]["queue"].as_str(), Some("triage"));
}
