//! Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]`, where each `v1` is
//! the hex HMAC-SHA256 of `"{t}.{body}"`. Several `v1` entries appear while a secret is
//! being rolled; any one matching is enough. The key is the secret exactly as Stripe
//! shows it, `whsec_` prefix included: unlike Standard Webhooks, Stripe does not
//! base64-decode it.

use chrono::{DateTime, Utc};
use hmac::Mac;

use super::{
    Inbound, VerifyError, any_matches, check_tolerance, decode_hex_tag, hmac_sha256, parse_unix_seconds,
    signature_header,
};

/// The header carrying the timestamp and signatures.
pub(super) const SIGNATURE_HEADER: &str = "Stripe-Signature";

/// The timestamp and `v1` signatures of a `Stripe-Signature` header.
struct Parsed<'a> {
    /// The timestamp exactly as sent (it is part of what was signed).
    timestamp_text: &'a str,
    timestamp: i64,
    signatures: Vec<[u8; 32]>,
}

/// Splits the header into its entries. A repeated `t`, an entry that is not
/// `key=value`, or a `v1` that is not 64 hex digits makes the whole header malformed;
/// other schemes (`v0`) are ignored.
fn parse(value: &str) -> Result<Parsed<'_>, VerifyError> {
    let mut timestamp_text = None;
    let mut signatures = Vec::new();
    for entry in value.split(',') {
        let (key, val) = entry.trim().split_once('=').ok_or(VerifyError::Malformed("entry is not key=value"))?;
        match key {
            "t" if timestamp_text.is_some() => return Err(VerifyError::Malformed("more than one timestamp")),
            "t" => timestamp_text = Some(val),
            "v1" => signatures.push(decode_hex_tag(val)?),
            _ => {}
        }
    }
    let timestamp_text = timestamp_text.ok_or(VerifyError::Malformed("no timestamp"))?;
    if signatures.is_empty() {
        return Err(VerifyError::Malformed("no v1 signature"));
    }
    Ok(Parsed { timestamp_text, timestamp: parse_unix_seconds(timestamp_text)?, signatures })
}

/// Checks that some `v1` signs `"{t}.{body}"` under `secret`, then that `t` is within
/// the tolerance of `now`. The signature is checked first so that `Expired` always
/// means an authentic but stale (replayed or skewed) delivery.
pub(super) fn verify(secret: &[u8], inbound: &Inbound, now: DateTime<Utc>) -> Result<(), VerifyError> {
    let parsed = parse(signature_header(inbound, SIGNATURE_HEADER)?)?;
    let tag = hmac_sha256(secret, &[parsed.timestamp_text.as_bytes(), b".", inbound.body]).finalize().into_bytes();
    if !any_matches(&tag, &parsed.signatures) {
        return Err(VerifyError::BadSignature);
    }
    check_tolerance(parsed.timestamp, now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    const SECRET: &[u8] = b"whsec_test_secret_as_shown_by_stripe";
    const T: i64 = 1_700_000_000;

    fn at(unix: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(unix, 0).unwrap()
    }

    /// One `v1` value as Stripe computes it, independently of the code under test.
    fn v1(secret: &[u8], t: i64, body: &[u8]) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(secret).unwrap();
        mac.update(format!("{t}.").as_bytes());
        mac.update(body);
        hex::encode(mac.finalize().into_bytes())
    }

    fn check(header: &str, body: &[u8], now: i64) -> Result<(), VerifyError> {
        let headers = vec![(SIGNATURE_HEADER.to_owned(), header.to_owned())];
        verify(SECRET, &Inbound { headers: &headers, body }, at(now))
    }

    #[test]
    fn a_body_signed_with_the_secret_verifies() {
        let body = br#"{"id":"evt_1","type":"invoice.paid"}"#;
        assert_eq!(check(&format!("t={T},v1={}", v1(SECRET, T, body)), body, T), Ok(()));
    }

    #[test]
    fn the_whsec_prefix_is_part_of_the_key() {
        let body = b"{}";
        let without_prefix = SECRET.strip_prefix(b"whsec_").unwrap();
        let header = format!("t={T},v1={}", v1(without_prefix, T, body));
        assert_eq!(check(&header, body, T), Err(VerifyError::BadSignature));
    }

    #[test]
    fn any_one_matching_v1_among_several_is_enough() {
        let body = b"{}";
        let header =
            format!("t={T},v1={},v1={},v0={}", v1(b"old secret", T, body), v1(SECRET, T, body), "ab".repeat(32));
        assert_eq!(check(&header, body, T), Ok(()));
    }

    #[test]
    fn several_v1_none_matching_is_a_bad_signature() {
        let body = b"{}";
        let header = format!("t={T},v1={},v1={}", v1(b"old", T, body), v1(b"other", T, body));
        assert_eq!(check(&header, body, T), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_wrong_secret_is_a_bad_signature() {
        let body = b"{}";
        assert_eq!(check(&format!("t={T},v1={}", v1(b"wrong", T, body)), body, T), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_one_byte_change_to_the_body_is_a_bad_signature() {
        let header = format!("t={T},v1={}", v1(SECRET, T, b"{\"amount\":100}"));
        assert_eq!(check(&header, b"{\"amount\":900}", T), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_changed_timestamp_is_a_bad_signature() {
        let header = format!("t={},v1={}", T + 1, v1(SECRET, T, b"{}"));
        assert_eq!(check(&header, b"{}", T), Err(VerifyError::BadSignature));
    }

    #[test]
    fn exactly_300_seconds_either_side_is_accepted() {
        let header = format!("t={T},v1={}", v1(SECRET, T, b"{}"));
        assert_eq!(check(&header, b"{}", T + 300), Ok(()));
        assert_eq!(check(&header, b"{}", T - 300), Ok(()));
    }

    #[test]
    fn stale_and_future_timestamps_at_301_seconds_are_expired() {
        let header = format!("t={T},v1={}", v1(SECRET, T, b"{}"));
        assert_eq!(check(&header, b"{}", T + 301), Err(VerifyError::Expired));
        assert_eq!(check(&header, b"{}", T - 301), Err(VerifyError::Expired));
    }

    #[test]
    fn a_bad_signature_is_reported_before_an_expired_timestamp() {
        let header = format!("t={T},v1={}", v1(b"wrong", T, b"{}"));
        assert_eq!(check(&header, b"{}", T + 10_000), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_missing_header_is_a_missing_signature() {
        let inbound = Inbound { headers: &[], body: b"{}" };
        assert_eq!(verify(SECRET, &inbound, at(T)), Err(VerifyError::MissingSignature));
    }

    #[test]
    fn malformed_headers_are_malformed() {
        let good = v1(SECRET, T, b"{}");
        let cases = [
            format!("v1={good}"),                                  // no timestamp
            format!("t={T}"),                                      // no v1
            format!("t={T},v0={good}"),                            // only the legacy scheme
            format!("t=-{T},v1={good}"),                           // signed timestamp
            format!("t=+{T},v1={good}"),                           // explicit sign
            format!("t=soon,v1={good}"),                           // not a number
            format!("t=99999999999999999999,v1={good}"),           // overflows i64
            format!("t={T},t={T},v1={good}"),                      // ambiguous timestamp
            format!("t={T},v1={}", "zz".repeat(32)),               // non-hex
            format!("t={T},v1={}", "a".repeat(63)),                // odd length
            format!("t={T},v1={good},v1=abc"),                     // one bad entry among good
            format!("t={T};v1={good}"),                            // wrong separator
            format!("t={T},v1={good},{}", "v1=00,".repeat(1_000)), // huge
        ];
        for header in cases {
            assert!(
                matches!(check(&header, b"{}", T), Err(VerifyError::Malformed(_))),
                "{}",
                &header[..header.len().min(40)]
            );
        }
    }

    #[test]
    fn spaces_around_entries_are_tolerated() {
        let header = format!("t={T}, v1={}", v1(SECRET, T, b"{}"));
        assert_eq!(check(&header, b"{}", T), Ok(()));
    }
}
