//! Standard Webhooks (<https://www.standardwebhooks.com>): headers `webhook-id`,
//! `webhook-timestamp` and `webhook-signature`, the last a space-separated list of
//! `v1,<base64 of HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` entries (any one
//! matching is enough; other versions such as the asymmetric `v1a` are ignored).
//!
//! Key format: a secret stored as `whsec_<base64>` (the form the spec recommends and
//! providers display) is keyed by the decoded bytes, with or without base64 padding.
//! Any other secret is used as raw bytes. This differs from the reference crate's
//! `Webhook::new`, which base64-decodes an unprefixed secret too: we cannot tell an
//! unprefixed base64 secret from a raw one that happens to look like base64, and raw
//! bytes is how every other source type uses its secret.

use std::borrow::Cow;

use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use chrono::{DateTime, Utc};
use hmac::Mac;

use super::{
    Inbound, MAX_LABEL_BYTES, VerifyError, any_matches, check_tolerance, hmac_sha256, parse_unix_seconds,
    signature_header,
};

/// The header carrying the message id (also the dedup key).
pub(super) const ID_HEADER: &str = "webhook-id";
/// The header carrying the signed Unix timestamp.
pub(super) const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying the signatures.
pub(super) const SIGNATURE_HEADER: &str = "webhook-signature";
/// Prefix marking a base64-encoded secret.
pub(super) const SECRET_PREFIX: &[u8] = b"whsec_";

/// Decodes a pasted `whsec_` secret whether or not its padding survived the copy.
const LENIENT_STANDARD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The HMAC key for a stored secret (see the module docs). A `whsec_` secret that does
/// not decode, or decodes to nothing, is unusable: [`VerifyError::NoSecret`].
pub(super) fn key(secret: &[u8]) -> Result<Cow<'_, [u8]>, VerifyError> {
    match secret.strip_prefix(SECRET_PREFIX) {
        None => Ok(Cow::Borrowed(secret)),
        Some(encoded) => match LENIENT_STANDARD.decode(encoded) {
            Ok(decoded) if !decoded.is_empty() => Ok(Cow::Owned(decoded)),
            _ => Err(VerifyError::NoSecret),
        },
    }
}

/// The raw tag over `"{id}.{timestamp}.{body}"`.
pub(super) fn tag(key: &[u8], id: &str, timestamp: &str, body: &[u8]) -> [u8; 32] {
    hmac_sha256(key, &[id.as_bytes(), b".", timestamp.as_bytes(), b".", body]).finalize().into_bytes().into()
}

/// The decoded `v1` signatures of a `webhook-signature` header. An entry without a
/// comma, or a `v1` that is not canonical base64 of 32 bytes, makes the header
/// malformed; so does a header with no `v1` at all.
fn v1_signatures(value: &str) -> Result<Vec<[u8; 32]>, VerifyError> {
    let mut signatures = Vec::new();
    for entry in value.split(' ').filter(|e| !e.is_empty()) {
        let (version, encoded) =
            entry.split_once(',').ok_or(VerifyError::Malformed("signature entry is not version,signature"))?;
        if version != "v1" {
            continue;
        }
        let decoded = STANDARD.decode(encoded).ok().and_then(|d| <[u8; 32]>::try_from(d).ok());
        signatures.push(decoded.ok_or(VerifyError::Malformed("v1 signature is not base64 of 32 bytes"))?);
    }
    if signatures.is_empty() {
        return Err(VerifyError::Malformed("no v1 signature"));
    }
    Ok(signatures)
}

/// Checks that some `v1` signs `"{id}.{timestamp}.{body}"` under the secret's key, then
/// that the timestamp is within the tolerance of `now` (signature first, so `Expired`
/// always means authentic but stale).
pub(super) fn verify(secret: &[u8], inbound: &Inbound, now: DateTime<Utc>) -> Result<(), VerifyError> {
    let key = key(secret)?;
    let signatures = v1_signatures(signature_header(inbound, SIGNATURE_HEADER)?)?;
    let id = inbound.header(ID_HEADER).map(str::trim).unwrap_or_default();
    if id.is_empty() || id.len() > MAX_LABEL_BYTES {
        return Err(VerifyError::Malformed("webhook-id is missing or too long"));
    }
    let timestamp_text = inbound.header(TIMESTAMP_HEADER).map(str::trim).unwrap_or_default();
    let timestamp = parse_unix_seconds(timestamp_text)?;
    if !any_matches(&tag(&key, id, timestamp_text, inbound.body), &signatures) {
        return Err(VerifyError::BadSignature);
    }
    check_tolerance(timestamp, now)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use standardwebhooks::Webhook;

    use super::*;

    /// The reference crate's own test secret and message.
    const SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
    const MSG_ID: &str = "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk";
    const PAYLOAD: &[u8] = br#"{"email":"test@example.com","username":"test_user"}"#;
    const T: i64 = 1_649_367_553;

    fn at(unix: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(unix, 0).unwrap()
    }

    fn headers(id: &str, timestamp: i64, signature: &str) -> Vec<(String, String)> {
        vec![
            (ID_HEADER.to_owned(), id.to_owned()),
            (TIMESTAMP_HEADER.to_owned(), timestamp.to_string()),
            (SIGNATURE_HEADER.to_owned(), signature.to_owned()),
        ]
    }

    fn check(secret: &[u8], headers: &[(String, String)], body: &[u8], now: i64) -> Result<(), VerifyError> {
        verify(secret, &Inbound { headers, body }, at(now))
    }

    /// A signature made by the reference implementation.
    fn reference_sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
        Webhook::new(secret).unwrap().sign(id, timestamp, body).unwrap()
    }

    /// Runs the reference implementation's verifier (which reads the real clock).
    fn reference_verify(wh: &Webhook, headers: &[(String, String)], body: &[u8]) -> bool {
        let map: HashMap<String, String> = headers.iter().cloned().collect();
        // The reference takes an `http` 1.x HeaderMap; inference names the type for us,
        // so this crate needs no direct `http` dependency.
        let header_map = (&map).try_into().expect("valid header names and values");
        wh.verify(body, &header_map).is_ok()
    }

    #[test]
    fn the_reference_crates_published_vector_verifies() {
        let signature = "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=";
        assert_eq!(check(SECRET.as_bytes(), &headers(MSG_ID, T, signature), PAYLOAD, T), Ok(()));
    }

    #[test]
    fn a_signature_made_by_the_reference_crate_verifies() {
        let signature = reference_sign(SECRET, "msg_2", T + 7, b"{\"a\":1}");
        assert_eq!(check(SECRET.as_bytes(), &headers("msg_2", T + 7, &signature), b"{\"a\":1}", T), Ok(()));
    }

    #[test]
    fn a_signature_made_our_way_verifies_with_the_reference_crate() {
        let now = Utc::now().timestamp();
        let body = br#"{"type":"invoice.paid","data":{}}"#;
        let ours = tag(&key(SECRET.as_bytes()).unwrap(), "msg_ours", &now.to_string(), body);
        let h = headers("msg_ours", now, &format!("v1,{}", STANDARD.encode(ours)));
        assert!(reference_verify(&Webhook::new(SECRET).unwrap(), &h, body));
        assert_eq!(check(SECRET.as_bytes(), &h, body, now), Ok(()));
    }

    #[test]
    fn we_and_the_reference_crate_agree_on_a_tampered_body() {
        let now = Utc::now().timestamp();
        let h = headers(MSG_ID, now, &reference_sign(SECRET, MSG_ID, now, PAYLOAD));
        let mut tampered = PAYLOAD.to_vec();
        tampered[3] ^= 0x01;
        assert!(reference_verify(&Webhook::new(SECRET).unwrap(), &h, PAYLOAD));
        assert!(!reference_verify(&Webhook::new(SECRET).unwrap(), &h, &tampered));
        assert_eq!(check(SECRET.as_bytes(), &h, &tampered, now), Err(VerifyError::BadSignature));
    }

    #[test]
    fn an_unprefixed_secret_is_used_as_raw_bytes() {
        let raw = b"a raw secret, not base64";
        let signature = Webhook::from_bytes(raw.to_vec()).unwrap().sign(MSG_ID, T, PAYLOAD).unwrap();
        assert_eq!(check(raw, &headers(MSG_ID, T, &signature), PAYLOAD, T), Ok(()));
    }

    #[test]
    fn a_whsec_secret_decodes_with_or_without_padding() {
        assert_eq!(key(b"whsec_c2VjcmV0LQ==").unwrap().as_ref(), b"secret-");
        assert_eq!(key(b"whsec_c2VjcmV0LQ").unwrap().as_ref(), b"secret-");
        let signature = reference_sign("whsec_c2VjcmV0LQ==", MSG_ID, T, PAYLOAD);
        assert_eq!(check(b"whsec_c2VjcmV0LQ", &headers(MSG_ID, T, &signature), PAYLOAD, T), Ok(()));
    }

    #[test]
    fn an_undecodable_or_empty_whsec_secret_is_no_secret() {
        let h = headers(MSG_ID, T, &reference_sign(SECRET, MSG_ID, T, PAYLOAD));
        assert_eq!(check(b"whsec_not base64!", &h, PAYLOAD, T), Err(VerifyError::NoSecret));
        assert_eq!(check(b"whsec_", &h, PAYLOAD, T), Err(VerifyError::NoSecret));
    }

    #[test]
    fn a_wrong_secret_is_a_bad_signature() {
        let signature = reference_sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", MSG_ID, T, PAYLOAD);
        assert_eq!(
            check(SECRET.as_bytes(), &headers(MSG_ID, T, &signature), PAYLOAD, T),
            Err(VerifyError::BadSignature)
        );
    }

    #[test]
    fn a_changed_id_or_timestamp_is_a_bad_signature() {
        let signature = reference_sign(SECRET, MSG_ID, T, PAYLOAD);
        assert_eq!(
            check(SECRET.as_bytes(), &headers("msg_other", T, &signature), PAYLOAD, T),
            Err(VerifyError::BadSignature)
        );
        assert_eq!(
            check(SECRET.as_bytes(), &headers(MSG_ID, T + 1, &signature), PAYLOAD, T),
            Err(VerifyError::BadSignature)
        );
    }

    #[test]
    fn one_valid_signature_among_several_is_enough() {
        let valid = reference_sign(SECRET, MSG_ID, T, PAYLOAD);
        let multi = format!(
            "v1,tFtCZ5RDCPxzWQRWXWPgrCgE2frDBe9gjpbWQxnVfsQ= v1a,c29tZSBhc3ltbWV0cmljIHNpZw== {valid} v1,9DfC1c3eeOrXB6w/5dIDydLNQaEyww5KalE5jLBZucE="
        );
        assert_eq!(check(SECRET.as_bytes(), &headers(MSG_ID, T, &multi), PAYLOAD, T), Ok(()));
        let none_valid = multi.replace(&valid, "v1,Mm7xgUVICxZfQ3bgf0h0Dof65L/IFx+PnZvnDWPCX6Q=");
        assert_eq!(
            check(SECRET.as_bytes(), &headers(MSG_ID, T, &none_valid), PAYLOAD, T),
            Err(VerifyError::BadSignature)
        );
    }

    #[test]
    fn exactly_300_seconds_either_side_is_accepted() {
        let h = headers(MSG_ID, T, &reference_sign(SECRET, MSG_ID, T, PAYLOAD));
        assert_eq!(check(SECRET.as_bytes(), &h, PAYLOAD, T + 300), Ok(()));
        assert_eq!(check(SECRET.as_bytes(), &h, PAYLOAD, T - 300), Ok(()));
    }

    #[test]
    fn stale_and_future_timestamps_at_301_seconds_are_expired() {
        let h = headers(MSG_ID, T, &reference_sign(SECRET, MSG_ID, T, PAYLOAD));
        assert_eq!(check(SECRET.as_bytes(), &h, PAYLOAD, T + 301), Err(VerifyError::Expired));
        assert_eq!(check(SECRET.as_bytes(), &h, PAYLOAD, T - 301), Err(VerifyError::Expired));
    }

    #[test]
    fn a_missing_signature_header_is_a_missing_signature() {
        let mut h = headers(MSG_ID, T, "");
        h.pop();
        assert_eq!(check(SECRET.as_bytes(), &h, PAYLOAD, T), Err(VerifyError::MissingSignature));
    }

    #[test]
    fn a_missing_id_or_timestamp_is_malformed() {
        let full = headers(MSG_ID, T, &reference_sign(SECRET, MSG_ID, T, PAYLOAD));
        for dropped in [ID_HEADER, TIMESTAMP_HEADER] {
            let h: Vec<_> = full.iter().filter(|(n, _)| n != dropped).cloned().collect();
            assert!(matches!(check(SECRET.as_bytes(), &h, PAYLOAD, T), Err(VerifyError::Malformed(_))), "{dropped}");
        }
    }

    #[test]
    fn malformed_signature_headers_are_malformed() {
        let valid = reference_sign(SECRET, MSG_ID, T, PAYLOAD);
        let cases = [
            "v1,not base64!".to_owned(),
            "v1,AAAA".to_owned(),                                         // base64, but not 32 bytes
            format!("{valid} v1,"),                                       // an empty v1 entry among a good one
            "v2,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=".to_owned(), // no v1
            "tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw=".to_owned(),    // no version
            format!("{valid} {}", "v1,AAAA ".repeat(1_000)),              // huge
        ];
        for signature in cases {
            let h = headers(MSG_ID, T, &signature);
            assert!(
                matches!(check(SECRET.as_bytes(), &h, PAYLOAD, T), Err(VerifyError::Malformed(_))),
                "{signature:.40}"
            );
        }
    }

    #[test]
    fn a_non_canonical_or_overlong_id_or_timestamp_is_malformed() {
        let signature = reference_sign(SECRET, MSG_ID, T, PAYLOAD);
        let mut h = headers(&"m".repeat(MAX_LABEL_BYTES + 1), T, &signature);
        assert!(matches!(check(SECRET.as_bytes(), &h, PAYLOAD, T), Err(VerifyError::Malformed(_))));
        h = headers(MSG_ID, T, &signature);
        for bad in [format!("0{T}"), format!("+{T}"), format!("{T}.0"), "-1".to_owned(), String::new()] {
            h[1].1 = bad.clone();
            assert!(matches!(check(SECRET.as_bytes(), &h, PAYLOAD, T), Err(VerifyError::Malformed(_))), "{bad}");
        }
    }
}
