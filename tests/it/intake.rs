//! Intake end to end: real provider signatures into the running server, routed to a
//! queue, deduplicated, refused, quarantined.

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::harness::{Ep, Owner, TestApp};

async fn app_with_key() -> (TestApp, Owner, Ep) {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = Some(switchboard::config::SecretKey([5; 32]))).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    (app, owner, ep)
}

fn github_signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

async fn webhook(app: &TestApp, owner: &Owner, ep: &Ep, body: Value) -> Value {
    let mut body = body;
    body["endpoint_id"] = json!(ep.id.to_string());
    let (s, w) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(s, 201, "{w}");
    w
}

/// Posts a delivery to an ingest URL with extra headers.
async fn deliver(app: &TestApp, ingest_url: &str, headers: &[(&str, String)], body: &[u8]) -> (u16, Value) {
    let path = ingest_url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut req = app.client.post(format!("{}{}", app.base, path)).insert_header(("content-type", "application/json"));
    for (k, v) in headers {
        req = req.insert_header((*k, v.as_str()));
    }
    let mut resp = req.send_body(body.to_vec()).await.unwrap();
    let bytes = resp.body().limit(1 << 20).await.unwrap();
    (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[actix_web::test]
async fn a_signed_github_delivery_from_a_trusted_sender_becomes_one_announceable_todo() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "builds", "trusted_actors": {"logins": ["octo"]}}),
    )
    .await;
    let secret = w["signing_secret"].as_str().unwrap().to_owned();
    let body = br#"{"ref":"refs/heads/main","sender":{"login":"octo"}}"#;
    let headers = [
        ("X-GitHub-Event", "push".to_owned()),
        ("X-GitHub-Delivery", "d-1".to_owned()),
        ("X-Hub-Signature-256", github_signature(&secret, body)),
        ("Authorization", "Bearer should-never-be-stored".to_owned()),
    ];
    app.signals.take().await;
    let (s, answer) = deliver(&app, w["ingest_url"].as_str().unwrap(), &headers, body).await;
    assert_eq!(s, 202, "{answer}");
    assert_eq!((answer["disposition"].as_str(), answer["duplicate"].as_bool()), (Some("routed"), Some(false)));
    let ready = app.signals.take_ready().await;
    assert_eq!(ready.len(), 1);
    assert!(ready[0].todo.sender_gate, "a verified delivery passes the sender gate");
    let c = app.claim_next(&ep).await;
    assert_eq!((c["todo"]["queue"].as_str(), c["todo"]["title"].as_str()), (Some("builds"), Some("github push")));
    assert_eq!(c["todo"]["payload"]["sender"]["login"], "octo");
    assert_eq!(app.db.count("SELECT count(*) FROM events WHERE verified AND trust_mode = 'signed'").await, 1);
    assert_eq!(
        app.db.count("SELECT count(*) FROM events WHERE headers::text LIKE '%should-never-be-stored%'").await,
        0
    );

    // A redelivery creates nothing new.
    let (s, again) = deliver(&app, w["ingest_url"].as_str().unwrap(), &headers, body).await;
    assert_eq!((s, again["duplicate"].as_bool()), (202, Some(true)));
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 1);
}

#[actix_web::test]
async fn a_bad_signature_is_refused_and_only_counted_and_an_unknown_token_is_not_found() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "builds", "trusted_actors": {"allow_all": true}}),
    )
    .await;
    let url = w["ingest_url"].as_str().unwrap();
    let body = br#"{"a":1}"#;
    let (s, e) = deliver(&app, url, &[("X-Hub-Signature-256", github_signature("wrong", body))], body).await;
    assert_eq!((s, e["error"]["code"].as_str()), (401, Some("unauthenticated")));
    let (s, _) = deliver(&app, url, &[], body).await;
    assert_eq!(s, 401);
    assert_eq!(app.db.count("SELECT count(*) FROM events").await, 0, "nothing stored for a refused delivery");
    assert_eq!(app.db.count("SELECT refused_deliveries FROM webhooks").await, 2);
    let (s, e) = deliver(&app, "http://x/webhooks/w/sbw_unknown", &[], body).await;
    assert_eq!((s, e["error"]["code"].as_str()), (404, Some("not_found")));
    let big = vec![b'a'; 5 * 1024 * 1024 + 1];
    let (s, _) = deliver(&app, url, &[], &big).await;
    assert_eq!(s, 413);
}

#[actix_web::test]
async fn an_untrusted_sender_is_quarantined_out_of_agents_sight() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(
        &app,
        &owner,
        &ep,
        json!({"source_type": "github", "queue": "builds", "trusted_actors": {"logins": []}}),
    )
    .await;
    let secret = w["signing_secret"].as_str().unwrap().to_owned();
    let body = br#"{"sender":{"login":"mallory"}}"#;
    let (s, answer) = deliver(
        &app,
        w["ingest_url"].as_str().unwrap(),
        &[("X-Hub-Signature-256", github_signature(&secret, body))],
        body,
    )
    .await;
    assert_eq!((s, answer["disposition"].as_str()), (202, Some("quarantined")));
    assert_eq!(app.claim_next(&ep).await["empty"], true);
    assert_eq!(
        app.db
            .count("SELECT count(*) FROM todos WHERE queue = 'quarantine' AND quarantine_reason = 'untrusted_actor'")
            .await,
        1
    );
}

#[actix_web::test]
async fn a_generic_webhook_takes_malformed_json_as_raw_text_and_trusts_its_token() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    assert!(w["signing_secret"].is_null());
    app.signals.take().await;
    let (s, answer) =
        deliver(&app, w["ingest_url"].as_str().unwrap(), &[("X-Delivery-Id", "g-1".into())], b"{not json").await;
    assert_eq!(s, 202, "{answer}");
    let c = app.claim_next(&ep).await;
    assert_eq!(c["todo"]["payload"]["raw_body"], "{not json");
    let ready = app.signals.take_ready().await;
    assert!(ready[0].todo.sender_gate, "token trust passes the sender gate");
}

#[actix_web::test]
async fn an_unverified_signed_source_is_routed_in_open_trust_and_never_announces() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "stripe", "queue": "billing", "unverified": true})).await;
    app.signals.take().await;
    let (s, _) =
        deliver(&app, w["ingest_url"].as_str().unwrap(), &[], br#"{"id":"evt_1","type":"charge.failed"}"#).await;
    assert_eq!(s, 202);
    let ready = app.signals.take_ready().await;
    assert!(!ready[0].todo.sender_gate);
    assert_eq!(app.db.count("SELECT count(*) FROM events WHERE trust_mode = 'open' AND NOT verified").await, 1);
}

#[actix_web::test]
async fn rules_route_drop_and_quarantine_first_match_wins_and_fan_out_within_the_scope() {
    let (app, owner, ep) = app_with_key().await;
    let second = app.agent(owner.scope, "second").await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let id = w["id"].as_str().unwrap();
    let rules = json!({"rules": [
        {"id": "drop-pings", "match": {"any": [{"header": "X-Event", "equals": "ping"}]}, "action": {"drop": true}},
        {"id": "hold", "match": {"pointer": "/suspicious", "exists": true}, "action": {"quarantine": true}},
        {"id": "to-builds", "match": {"all": [{"pointer": "/kind", "equals": "build"}, {"header": "X-Event", "glob": "push*"}]},
         "action": {"queue": "builds", "endpoints": [second.id.to_string()], "work_order": "run the build"}}
    ]});
    let (s, saved) = app.call("PUT", &format!("/api/v1/webhooks/{id}/rules"), Some(&owner.token), Some(&rules)).await;
    assert_eq!(s, 200, "{saved}");
    let url = w["ingest_url"].as_str().unwrap();
    let send = async |event: &str, id: &str, body: Value| {
        deliver(
            &app,
            url,
            &[("X-Event", event.to_owned()), ("X-Delivery-Id", id.to_owned())],
            body.to_string().as_bytes(),
        )
        .await
    };
    let (_, a) = send("ping", "1", json!({"kind": "build"})).await;
    assert_eq!((a["disposition"].as_str(), a["todos"].as_array().unwrap().len()), (Some("dropped"), 0));
    let (_, a) = send("push", "2", json!({"kind": "build", "suspicious": true})).await;
    assert_eq!(a["disposition"], "quarantined");
    let (_, a) = send("push-tag", "3", json!({"kind": "build"})).await;
    assert_eq!((a["disposition"].as_str(), a["todos"].as_array().unwrap().len()), (Some("routed"), 2));
    let (_, a) = send("issue", "4", json!({"kind": "other"})).await;
    assert_eq!(a["todos"].as_array().unwrap().len(), 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE queue = 'builds'").await, 2);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE queue = 'inbox'").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE quarantine_reason = 'rule_action'").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM events WHERE disposition = 'dropped'").await, 1);
    let c = app.claim_next(&second).await;
    assert_eq!(c["todo"]["queue"], "builds", "fan-out reached the second endpoint");
    assert_eq!(c["todo"]["work_order"], "run the build", "the rule's work order travels with the todo");
}

#[actix_web::test]
async fn malformed_rules_are_refused_naming_the_rule_and_a_dry_run_changes_nothing() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    let bad = json!({"rules": [{"id": "two-routes", "match": {"header": "X", "exists": true}, "action": {"drop": true, "queue": "q"}}]});
    let (s, e) = app.call("PUT", &path, Some(&owner.token), Some(&bad)).await;
    assert_eq!(s, 422);
    assert!(e["error"]["message"].as_str().unwrap().contains("two-routes"), "{e}");
    let notify = json!({"rules": [{"id": "tell-me", "match": {"header": "X", "exists": true}, "action": {"drop": true, "notify": "phone"}}]});
    let (s, e) = app.call("PUT", &path, Some(&owner.token), Some(&notify)).await;
    assert_eq!(s, 422);
    assert!(e["error"]["message"].as_str().unwrap().contains("tell-me"), "{e}");
    let too_many: Vec<Value> = (0..33)
        .map(|i| json!({"id": format!("r{i}"), "match": {"header": "X", "exists": true}, "action": {"drop": true}}))
        .collect();
    let (s, _) = app.call("PUT", &path, Some(&owner.token), Some(&json!({"rules": too_many}))).await;
    assert_eq!(s, 422);
    assert_eq!(
        app.db.count("SELECT count(*) FROM webhooks WHERE rules = '{\"rules\": []}'::jsonb").await,
        1,
        "nothing saved"
    );

    let trial = json!({
        "rules": [{"id": "to-builds", "match": {"pointer": "/kind", "equals": "build"}, "action": {"queue": "builds"}}],
        "headers": {"X-Event": "push"},
        "body": {"kind": "build"}
    });
    let (s, answer) = app.post(&format!("{path}/test"), &owner.token, trial).await;
    assert_eq!(s, 200, "{answer}");
    assert_eq!(answer, json!({"matched_rule": "to-builds", "outcome": "queue", "queue": "builds", "fault": null}));
    let (_, answer) = app.post(&format!("{path}/test"), &owner.token, json!({"body": {"kind": "x"}})).await;
    assert_eq!((answer["outcome"].as_str(), answer["queue"].as_str()), (Some("default_queue"), Some("inbox")));
    assert_eq!(app.db.count("SELECT count(*) FROM events").await + app.db.count("SELECT count(*) FROM todos").await, 0);
    // Another owner's webhook is unknown.
    let other = app.owner("b@example.com").await;
    assert_eq!(app.call("PUT", &path, Some(&other.token), Some(&json!({"rules": []}))).await.0, 404);
}

#[actix_web::test]
async fn one_delivery_fans_out_to_two_owners_endpoints_only_once_granted_each_todo_in_its_own_scope() {
    let (app, alice, alice_ep) = app_with_key().await;
    let bob = app.owner("b@example.com").await;
    let bob_ep = app.agent(bob.scope, "bob-worker").await;
    let w = webhook(&app, &alice, &alice_ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    let rules = json!({"rules": [{"id": "share", "match": {"pointer": "/share", "equals": true},
                                  "action": {"queue": "shared", "endpoints": [bob_ep.id.to_string()]}}]});
    let (s, e) = app.call("PUT", &path, Some(&alice.token), Some(&rules)).await;
    assert_eq!(s, 422, "not granted yet: {e}");
    assert!(e["error"]["message"].as_str().unwrap().contains("reference_out_of_scope"), "{e}");
    // Alice may not grant on Bob's endpoint; Bob may.
    let grant = json!({"owner": "a@example.com"});
    assert_eq!(
        app.post(&format!("/api/v1/endpoints/{}/fanout-grants", bob_ep.id), &alice.token, grant.clone()).await.0,
        404
    );
    assert_eq!(app.post(&format!("/api/v1/endpoints/{}/fanout-grants", bob_ep.id), &bob.token, grant).await.0, 204);
    assert_eq!(app.call("PUT", &path, Some(&alice.token), Some(&rules)).await.0, 200);

    let (s, a) =
        deliver(&app, w["ingest_url"].as_str().unwrap(), &[("X-Delivery-Id", "f-1".into())], br#"{"share":true}"#)
            .await;
    assert_eq!((s, a["todos"].as_array().unwrap().len()), (202, 2), "{a}");
    assert_eq!(app.claim_next(&bob_ep).await["todo"]["queue"], "shared");
    assert_eq!(app.claim_next(&alice_ep).await["todo"]["queue"], "shared");
    assert_eq!(
        app.db
            .count(
                "SELECT count(*) FROM todos t JOIN endpoints e ON e.id = t.endpoint_id WHERE t.scope_id <> e.scope_id"
            )
            .await,
        0
    );
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM todos WHERE scope_id = '{}'", bob.scope.0)).await, 1);

    // Withdrawn: the next delivery reaches only Alice's endpoint.
    let (s, _) = app
        .call(
            "DELETE",
            &format!("/api/v1/endpoints/{}/fanout-grants", bob_ep.id),
            Some(&bob.token),
            Some(&json!({"owner": "a@example.com"})),
        )
        .await;
    assert_eq!(s, 204);
    let (_, a) =
        deliver(&app, w["ingest_url"].as_str().unwrap(), &[("X-Delivery-Id", "f-2".into())], br#"{"share":true}"#)
            .await;
    assert_eq!(a["todos"].as_array().unwrap().len(), 1);
}

#[actix_web::test]
async fn a_verified_payload_holding_nul_is_kept_with_a_replacement_character_not_lost() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let (s, a) = deliver(&app, w["ingest_url"].as_str().unwrap(), &[], br#"{"note":"a\u0000b"}"#).await;
    assert_eq!(s, 202, "{a}");
    let c = app.claim_next(&ep).await;
    assert_eq!(c["todo"]["payload"]["note"], "a\u{fffd}b");
}

#[actix_web::test]
async fn a_webhook_on_a_revoked_endpoint_is_refused() {
    let (app, owner, ep) = app_with_key().await;
    app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token, json!({})).await;
    let (s, _) = app
        .post(
            "/api/v1/webhooks",
            &owner.token,
            json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"}),
        )
        .await;
    assert_eq!(s, 409);
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, 0);
}

#[actix_web::test]
async fn identical_generic_deliveries_without_an_id_are_distinct_events_but_a_racing_redelivery_is_recorded_once() {
    let (app, owner, ep) = app_with_key().await;
    let w = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "alerts"})).await;
    let url = w["ingest_url"].as_str().unwrap();
    for _ in 0..2 {
        let (s, a) = deliver(&app, url, &[], br#"{"alert":"disk full"}"#).await;
        assert_eq!((s, a["duplicate"].as_bool()), (202, Some(false)));
    }
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 2);
    // The same delivery id sent twice at once: one event, one todo, one duplicate answer.
    let headers = [("X-Delivery-Id", "same".to_owned())];
    let (a, b) = tokio::join!(deliver(&app, url, &headers, b"{}"), deliver(&app, url, &headers, b"{}"));
    assert_eq!((a.0, b.0), (202, 202));
    let duplicates = [a.1["duplicate"].as_bool(), b.1["duplicate"].as_bool()];
    assert!(duplicates.contains(&Some(true)) && duplicates.contains(&Some(false)), "{duplicates:?}");
    assert_eq!(app.db.count("SELECT count(*) FROM events WHERE external_id = 'same'").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 3);
}
