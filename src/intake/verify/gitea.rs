//! Gitea (and Forgejo): `X-Gitea-Signature: <hex of HMAC-SHA256(secret, body)>`, bare
//! hex with no algorithm prefix.

use chrono::{DateTime, Utc};
use hmac::Mac;

use super::{Inbound, VerifyError, decode_hex_tag, hmac_sha256, signature_header};

/// The header carrying the signature.
pub(super) const SIGNATURE_HEADER: &str = "X-Gitea-Signature";

/// Checks the body's HMAC under `secret`. Gitea signs no timestamp, so `now` is unused.
pub(super) fn verify(secret: &[u8], inbound: &Inbound, _now: DateTime<Utc>) -> Result<(), VerifyError> {
    let tag = decode_hex_tag(signature_header(inbound, SIGNATURE_HEADER)?)?;
    // `verify_slice` compares in constant time.
    hmac_sha256(secret, &[inbound.body]).verify_slice(&tag).map_err(|_| VerifyError::BadSignature)
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{check_with_header, hex_hmac};
    use super::*;

    /// The header Gitea would send, computed independently of the code under test.
    fn sign(secret: &[u8], body: &[u8]) -> String {
        hex_hmac(secret, body)
    }

    fn check(secret: &[u8], header: Option<&str>, body: &[u8]) -> Result<(), VerifyError> {
        check_with_header(verify, SIGNATURE_HEADER, secret, header, body)
    }

    #[test]
    fn a_body_signed_with_the_secret_verifies() {
        let body = br#"{"ref":"refs/heads/main"}"#;
        assert_eq!(check(b"s3cret", Some(&sign(b"s3cret", body)), body), Ok(()));
    }

    #[test]
    fn uppercase_hex_is_accepted() {
        let body = b"{}";
        assert_eq!(check(b"k", Some(&sign(b"k", body).to_uppercase()), body), Ok(()));
    }

    #[test]
    fn a_wrong_secret_is_a_bad_signature() {
        let body = b"{}";
        assert_eq!(check(b"right", Some(&sign(b"wrong", body)), body), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_one_byte_change_to_the_body_is_a_bad_signature() {
        let header = sign(b"k", b"{\"n\":1}");
        assert_eq!(check(b"k", Some(&header), b"{\"n\":2}"), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_missing_header_is_a_missing_signature() {
        assert_eq!(check(b"k", None, b"{}"), Err(VerifyError::MissingSignature));
    }

    #[test]
    fn a_github_style_prefixed_signature_is_malformed() {
        let header = format!("sha256={}", sign(b"k", b"{}"));
        assert!(matches!(check(b"k", Some(&header), b"{}"), Err(VerifyError::Malformed(_))));
    }

    #[test]
    fn non_hex_odd_length_short_and_huge_signatures_are_malformed() {
        for header in ["zz".repeat(32), "a".repeat(63), "ab".repeat(31), "ab".repeat(100_000)] {
            assert!(matches!(check(b"k", Some(&header), b"{}"), Err(VerifyError::Malformed(_))), "{}", &header[..20]);
        }
    }
}
