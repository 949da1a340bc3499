//! Per-source verification of inbound webhooks, plus the two labels intake needs before
//! routing: the provider's delivery id (for dedup) and the event type.
//!
//! Everything here is pure: a request is a header list and the raw body, the clock is a
//! parameter, and nothing touches the network or the database. Every signature
//! comparison is constant time; header values are length-checked before any decoding so
//! a hostile sender cannot make us decode megabytes of hex.

mod gitea;
mod github;
mod standard;
mod stripe;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use subtle::{Choice, ConstantTimeEq};

use crate::domain::text_enum::text_enum;

text_enum!(
    /// Which provider scheme a webhook uses.
    SourceType {
        /// GitHub: `X-Hub-Signature-256: sha256=<hex>`.
        Github => "github",
        /// Gitea (and Forgejo): `X-Gitea-Signature: <hex>`.
        Gitea => "gitea",
        /// Stripe: `Stripe-Signature: t=…,v1=…`.
        Stripe => "stripe",
        /// Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature`.
        Standard => "standard",
        /// No signature: the unguessable ingest token is the only credential.
        Generic => "generic",
    }
);

impl SourceType {
    /// Whether deliveries of this type carry a signature (all but `generic`).
    pub fn is_signed(self) -> bool {
        !matches!(self, SourceType::Generic)
    }
}

/// How far (either side of `now`) a signed timestamp may be, for the schemes that sign one.
pub const TIMESTAMP_TOLERANCE_SECONDS: u64 = 300;

/// Longest header value any scheme will look at. Real signature headers are well under
/// this (Stripe with several `v1` entries is a few hundred bytes); anything longer is
/// refused before it is split or decoded.
pub const MAX_HEADER_BYTES: usize = 4096;

/// Longest delivery id or event type taken from a request; longer ones are ignored.
pub const MAX_LABEL_BYTES: usize = 256;

/// A request as intake sees it. Header names are matched case-insensitively and the
/// first occurrence of a name wins; values are the header text as received. Its Debug
/// form shows header names and the body length only, so logging it leaks no credential.
#[derive(Clone, Copy)]
pub struct Inbound<'a> {
    /// `(name, value)` pairs in arrival order.
    pub headers: &'a [(String, String)],
    /// The raw body, exactly as received (signatures cover these bytes).
    pub body: &'a [u8],
}

impl<'a> Inbound<'a> {
    /// The value of the first header called `name` (ASCII case-insensitive), if any.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Debug for Inbound<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbound")
            .field("header_names", &self.headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>())
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// The outcome of a successful check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The signature matched under the webhook's secret.
    Verified,
    /// Nothing was checked: a `generic` source, where the ingest token is the only
    /// credential (token trust).
    Unverified,
}

/// Why a delivery was refused. Every variant but [`VerifyError::NoSecret`] is the
/// sender's fault (401); `NoSecret` is ours (503). Messages never contain secret or
/// signature material.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A signed source has no usable secret: none stored, an empty one, or (for
    /// `standard`) a `whsec_` secret whose base64 does not decode.
    #[error("no usable signing secret is configured for this webhook")]
    NoSecret,
    /// The signature header is absent.
    #[error("the signature header is missing")]
    MissingSignature,
    /// The signature is well-formed but does not match.
    #[error("the signature does not match")]
    BadSignature,
    /// A signature or timestamp header cannot be parsed.
    #[error("malformed signature header: {0}")]
    Malformed(&'static str),
    /// The signature matches but its timestamp is more than
    /// [`TIMESTAMP_TOLERANCE_SECONDS`] away from now (a replay, or a skewed clock).
    #[error("the signed timestamp is outside the tolerance")]
    Expired,
}

/// Verifies `inbound` for `source` with `secret` (the raw secret bytes as stored) at
/// time `now`. A `generic` source ignores the secret and is always
/// [`Verdict::Unverified`]; a signed source needs a non-empty secret.
pub fn verify(
    source: SourceType,
    secret: Option<&[u8]>,
    inbound: &Inbound,
    now: DateTime<Utc>,
) -> Result<Verdict, VerifyError> {
    let check: SchemeCheck = match source {
        SourceType::Generic => return Ok(Verdict::Unverified),
        SourceType::Github => github::verify,
        SourceType::Gitea => gitea::verify,
        SourceType::Stripe => stripe::verify,
        SourceType::Standard => standard::verify,
    };
    // An empty key would let anyone compute a valid HMAC, so it counts as no key at all.
    let secret = secret.filter(|s| !s.is_empty()).ok_or(VerifyError::NoSecret)?;
    check(secret, inbound, now)?;
    Ok(Verdict::Verified)
}

/// The provider's delivery id, for dedup: GitHub `X-GitHub-Delivery`, Gitea
/// `X-Gitea-Delivery`, Stripe the JSON body's top-level `id`, Standard `webhook-id`,
/// generic `X-Delivery-Id` or else `Webhook-Id`. When a signed source sends none
/// (absent, empty, or over [`MAX_LABEL_BYTES`]) it is the lowercase hex SHA-256 of the
/// body, so a byte-identical replay still dedups. A generic delivery without one is not
/// deduplicated (`None`): identical bodies there are often distinct events (pings,
/// repeated alerts).
pub fn delivery_id(source: SourceType, inbound: &Inbound) -> Option<String> {
    let provided = match source {
        SourceType::Github => label(inbound.header("X-GitHub-Delivery")),
        SourceType::Gitea => label(inbound.header("X-Gitea-Delivery")),
        SourceType::Stripe => body_field(inbound.body, "id"),
        SourceType::Standard => label(inbound.header(standard::ID_HEADER)),
        SourceType::Generic => label(inbound.header("X-Delivery-Id")).or_else(|| label(inbound.header("Webhook-Id"))),
    };
    match (provided, source) {
        (Some(id), _) => Some(id),
        (None, SourceType::Generic) => None,
        (None, _) => Some(hex::encode(Sha256::digest(inbound.body))),
    }
}

/// The event type label: GitHub `X-GitHub-Event`, Gitea `X-Gitea-Event`, Stripe and
/// Standard the JSON body's top-level string `type`, generic the `X-Event` header.
/// `None` when absent, empty or over [`MAX_LABEL_BYTES`].
pub fn event_type(source: SourceType, inbound: &Inbound) -> Option<String> {
    match source {
        SourceType::Github => label(inbound.header("X-GitHub-Event")),
        SourceType::Gitea => label(inbound.header("X-Gitea-Event")),
        SourceType::Stripe | SourceType::Standard => body_field(inbound.body, "type"),
        SourceType::Generic => label(inbound.header("X-Event")),
    }
}

/// A trimmed, non-empty header value of bounded length.
fn label(value: Option<&str>) -> Option<String> {
    let value = value?.trim();
    (!value.is_empty() && value.len() <= MAX_LABEL_BYTES).then(|| value.to_owned())
}

/// A top-level string field of a JSON object body, as a label.
fn body_field(body: &[u8], field: &str) -> Option<String> {
    // Only the two fields intake wants are materialised; serde skips the rest of the
    // object without building it.
    #[derive(serde::Deserialize)]
    struct Top {
        id: Option<serde_json::Value>,
        #[serde(rename = "type")]
        kind: Option<serde_json::Value>,
    }
    let top: Top = serde_json::from_slice(body).ok()?;
    let value = if field == "id" { top.id } else { top.kind };
    label(value.as_ref()?.as_str())
}

/// One scheme's check: the secret as stored, the request, the clock.
type SchemeCheck = fn(&[u8], &Inbound, DateTime<Utc>) -> Result<(), VerifyError>;

type HmacSha256 = Hmac<Sha256>;

/// HMAC-SHA256 under `key` over the concatenation of `parts`.
fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC hashes long keys and pads short ones, so no key length is refused.
    #[expect(clippy::expect_used, reason = "HMAC accepts keys of any length: this never fails")]
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC accepts keys of any length");
    for part in parts {
        mac.update(part);
    }
    mac
}

/// Whether any candidate equals `tag`. Every candidate is compared in constant time and
/// none is skipped once a match is found, so timing says nothing about which one (or
/// how much of one) matched.
fn any_matches(tag: &[u8], candidates: &[[u8; 32]]) -> bool {
    let mut matched = Choice::from(0);
    for candidate in candidates {
        matched |= candidate.as_slice().ct_eq(tag);
    }
    matched.into()
}

/// The named header's value, refused when absent or absurdly long.
fn signature_header<'a>(inbound: &Inbound<'a>, name: &str) -> Result<&'a str, VerifyError> {
    let value = inbound.header(name).ok_or(VerifyError::MissingSignature)?;
    if value.len() > MAX_HEADER_BYTES {
        return Err(VerifyError::Malformed("signature header too long"));
    }
    Ok(value.trim())
}

/// Decodes a 64-digit hex SHA-256 tag.
fn decode_hex_tag(text: &str) -> Result<[u8; 32], VerifyError> {
    let mut tag = [0u8; 32];
    hex::decode_to_slice(text, &mut tag).map_err(|e| match e {
        hex::FromHexError::InvalidHexCharacter { .. } => VerifyError::Malformed("signature is not hex"),
        hex::FromHexError::OddLength => VerifyError::Malformed("signature hex has odd length"),
        hex::FromHexError::InvalidStringLength => VerifyError::Malformed("signature has the wrong length"),
    })?;
    Ok(tag)
}

/// Parses a signed Unix timestamp in canonical form: ASCII digits only, no sign, no
/// leading zero. Senders sign the text and we check the number, so the text must be the
/// only spelling of the number or the two could disagree.
fn parse_unix_seconds(text: &str) -> Result<i64, VerifyError> {
    const MALFORMED: VerifyError = VerifyError::Malformed("timestamp is not canonical Unix seconds");
    let canonical = !text.is_empty()
        && text.len() <= 19
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    if !canonical {
        return Err(MALFORMED);
    }
    text.parse().map_err(|_| MALFORMED)
}

/// Refuses a signed timestamp more than the tolerance before or after `now`; exactly
/// the tolerance is still accepted.
fn check_tolerance(signed_at: i64, now: DateTime<Utc>) -> Result<(), VerifyError> {
    if now.timestamp().abs_diff(signed_at) > TIMESTAMP_TOLERANCE_SECONDS {
        return Err(VerifyError::Expired);
    }
    Ok(())
}
