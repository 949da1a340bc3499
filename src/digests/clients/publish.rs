//! Publishing a digest to Cairn through the guarded client (the SSRF guard checks the
//! dial; redirects are never followed): the request of `digests::clients::cairn`, one attempt,
//! and the artifact or a failure class to record. Also a Cairn connection's test (its
//! whoami), through the same client.

use crate::digests::clients::cairn::{self, Artifact};
use crate::sinks::rules::outcome::{ATTEMPT_TIMEOUT, ErrorClass, classify_transport};

/// Most of an answer's body read.
const RESPONSE_READ_LIMIT: usize = 16 * 1024;

/// Posts `markdown` to the Cairn at `base_url` with `token`; the artifact, or why not
/// (a class fit for the digest's record: never the token, never Cairn's message).
pub async fn publish(
    client: &awc::Client,
    base_url: &str,
    token: &str,
    title: &str,
    markdown: &str,
    ttl_seconds: i32,
) -> Result<Artifact, String> {
    let req = cairn::request(base_url, token, title, markdown, ttl_seconds);
    let mut builder = client.post(&req.url).timeout(ATTEMPT_TIMEOUT);
    for (name, value) in &req.headers {
        builder = builder.insert_header((*name, value.as_str()));
    }
    match builder.send_body(req.body).await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            let body = match actix_rt::time::timeout(ATTEMPT_TIMEOUT, response.body().limit(RESPONSE_READ_LIMIT)).await
            {
                Ok(Ok(b)) => b,
                _ => Default::default(),
            };
            cairn::parse_created(status, &body)
        }
        Err(e) => Err(unreachable(crate::outbound::classify(&e))),
    }
}

/// Asks the Cairn at `base_url` who `token` is (`GET {base}/v1/whoami`): nothing when it
/// knows the token, else the class of what went wrong. One attempt; the answer's body
/// is drained, never kept.
pub async fn whoami(client: &awc::Client, base_url: &str, token: &str) -> Option<ErrorClass> {
    let req = cairn::whoami(base_url, token);
    let sent = client.get(&req.url).timeout(ATTEMPT_TIMEOUT).insert_header(("Authorization", req.authorization)).send();
    match sent.await {
        Ok(mut response) => {
            let status = response.status().as_u16();
            // The status decides; a slow or oversized answer body changes nothing.
            let _ = actix_rt::time::timeout(ATTEMPT_TIMEOUT, response.body().limit(RESPONSE_READ_LIMIT)).await;
            cairn::whoami_failure(status)
        }
        Err(e) => classify_transport(crate::outbound::classify(&e)).error_class(),
    }
}

/// A run's `cairn_error` when no answer came: the class, or for a refusal that depends on
/// where the host points the one text every surface gives it (SPEC 13, "Outbound
/// refusals"), which names the setting an operator may change.
fn unreachable(failure: crate::outbound::TransportFailure) -> String {
    match failure {
        crate::outbound::TransportFailure::ForbiddenTarget => {
            format!("cairn unreachable: {}", crate::outbound::refusal::FORBIDDEN_TARGET_MESSAGE)
        }
        other => format!("cairn unreachable ({})", other.as_str()),
    }
}
