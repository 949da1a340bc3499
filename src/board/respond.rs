//! HTML responses with the Board's headers, redirects, and notices carried across a
//! redirect (post/redirect/get) in a short-lived cookie.

use actix_web::HttpResponse;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use maud::Markup;

use super::cookies::{CookiePolicy, removal};
pub use super::notice::{NOTICE_COOKIE, Notice, Tone};
use super::session::Human;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_never_cached_and_never_framed() {
        let resp = html(StatusCode::OK, maud::html! { p { "x" } });
        assert_eq!(resp.headers().get(header::CACHE_CONTROL).unwrap(), "no-store");
        assert_eq!(resp.headers().get(header::X_FRAME_OPTIONS).unwrap(), "DENY");
        let csp = resp.headers().get(header::CONTENT_SECURITY_POLICY).unwrap().to_str().unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    }
}
