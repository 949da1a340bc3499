//! Publishing a digest to Cairn through the guarded client (the SSRF guard checks the
//! dial; redirects are never followed): the request of `notify::cairn`, one attempt,
//! and the artifact or a failure class to record.

use crate::notify::cairn::{self, Artifact};
use crate::notify::sinks::outcome::ATTEMPT_TIMEOUT;

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
        Err(e) => Err(format!("cairn unreachable ({})", crate::outbound::classify(&e).as_str())),
    }
}
