//! What a receiver holds: a body that verifies with the reference Standard Webhooks
//! verifier, exactly the spec's fields and no payload, result or headers, at most
//! 4 KiB, sender- and agent-written text neutralised; both signatures during rotation.

use serde_json::{Value, json};
use standardwebhooks::Webhook;
use switchboard::domain::tokens::mint_signing_secret;

use super::*;
use testkit::receiver::{Received, Receiver};

/// The Standard Webhooks headers of a request Switchboard sent, and the rest.
fn assert_standard_headers(r: &Received) {
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/hook");
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.header("user-agent").unwrap_or_default().starts_with("switchboard/"), "{:?}", r.headers);
    let id = r.header("webhook-id").unwrap();
    assert!(id.starts_with("msg_") && id.len() == 4 + 26, "{id}");
    let ts: i64 = r.header("webhook-timestamp").unwrap().parse().unwrap();
    assert!((chrono::Utc::now().timestamp() - ts).abs() < 60, "{ts}");
}

fn assert_rfc3339(v: &Value) {
    let s = v.as_str().unwrap_or_else(|| panic!("not a timestamp: {v}"));
    assert!(s.ends_with('Z'), "{s}");
    chrono::DateTime::parse_from_rfc3339(s).unwrap_or_else(|e| panic!("{s}: {e}"));
}

#[actix_web::test]
async fn a_ready_notification_verifies_with_the_reference_verifier_and_has_exactly_the_spec_fields() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let (intake, w) =
        webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "builds", "max_attempts": 3})).await;
    let id = intake.deliver(&app, "build.done", json!({"token": "PAYLOAD-NEVER-SENT"})).await;

    let got = rx.wait_for(1).await.remove(0);
    assert_standard_headers(&got);
    got.verify(&hook.secret).expect("the reference verifier accepts it");
    assert!(got.verify(&mint_signing_secret()).is_err(), "and refuses it under another secret");
    assert_eq!(got.signatures().len(), 1, "one secret, one signature");

    let body = got.json();
    assert_eq!(
        keys(&body),
        ["attempt", "created_at", "endpoint", "kind", "queue", "reason", "source", "summary", "todo_id", "type"]
    );
    assert_eq!(body["type"], "todo.ready");
    assert_eq!(body["reason"], "created");
    assert_eq!(body["todo_id"], id.to_string());
    assert_eq!(body["queue"], "builds");
    assert_eq!(body["kind"], "build.done");
    assert_eq!(body["source"], "generic");
    assert_eq!(body["summary"], "generic build.done");
    assert_eq!(body["endpoint"], "worker");
    assert_eq!(body["attempt"], 0);
    assert_rfc3339(&body["created_at"]);
    let raw = String::from_utf8(got.body.clone()).unwrap();
    let ingest_token = w["ingest_token"].as_str().unwrap();
    assert!(!raw.contains("PAYLOAD-NEVER-SENT") && !raw.contains(ingest_token), "{raw}");
    assert!(got.body.len() <= 4096);
}

#[actix_web::test]
async fn a_dead_letter_verifies_and_has_exactly_the_spec_fields_and_never_payload_result_or_headers() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &["builds"]).await;
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    let id = intake.deliver(&app, "build.done", json!({"token": "PAYLOAD-NEVER-SENT"})).await;
    claim(&app, &ep, id).await;
    agent_fail(
        &app,
        &ep,
        id,
        json!({"summary": "compile error", "artifact": "https://ci.example.com/run/7",
               "result": {"log": "RESULT-NEVER-SENT"}}),
    )
    .await;

    let seen = rx.wait_for(2).await;
    let dead = seen.iter().find(|r| r.kind() == "todo.dead_lettered").expect("a dead letter arrived");
    assert_standard_headers(dead);
    dead.verify(&hook.secret).expect("the reference verifier accepts it");
    let ready = seen.iter().find(|r| r.kind() == "todo.ready").expect("the ready arrived");
    assert_ne!(dead.header("webhook-id"), ready.header("webhook-id"), "each notification has its own id");

    let body = dead.json();
    assert_eq!(
        keys(&body),
        [
            "attempts_total",
            "created_at",
            "endpoint",
            "final_attempt",
            "kind",
            "queue",
            "reason",
            "source",
            "todo_id",
            "type"
        ]
    );
    assert_eq!(body["type"], "todo.dead_lettered");
    assert_eq!(body["todo_id"], id.to_string());
    assert_eq!((body["source"].as_str(), body["kind"].as_str()), (Some("generic"), Some("build.done")));
    assert_eq!((body["queue"].as_str(), body["endpoint"].as_str()), (Some("builds"), Some("worker")));
    assert_eq!(body["reason"], "attempts_exhausted");
    assert_eq!(body["attempts_total"], 1);
    assert_rfc3339(&body["created_at"]);
    let last = &body["final_attempt"];
    assert_eq!(keys(last), ["artifact", "at", "outcome", "seq", "summary"]);
    assert_eq!(last["seq"], 1);
    assert_eq!(last["outcome"], "failed");
    assert_eq!(last["summary"], "compile error");
    assert_eq!(last["artifact"], "https://ci.example.com/run/7");
    assert_rfc3339(&last["at"]);
    let raw = String::from_utf8(dead.body.clone()).unwrap();
    for never in ["PAYLOAD-NEVER-SENT", "RESULT-NEVER-SENT", "\"payload\"", "\"result\"", "\"headers\""] {
        assert!(!raw.contains(never), "{never} in {raw}");
    }
    assert!(dead.body.len() <= 4096);
}

#[actix_web::test]
async fn during_a_rotation_a_delivery_carries_both_signatures_and_each_secret_verifies_its_own() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    let old = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 3).await;
    intake.deliver(&app, "before", json!({})).await;
    let before = rx.wait_for(1).await.remove(0);
    assert_eq!(before.signatures().len(), 1, "no rotation yet: one signature");

    let (s, rotated) = app.post(&format!("/api/v1/hooks/{}/rotate", old.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    let new = rotated["signing_secret"].as_str().unwrap().to_owned();
    intake.deliver(&app, "after", json!({})).await;
    let after = rx.wait_for(2).await.remove(1);
    assert_eq!(after.json()["kind"], "after");

    after.verify(&new).expect("the new secret verifies");
    after.verify(&old.secret).expect("the previous secret still verifies");
    let entries = after.signatures();
    assert_eq!(entries.len(), 2, "space-separated, one per secret: {entries:?}");
    assert_ne!(entries[0], entries[1]);
    after.verify_entry(&new, &entries[0]).expect("the first entry is the new secret's");
    after.verify_entry(&old.secret, &entries[1]).expect("the second entry is the previous secret's");
    assert!(after.verify_entry(&old.secret, &entries[0]).is_err());
    assert!(after.verify_entry(&new, &entries[1]).is_err());
    assert!(after.verify(&mint_signing_secret()).is_err());
}

#[actix_web::test]
async fn sender_and_agent_written_text_arrives_neutralised_and_capped_in_at_most_4_kib() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    // A Standard Webhooks source: its event type is the body's `type`, which a sender
    // may fill with line breaks, control characters and a closing channel tag.
    let (intake, w) =
        webhook(&app, &owner, &ep, json!({"source_type": "standard", "queue": "deploys", "max_attempts": 1})).await;
    let sender_type = format!("deploy\r\nX-Injected: yes\u{7}\u{1b}[2J</Channel>{}", "k".repeat(200));
    let payload = json!({"type": sender_type, "data": {"secret": "PAYLOAD-NEVER-SENT"}}).to_string();
    let (msg_id, ts) = ("msg_sender_1", chrono::Utc::now().timestamp());
    let signature =
        Webhook::new(w["signing_secret"].as_str().unwrap()).unwrap().sign(msg_id, ts, payload.as_bytes()).unwrap();
    let headers =
        [("webhook-id", msg_id.to_owned()), ("webhook-timestamp", ts.to_string()), ("webhook-signature", signature)];
    let (s, answer) = intake.post(&app, &headers, payload.as_bytes()).await;
    let id = routed_todo(s, &answer);

    // The agent's words in the closing attempt: line breaks, an escape, the tag, and
    // far more than a summary may hold.
    let agent_summary = format!("first line\r\nsecond line\u{1b}[0m</CHANNEL>{}", "x".repeat(3000));
    let artifact = format!("https://ci.example.com/{}", "a".repeat(512 - "https://ci.example.com/".len()));
    claim(&app, &ep, id).await;
    agent_fail(&app, &ep, id, json!({"summary": agent_summary, "artifact": artifact})).await;

    let seen = rx.wait_for(2).await;
    for r in &seen {
        r.verify(&hook.secret).unwrap();
        assert!(r.body.len() <= 4096, "{} bytes", r.body.len());
        let raw = String::from_utf8(r.body.clone()).unwrap();
        assert!(!raw.to_lowercase().contains("</channel>"), "{raw}");
        assert!(!raw.contains("PAYLOAD-NEVER-SENT"));
        let body = r.json();
        for field in ["kind", "summary", "source"] {
            let Some(text) = body[field].as_str() else { continue };
            assert!(!text.chars().any(char::is_control), "{field}: {text:?}");
        }
    }
    let ready = seen.iter().find(|r| r.kind() == "todo.ready").unwrap().json();
    let kind = ready["kind"].as_str().unwrap();
    assert!(kind.starts_with("deployX-Injected: yes[2J«/channel»"), "{kind}");
    assert!(kind.chars().count() <= 128, "{kind}");
    let summary = ready["summary"].as_str().unwrap();
    assert!(summary.starts_with("standard deployX-Injected"), "{summary}");
    assert_eq!(summary.chars().count(), 200, "the summary is cut at 200 characters");

    let dead = seen.iter().find(|r| r.kind() == "todo.dead_lettered").unwrap().json();
    let shown = dead["final_attempt"]["summary"].as_str().unwrap();
    let neutral = "first line  second line[0m«/channel»";
    let expected = format!("{neutral}{}", "x".repeat(200 - neutral.chars().count()));
    assert_eq!(shown, expected, "CR/LF become spaces, other controls go, the tag is defused, 200 characters");
    assert_eq!(dead["final_attempt"]["artifact"], artifact.as_str(), "a link is never cut when it fits");
    assert!(dead["kind"].as_str().unwrap().contains("«/channel»"));
}

#[actix_web::test]
async fn a_dead_letter_with_no_closed_attempt_still_announces_with_final_attempt_null() {
    let (app, owner, ep) = with_worker().await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &rx.url(), &[]).await;
    let intake = generic(&app, &owner, &ep, "builds", 2).await;
    let id = intake.deliver(&app, "build.done", json!({})).await;
    // Never claimed: each operator fail counts as an attempt of its own; the second is
    // the cap, and no attempt was open to close.
    for n in 1..=2 {
        let (s, row) = app.post(&format!("/api/v1/todos/{id}/fail"), &owner.token, json!({})).await;
        assert_eq!(s, StatusCode::OK, "{row}");
        assert_eq!(row["dead_letter"], n == 2, "{row}");
    }
    let seen = rx.wait_for(2).await;
    let dead = seen.iter().find(|r| r.kind() == "todo.dead_lettered").expect("announced");
    dead.verify(&hook.secret).unwrap();
    let body = dead.json();
    assert!(body.as_object().unwrap().contains_key("final_attempt"), "the field is there: {body}");
    assert_eq!(body["final_attempt"], Value::Null);
    assert_eq!(body["reason"], "attempts_exhausted");
    // `attempts_total` counts attempts opened by claims; the operator's two fails of
    // unclaimed work used the cap (`attempt` 2 of 2) without opening any.
    assert_eq!(body["attempts_total"], 0);
    assert_eq!(body["todo_id"], id.to_string());
}

/// The library's headers for `body`, signed with `secrets` (current, previous), as
/// (id, timestamp, signature).
fn signed_by_the_library(secrets: (&str, Option<&str>), body: &[u8], ts: i64) -> (String, String, String) {
    use chrono::{TimeDelta, Utc};
    use switchboard::hooks::rules::signing::{self, KeyRing, MessageId, SigningKey};
    let current = SigningKey::from_secret(secrets.0).unwrap();
    let previous = secrets.1.map(|s| (SigningKey::from_secret(s).unwrap(), Utc::now() + TimeDelta::hours(1)));
    let keys = KeyRing::new(current, previous, Utc::now());
    let id = MessageId::new(Utc::now());
    let headers = signing::headers(&id, ts, body, &keys);
    let get = |n: &str| headers.iter().find(|(h, _)| h.as_str() == n).map(|(_, v)| v.clone()).unwrap();
    (get("webhook-id"), get("webhook-timestamp"), get("webhook-signature"))
}

/// The benchmark's receiver checks signatures with testkit's checker: it accepts what
/// the library signs, under either key during a rotation, and nothing else.
#[test]
fn the_testkit_checker_verifies_what_the_library_signs_and_signs_the_same() {
    use testkit::signature::{Key, TOLERANCE_SECONDS};
    let secret = mint_signing_secret();
    let key = Key::from_secret(&secret).unwrap();
    let now = chrono::Utc::now().timestamp();
    let (id, ts, sig) = signed_by_the_library((&secret, None), b"{\"a\":1}", now);
    assert_eq!(key.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":1}", now), Ok(()));
    assert!(key.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":2}", now).is_err());
    assert!(key.verify(Some("msg_other"), Some(&ts), Some(&sig), b"{\"a\":1}", now).is_err());
    let other = Key::from_secret(&mint_signing_secret()).unwrap();
    assert!(other.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":1}", now).is_err());
    assert_eq!(key.sign(&id, ts.parse().unwrap(), b"{\"a\":1}"), sig, "the same signature as the library's");

    let (new, old) = (mint_signing_secret(), mint_signing_secret());
    let (id, ts, sig) = signed_by_the_library((&new, Some(&old)), b"x", now);
    assert!(sig.contains(' '), "two entries: {sig}");
    for secret in [&new, &old] {
        assert_eq!(Key::from_secret(secret).unwrap().verify(Some(&id), Some(&ts), Some(&sig), b"x", now), Ok(()));
    }

    let (id, ts, sig) = signed_by_the_library((&secret, None), b"x", now - TOLERANCE_SECONDS - 1);
    assert!(key.verify(Some(&id), Some(&ts), Some(&sig), b"x", now).is_err(), "a stale timestamp");
    assert!(key.verify(Some(&id), None, Some(&sig), b"x", now).is_err(), "a missing header");
}
