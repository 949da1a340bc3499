//! What of a delivery's headers is kept in the event log: everything but credentials
//! and signatures, values cut to a sane length.

use serde_json::{Map, Value};

/// Header names (lower case) never stored.
const SECRET_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-hub-signature",
    "x-hub-signature-256",
    "x-gitea-signature",
    "x-gogs-signature",
    "stripe-signature",
    "webhook-signature",
    "x-api-key",
];

/// Longest header value kept.
const MAX_VALUE: usize = 1_024;
/// Most headers kept.
const MAX_HEADERS: usize = 100;

/// Words that mark a header as carrying a credential or a signature, whatever the
/// provider calls it (`x-slack-signature`, `x-shopify-hmac-sha256`, `x-api-key`, …).
const SECRET_WORDS: &[&str] = &["token", "secret", "signature", "hmac", "auth", "key", "session", "cookie", "password"];

/// The headers as a JSON object (lower-cased names; repeated names joined with ", "),
/// credentials replaced by `[redacted]`, and every occurrence of `scrub` (the ingest
/// token, which proxies copy into headers such as `x-forwarded-uri` or `referer`)
/// replaced in the values kept.
pub fn redacted_headers(headers: &[(String, String)], scrub: &[&str]) -> Value {
    let mut out = Map::new();
    for (name, value) in headers.iter().take(MAX_HEADERS) {
        let name = name.to_ascii_lowercase();
        let kept = if SECRET_HEADERS.contains(&name.as_str()) || SECRET_WORDS.iter().any(|w| name.contains(w)) {
            "[redacted]".to_owned()
        } else {
            let mut clean = crate::domain::text::strip_controls(value);
            for secret in scrub.iter().filter(|s| !s.is_empty()) {
                clean = clean.replace(secret, "[redacted]");
            }
            crate::domain::text::truncate_bytes(&clean, MAX_VALUE).0
        };
        match out.get_mut(&name) {
            Some(Value::String(existing)) if kept != "[redacted]" => {
                existing.push_str(", ");
                existing.push_str(&kept);
            }
            Some(_) => {}
            None => {
                out.insert(name, Value::String(kept));
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_signatures_never_reach_the_event_log() {
        let h = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        let kept = redacted_headers(
            &[
                h("Authorization", "Bearer abc"),
                h("X-Hub-Signature-256", "sha256=00"),
                h("X-GitHub-Event", "push"),
                h("X-Custom-Token", "t"),
                h("Accept", "a"),
                h("accept", "b"),
                h("X-Forwarded-Uri", "/webhooks/w/sbw_SECRET?x=1"),
                h("X-Shopify-Hmac-Sha256", "abc="),
            ],
            &["sbw_SECRET"],
        );
        let text = kept.to_string();
        assert!(!text.contains("abc") && !text.contains("sha256=00") && !text.contains("\"t\""), "{text}");
        assert_eq!(kept["x-github-event"], "push");
        assert_eq!(kept["accept"], "a, b");
        assert_eq!(kept["x-forwarded-uri"], "/webhooks/w/[redacted]?x=1");
        assert_eq!(kept["x-shopify-hmac-sha256"], "[redacted]");
        assert!(!text.contains("sbw_SECRET"));
    }
}
