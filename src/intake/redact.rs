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

/// The headers as a JSON object (lower-cased names; repeated names joined with ", "),
/// credentials replaced by `[redacted]`.
pub fn redacted_headers(headers: &[(String, String)]) -> Value {
    let mut out = Map::new();
    for (name, value) in headers.iter().take(MAX_HEADERS) {
        let name = name.to_ascii_lowercase();
        let kept = if SECRET_HEADERS.contains(&name.as_str()) || name.contains("token") || name.contains("secret") {
            "[redacted]".to_owned()
        } else {
            crate::domain::text::truncate_bytes(&crate::domain::text::strip_controls(value), MAX_VALUE).0
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
        let kept = redacted_headers(&[
            h("Authorization", "Bearer abc"),
            h("X-Hub-Signature-256", "sha256=00"),
            h("X-GitHub-Event", "push"),
            h("X-Custom-Token", "t"),
            h("Accept", "a"),
            h("accept", "b"),
        ]);
        let text = kept.to_string();
        assert!(!text.contains("abc") && !text.contains("sha256=00") && !text.contains("\"t\""), "{text}");
        assert_eq!(kept["x-github-event"], "push");
        assert_eq!(kept["accept"], "a, b");
    }
}
