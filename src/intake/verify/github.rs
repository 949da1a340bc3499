//! GitHub: `X-Hub-Signature-256: sha256=<hex of HMAC-SHA256(secret, body)>`. The
//! legacy SHA-1 `X-Hub-Signature` is deliberately not accepted.

use chrono::{DateTime, Utc};
use hmac::Mac;

use super::{Inbound, VerifyError, decode_hex_tag, hmac_sha256, signature_header};

/// The header carrying the signature.
pub(super) const SIGNATURE_HEADER: &str = "X-Hub-Signature-256";

/// Checks the body's HMAC under `secret`. GitHub signs no timestamp, so `now` is unused.
pub(super) fn verify(secret: &[u8], inbound: &Inbound, _now: DateTime<Utc>) -> Result<(), VerifyError> {
    let value = signature_header(inbound, SIGNATURE_HEADER)?;
    let hex = value.strip_prefix("sha256=").ok_or(VerifyError::Malformed("signature lacks the sha256= prefix"))?;
    let tag = decode_hex_tag(hex)?;
    // `verify_slice` compares in constant time.
    hmac_sha256(secret, &[inbound.body]).verify_slice(&tag).map_err(|_| VerifyError::BadSignature)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_with_header, hex_hmac, now};
    use super::*;

    /// The header GitHub would send, computed independently of the code under test.
    fn sign(secret: &[u8], body: &[u8]) -> String {
        format!("sha256={}", hex_hmac(secret, body))
    }

    fn check(secret: &[u8], header: Option<&str>, body: &[u8]) -> Result<(), VerifyError> {
        check_with_header(verify, SIGNATURE_HEADER, secret, header, body)
    }

    #[test]
    fn githubs_published_example_verifies() {
        // From GitHub's "Validating webhook deliveries" guide (testing section).
        let header = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
        assert_eq!(sign(b"It's a Secret to Everybody", b"Hello, World!"), header);
        assert_eq!(check(b"It's a Secret to Everybody", Some(header), b"Hello, World!"), Ok(()));
    }

    #[test]
    fn a_body_signed_with_the_secret_verifies() {
        let body = br#"{"action":"opened","number":7}"#;
        assert_eq!(check(b"s3cret", Some(&sign(b"s3cret", body)), body), Ok(()));
    }

    #[test]
    fn the_header_name_matches_in_any_case() {
        let body = b"{}";
        let headers = vec![("x-hub-signature-256".to_owned(), sign(b"k", body))];
        assert_eq!(verify(b"k", &Inbound { headers: &headers, body }, now()), Ok(()));
    }

    #[test]
    fn a_wrong_secret_is_a_bad_signature() {
        let body = b"{}";
        assert_eq!(check(b"right", Some(&sign(b"wrong", body)), body), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_one_byte_change_to_the_body_is_a_bad_signature() {
        let header = sign(b"k", br#"{"ref":"main"}"#);
        assert_eq!(check(b"k", Some(&header), br#"{"ref":"mair"}"#), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_missing_header_is_a_missing_signature() {
        assert_eq!(check(b"k", None, b"{}"), Err(VerifyError::MissingSignature));
    }

    #[test]
    fn the_legacy_sha1_header_alone_is_a_missing_signature() {
        let headers = vec![("X-Hub-Signature".to_owned(), "sha1=0123".to_owned())];
        let inbound = Inbound { headers: &headers, body: b"{}" };
        assert_eq!(verify(b"k", &inbound, now()), Err(VerifyError::MissingSignature));
    }

    #[test]
    fn a_bare_hex_signature_without_the_prefix_is_malformed() {
        let header = sign(b"k", b"{}");
        let bare = header.strip_prefix("sha256=").unwrap();
        assert!(matches!(check(b"k", Some(bare), b"{}"), Err(VerifyError::Malformed(_))));
    }

    #[test]
    fn non_hex_odd_length_short_and_huge_signatures_are_malformed() {
        let non_hex = format!("sha256={}", "zz".repeat(32));
        let odd = format!("sha256={}", "a".repeat(63));
        let short = format!("sha256={}", "ab".repeat(31));
        let huge = format!("sha256={}", "ab".repeat(100_000));
        for header in [non_hex, odd, short, huge] {
            assert!(matches!(check(b"k", Some(&header), b"{}"), Err(VerifyError::Malformed(_))), "{}", &header[..20]);
        }
    }

    #[test]
    fn a_signature_of_the_right_shape_but_all_zeroes_is_a_bad_signature() {
        let header = format!("sha256={}", "0".repeat(64));
        assert_eq!(check(b"k", Some(&header), b"{}"), Err(VerifyError::BadSignature));
    }
}
