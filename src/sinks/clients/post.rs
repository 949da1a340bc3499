//! Posting one message to one sink: the request its kind takes (`sinks::clients`),
//! sent through the guarded client (the SSRF guard checks every dial; redirects are
//! never followed), and the class of the answer. Used by a sink's test send and by the
//! outbox worker alike, so what a test proves is what a notification does.

use crate::outbound::classify;
use crate::sinks::clients::apprise::{self, AppriseTarget};
use crate::sinks::clients::{OutboundRequest, gotify};
use crate::sinks::rules::content::Message;
use crate::sinks::rules::outcome::{ATTEMPT_TIMEOUT, ErrorClass, SinkAnswer, classify_status, classify_transport};
use crate::sinks::rules::schemes::{SchemeError, SchemePolicy};
use crate::sinks::rules::vocabulary::{AppriseMode, SinkKind};

/// Most of an answer's body read (the status decides; the rest is drained).
const RESPONSE_READ_LIMIT: usize = 16 * 1024;

/// Where and how a message goes. Its Debug form hides the secret.
pub struct SinkTarget<'a> {
    /// Gotify or Apprise.
    pub kind: SinkKind,
    /// The service's base URL.
    pub base_url: &'a str,
    /// The connection's secret: a Gotify token, an Apprise key or Apprise URLs.
    pub secret: &'a str,
    /// Apprise only.
    pub apprise_mode: Option<AppriseMode>,
}

impl std::fmt::Debug for SinkTarget<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkTarget").field("kind", &self.kind).field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// The request `message` makes to `target`.
pub fn request(target: &SinkTarget<'_>, message: &Message) -> OutboundRequest {
    match target.kind {
        SinkKind::Gotify => gotify::request(target.base_url, target.secret, message),
        SinkKind::Apprise => {
            let to = match target.apprise_mode {
                Some(AppriseMode::Urls) => AppriseTarget::Urls(target.secret.to_owned()),
                _ => AppriseTarget::Key(target.secret.to_owned()),
            };
            apprise::request(target.base_url, &to, None, message)
        }
    }
}

/// Why the instance's current scheme policy refuses what `target` would post: the
/// stateless URLs of an Apprise sink in mode `urls` (a key names URLs that live on the
/// Apprise server; Gotify has none). Checked before every post, the test send's and the
/// outbox's alike, so a scheme the operator stopped allowing is not sent to from URLs
/// stored while it was allowed.
pub fn scheme_refusal(target: &SinkTarget<'_>, policy: &SchemePolicy) -> Option<SchemeError> {
    match (target.kind, target.apprise_mode) {
        (SinkKind::Apprise, Some(AppriseMode::Urls)) => policy.check(target.secret).err(),
        _ => None,
    }
}

/// Posts `message` to `target` with `client` (from [`crate::outbound::Guard::client`])
/// and classifies the answer.
/// The whole attempt (resolving, connecting, the answer) ends within [`ATTEMPT_TIMEOUT`],
/// which the outbox counts on to start attempts only while its claim has room for one.
pub async fn post(client: &awc::Client, target: &SinkTarget<'_>, message: &Message) -> SinkAnswer {
    actix_rt::time::timeout(ATTEMPT_TIMEOUT, attempt(client, target, message))
        .await
        .unwrap_or(SinkAnswer::Retryable(ErrorClass::Timeout))
}

async fn attempt(client: &awc::Client, target: &SinkTarget<'_>, message: &Message) -> SinkAnswer {
    let req = request(target, message);
    let mut builder = client.post(&req.url);
    for (name, value) in &req.headers {
        builder = builder.insert_header((name.as_str(), value.as_str()));
    }
    match builder.send_json(&req.json).await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            // The status decides; a slow or oversized answer body changes nothing.
            let _ = actix_rt::time::timeout(ATTEMPT_TIMEOUT, response.body().limit(RESPONSE_READ_LIMIT)).await;
            classify_status(target.kind, status)
        }
        Err(e) => classify_transport(classify(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kind: SinkKind, mode: Option<AppriseMode>, secret: &str) -> SinkTarget<'_> {
        SinkTarget { kind, base_url: "https://apprise.example", secret, apprise_mode: mode }
    }

    #[test]
    fn only_stateless_apprise_urls_meet_the_scheme_policy_and_a_refusal_names_the_scheme() {
        let strict = SchemePolicy::default();
        let urls = "ntfys://ntfy.internal/alerts?token=SECRET";
        let refused = scheme_refusal(&target(SinkKind::Apprise, Some(AppriseMode::Urls), urls), &strict);
        assert_eq!(refused, Some(SchemeError::ForbiddenScheme("ntfys".into())));
        assert_eq!(refused.map(|e| e.last_error()), Some("forbidden_scheme: ntfys"));
        let listed = SchemePolicy::from_setting("ntfys");
        assert_eq!(scheme_refusal(&target(SinkKind::Apprise, Some(AppriseMode::Urls), urls), &listed), None);
        // A key, a gotify token: never read as URLs.
        assert_eq!(scheme_refusal(&target(SinkKind::Apprise, Some(AppriseMode::Key), "json://x"), &strict), None);
        assert_eq!(scheme_refusal(&target(SinkKind::Apprise, None, "json://x"), &strict), None);
        assert_eq!(scheme_refusal(&target(SinkKind::Gotify, None, "json://x"), &strict), None);
    }
}
