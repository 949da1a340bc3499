//! A message to an Apprise API server (SPEC sections 10 and 13,
//! <https://github.com/caronc/apprise-api>): in mode `key`, `POST {base}/notify/{key}`
//! (the service URLs live on the Apprise server and never reach Switchboard); in mode
//! `urls`, `POST {base}/notify/` with the stateless Apprise URLs (the connection's
//! secret, checked against the instance's scheme policy in [`super::schemes`]) in the
//! body. The body is `{title, body, type, format: "text", tag?}`.

use serde_json::{Map, Value, json};

use crate::sinks::clients::OutboundRequest;
use crate::sinks::rules::content::Message;
use crate::sinks::rules::url_path::{encode_path_segment, trim_base};
use crate::sinks::rules::vocabulary::{AppriseMode, Severity};

/// Longest configuration key the Apprise API routes (`^notify/(?P<key>[\w_-]{1,128})/?$`
/// in apprise-api's `apprise_api/api/urls.py`).
pub const CONFIG_KEY_MAX_CHARS: usize = 128;

/// Who an Apprise sink notifies: a configuration key, or the stateless URLs.
#[derive(Clone, PartialEq, Eq)]
pub enum AppriseTarget {
    /// Mode `key`: a configuration key on the Apprise server (not secret).
    Key(String),
    /// Mode `urls`: the Apprise URLs, comma- and/or space-separated (a secret: they
    /// embed service tokens).
    Urls(String),
}

impl AppriseTarget {
    /// The mode this target belongs to.
    pub fn mode(&self) -> AppriseMode {
        match self {
            AppriseTarget::Key(_) => AppriseMode::Key,
            AppriseTarget::Urls(_) => AppriseMode::Urls,
        }
    }
}

impl std::fmt::Debug for AppriseTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AppriseTarget::Key(key) => f.debug_tuple("Key").field(key).finish(),
            AppriseTarget::Urls(_) => f.write_str("Urls(<redacted>)"),
        }
    }
}

/// Whether `key` is a configuration key the Apprise API accepts: 1–128 ASCII letters,
/// digits, `_` or `-` (apprise-api's `[\w_-]{1,128}`, kept to ASCII).
pub fn valid_config_key(key: &str) -> bool {
    (1..=CONFIG_KEY_MAX_CHARS).contains(&key.len())
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The Apprise `type` of a severity: low `info`, normal `warning`, high `failure`.
pub fn notify_type(severity: Severity) -> &'static str {
    match severity {
        Severity::Low => "info",
        Severity::Normal => "warning",
        Severity::High => "failure",
    }
}

/// The request that delivers `m` through the Apprise API server at `base_url`. The
/// `body` field holds the body and then the Board link. `tag` (when set and not empty)
/// is sent in mode `key` only: stateless URLs carry no tags, so a tag there would match
/// nothing.
pub fn request(base_url: &str, target: &AppriseTarget, tag: Option<&str>, m: &Message) -> OutboundRequest {
    let base = trim_base(base_url);
    let mut body = Map::new();
    body.insert("title".into(), json!(m.title));
    body.insert("body".into(), json!(m.text()));
    body.insert("type".into(), json!(notify_type(m.severity)));
    body.insert("format".into(), json!("text"));
    let url = match target {
        AppriseTarget::Key(key) => {
            if let Some(tag) = tag.filter(|t| !t.is_empty()) {
                body.insert("tag".into(), json!(tag));
            }
            format!("{base}/notify/{}", encode_path_segment(key))
        }
        AppriseTarget::Urls(urls) => {
            body.insert("urls".into(), json!(urls));
            format!("{base}/notify/")
        }
    };
    OutboundRequest { url, headers: Vec::new(), json: Value::Object(body) }
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
    fn key_mode_posts_to_notify_key_with_title_body_type_format_and_tag() {
        let r = request(
            "http://apprise.lan:8000/",
            &AppriseTarget::Key("team-alerts".into()),
            Some("phone"),
            &message(Severity::High),
        );
        assert_eq!(r.url, "http://apprise.lan:8000/notify/team-alerts");
        assert!(r.headers.is_empty());
        assert_eq!(
            r.json,
            json!({
                "title": "Dead letter · builds",
                "body": "A todo on queue builds became a dead letter.\n\nhttps://board.example/todos/td_1",
                "type": "failure",
                "format": "text",
                "tag": "phone",
            })
        );
    }

    #[test]
    fn a_key_is_one_encoded_path_segment() {
        let r = request("https://a", &AppriseTarget::Key("../admin?x=1".into()), None, &message(Severity::Low));
        assert_eq!(r.url, "https://a/notify/%2E%2E%2Fadmin%3Fx%3D1");
        assert!(r.json.get("tag").is_none());
    }

    #[test]
    fn urls_mode_posts_to_bare_notify_with_the_urls_and_no_tag() {
        let target = AppriseTarget::Urls("tgram://bot/chat, ntfys://ntfy.sh/alerts".into());
        let r = request("https://apprise.example", &target, Some("phone"), &message(Severity::Normal));
        assert_eq!(r.url, "https://apprise.example/notify/");
        assert_eq!(r.json["urls"], json!("tgram://bot/chat, ntfys://ntfy.sh/alerts"));
        assert_eq!(r.json["type"], json!("warning"));
        assert_eq!(r.json["format"], json!("text"));
        assert!(r.json.get("tag").is_none());
        assert!(!format!("{r:?}").contains("tgram"));
        assert!(!format!("{target:?}").contains("tgram"));
        assert_eq!(target.mode(), AppriseMode::Urls);
    }

    #[test]
    fn an_empty_tag_is_not_sent() {
        let r = request("https://a", &AppriseTarget::Key("k".into()), Some(""), &message(Severity::Low));
        assert!(r.json.get("tag").is_none());
    }

    #[test]
    fn severities_map_to_info_warning_failure() {
        let got: Vec<_> = Severity::ALL.iter().map(|s| notify_type(*s)).collect();
        assert_eq!(got, ["info", "warning", "failure"]);
    }

    #[test]
    fn config_keys_are_what_apprise_api_routes() {
        assert!(valid_config_key("team-alerts_2"));
        assert!(valid_config_key(&"k".repeat(128)));
        for bad in ["", "a/b", "a.b", "ключ", &"k".repeat(129)] {
            assert!(!valid_config_key(bad), "{bad}");
        }
    }
}
