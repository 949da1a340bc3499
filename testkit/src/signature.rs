//! Standard Webhooks signatures as a receiver checks them: HMAC-SHA256 keyed with the
//! decoded `whsec_` secret over `{webhook-id}.{webhook-timestamp}.{body}`, standard
//! base64, one `v1,` entry per key in `webhook-signature`. Written with hmac and sha2
//! rather than through the reference verifier (`standardwebhooks`) so that a receiver
//! keys its MAC once and checks each post with a clone of it: the benchmark's receiver
//! checks tens of thousands a second. The tests below pin it to the reference verifier;
//! `tests/it/notify/signing.rs` pins it to the library's signer. The benchmark's
//! ceiling posts are signed with the same key type, so its receiver does the same work
//! for both.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

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
    pub fn from_secret(secret: &str) -> Result<Key, String> {
        let encoded = secret.strip_prefix("whsec_").ok_or("a hook secret does not start with whsec_")?;
        let bytes = STANDARD.decode(encoded).map_err(|e| format!("a hook secret is not base64: {e}"))?;
        let mac = Hmac::<Sha256>::new_from_slice(&bytes).map_err(|e| format!("hmac key: {e}"))?;
        Ok(Key { mac })
    }

    /// A fresh random key and its `whsec_` secret.
    pub fn random() -> Result<(Key, String), String> {
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
    use standardwebhooks::Webhook;

    use super::*;

    fn now() -> i64 {
        chrono::Utc::now().timestamp()
    }

    /// What the reference signer puts in `webhook-signature` for `secret`.
    fn reference_signature(secret: &str, id: &str, ts: i64, body: &[u8]) -> String {
        Webhook::new(secret).unwrap().sign(id, ts, body).unwrap()
    }

    #[test]
    fn a_body_the_reference_signed_verifies_and_a_changed_one_does_not() {
        let (key, secret) = Key::random().unwrap();
        let ts = now();
        let sig = reference_signature(&secret, "msg_1", ts, b"{\"a\":1}");
        let ts_text = ts.to_string();
        assert_eq!(key.verify(Some("msg_1"), Some(&ts_text), Some(&sig), b"{\"a\":1}", ts), Ok(()));
        assert!(key.verify(Some("msg_1"), Some(&ts_text), Some(&sig), b"{\"a\":2}", ts).is_err());
        assert!(key.verify(Some("msg_other"), Some(&ts_text), Some(&sig), b"{\"a\":1}", ts).is_err());
        let (other, _) = Key::random().unwrap();
        assert!(other.verify(Some("msg_1"), Some(&ts_text), Some(&sig), b"{\"a\":1}", ts).is_err());
    }

    #[test]
    fn either_key_of_a_two_entry_signature_verifies() {
        let ((new, new_secret), (old, old_secret)) = (Key::random().unwrap(), Key::random().unwrap());
        let ts = now();
        let both = format!(
            "{} {}",
            reference_signature(&new_secret, "msg_1", ts, b"x"),
            reference_signature(&old_secret, "msg_1", ts, b"x")
        );
        for key in [&new, &old] {
            assert_eq!(key.verify(Some("msg_1"), Some(&ts.to_string()), Some(&both), b"x", ts), Ok(()));
        }
    }

    #[test]
    fn a_stale_timestamp_or_a_missing_header_is_refused() {
        let (key, secret) = Key::random().unwrap();
        let stale = now() - TOLERANCE_SECONDS - 1;
        let sig = reference_signature(&secret, "msg_1", stale, b"x");
        assert!(key.verify(Some("msg_1"), Some(&stale.to_string()), Some(&sig), b"x", now()).is_err());
        assert!(key.verify(Some("msg_1"), None, Some(&sig), b"x", now()).is_err());
    }

    #[test]
    fn what_this_signs_is_what_the_reference_signs_and_verifies() {
        let (key, secret) = Key::random().unwrap();
        let ts = now();
        let sig = key.sign("msg_1", ts, b"body");
        assert_eq!(sig, reference_signature(&secret, "msg_1", ts, b"body"));
        let mut headers = http::HeaderMap::new();
        headers.insert("webhook-id", http::HeaderValue::from_static("msg_1"));
        headers.insert("webhook-timestamp", http::HeaderValue::from_str(&ts.to_string()).unwrap());
        headers.insert("webhook-signature", http::HeaderValue::from_str(&sig).unwrap());
        Webhook::new(&secret).unwrap().verify(b"body", &headers).unwrap();
    }
}
