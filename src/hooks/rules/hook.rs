//! Hooks, the pure part: what a hook may be saved with (URL syntax, queue filter),
//! how its URL is shown, and the health constants its rings obey.
//! The network check of a URL (DNS, SSRF) is not here: it runs in the outbound guard.

use crate::domain::text::{QUARANTINE_QUEUE, valid_queue_name};
use crate::domain::text_enum::text_enum;

/// Longest hook URL, in bytes.
pub const HOOK_URL_MAX_BYTES: usize = 2_048;
/// Most queue names in one hook's filter.
pub const HOOK_QUEUES_MAX: usize = 32;
/// The consecutive failure that disables a hook (`consecutive_failures`).
pub const FAILURES_BEFORE_DISABLE: i32 = 10;
/// How long receivers may still verify with the secret a rotation replaced.
pub const PREVIOUS_SECRET_GRACE_HOURS: i32 = 24;

text_enum!(
    /// Why a hook is not delivering.
    HookDisabledReason {
        /// An operator switched it off; only an operator switches it back on.
        Operator => "operator",
        /// Its deliveries failed 10 times in a row; a rotation or an operator re-enables it.
        ConsecutiveFailures => "consecutive_failures",
    }
);

/// Why a hook's URL or queue filter was refused (the message names the field).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookInputError {
    /// The URL is not acceptable.
    #[error("url: {0}")]
    Url(&'static str),
    /// The queue filter is not acceptable.
    #[error("queues: {0}")]
    Queues(String),
}

/// A hook's saved form, checked: a syntactically acceptable URL and a normalised queue
/// filter. The store only accepts this, so nothing unchecked is saved.
#[derive(Clone, PartialEq, Eq)]
pub struct HookSpec {
    url: String,
    queues: Vec<String>,
}

impl std::fmt::Debug for HookSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookSpec").field("url", &redact_url(&self.url)).field("queues", &self.queues).finish()
    }
}

impl HookSpec {
    /// Checks `url` ([`validate_hook_url`]) and normalises it and `queues`
    /// ([`normalise_queues`]).
    pub fn parse(url: &str, queues: &[String], allow_http: bool) -> Result<HookSpec, HookInputError> {
        let url = checked_hook_url(url, allow_http)?;
        Ok(HookSpec { url: url.into(), queues: normalise_queues(queues)? })
    }

    /// The URL in its normalised serialisation (lower-case host, a path of at least `/`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The queue filter (empty: every queue).
    pub fn queues(&self) -> &[String] {
        &self.queues
    }
}

/// The syntactic check of a hook URL, at save time: `https` (or `http` when
/// `allow_http`), at most 2 048 bytes, a host, no userinfo, and no whitespace, control
/// characters or backslashes (the URL parser would silently drop or reinterpret them,
/// so what is saved could differ from what was checked).
pub fn validate_hook_url(raw: &str, allow_http: bool) -> Result<(), HookInputError> {
    checked_hook_url(raw, allow_http).map(|_| ())
}

/// [`validate_hook_url`], answering the parsed URL (whose serialisation is what is
/// saved and dialled, so every later reader parses the same thing).
pub fn checked_hook_url(raw: &str, allow_http: bool) -> Result<url::Url, HookInputError> {
    if raw.is_empty() {
        return Err(HookInputError::Url("is required"));
    }
    if raw.len() > HOOK_URL_MAX_BYTES {
        return Err(HookInputError::Url("must be at most 2048 bytes"));
    }
    if raw.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\') {
        return Err(HookInputError::Url("may not contain whitespace, control characters or backslashes"));
    }
    let url = url::Url::parse(raw).map_err(|_| HookInputError::Url("is not an absolute URL"))?;
    match url.scheme() {
        "https" => {}
        "http" if allow_http => {}
        "http" => return Err(HookInputError::Url("must use https (http needs SWITCHBOARD_PUSH_ALLOW_HTTP)")),
        _ => return Err(HookInputError::Url("must use https")),
    }
    // `https:///host` parses (leniently) as `https://host/`; ask for the plain form.
    let authority = raw.split_once("://").map(|(_, rest)| rest);
    if authority.is_none_or(|rest| rest.is_empty() || rest.starts_with('/')) {
        return Err(HookInputError::Url("must name a host after the scheme's //"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(HookInputError::Url("may not carry a user name or password"));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(HookInputError::Url("must name a host"));
    }
    if url.port() == Some(0) {
        return Err(HookInputError::Url("port 0 is not a destination"));
    }
    // Normalising may lengthen it (percent-encoding); the column holds 2 048 bytes.
    if url.as_str().len() > HOOK_URL_MAX_BYTES {
        return Err(HookInputError::Url("must be at most 2048 bytes once normalised"));
    }
    Ok(url)
}

/// A hook's queue filter: each a valid queue name (never the reserved `quarantine`,
/// which fires no hook), duplicates collapsed in first-seen order, at most 32.
pub fn normalise_queues(raw: &[String]) -> Result<Vec<String>, HookInputError> {
    let mut out: Vec<String> = Vec::with_capacity(raw.len().min(HOOK_QUEUES_MAX));
    for q in raw {
        if !valid_queue_name(q) || q == QUARANTINE_QUEUE {
            let shown: String = q.chars().filter(|c| !c.is_control()).take(64).collect();
            return Err(HookInputError::Queues(format!("{shown:?} is not a drainable queue name")));
        }
        if !out.contains(q) {
            out.push(q.clone());
        }
    }
    if out.len() > HOOK_QUEUES_MAX {
        return Err(HookInputError::Queues(format!("at most {HOOK_QUEUES_MAX} queues")));
    }
    Ok(out)
}

/// A hook URL as shown in answers and logs: its query (which often carries a token)
/// replaced by `redacted`, its fragment dropped.
pub fn redact_url(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(mut url) => {
            let had_query = url.query().is_some();
            url.set_query(None);
            url.set_fragment(None);
            let mut shown = url.to_string();
            if had_query {
                shown.push_str("?redacted");
            }
            shown
        }
        // Never saved (validated first); show nothing of it rather than a secret.
        Err(_) => "[unparseable url]".to_owned(),
    }
}

/// Only the host of a hook's URL (and its port, when not the default): what may travel
/// in a notice cookie. Some receivers keep their token in the path.
pub fn url_host(raw: &str) -> String {
    match url::Url::parse(raw) {
        Ok(url) => match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => "[no host]".to_owned(),
        },
        Err(_) => "[unparseable url]".to_owned(),
    }
}

text_enum!(
    /// The hook's `last_error` after a failed delivery.
    LastError {
        /// A 3xx answer.
        Redirect => "redirect",
        /// A 4xx answer.
        ClientError => "client_error",
        /// A 5xx answer.
        ServerError => "server_error",
        /// The attempt timed out.
        Timeout => "timeout",
        /// A network failure.
        Network => "network",
        /// A TLS failure.
        Tls => "tls",
        /// The outbound guard refused the URL's own text (scheme, own host, ingest route).
        RejectedSsrf => "rejected_ssrf",
        /// The outbound guard refused where the target's name points (an address class,
        /// our own address, a name that does not resolve): one class for every cause.
        ForbiddenTarget => "forbidden_target",
    }
);

#[cfg(test)]
mod tests {

    #[test]
    fn a_notice_names_only_the_host_never_a_path_token() {
        assert_eq!(url_host("https://hooks.example.com/services/T000/B000/XXXXSECRET?x=1"), "hooks.example.com");
        assert_eq!(url_host("http://127.0.0.1:8081/h"), "127.0.0.1:8081");
        assert_eq!(url_host("not a url"), "[unparseable url]");
    }
    use super::*;

    fn queues(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn an_https_url_with_a_host_is_accepted() {
        for ok in [
            "https://example.com",
            "https://example.com/hooks/1?token=abc",
            "https://[2001:db8::1]:8443/x",
            "https://93.184.216.34/x#frag",
        ] {
            assert_eq!(validate_hook_url(ok, false), Ok(()), "{ok}");
        }
    }

    #[test]
    fn plain_http_needs_the_setting() {
        assert!(validate_hook_url("http://example.com/x", false).is_err());
        assert_eq!(validate_hook_url("http://example.com/x", true), Ok(()));
    }

    #[test]
    fn other_schemes_userinfo_relative_and_oversized_urls_are_refused() {
        let long = format!("https://example.com/{}", "a".repeat(HOOK_URL_MAX_BYTES));
        for bad in [
            "",
            "example.com/x",
            "/relative",
            "ftp://example.com/x",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://user@example.com/x",
            "https://user:pw@example.com/x",
            "https://:pw@example.com/x",
            "https://example.com:0/x",
            "https://exa mple.com/x",
            " https://example.com/x",
            "https://example.com/x\n",
            "https://example.com/\tx",
            "https://",
            "https:///example.com/x",
            "https:/example.com/x",
            "https:example.com/x",
            "https://example.com\\@evil.example/x",
            long.as_str(),
        ] {
            assert!(validate_hook_url(bad, true).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_url_of_exactly_the_limit_is_accepted() {
        let prefix = "https://example.com/";
        let exact = format!("{prefix}{}", "a".repeat(HOOK_URL_MAX_BYTES - prefix.len()));
        assert_eq!(exact.len(), HOOK_URL_MAX_BYTES);
        assert_eq!(validate_hook_url(&exact, false), Ok(()));
    }

    #[test]
    fn duplicate_queues_collapse_in_first_seen_order() {
        assert_eq!(normalise_queues(&queues(&["b", "a", "b", "a"])).unwrap(), queues(&["b", "a"]));
        assert_eq!(normalise_queues(&[]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_or_reserved_queue_names_and_too_many_queues_are_refused() {
        for bad in [&["Upper"][..], &[""], &["-lead"], &["quarantine"], &["ok", "has space"]] {
            assert!(normalise_queues(&queues(bad)).is_err(), "{bad:?}");
        }
        let many: Vec<String> = (0..=HOOK_QUEUES_MAX).map(|i| format!("q{i}")).collect();
        assert!(normalise_queues(&many).is_err());
        assert_eq!(normalise_queues(&many[..HOOK_QUEUES_MAX]).unwrap().len(), HOOK_QUEUES_MAX);
        // Duplicates do not count against the limit.
        let repeated: Vec<String> = std::iter::repeat_n("q".to_owned(), 100).collect();
        assert_eq!(normalise_queues(&repeated).unwrap(), queues(&["q"]));
    }

    #[test]
    fn redaction_hides_the_query_and_fragment_but_keeps_where_it_goes() {
        assert_eq!(redact_url("https://example.com/h?token=s3cret&x=1"), "https://example.com/h?redacted");
        assert_eq!(redact_url("https://example.com/h#s3cret"), "https://example.com/h");
        assert_eq!(redact_url("https://example.com/h"), "https://example.com/h");
        assert_eq!(redact_url("not a url ?token=s3cret"), "[unparseable url]");
    }

    #[test]
    fn a_spec_keeps_the_normalised_url_and_its_debug_form_hides_the_query() {
        let spec = HookSpec::parse("https://EXAMPLE.com/h?token=s3cret", &queues(&["a", "a"]), false).unwrap();
        assert_eq!(spec.url(), "https://example.com/h?token=s3cret");
        assert_eq!(HookSpec::parse("https://example.com", &[], false).unwrap().url(), "https://example.com/");
        assert_eq!(spec.queues(), &queues(&["a"])[..]);
        assert!(!format!("{spec:?}").contains("s3cret"));
    }
}
