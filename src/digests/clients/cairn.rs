//! Publishing a digest to Cairn (SPEC section 11), the pure part: the exact request
//! (`POST {base}/v1/artifacts`, the raw Markdown as the body, `Content-Type:
//! text/markdown`, `Authorization: Bearer <token>`, `X-Cairn-Title`, `X-Cairn-Type:
//! markdown`, `X-Cairn-Tags: switchboard-digest`, `X-Cairn-Ttl-Seconds`) and what its
//! answer means; and the test of a connection (`GET {base}/v1/whoami` with the token),
//! which changes nothing on the Cairn. The calls themselves go through the outbound
//! guard elsewhere.

use serde::Deserialize;

use crate::sinks::rules::outcome::{ErrorClass, classify_http};

/// A digest artifact's time to live when none is set: 7 days.
pub const DEFAULT_TTL_SECONDS: i32 = 604_800;
/// The longest time to live Cairn keeps an artifact: 30 days.
pub const MAX_TTL_SECONDS: i32 = 2_592_000;
/// The shortest one Switchboard asks for.
pub const MIN_TTL_SECONDS: i32 = 60;

/// One publication request. Its Debug form hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct ArtifactRequest {
    /// `{base}/v1/artifacts`.
    pub url: String,
    /// Headers, as (name, value); one carries the token.
    pub headers: Vec<(&'static str, String)>,
    /// The Markdown.
    pub body: String,
}

impl std::fmt::Debug for ArtifactRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| *n).collect();
        f.debug_struct("ArtifactRequest").field("url", &self.url).field("headers", &names).finish_non_exhaustive()
    }
}

/// The request that publishes `markdown` titled `title` for `ttl_seconds` (clamped to
/// Cairn's bounds). The title is one line of visible ASCII (a header value carries
/// nothing else reliably): `·` becomes `-`, other characters outside ASCII are dropped.
pub fn request(base_url: &str, token: &str, title: &str, markdown: &str, ttl_seconds: i32) -> ArtifactRequest {
    let title: String = crate::domain::neutralise::neutralise(title)
        .chars()
        .map(|c| if c == '·' { '-' } else { c })
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
        .take(200)
        .collect();
    ArtifactRequest {
        url: format!("{}/v1/artifacts", base_url.trim_end_matches('/')),
        headers: vec![
            ("Content-Type", "text/markdown".to_owned()),
            ("Authorization", format!("Bearer {token}")),
            ("X-Cairn-Title", title),
            ("X-Cairn-Type", "markdown".to_owned()),
            ("X-Cairn-Tags", "switchboard-digest".to_owned()),
            ("X-Cairn-Ttl-Seconds", ttl_seconds.clamp(MIN_TTL_SECONDS, MAX_TTL_SECONDS).to_string()),
        ],
        body: markdown.to_owned(),
    }
}

/// A connection's test: `GET {base}/v1/whoami`, authenticated as a publication is. Its
/// Debug form hides the token.
#[derive(Clone, PartialEq, Eq)]
pub struct WhoamiRequest {
    /// `{base}/v1/whoami`.
    pub url: String,
    /// `Authorization: Bearer <token>`.
    pub authorization: String,
}

impl std::fmt::Debug for WhoamiRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhoamiRequest").field("url", &self.url).finish_non_exhaustive()
    }
}

/// The test request of the connection to the Cairn at `base_url` with `token`.
pub fn whoami(base_url: &str, token: &str) -> WhoamiRequest {
    WhoamiRequest {
        url: format!("{}/v1/whoami", base_url.trim_end_matches('/')),
        authorization: format!("Bearer {token}"),
    }
}

/// What a whoami's HTTP `status` says of the connection: nothing wrong (any 2xx: the
/// token is Cairn's), or the class of what is (`auth` for a refused token, `not_found`
/// for a base URL where no Cairn answers, …).
pub fn whoami_failure(status: u16) -> Option<ErrorClass> {
    classify_http(status).error_class()
}

/// What a `201` answers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Artifact {
    /// The artifact's id.
    pub id: String,
    /// Where a person reads it.
    pub url: String,
    /// `mcp://cairn/<id>`.
    #[serde(default)]
    pub mcp: Option<String>,
    /// When Cairn drops it.
    #[serde(default)]
    pub expires_at: Option<String>,
}

/// The failure recorded on the digest run: a class, never the answer's text (Cairn's
/// error message may echo what it was sent).
pub fn failure_for_status(status: u16, body: &[u8]) -> String {
    #[derive(Deserialize)]
    struct Envelope {
        error: Code,
    }
    #[derive(Deserialize)]
    struct Code {
        code: String,
    }
    let code = serde_json::from_slice::<Envelope>(body)
        .ok()
        .map(|e| e.error.code.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').take(40).collect::<String>())
        .filter(|c| !c.is_empty());
    match code {
        Some(code) => format!("cairn answered {status} ({code})"),
        None => format!("cairn answered {status}"),
    }
}

/// The artifact in a `201`'s body, or why it is not one.
pub fn parse_created(status: u16, body: &[u8]) -> Result<Artifact, String> {
    if status != 201 {
        return Err(failure_for_status(status, body));
    }
    match serde_json::from_slice::<Artifact>(body) {
        Ok(a) if a.url.starts_with("https://") || a.url.starts_with("http://") => Ok(a),
        _ => Err("cairn answered 201 without an artifact url".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_carries_the_specified_headers_and_the_raw_markdown() {
        let r = request("https://cairn.example/", "cairn_pat_x", "Digest\n· morning", "# Hi", DEFAULT_TTL_SECONDS);
        assert_eq!(r.url, "https://cairn.example/v1/artifacts");
        assert_eq!(r.body, "# Hi");
        let h: Vec<(&str, &str)> = r.headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        assert_eq!(
            h,
            [
                ("Content-Type", "text/markdown"),
                ("Authorization", "Bearer cairn_pat_x"),
                ("X-Cairn-Title", "Digest - morning"),
                ("X-Cairn-Type", "markdown"),
                ("X-Cairn-Tags", "switchboard-digest"),
                ("X-Cairn-Ttl-Seconds", "604800"),
            ]
        );
        assert!(!format!("{r:?}").contains("cairn_pat_x"), "the token never reaches a Debug form");
    }

    #[test]
    fn the_whoami_test_gets_the_base_urls_whoami_with_the_token_and_a_2xx_is_its_only_pass() {
        let r = whoami("https://cairn.example/", "cairn_pat_x");
        assert_eq!(
            (r.url.as_str(), r.authorization.as_str()),
            ("https://cairn.example/v1/whoami", "Bearer cairn_pat_x")
        );
        assert!(!format!("{r:?}").contains("cairn_pat_x"), "the token never reaches a Debug form");
        let classes: Vec<Option<&str>> =
            [200, 204, 301, 401, 403, 404, 500].map(|s| whoami_failure(s).map(ErrorClass::as_str)).to_vec();
        assert_eq!(
            classes,
            [None, None, Some("redirect"), Some("auth"), Some("forbidden"), Some("not_found"), Some("server_error")]
        );
    }

    #[test]
    fn the_ttl_is_clamped_to_cairns_thirty_days() {
        let ttl = |t| request("https://c", "t", "x", "", t).headers[5].1.clone();
        assert_eq!((ttl(9_999_999), ttl(1)), ("2592000".to_owned(), "60".to_owned()));
    }

    #[test]
    fn a_created_answer_yields_the_artifact_and_anything_else_a_class_without_the_message() {
        let ok = br#"{"id":"a1","url":"https://cairn.example/a/a1","mcp":"mcp://cairn/a1","expires_at":"2026-12-08T09:00:00Z"}"#;
        assert_eq!(parse_created(201, ok).unwrap().url, "https://cairn.example/a/a1");
        let err = br#"{"error":{"code":"quota_exceeded","message":"secret stuff"}}"#;
        assert_eq!(parse_created(503, err).unwrap_err(), "cairn answered 503 (quota_exceeded)");
        assert_eq!(parse_created(500, b"oops").unwrap_err(), "cairn answered 500");
        assert_eq!(parse_created(201, b"{}").unwrap_err(), "cairn answered 201 without an artifact url");
    }
}
