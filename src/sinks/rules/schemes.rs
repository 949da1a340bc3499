//! Stateless Apprise URLs (an Apprise sink in mode `urls`) and the instance's scheme
//! policy (SPEC section 10; `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES`).
//!
//! An Apprise URL can make the Apprise server do far more than send a phone message:
//! `json://`, `xml://` and `form://` (and their `s` forms) POST arbitrary bodies to
//! arbitrary hosts, which turns the Apprise server into an SSRF relay; every scheme of
//! a self-hosted service (`ntfy`, `gotify`, `matrix`, `mmost`, `rocket`, `mailto`, …)
//! makes it dial whatever host the URL names, past this instance's outbound guard; the
//! local-system schemes act on the Apprise host itself. So by default only the
//! schemes of [`DEFAULT_ALLOWED`] are accepted, services whose host Apprise fixes
//! itself, and an operator names any other scheme the instance accepts in
//! `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES`. The policy is checked when URLs are saved
//! and again before every send ([`crate::sinks::clients::post::scheme_refusal`]), so a
//! scheme the operator stops allowing is not sent to from stored URLs.
//!
//! **Splitting** is Apprise's own, so that what is checked is exactly what Apprise will
//! act on. Apprise (caronc/apprise at cf17bc9e, `apprise/utils/parse.py`: `parse_urls`
//! runs `URL_DETECTION_RE.findall(text.rstrip())` with `URL_DETECTION_RE =
//! ([a-z0-9]+?://.*?)(?=$|[\s,]+[a-z0-9]{1,32}?://)`, case-insensitive) starts a new URL
//! only where a run of commas and/or whitespace is followed by `<scheme>://`, so a comma
//! inside a URL's query (`mailto://…?to=a@y,b@z`) stays in it. Two details make a naive
//! comma-and-whitespace split unsafe, and [`split_urls`] reproduces both: Python's `\s`
//! also matches `\x1c`–`\x1f`, and `.` never matches a newline, so a URL cut short by a
//! line that is not a URL is dropped and Apprise starts looking again after it
//! (`ntfys://a⏎!json://evil` is, to Apprise, just `json://evil`). With `re.I`, `[a-z]` also
//! matches a few non-ASCII letters (U+212A, the Kelvin sign, folds to `k`), so non-ASCII text
//! is refused outright (percent-encode it). And anything Apprise would silently drop
//! (text between URLs that is not a separator) is refused as malformed rather than
//! stored.
//!
//! A refusal names the scheme (`forbidden_scheme`) or the URL's position (malformed),
//! never the URL: it embeds service tokens.

use std::collections::BTreeSet;

/// Longest scheme Apprise parses (`URL_DETAILS_RE`: `[a-z0-9]{1,32}`).
pub const SCHEME_MAX_CHARS: usize = 32;

/// The schemes accepted when `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES` is empty: services
/// whose destination host Apprise fixes itself, so a URL chooses an account, never a
/// host. From caronc/apprise `apprise/plugins/` at cf17bc9e (v1.13.0), each plugin's
/// `secure_protocol` and the URL it posts to (the URL's "host" part is a token there):
/// - `slack` (`slack.py`): `hooks.slack.com`, `hooks.slack-gov.com`, `slack.com/api`;
/// - `discord` (`discord.py`): `discord.com/api/webhooks`;
/// - `tgram` (`telegram.py`): `api.telegram.org`;
/// - `pover` (`pushover.py`): `api.pushover.net`;
/// - `pbul` (`pushbullet.py`): `api.pushbullet.com`;
/// - `opsgenie` (`opsgenie.py`): `api.opsgenie.com` or `api.eu.opsgenie.com` (a region
///   picks one of the two);
/// - `pagerduty` (`pagerduty.py`): `events.pagerduty.com` or `events.eu.pagerduty.com`;
/// - `psafers` (`pushsafer.py`): `www.pushsafer.com` over https (its plain-http twin
///   `psafer` is left out: it sends the private key in clear).
///
/// Not here on purpose: every scheme that takes a host (`ntfy`/`ntfys`, `gotify`,
/// `matrix`, `mmost`, `rocket`, `mailto`/`mailtos`, `signal`, `json`/`xml`/`form`, …),
/// the Apprise host's own desktop and system schemes, and `apprise`/`apprises` (another
/// Apprise server, a relay of a relay). Microsoft Teams is absent from that revision
/// (its URLs named a team subdomain). An operator lists any of them explicitly.
pub const DEFAULT_ALLOWED: &[&str] =
    &["discord", "opsgenie", "pagerduty", "pbul", "pover", "psafers", "slack", "tgram"];

/// Which Apprise schemes this instance accepts in stateless URLs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SchemePolicy {
    /// Exactly [`DEFAULT_ALLOWED`] (the setting is empty).
    #[default]
    DefaultAllowList,
    /// Exactly these (lower-case) schemes.
    Only(BTreeSet<String>),
}

/// Longest stateless URL list accepted, in bytes.
pub const URLS_MAX_BYTES: usize = 8_192;

/// Why stateless Apprise URLs were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemeError {
    /// A URL's scheme is not allowed on this instance (`forbidden_scheme`); the scheme
    /// is named, lower-case.
    #[error("the Apprise scheme {0:?} is not allowed on this instance")]
    ForbiddenScheme(String),
    /// Text before the URL at this 1-based position (or after the last, when it is one
    /// past them) is not a URL Apprise would use, or that URL's scheme is longer than
    /// 32 characters.
    #[error(
        "Apprise URL {0} is malformed: each URL starts with <scheme>:// and URLs are separated by commas or whitespace"
    )]
    Malformed(usize),
    /// The text is not ASCII.
    #[error("Apprise URLs must be ASCII; percent-encode other characters")]
    NotAscii,
    /// The text is longer than [`URLS_MAX_BYTES`].
    #[error("Apprise URLs are limited to {URLS_MAX_BYTES} bytes")]
    TooLong,
    /// There is no URL at all.
    #[error("no Apprise URL given")]
    Empty,
}

impl SchemeError {
    /// The API error code: `forbidden_scheme`, else `invalid_argument`.
    pub fn code(&self) -> &'static str {
        match self {
            SchemeError::ForbiddenScheme(_) => "forbidden_scheme",
            SchemeError::Malformed(_) | SchemeError::NotAscii | SchemeError::TooLong | SchemeError::Empty => {
                "invalid_argument"
            }
        }
    }
}

/// Distinct `forbidden_scheme: <scheme>` texts kept for [`SchemeError::last_error`];
/// past this, a refusal is recorded as plain `forbidden_scheme`.
const NAMED_REFUSALS_MAX: usize = 256;

impl SchemeError {
    /// What an outbox row refused at send time records as its `last_error`:
    /// `forbidden_scheme: <scheme>` (the scheme only, never the URL: it embeds service
    /// tokens), or `malformed_apprise_urls` for URLs that no longer split cleanly.
    ///
    /// Outbox records carry `&'static str` error classes, so each scheme's text is made
    /// once and kept; schemes are at most 32 ASCII letters or digits and at most
    /// [`NAMED_REFUSALS_MAX`] texts are kept, so this holds a few kilobytes at worst.
    pub fn last_error(&self) -> &'static str {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock, PoisonError};
        static NAMED: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
        let SchemeError::ForbiddenScheme(scheme) = self else { return "malformed_apprise_urls" };
        let mut named = NAMED.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(text) = named.get(scheme) {
            return text;
        }
        if named.len() >= NAMED_REFUSALS_MAX {
            return "forbidden_scheme";
        }
        let text: &'static str = Box::leak(format!("forbidden_scheme: {scheme}").into_boxed_str());
        named.insert(scheme.clone(), text);
        text
    }
}

impl SchemePolicy {
    /// The policy of the setting `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES`: a comma (and/or
    /// whitespace) separated list of schemes, accepted exactly, case-insensitively (a
    /// trailing `://` on an entry is ignored); empty means [`SchemePolicy::default`],
    /// [`DEFAULT_ALLOWED`].
    pub fn from_setting(setting: &str) -> SchemePolicy {
        let schemes: BTreeSet<String> = setting
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(|s| s.trim_end_matches("://").to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        if schemes.is_empty() { SchemePolicy::DefaultAllowList } else { SchemePolicy::Only(schemes) }
    }

    /// Whether `scheme` (any case) is accepted.
    pub fn allows(&self, scheme: &str) -> bool {
        let scheme = scheme.to_ascii_lowercase();
        match self {
            SchemePolicy::DefaultAllowList => DEFAULT_ALLOWED.contains(&scheme.as_str()),
            SchemePolicy::Only(allowed) => allowed.contains(&scheme),
        }
    }

    /// Checks the stateless secret `urls`: it must split cleanly into URLs
    /// ([`split_urls`]) whose schemes are all accepted. The first refusal is answered.
    pub fn check(&self, urls: &str) -> Result<(), SchemeError> {
        for (index, url) in split_urls(urls)?.into_iter().enumerate() {
            let scheme = scheme_of(url).ok_or(SchemeError::Malformed(index + 1))?;
            if !self.allows(&scheme) {
                return Err(SchemeError::ForbiddenScheme(scheme));
            }
        }
        Ok(())
    }
}

/// The URLs Apprise finds in a stateless secret (see the module documentation), each
/// with a scheme of 1–32 ASCII letters or digits. Refused: non-ASCII text, more than
/// [`URLS_MAX_BYTES`], no URL at all, and any text Apprise would skip (not a
/// separator, not inside a URL).
pub fn split_urls(urls: &str) -> Result<Vec<&str>, SchemeError> {
    if urls.len() > URLS_MAX_BYTES {
        return Err(SchemeError::TooLong);
    }
    if !urls.is_ascii() {
        return Err(SchemeError::NotAscii);
    }
    // Python's `str.rstrip()`: trailing whitespace (commas stay).
    let text = urls.trim_end_matches(|c: char| u8::try_from(c).is_ok_and(is_space));
    let found = find_all(text.as_bytes());
    let mut pieces = Vec::with_capacity(found.len());
    let mut gap_start = 0;
    for (index, &(start, end)) in found.iter().enumerate() {
        let url = &text[start..end];
        let gap_is_clean = text.as_bytes()[gap_start..start].iter().all(|&b| is_separator(b));
        if !gap_is_clean || scheme_of(url).is_none() {
            return Err(SchemeError::Malformed(index + 1));
        }
        pieces.push(url);
        gap_start = end;
    }
    if !text.as_bytes()[gap_start..].iter().all(|&b| is_separator(b)) {
        return Err(SchemeError::Malformed(found.len() + 1));
    }
    if pieces.is_empty() {
        return Err(SchemeError::Empty);
    }
    Ok(pieces)
}

/// The lower-case scheme `url` starts with, when it starts with 1–32 ASCII letters or
/// digits and `://`.
pub fn scheme_of(url: &str) -> Option<String> {
    let n = scheme_len(url.as_bytes(), 0)?;
    (n <= SCHEME_MAX_CHARS).then(|| url[..n].to_ascii_lowercase())
}

/// Python's `\s` on ASCII: space, `\t`, `\n`, `\v`, `\f`, `\r` and `\x1c`–`\x1f`.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0x1c..=0x1f)
}

/// `[\s,]`.
fn is_separator(b: u8) -> bool {
    b == b',' || is_space(b)
}

/// When `text[at..]` is one or more ASCII letters or digits and then `://`, how many
/// letters or digits.
fn scheme_len(text: &[u8], at: usize) -> Option<usize> {
    let rest = text.get(at..)?;
    let n = rest.iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    (n > 0 && rest[n..].starts_with(b"://")).then_some(n)
}

/// The lookahead `[\s,]+[a-z0-9]{1,32}?://` at `at`; `Err(end)` when it fails, `end`
/// being where the separator run starting at `at` ends (every position inside the run
/// fails the same way, since the run's end and what follows it are the same).
fn next_url_follows(text: &[u8], at: usize) -> Result<(), usize> {
    let end = at + text[at..].iter().take_while(|&&b| is_separator(b)).count();
    match scheme_len(text, end) {
        Some(n) if end > at && n <= SCHEME_MAX_CHARS => Ok(()),
        _ => Err(end),
    }
}

/// One attempt of `URL_DETECTION_RE` at `start`: `Ok(end)` of the match, or `Err(next)`
/// where the search may resume (just past the newline that stopped it: no attempt that
/// starts before that newline can get past it either, nor find a lookahead this attempt
/// did not).
fn match_at(text: &[u8], start: usize) -> Result<usize, usize> {
    let Some(n) = scheme_len(text, start) else {
        return Err(start + 1);
    };
    let mut at = start + n + 3;
    loop {
        // `(?=$|…)` is tried before `.*?` takes another character.
        if at == text.len() {
            return Ok(at);
        }
        if is_separator(text[at]) {
            match next_url_follows(text, at) {
                Ok(()) => return Ok(at),
                Err(run_end) => {
                    // `.` takes the run one character at a time, but never a newline.
                    if let Some(nl) = text[at..run_end].iter().position(|&b| b == b'\n') {
                        return Err(at + nl + 1);
                    }
                    at = run_end;
                }
            }
        } else {
            at += 1;
        }
    }
}

/// `URL_DETECTION_RE.findall(text)`, as (start, end) byte ranges.
fn find_all(text: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut at = 0;
    while at < text.len() {
        if !text[at].is_ascii_alphanumeric() {
            at += 1;
            continue;
        }
        // Every start inside one run of letters and digits sees the same `://` (or none)
        // and the same tail, so only the run's first position needs an attempt.
        let run = text[at..].iter().take_while(|b| b.is_ascii_alphanumeric()).count();
        if !text[at + run..].starts_with(b"://") {
            at += run;
            continue;
        }
        match match_at(text, at) {
            Ok(end) => {
                found.push((at, end));
                at = end;
            }
            Err(next) => at = next,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_json_url_is_refused_by_default_naming_the_scheme_and_echoing_no_url() {
        let secret = "tgram://123456:AAbotTOKEN/987, json://internal.lan/hook?x=SECRET";
        let err = SchemePolicy::default().check(secret).unwrap_err();
        assert_eq!(err, SchemeError::ForbiddenScheme("json".into()));
        assert_eq!(err.code(), "forbidden_scheme");
        let said = err.to_string();
        assert!(said.contains("\"json\""), "{said}");
        for leak in ["internal.lan", "SECRET", "AAbotTOKEN", "tgram"] {
            assert!(!said.contains(leak), "{leak} in {said}");
        }
    }

    /// Schemes with which the Apprise server dials a host the URL names (or acts on its
    /// own host): refused unless the operator lists them.
    const TAKE_A_HOST: &[&str] = &[
        "json", "jsons", "xml", "xmls", "form", "forms", "ntfy", "ntfys", "gotify", "gotifys", "matrix", "matrixs",
        "mmost", "mmosts", "rocket", "rockets", "mailto", "mailtos", "signal", "signals", "apprise", "apprises",
        "syslog", "rsyslog", "windows", "dbus", "psafer", "https", "http",
    ];

    #[test]
    fn by_default_only_services_whose_host_apprise_fixes_pass_in_any_case() {
        let p = SchemePolicy::default();
        for scheme in DEFAULT_ALLOWED {
            assert_eq!(p.check(&format!("{}://token/target", scheme.to_ascii_uppercase())), Ok(()), "{scheme}");
        }
        for scheme in TAKE_A_HOST {
            let got = p.check(&format!("tgram://bot/chat, {scheme}://internal.lan/x"));
            assert_eq!(got, Err(SchemeError::ForbiddenScheme((*scheme).to_owned())), "{scheme}");
        }
        assert_eq!(p.check("tgram://bot/chat slack://a/b/c,discord://a/b\npover://u@t"), Ok(()));
        assert_eq!(p.check("46elks://user:pass@/+15551234567"), Err(SchemeError::ForbiddenScheme("46elks".into())));
        assert_eq!(p.check("tgram://bot/chat?click=https://board.example/todos"), Ok(()), "a URL inside is no URL");
    }

    #[test]
    fn a_send_time_refusal_records_the_scheme_only() {
        let refused = SchemeError::ForbiddenScheme("ntfys".into());
        assert_eq!(refused.last_error(), "forbidden_scheme: ntfys");
        assert!(std::ptr::eq(refused.last_error(), refused.last_error()), "made once");
        assert!(refused.last_error().len() <= 64, "fits the outbox's last_error column");
        let longest = SchemeError::ForbiddenScheme("a".repeat(SCHEME_MAX_CHARS));
        assert!(longest.last_error().len() <= 64);
        assert_eq!(SchemeError::Malformed(2).last_error(), "malformed_apprise_urls");
        assert_eq!(SchemeError::Empty.last_error(), "malformed_apprise_urls");
    }

    #[test]
    fn text_apprise_would_skip_is_malformed_and_never_echoed() {
        let p = SchemePolicy::default();
        let err = p.check("hunter2-token-no-scheme").unwrap_err();
        assert_eq!(err, SchemeError::Malformed(1));
        assert!(!err.to_string().contains("hunter2"));
        assert_eq!(err.code(), "invalid_argument");
        assert_eq!(p.check("x!json://evil"), Err(SchemeError::Malformed(1)), "Apprise would skip `x!` and use json://");
        assert_eq!(p.check(&format!("{}://x", "a".repeat(33))), Err(SchemeError::Malformed(1)));
        assert_eq!(
            p.check("tgram://a, ntfys://b\nnot a url"),
            Err(SchemeError::Malformed(2)),
            "the second URL is cut short"
        );
        assert_eq!(p.check("tgram://a\nnot a url\nntfys://b"), Err(SchemeError::Malformed(1)));
    }

    #[test]
    fn loose_text_that_apprise_keeps_inside_a_url_is_fine() {
        let p = SchemePolicy::default();
        assert_eq!(split_urls("ntfys://ntfy.sh/a, hunter2@example"), Ok(vec!["ntfys://ntfy.sh/a, hunter2@example"]));
        assert_eq!(p.check("tgram://a, -json://b"), Ok(()));
        assert_eq!(p.check("tgram://a ://b"), Ok(()));
    }

    #[test]
    fn nothing_at_all_is_refused_as_empty_and_non_ascii_or_huge_text_is_refused() {
        let p = SchemePolicy::default();
        assert_eq!(p.check(" ,\n "), Err(SchemeError::Empty));
        assert_eq!(p.check(""), Err(SchemeError::Empty));
        assert_eq!(
            p.check("ntfys://h/t \u{212A}de://x"),
            Err(SchemeError::NotAscii),
            "the Kelvin sign folds to k in Apprise"
        );
        assert_eq!(p.check(&format!("ntfys://h/{}", "a".repeat(URLS_MAX_BYTES))), Err(SchemeError::TooLong));
        for e in [SchemeError::Empty, SchemeError::NotAscii, SchemeError::TooLong] {
            assert_eq!(e.code(), "invalid_argument");
        }
    }

    #[test]
    fn urls_split_where_apprise_splits_them() {
        let split = |s| split_urls(s).unwrap();
        assert_eq!(split(" a://1, b://2 c://3\n"), ["a://1", "b://2", "c://3"]);
        assert_eq!(split("a://1\n\nb://2"), ["a://1", "b://2"]);
        assert_eq!(split("c://3 ,"), ["c://3 ,"], "Python's rstrip keeps a trailing comma");
        assert_eq!(split("mailto://u@x?to=a@y,b@z, tgram://t"), ["mailto://u@x?to=a@y,b@z", "tgram://t"]);
        assert_eq!(split("ntfys://h/t;json://evil"), ["ntfys://h/t;json://evil"]);
        assert_eq!(split("ntfys://h/t?x=json://evil"), ["ntfys://h/t?x=json://evil"]);
        assert_eq!(split("ntfys://h/t, x json://evil"), ["ntfys://h/t, x", "json://evil"]);
        assert_eq!(split("ntfys://h/t\u{1c}json://evil"), ["ntfys://h/t", "json://evil"]);
    }

    #[test]
    fn a_json_url_apprise_would_find_is_caught_however_it_is_hidden() {
        let p = SchemePolicy::from_setting("ntfys");
        let forbidden = |s: &str| SchemeError::ForbiddenScheme(s.to_owned());
        assert_eq!(p.check("ntfys://h/t, x json://evil"), Err(forbidden("json")));
        assert_eq!(p.check("ntfys://h/t\tJSONS://evil"), Err(forbidden("jsons")));
        assert_eq!(p.check("ntfys://h/t\u{1f}xml://evil"), Err(forbidden("xml")), "Python's \\s includes \\x1c-\\x1f");
        // To Apprise this is just json://evil: the newline stops the first URL.
        assert!(p.check("ntfys://a\n!json://evil").is_err());
        assert!(p.check("ntfys://a\r\n;json://evil").is_err());
    }

    #[test]
    fn an_allowlist_setting_accepts_exactly_its_schemes() {
        let p = SchemePolicy::from_setting(" Tgram, ntfys://  discord ");
        assert_eq!(p, SchemePolicy::Only(["discord", "ntfys", "tgram"].into_iter().map(String::from).collect()));
        assert_eq!(p.check("tgram://a, NTFYS://b"), Ok(()));
        assert_eq!(p.check("tgram://a, mailto://b"), Err(SchemeError::ForbiddenScheme("mailto".into())));
        let with_json = SchemePolicy::from_setting("json");
        assert_eq!(with_json.check("json://a"), Ok(()), "an operator may allow a default refusal on purpose");
        assert_eq!(SchemePolicy::from_setting(" , "), SchemePolicy::default());
        assert_eq!(SchemePolicy::from_setting(""), SchemePolicy::default());
    }

    #[test]
    fn a_pathological_secret_is_split_in_linear_time() {
        let lines = "a://x\n".repeat(URLS_MAX_BYTES / 6 - 1) + "foo";
        assert_eq!(split_urls(&lines), Err(SchemeError::Malformed(URLS_MAX_BYTES / 6 - 1)));
        let one_line = format!("{}\nx", "a://".repeat(URLS_MAX_BYTES / 4 - 1));
        assert!(split_urls(&one_line).is_err());
    }

    proptest! {
        #[test]
        fn a_refused_scheme_anywhere_in_a_list_is_caught(
            before in proptest::collection::vec(
                (proptest::sample::select(DEFAULT_ALLOWED), "[a-z0-9./?=&;]{0,12}"), 0..4),
            seps in "[ ,\t\n\u{1c}]{1,3}",
            refused in proptest::sample::select(TAKE_A_HOST),
            after in proptest::collection::vec(
                (proptest::sample::select(DEFAULT_ALLOWED), "[a-z0-9./?=&;]{0,12}"), 0..4),
        ) {
            let url = |(scheme, rest): &(&str, String)| format!("{scheme}://{rest}");
            let mut all: Vec<String> = before.iter().map(url).collect();
            all.push(format!("{refused}://target"));
            all.extend(after.iter().map(url));
            let secret = all.join(&seps);
            prop_assert_eq!(split_urls(&secret).map(|v| v.len()), Ok(all.len()));
            let got = SchemePolicy::default().check(&secret);
            prop_assert_eq!(got, Err(SchemeError::ForbiddenScheme((*refused).to_owned())), "{:?}", secret);
        }

        #[test]
        fn splitting_never_panics_and_pieces_are_in_order(s in "[a-z:/ ,\n!\u{1c}]{0,64}") {
            if let Ok(pieces) = split_urls(&s) {
                let mut from = 0;
                for p in pieces {
                    let at = s[from..].find(p).map(|i| i + from);
                    prop_assert!(at.is_some());
                    from = at.unwrap_or(0) + p.len();
                }
            }
        }
    }
}
