//! Standard Webhooks signatures as a receiver checks them: HMAC-SHA256 keyed with the
//! decoded `whsec_` secret over `{webhook-id}.{webhook-timestamp}.{body}`, standard
//! base64, one `v1,` entry per key in `webhook-signature`. Written here with hmac and
//! sha2 because the reference verifier (`standardwebhooks`) is a dev-dependency of the
//! library, out of a binary's reach; the tests below pin this verifier to the library's
//! signer. The ceiling's posts are signed with the same key type, so the receiver does
//! the same work for both.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::BenchResult;

/// How far a `webhook-timestamp` may be from the receiver's clock, seconds (the
/// reference verifier's window).
pub const TOLERANCE_SECONDS: i64 = 300;

/// An HMAC key decoded from a `whsec_` secret.
#[derive(Clone)]
pub struct Key {
    mac: Hmac<Sha256>,
}

impl Key {
    /// Decodes `whsec_<standard base64>`.
    pub fn from_secret(secret: &str) -> BenchResult<Key> {
        let encoded = secret.strip_prefix("whsec_").ok_or("a hook secret does not start with whsec_")?;
        let bytes = STANDARD.decode(encoded).map_err(|e| format!("a hook secret is not base64: {e}"))?;
        let mac = Hmac::<Sha256>::new_from_slice(&bytes).map_err(|e| format!("hmac key: {e}"))?;
        Ok(Key { mac })
    }

    /// A fresh random key and its `whsec_` secret (for the ceiling's posts).
    pub fn random() -> BenchResult<(Key, String)> {
        let secret = format!("whsec_{}", STANDARD.encode(rand::random::<[u8; 32]>()));
        Ok((Key::from_secret(&secret)?, secret))
    }

    fn mac_of(&self, id: &str, timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        mac
    }

    /// The `webhook-signature` value for one key: `v1,<base64>`.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        let mac = self.mac_of(id, &timestamp.to_string(), body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }

    /// Checks the three headers against `body` at Unix time `now`: the timestamp inside
    /// the tolerance, and one `v1,` entry of the signature made with this key (compared
    /// in constant time). Says why not, in a few words.
    pub fn verify(
        &self,
        id: Option<&str>,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        now: i64,
    ) -> Result<(), &'static str> {
        let (Some(id), Some(timestamp), Some(signature)) = (id, timestamp, signature) else {
            return Err("a webhook-* header is missing");
        };
        let at: i64 = timestamp.parse().map_err(|_| "webhook-timestamp is not a number")?;
        if (now - at).abs() > TOLERANCE_SECONDS {
            return Err("webhook-timestamp is outside the tolerance");
        }
        let mac = self.mac_of(id, timestamp, body);
        let matches = signature
            .split(' ')
            .filter_map(|entry| entry.strip_prefix("v1,"))
            .filter_map(|b64| STANDARD.decode(b64).ok())
            .any(|sig| mac.clone().verify_slice(&sig).is_ok());
        if matches { Ok(()) } else { Err("no v1 signature matches the hook's secret") }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, Utc};
    use switchboard::domain::tokens::mint_signing_secret;
    use switchboard::hooks::rules::signing::{self, KeyRing, MessageId, SigningKey};

    use super::*;

    /// The library's headers for `body`, as (id, timestamp, signature).
    fn signed_by_the_library(secrets: (&str, Option<&str>), body: &[u8], ts: i64) -> (String, String, String) {
        let current = SigningKey::from_secret(secrets.0).unwrap();
        let previous = secrets.1.map(|s| (SigningKey::from_secret(s).unwrap(), Utc::now() + TimeDelta::hours(1)));
        let keys = KeyRing::new(current, previous, Utc::now());
        let id = MessageId::new(Utc::now());
        let headers = signing::headers(&id, ts, body, &keys);
        let get = |n: &str| headers.iter().find(|(h, _)| h.as_str() == n).map(|(_, v)| v.clone()).unwrap();
        (get("webhook-id"), get("webhook-timestamp"), get("webhook-signature"))
    }

    #[test]
    fn a_body_the_library_signed_verifies_and_a_changed_one_does_not() {
        let secret = mint_signing_secret();
        let key = Key::from_secret(&secret).unwrap();
        let now = Utc::now().timestamp();
        let (id, ts, sig) = signed_by_the_library((&secret, None), b"{\"a\":1}", now);
        assert_eq!(key.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":1}", now), Ok(()));
        assert!(key.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":2}", now).is_err());
        assert!(key.verify(Some("msg_other"), Some(&ts), Some(&sig), b"{\"a\":1}", now).is_err());
        let other = Key::from_secret(&mint_signing_secret()).unwrap();
        assert!(other.verify(Some(&id), Some(&ts), Some(&sig), b"{\"a\":1}", now).is_err());
    }

    #[test]
    fn either_key_verifies_while_the_library_signs_with_two() {
        let (new, old) = (mint_signing_secret(), mint_signing_secret());
        let now = Utc::now().timestamp();
        let (id, ts, sig) = signed_by_the_library((&new, Some(&old)), b"x", now);
        assert!(sig.contains(' '), "two entries: {sig}");
        for secret in [&new, &old] {
            assert_eq!(Key::from_secret(secret).unwrap().verify(Some(&id), Some(&ts), Some(&sig), b"x", now), Ok(()));
        }
    }

    #[test]
    fn a_stale_timestamp_or_a_missing_header_is_refused() {
        let secret = mint_signing_secret();
        let key = Key::from_secret(&secret).unwrap();
        let now = Utc::now().timestamp();
        let (id, ts, sig) = signed_by_the_library((&secret, None), b"x", now - TOLERANCE_SECONDS - 1);
        assert!(key.verify(Some(&id), Some(&ts), Some(&sig), b"x", now).is_err());
        assert!(key.verify(Some(&id), None, Some(&sig), b"x", now).is_err());
    }

    #[test]
    fn what_the_bench_signs_is_what_the_library_signs() {
        let secret = mint_signing_secret();
        let now = Utc::now().timestamp();
        let (id, ts, sig) = signed_by_the_library((&secret, None), b"body", now);
        assert_eq!(Key::from_secret(&secret).unwrap().sign(&id, ts.parse().unwrap(), b"body"), sig);
        let (key, secret) = Key::random().unwrap();
        let again = Key::from_secret(&secret).unwrap();
        assert_eq!(
            again.verify(Some("msg_1"), Some(&now.to_string()), Some(&key.sign("msg_1", now, b"b")), b"b", now),
            Ok(())
        );
    }
}
