//! Scaffolding the per-source verifier tests share: a fixed clock, the HMAC a provider
//! would send (computed independently of the code under test), and one verifier call
//! with at most one signature header.

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{Inbound, VerifyError};

/// The clock every verifier test runs at.
pub(super) const NOW: i64 = 1_700_000_000;

/// [`NOW`] as a time.
pub(super) fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(NOW, 0).expect("a fixed valid timestamp")
}

/// Lowercase hex of HMAC-SHA256(`secret`, `body`), as GitHub and Gitea compute it.
pub(super) fn hex_hmac(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// A verifier of one scheme.
pub(super) type Verifier = fn(&[u8], &Inbound, DateTime<Utc>) -> Result<(), VerifyError>;

/// Runs `verify` at [`now`] on `body` with `header` (if any) under the name `name`.
pub(super) fn check_with_header(
    verify: Verifier,
    name: &str,
    secret: &[u8],
    header: Option<&str>,
    body: &[u8],
) -> Result<(), VerifyError> {
    let headers: Vec<(String, String)> = header.into_iter().map(|h| (name.to_owned(), h.to_owned())).collect();
    verify(secret, &Inbound { headers: &headers, body }, now())
}
