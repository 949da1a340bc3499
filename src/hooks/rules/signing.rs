//! Standard Webhooks signing (<https://www.standardwebhooks.com>) of outbound hook
//! rings.
//!
//! - `webhook-id`: `msg_` + a ULID, one per ring (announcement, hook), the same on every
//!   retry, so a receiver can drop a duplicate.
//! - `webhook-timestamp`: Unix seconds of each attempt (a retry is signed afresh, so a
//!   receiver's replay window starts at the attempt, not at the first try).
//! - `webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`; while a
//!   rotated-out secret is still valid (24 h) the header carries a second entry signed
//!   with it, after the new one, space-separated, so receivers can switch at leisure.
//!
//! A secret is `whsec_` + padded standard base64; the HMAC key is the decoded bytes.
//! Decoding is strict (canonical padding, no stray bits, 24–64 bytes): a secret that
//! does not decode exactly is refused rather than silently keyed by something the
//! receiver would not derive.

use std::fmt;

use crate::hooks::rules::hook::PREVIOUS_SECRET_GRACE_HOURS;
use awc::http::header::{CONTENT_TYPE, HeaderName, USER_AGENT as USER_AGENT_HEADER};
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use rand::Rng;
use sha2::Sha256;
use ulid::Ulid;

/// Prefix of a hook signing secret.
pub const SECRET_PREFIX: &str = "whsec_";
/// Shortest decoded key accepted, in bytes.
pub const KEY_MIN_BYTES: usize = 24;
/// Longest decoded key accepted, in bytes.
pub const KEY_MAX_BYTES: usize = 64;
/// How long a rotated-out secret keeps signing alongside the new one.
pub const PREVIOUS_SECRET_GRACE: TimeDelta = TimeDelta::hours(PREVIOUS_SECRET_GRACE_HOURS as i64);
/// The `user-agent` of every ring.
pub const USER_AGENT: &str = concat!("switchboard/", env!("CARGO_PKG_VERSION"));

/// The header carrying the message id.
pub const WEBHOOK_ID: HeaderName = HeaderName::from_static("webhook-id");
/// The header carrying the Unix timestamp of the attempt.
pub const WEBHOOK_TIMESTAMP: HeaderName = HeaderName::from_static("webhook-timestamp");
/// The header carrying the signatures.
pub const WEBHOOK_SIGNATURE: HeaderName = HeaderName::from_static("webhook-signature");

/// Standard base64 that accepts only what an encoder with padding produces.
const STRICT_STANDARD: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::RequireCanonical)
        .with_decode_allow_trailing_bits(false),
);

/// Why a stored secret cannot key a signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// It does not start with `whsec_`.
    #[error("signing secret does not start with whsec_")]
    MissingPrefix,
    /// The part after the prefix is not canonical padded standard base64.
    #[error("signing secret is not canonical base64")]
    NotBase64,
    /// It decodes to a key outside 24–64 bytes.
    #[error("signing key is {0} bytes, not 24 to 64")]
    BadLength(usize),
}

/// An HMAC-SHA256 key decoded from a `whsec_` secret. Its Debug form never shows it.
#[derive(Clone)]
pub struct SigningKey {
    mac: Hmac<Sha256>,
}

impl SigningKey {
    /// Decodes `secret` (see the module docs for what is accepted).
    pub fn from_secret(secret: &str) -> Result<Self, SecretError> {
        let encoded = secret.strip_prefix(SECRET_PREFIX).ok_or(SecretError::MissingPrefix)?;
        let key = STRICT_STANDARD.decode(encoded).map_err(|_| SecretError::NotBase64)?;
        if !(KEY_MIN_BYTES..=KEY_MAX_BYTES).contains(&key.len()) {
            return Err(SecretError::BadLength(key.len()));
        }
        // HMAC takes a key of any length, so this cannot fail for 24–64 bytes.
        let mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SecretError::BadLength(key.len()))?;
        Ok(SigningKey { mac })
    }

    /// `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`.
    fn signature(&self, msg_id: &MessageId, timestamp: i64, body: &[u8]) -> String {
        let mut mac = self.mac.clone();
        mac.update(msg_id.as_str().as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningKey(..)")
    }
}

/// The keys an attempt is signed with: the current one, and the previous one while it
/// is still valid.
#[derive(Debug, Clone)]
pub struct KeyRing {
    current: SigningKey,
    previous: Option<SigningKey>,
}

impl KeyRing {
    /// Signs with `current` only.
    pub fn single(current: SigningKey) -> Self {
        KeyRing { current, previous: None }
    }

    /// Signs with `current`, plus the rotated-out key while `now` is before its
    /// `valid_until` (the hook row's `previous_secret_valid_until`).
    pub fn new(current: SigningKey, previous: Option<(SigningKey, DateTime<Utc>)>, now: DateTime<Utc>) -> Self {
        let previous = previous.filter(|(_, valid_until)| now < *valid_until).map(|(key, _)| key);
        KeyRing { current, previous }
    }

    /// Whether the attempt carries two signatures.
    pub fn is_dual(&self) -> bool {
        self.previous.is_some()
    }
}

/// Until when a secret rotated out at `rotated_at` keeps signing.
pub fn previous_valid_until(rotated_at: DateTime<Utc>) -> DateTime<Utc> {
    rotated_at + PREVIOUS_SECRET_GRACE
}

/// A Standard Webhooks message id: `msg_` + a 26-character ULID. Mint one per
/// ring (announcement, hook) and reuse it on every retry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MessageId(String);

impl MessageId {
    /// A fresh id for an announcement built at `now`.
    pub fn new(now: DateTime<Utc>) -> Self {
        // A clock before 1970 is not a thing we will see; it maps to the epoch.
        let millis = u64::try_from(now.timestamp_millis()).unwrap_or(0);
        MessageId(format!("msg_{}", Ulid::from_parts(millis, rand::thread_rng().r#gen())))
    }

    /// The id as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MessageId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The `webhook-signature` value: one `v1,` entry per key, the current key first.
pub fn sign(msg_id: &MessageId, timestamp: i64, body: &[u8], keys: &KeyRing) -> String {
    let current = keys.current.signature(msg_id, timestamp, body);
    match &keys.previous {
        Some(previous) => format!("{current} {}", previous.signature(msg_id, timestamp, body)),
        None => current,
    }
}

/// Every header of one attempt: content type, user agent and the three Standard
/// Webhooks headers. `timestamp` is the attempt's Unix seconds.
pub fn headers(msg_id: &MessageId, timestamp: i64, body: &[u8], keys: &KeyRing) -> Vec<(HeaderName, String)> {
    vec![
        (CONTENT_TYPE, "application/json".to_owned()),
        (USER_AGENT_HEADER, USER_AGENT.to_owned()),
        (WEBHOOK_ID, msg_id.as_str().to_owned()),
        (WEBHOOK_TIMESTAMP, timestamp.to_string()),
        (WEBHOOK_SIGNATURE, sign(msg_id, timestamp, body, keys)),
    ]
}

#[cfg(test)]
mod tests;
