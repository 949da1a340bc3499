//! A message to a Gotify server (SPEC sections 10 and 13): `POST {base}/message` with
//! the application token in `X-Gotify-Key` (never in the query string) and the JSON
//! body `{title, message, priority}`. Plain text only: Gotify's markdown `extras` are
//! not used, so a sender's text cannot become markup.
//! Gotify's message API: <https://gotify.net/docs/pushmsg>.

use serde_json::json;

use crate::sinks::clients::OutboundRequest;
use crate::sinks::rules::content::Message;
use crate::sinks::rules::url_path::trim_base;
use crate::sinks::rules::vocabulary::Severity;

/// The header that carries the application token.
pub const TOKEN_HEADER: &str = "X-Gotify-Key";

/// The Gotify priority of a severity: low 2, normal 5, high 8.
pub fn priority(severity: Severity) -> u8 {
    match severity {
        Severity::Low => 2,
        Severity::Normal => 5,
        Severity::High => 8,
    }
}

/// The request that delivers `m` to the Gotify server at `base_url` with the
/// application `token`; the `message` field holds the body and then the Board link.
pub fn request(base_url: &str, token: &str, m: &Message) -> OutboundRequest {
    OutboundRequest {
        url: format!("{}/message", trim_base(base_url)),
        headers: vec![(TOKEN_HEADER.to_owned(), token.to_owned())],
        json: json!({
            "title": m.title,
            "message": m.text(),
            "priority": priority(m.severity),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(severity: Severity) -> Message {
        Message {
            title: "Dead letter · builds".into(),
            body: "A todo on queue builds became a dead letter.".into(),
            severity,
            link: "https://board.example/todos/td_1".into(),
        }
    }

    #[test]
    fn a_gotify_request_posts_to_message_with_the_key_header_and_the_three_fields() {
        let r = request("https://gotify.example/", "AbC123tok", &message(Severity::High));
        assert_eq!(r.url, "https://gotify.example/message");
        assert_eq!(r.headers, [("X-Gotify-Key".to_owned(), "AbC123tok".to_owned())]);
        assert_eq!(
            r.json,
            json!({
                "title": "Dead letter · builds",
                "message": "A todo on queue builds became a dead letter.\n\nhttps://board.example/todos/td_1",
                "priority": 8,
            })
        );
        assert!(!r.url.contains("AbC123tok"));
    }

    #[test]
    fn severities_map_to_gotify_priorities_two_five_eight() {
        let got: Vec<_> =
            Severity::ALL.iter().map(|s| request("https://g", "t", &message(*s)).json["priority"].clone()).collect();
        assert_eq!(got, [json!(2), json!(5), json!(8)]);
    }

    #[test]
    fn a_base_url_with_a_path_keeps_it() {
        assert_eq!(
            request("https://h.example/gotify", "t", &message(Severity::Low)).url,
            "https://h.example/gotify/message"
        );
    }
}
