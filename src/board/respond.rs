//! HTML responses with the Board's headers, redirects, and notices carried across a
//! redirect (post/redirect/get) in a short-lived cookie.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use maud::Markup;

use super::session::{CookiePolicy, Human, removal};

/// Name of the cookie that carries a notice to the next page.
pub const NOTICE_COOKIE: &str = "sb_notice";

/// Longest notice text kept (longer text is cut at a character boundary).
const NOTICE_MAX_BYTES: usize = 400;

/// Scripts are refused outright (the Board needs none); styles come from the Board's
/// own stylesheet, plus inline `style` attributes for server-computed geometry (chart
/// bars); no frame may embed the Board (clickjacking); forms post only to the Board.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// A page with the Board's headers: never cached (it shows live, private data), no
/// framing, no sniffing, no referrer to other sites.
pub fn html(status: StatusCode, body: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .body(body.into_string())
}

/// A signed-in page (200), forgetting the notice it has just shown.
pub fn page(human: &Human, body: Markup) -> HttpResponse {
    let mut resp = html(StatusCode::OK, body);
    if human.notice.is_some() {
        let _ = resp.add_cookie(&removal(NOTICE_COOKIE));
    }
    resp
}

/// 303 See Other to `location` (after a POST, or to sign-in).
pub fn see_other(location: &str) -> HttpResponse {
    let mut resp = HttpResponse::SeeOther().finish();
    if let Ok(v) = HeaderValue::from_str(location) {
        resp.headers_mut().insert(header::LOCATION, v);
    }
    resp
}

/// 303 to `location`, whose page then shows `notice` once.
pub fn see_other_with_notice(cookies: &CookiePolicy, location: &str, notice: &Notice) -> HttpResponse {
    let mut resp = see_other(location);
    let _ = resp.add_cookie(&cookies.cookie(NOTICE_COOKIE, notice.encode(), Some(chrono::Duration::minutes(5))));
    resp
}

/// How a notice reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Something was done.
    Done,
    /// Done, but look closer (e.g. fewer rows than expected).
    Warn,
}

/// A one-time message at the top of the next page ("Retried 3 dead letters").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// How it reads.
    pub tone: Tone,
    /// The text (plain; escaped when shown).
    pub text: String,
}

impl Notice {
    /// A notice that something was done.
    pub fn done(text: impl Into<String>) -> Self {
        Notice { tone: Tone::Done, text: text.into() }
    }

    /// A notice asking for a closer look.
    pub fn warn(text: impl Into<String>) -> Self {
        Notice { tone: Tone::Warn, text: text.into() }
    }

    fn encode(&self) -> String {
        let mut text = self.text.as_str();
        if text.len() > NOTICE_MAX_BYTES {
            let mut end = NOTICE_MAX_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text = &text[..end];
        }
        let tone = match self.tone {
            Tone::Done => 'd',
            Tone::Warn => 'w',
        };
        URL_SAFE_NO_PAD.encode(format!("{tone}{text}"))
    }

    /// The notice a cookie value carries (anything malformed is ignored: it is only a
    /// message, and a client can only ever show one to itself).
    pub fn decode(raw: &str) -> Option<Self> {
        if raw.len() > NOTICE_MAX_BYTES * 2 {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(raw).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut chars = text.chars();
        let tone = match chars.next()? {
            'd' => Tone::Done,
            'w' => Tone::Warn,
            _ => return None,
        };
        let text = chars.as_str();
        (!text.is_empty()).then(|| Notice { tone, text: text.to_owned() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_survive_the_cookie_and_garbage_does_not() {
        let n = Notice::warn("Retried 3 of 5 — two had left the list <b>");
        assert_eq!(Notice::decode(&n.encode()), Some(n));
        assert_eq!(Notice::decode("!!"), None);
        assert_eq!(Notice::decode(&URL_SAFE_NO_PAD.encode("xhello")), None);
        assert_eq!(Notice::decode(&URL_SAFE_NO_PAD.encode("d")), None);
    }

    #[test]
    fn long_notices_are_cut_at_a_character_boundary() {
        let n = Notice::done("é".repeat(NOTICE_MAX_BYTES));
        let back = Notice::decode(&n.encode()).unwrap();
        assert_eq!(back.text.len(), NOTICE_MAX_BYTES);
    }

    #[test]
    fn pages_are_never_cached_and_never_framed() {
        let resp = html(StatusCode::OK, maud::html! { p { "x" } });
        assert_eq!(resp.headers().get(header::CACHE_CONTROL).unwrap(), "no-store");
        assert_eq!(resp.headers().get(header::X_FRAME_OPTIONS).unwrap(), "DENY");
        let csp = resp.headers().get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    }
}
