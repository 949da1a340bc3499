//! Fan-out grants to anyone (issue 37, finding 8; SPEC 13 "Fan-out grants"): an
//! endpoint's admin may let any owner's webhooks route onto it, a stranger's included,
//! and a grant to an address with no account answers exactly like one to a stranger
//! and takes effect once the account exists. Withdrawing likewise.

use awc::http::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Ep, Owner, TestApp};

/// One answer as a client sees it: status, the headers that could tell anything (all
/// but `date`), and the body's bytes.
type Raw = (StatusCode, Vec<(String, String)>, Vec<u8>);

async fn raw(app: &TestApp, method: &str, path: &str, token: &str, body: &Value) -> Raw {
    let mut resp = app
        .client
        .request(method.parse().unwrap(), format!("{}{}", app.base, path))
        .insert_header(("Authorization", format!("Bearer {token}")))
        .send_json(body)
        .await
        .expect("request");
    let mut headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str() != "date")
        .map(|(name, value)| (name.as_str().to_owned(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    headers.sort();
    let body = resp.body().await.expect("body").to_vec();
    (resp.status(), headers, body)
}

fn grants(ep: &Ep) -> String {
    format!("/api/v1/endpoints/{}/fanout-grants", ep.id)
}

/// A generic webhook of `owner` on their endpoint `ep` whose one rule fans every
/// delivery out onto `onto` as well; `None` when saving the rule is refused (not granted).
async fn fanning_webhook(app: &TestApp, owner: &Owner, ep: &Ep, onto: &Ep) -> Option<String> {
    let body = json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"});
    let (s, w) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(s, 201, "{w}");
    let rules = json!({"rules": [{"id": "share", "match": {"pointer": "/share", "equals": true},
                                  "action": {"queue": "shared", "endpoints": [onto.id.to_string()]}}]});
    let path = format!("/api/v1/webhooks/{}/rules", w["id"].as_str().unwrap());
    let (s, e) = app.call("PUT", &path, Some(&owner.token), Some(&rules)).await;
    match s.as_u16() {
        200 => Some(w["ingest_url"].as_str().unwrap().to_owned()),
        422 => {
            assert!(e["error"]["message"].as_str().unwrap().contains("reference_out_of_scope"), "{e}");
            None
        }
        other => panic!("saving the rules answered {other}: {e}"),
    }
}

/// Delivers `{"share": true}` once (a fresh delivery id each time); the todos it made.
async fn deliver(app: &TestApp, ingest_url: &str, delivery: &str) -> usize {
    let path = ingest_url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut resp = app
        .client
        .post(format!("{}{}", app.base, path))
        .insert_header(("content-type", "application/json"))
        .insert_header(("X-Delivery-Id", delivery))
        .send_body(r#"{"share":true}"#)
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    let answer: Value = resp.json().await.unwrap();
    answer["todos"].as_array().unwrap().len()
}

/// How many todos `ep` holds in the fan-out queue.
async fn shared_on(app: &TestApp, ep: &Ep) -> i64 {
    app.db.count(&format!("SELECT count(*) FROM todos WHERE endpoint_id = '{}' AND queue = 'shared'", ep.id.0)).await
}

#[actix_web::test]
async fn a_grant_to_a_stranger_routes_their_webhooks_onto_the_endpoint_until_it_is_withdrawn() {
    let app = TestApp::spawn().await;
    let alice = app.owner("alice@example.com").await;
    let alice_ep = app.agent(alice.scope, "alice-inbox").await;
    // Bob exists and shares no team with Alice.
    let bob = app.owner("bob@example.com").await;
    let bob_ep = app.agent(bob.scope, "bob-worker").await;
    assert_eq!(fanning_webhook(&app, &bob, &bob_ep, &alice_ep).await, None, "not granted yet");

    let (s, b) = app.post(&grants(&alice_ep), &alice.token, json!({"owner": "Bob@Example.com"})).await;
    assert_eq!(s, StatusCode::NO_CONTENT, "{b}");
    let ingest = fanning_webhook(&app, &bob, &bob_ep, &alice_ep).await.expect("granted: the rule saves");
    assert_eq!(deliver(&app, &ingest, "d-1").await, 2, "Bob's inbox and Alice's endpoint");
    assert_eq!(shared_on(&app, &alice_ep).await, 1);
    let claimed = app.claim_next(&alice_ep).await;
    assert_eq!(claimed["todo"]["queue"], "shared", "{claimed}");
    // The todo lives in Alice's scope, not the webhook owner's.
    let in_bobs_scope =
        format!("SELECT count(*) FROM todos WHERE endpoint_id = '{}' AND scope_id = '{}'", alice_ep.id.0, bob.scope.0);
    assert_eq!(app.db.count(&in_bobs_scope).await, 0);

    let (s, _) =
        app.call("DELETE", &grants(&alice_ep), Some(&alice.token), Some(&json!({"owner": "bob@example.com"}))).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert_eq!(deliver(&app, &ingest, "d-2").await, 1, "withdrawn: Bob's inbox only");
    assert_eq!(shared_on(&app, &alice_ep).await, 1, "nothing more reached Alice");
}

#[actix_web::test]
async fn a_grant_to_an_address_with_no_account_answers_like_a_strangers_and_takes_effect_once_it_exists() {
    let app = TestApp::spawn().await;
    let alice = app.owner("alice@example.com").await;
    let alice_ep = app.agent(alice.scope, "alice-inbox").await;
    app.owner("bob@example.com").await;
    app.store.create_team("strangers", "bob@example.com").await.unwrap();
    let path = grants(&alice_ep);

    // Granted, withdrawn, granted again: every answer to the address with no account
    // (and the team with none) is the stranger's, byte for byte.
    for method in ["POST", "DELETE", "DELETE", "POST"] {
        for (existing, nobody) in [("bob@example.com", "carol@example.com"), ("team:strangers", "team:later")] {
            let a = raw(&app, method, &path, &alice.token, &json!({"owner": existing})).await;
            let b = raw(&app, method, &path, &alice.token, &json!({"owner": nobody})).await;
            assert_eq!(a, b, "{method} {existing} vs {nobody}");
            assert_eq!(a.0, StatusCode::NO_CONTENT, "{method} {existing}: {}", String::from_utf8_lossy(&a.2));
        }
    }

    // Carol signs up later (her address typed in another case), and so does team
    // `later`: their webhooks route onto Alice's endpoint with no further step.
    let carol = app.owner("CAROL@example.com").await;
    let carol_ep = app.agent(carol.scope, "carol-worker").await;
    let ingest =
        fanning_webhook(&app, &carol, &carol_ep, &alice_ep).await.expect("the grant applies to the new account");
    assert_eq!(deliver(&app, &ingest, "c-1").await, 2);
    assert_eq!(shared_on(&app, &alice_ep).await, 1);
    let (_, _, team_scope) = app.store.create_team("Later", "CAROL@example.com").await.unwrap();
    let team_ep = app.agent(team_scope, "later-worker").await;
    let team_owner = Owner { id: carol.id, scope: team_scope, token: carol.token.clone() };
    let team_ingest = fanning_webhook(&app, &team_owner, &team_ep, &alice_ep).await.expect("and to the new team");
    assert_eq!(deliver(&app, &team_ingest, "t-1").await, 2);
    assert_eq!(shared_on(&app, &alice_ep).await, 2);

    // Withdrawn: answered as before, and her next delivery stays hers.
    let a = raw(&app, "DELETE", &path, &alice.token, &json!({"owner": "carol@example.com"})).await;
    let b = raw(&app, "DELETE", &path, &alice.token, &json!({"owner": "nobody-at-all@example.com"})).await;
    assert_eq!((a.0, &a.1, &a.2), (StatusCode::NO_CONTENT, &b.1, &b.2));
    assert_eq!(deliver(&app, &ingest, "c-2").await, 1);
    assert_eq!(deliver(&app, &team_ingest, "t-2").await, 2, "the team's grant stands");
    assert_eq!(shared_on(&app, &alice_ep).await, 3);
}

#[actix_web::test]
async fn a_malformed_grantee_is_refused_and_grants_nothing() {
    let app = TestApp::spawn().await;
    let alice = app.owner("alice@example.com").await;
    let alice_ep = app.agent(alice.scope, "alice-inbox").await;
    let long = format!("{}@example.com", "a".repeat(320));
    for owner in ["nobody", "team:", "team:a:b", "@", "a\u{0}@example.com", "a\n@example.com", long.as_str()] {
        for method in ["POST", "DELETE"] {
            let (s, b) = app.call(method, &grants(&alice_ep), Some(&alice.token), Some(&json!({"owner": owner}))).await;
            assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{method} {owner:?}: {b}");
            assert_eq!(b["error"]["code"], "invalid_argument", "{b}");
        }
    }
    assert_eq!(app.db.count("SELECT count(*) FROM fanout_grant_refs").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM fanout_grants").await, 0);
}
