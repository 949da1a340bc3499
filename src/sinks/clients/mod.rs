//! Notification sinks, the pure part (SPEC section 10, ADR-0034): what a message to a
//! human says, the exact request each kind of sink gets, what the sink's answer means
//! and when to try again, which stateless Apprise URLs an instance accepts, the per-sink
//! budget, and the keys that fold repeats together.
//!
//! Nothing here touches the database or the network: the outbox worker (elsewhere)
//! renders a [`content::Message`], builds an [`OutboundRequest`], sends it through the
//! outbound guard, and feeds the answer to [`outcome`].
//!
//! - [`content`]: titles, bodies, links and labels, from plain facts.
//! - [`gotify`] and [`apprise`]: the request for one message.
//! - [`outcome`]: the class of a sink's answer, and the retry schedule.
//! - [`schemes`]: parsing stateless Apprise URLs and the instance's scheme allowlist.
//! - [`budget`]: the per-sink token bucket and what to send, hold or coalesce.
//! - [`dedup`]: the keys under which a repeat folds into the pending row.

pub mod apprise;
pub mod gotify;
pub mod post;

/// One HTTP request to a sink: always `POST url` with `json` as the body
/// (`Content-Type: application/json`) and `headers` added.
///
/// Its `Debug` form shows the URL, the header **names** and the body's top-level keys
/// only: header values carry the Gotify token, and the body carries the message text
/// and (stateless Apprise) the service URLs, none of which may reach a log line.
#[derive(Clone, PartialEq)]
pub struct OutboundRequest {
    /// The full URL to `POST` to.
    pub url: String,
    /// Headers to add, as (name, value).
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub json: serde_json::Value,
}

impl std::fmt::Debug for OutboundRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<String> = self.headers.iter().map(|(name, _)| format!("{name}: <redacted>")).collect();
        let keys: Vec<&str> = match &self.json {
            serde_json::Value::Object(map) => map.keys().map(String::as_str).collect(),
            _ => Vec::new(),
        };
        f.debug_struct("OutboundRequest")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("json_keys", &keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_debug_never_prints_header_values_or_body_text() {
        let r = OutboundRequest {
            url: "https://gotify.example/message".into(),
            headers: vec![("X-Gotify-Key".into(), "AbCdEfSecretToken".into())],
            json: json!({"title": "Dead letter · builds", "message": "private text", "urls": "tgram://bot/chat"}),
        };
        let shown = format!("{r:?}");
        assert!(shown.contains("X-Gotify-Key: <redacted>"), "{shown}");
        assert!(shown.contains("https://gotify.example/message"));
        assert!(shown.contains("\"urls\""));
        for secret in ["AbCdEfSecretToken", "private text", "tgram://", "Dead letter"] {
            assert!(!shown.contains(secret), "{secret} leaked: {shown}");
        }
    }
}
