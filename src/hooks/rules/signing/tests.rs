use chrono::TimeZone;
use standardwebhooks::Webhook;

use super::*;
use crate::domain::tokens::mint_signing_secret;

/// The attempt's headers as the reference verifier takes them.
fn reference_headers(headers: &[(HeaderName, String)]) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    for (name, value) in headers {
        let name = http::HeaderName::from_bytes(name.as_str().as_bytes()).unwrap();
        map.insert(name, http::HeaderValue::from_str(value).unwrap());
    }
    map
}

fn value<'a>(headers: &'a [(HeaderName, String)], name: &HeaderName) -> &'a str {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str()).unwrap()
}

fn key(secret: &str) -> SigningKey {
    SigningKey::from_secret(secret).unwrap()
}

#[test]
fn the_signature_matches_the_reference_crates_known_answer() {
    let id = MessageId("msg_27UH4WbU6Z5A5EzD8u03UvzRbpk".into());
    let body = br#"{"email":"test@example.com","username":"test_user"}"#;
    let ring = KeyRing::single(key("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"));
    assert_eq!(sign(&id, 1649367553, body, &ring), "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=");
}

#[test]
fn a_signed_attempt_verifies_with_the_reference_crate() {
    let secret = mint_signing_secret();
    let now = Utc::now();
    let id = MessageId::new(now);
    let body = br#"{"type":"todo.ready","todo_id":"td_1"}"#;
    let headers = headers(&id, now.timestamp(), body, &KeyRing::single(key(&secret)));

    let verifier = Webhook::new(&secret).unwrap();
    verifier.verify(body, &reference_headers(&headers)).unwrap();
    assert!(!value(&headers, &WEBHOOK_SIGNATURE).contains(' '), "one secret, one signature");
}

#[test]
fn during_a_rotation_both_secrets_verify_and_the_new_one_comes_first() {
    let (new, old) = (mint_signing_secret(), mint_signing_secret());
    let now = Utc::now();
    let ring = KeyRing::new(key(&new), Some((key(&old), now + TimeDelta::hours(1))), now);
    assert!(ring.is_dual());
    let id = MessageId::new(now);
    let body = br#"{"type":"todo.dead_lettered"}"#;
    let headers = headers(&id, now.timestamp(), body, &ring);

    Webhook::new(&new).unwrap().verify(body, &reference_headers(&headers)).unwrap();
    Webhook::new(&old).unwrap().verify(body, &reference_headers(&headers)).unwrap();

    let entries: Vec<&str> = value(&headers, &WEBHOOK_SIGNATURE).split(' ').collect();
    assert_eq!(entries.len(), 2);
    let by_new = Webhook::new(&new).unwrap().sign(id.as_str(), now.timestamp(), body).unwrap();
    assert_eq!(entries[0], by_new);
}

#[test]
fn a_tampered_body_id_or_timestamp_fails_verification() {
    let secret = mint_signing_secret();
    let now = Utc::now();
    let id = MessageId::new(now);
    let body = br#"{"type":"todo.ready","queue":"ci"}"#;
    let headers = headers(&id, now.timestamp(), body, &KeyRing::single(key(&secret)));
    let verifier = Webhook::new(&secret).unwrap();

    assert!(verifier.verify(br#"{"type":"todo.ready","queue":"cd"}"#, &reference_headers(&headers)).is_err());

    let mut other_id = reference_headers(&headers);
    other_id.insert("webhook-id", MessageId::new(now).as_str().parse().unwrap());
    assert!(verifier.verify(body, &other_id).is_err());

    let mut other_ts = reference_headers(&headers);
    other_ts.insert("webhook-timestamp", (now.timestamp() - 1).to_string().parse().unwrap());
    assert!(verifier.verify(body, &other_ts).is_err());

    let stranger = Webhook::new(&mint_signing_secret()).unwrap();
    assert!(stranger.verify(body, &reference_headers(&headers)).is_err());
}

#[test]
fn an_expired_previous_secret_no_longer_signs() {
    let rotated_at = Utc.timestamp_opt(1_800_000_000, 0).single().unwrap();
    let until = previous_valid_until(rotated_at);
    assert_eq!(until - rotated_at, TimeDelta::hours(24));
    let (new, old) = (key(&mint_signing_secret()), key(&mint_signing_secret()));

    assert!(KeyRing::new(new.clone(), Some((old.clone(), until)), until - TimeDelta::seconds(1)).is_dual());
    assert!(!KeyRing::new(new.clone(), Some((old.clone(), until)), until).is_dual());
    assert!(!KeyRing::new(new, None, rotated_at).is_dual());
}

#[test]
fn minted_secrets_decode_to_32_byte_keys() {
    let secret = mint_signing_secret();
    assert!(SigningKey::from_secret(&secret).is_ok());
    assert_eq!(STRICT_STANDARD.decode(&secret[SECRET_PREFIX.len()..]).unwrap().len(), 32);
}

#[test]
fn secrets_that_do_not_decode_exactly_are_refused() {
    let b64 = |n: usize| format!("whsec_{}", STANDARD.encode(vec![7u8; n]));
    assert_eq!(SigningKey::from_secret(&STANDARD.encode([7u8; 32])).unwrap_err(), SecretError::MissingPrefix);
    assert_eq!(SigningKey::from_secret(&b64(16)).unwrap_err(), SecretError::BadLength(16));
    assert_eq!(SigningKey::from_secret(&b64(65)).unwrap_err(), SecretError::BadLength(65));
    assert!(SigningKey::from_secret(&b64(24)).is_ok());
    assert!(SigningKey::from_secret(&b64(64)).is_ok());
    // Padding stripped, URL-safe alphabet, stray characters, non-canonical trailing bits.
    assert_eq!(SigningKey::from_secret(b64(32).trim_end_matches('=')).unwrap_err(), SecretError::NotBase64);
    let url_safe = format!("whsec_{}", "-_".repeat(16));
    assert_eq!(SigningKey::from_secret(&url_safe).unwrap_err(), SecretError::NotBase64);
    assert_eq!(SigningKey::from_secret(&format!("{} ", b64(32))).unwrap_err(), SecretError::NotBase64);
    let canonical = b64(32); // 43 characters and one `=`; the last character carries 2 spare bits
    let mut loose = canonical.clone().into_bytes();
    let last = loose.len() - 2;
    loose[last] = if loose[last] == b'B' { b'C' } else { b'B' };
    assert_eq!(SigningKey::from_secret(std::str::from_utf8(&loose).unwrap()).unwrap_err(), SecretError::NotBase64);
}

#[test]
fn message_ids_are_msg_and_a_ulid_of_the_announcement_time() {
    let now = Utc.timestamp_opt(1_800_000_000, 123_000_000).single().unwrap();
    let id = MessageId::new(now);
    let ulid = id.as_str().strip_prefix("msg_").unwrap();
    assert_eq!(ulid.len(), 26);
    assert_eq!(Ulid::from_string(ulid).unwrap().timestamp_ms(), 1_800_000_000_123);
    assert_ne!(MessageId::new(now), id, "two announcements at the same instant still differ");
    assert_eq!(id.to_string(), id.as_str());
}

#[test]
fn every_attempt_carries_content_type_user_agent_and_the_three_webhook_headers() {
    let now = Utc::now();
    let id = MessageId::new(now);
    let headers = headers(&id, 1_800_000_000, b"{}", &KeyRing::single(key(&mint_signing_secret())));
    let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["content-type", "user-agent", "webhook-id", "webhook-timestamp", "webhook-signature"]);
    assert_eq!(value(&headers, &CONTENT_TYPE), "application/json");
    assert_eq!(value(&headers, &USER_AGENT_HEADER), format!("switchboard/{}", env!("CARGO_PKG_VERSION")));
    assert_eq!(value(&headers, &WEBHOOK_ID), id.as_str());
    assert_eq!(value(&headers, &WEBHOOK_TIMESTAMP), "1800000000");
}

#[test]
fn a_retry_keeps_the_id_and_signs_its_own_timestamp() {
    let ring = KeyRing::single(key(&mint_signing_secret()));
    let id = MessageId::new(Utc::now());
    let first = headers(&id, 1_800_000_000, b"{}", &ring);
    let retry = headers(&id, 1_800_000_006, b"{}", &ring);
    assert_eq!(value(&first, &WEBHOOK_ID), value(&retry, &WEBHOOK_ID));
    assert_ne!(value(&first, &WEBHOOK_SIGNATURE), value(&retry, &WEBHOOK_SIGNATURE));
}

#[test]
fn a_signing_key_never_shows_itself() {
    let secret = mint_signing_secret();
    let shown = format!("{:?}", KeyRing::single(key(&secret)));
    assert!(!shown.contains(&secret[SECRET_PREFIX.len()..SECRET_PREFIX.len() + 8]));
    assert!(shown.contains("SigningKey(..)"));
}
