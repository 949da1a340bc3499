//! The Board's cookies: the session cookie's name and the rule for every cookie's
//! attributes.
//!
//! Cookie attributes, and why:
//! - `HttpOnly`: no script can read the session.
//! - `SameSite=Lax`, not `Strict`: with `Strict` a link into the Board from a chat
//!   message, an alert e-mail or a hook's receiver arrives without the cookie and
//!   shows the sign-in page to someone who is signed in (and some browsers drop a
//!   `Strict` cookie set on the response to a cross-site-initiated POST redirect).
//!   `Lax` still withholds the cookie from cross-site POSTs; the CSRF token is the real
//!   defence.
//! - `Secure` unless the base URL is plain `http` on a loopback host (`127.0.0.0/8`,
//!   `::1`, `localhost`): a development or CI instance on `http://127.0.0.1` works, and
//!   any other deployment must be served over https (browsers refuse `Secure` cookies on
//!   plain http, so sign-in on a non-loopback http URL fails rather than sending the
//!   session in clear text).
//! - `Path=/`, `Max-Age` equal to the session's absolute lifetime ([`SESSION_TTL`]).

use std::net::IpAddr;

use actix_web::cookie::{Cookie, SameSite};

use crate::service::sessions::SESSION_TTL;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "sb_session";

/// Whether cookies carry `Secure` (decided once from the base URL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CookiePolicy {
    /// Set `Secure` on every cookie the Board sets.
    pub secure: bool,
}

impl CookiePolicy {
    /// `Secure` unless `base_url` is plain http on a loopback host.
    pub fn for_base_url(base_url: &str) -> Self {
        CookiePolicy { secure: !plain_http_on_loopback(base_url) }
    }

    /// A cookie with the Board's attributes: HttpOnly, SameSite=Lax, Path=/, Secure by
    /// the policy, living `max_age` (none: until the browser closes).
    pub fn cookie(&self, name: &'static str, value: String, max_age: Option<chrono::Duration>) -> Cookie<'static> {
        let mut c = Cookie::build(name, value).path("/").http_only(true).same_site(SameSite::Lax).secure(self.secure);
        if let Some(age) = max_age {
            c = c.max_age(actix_web::cookie::time::Duration::seconds(age.num_seconds()));
        }
        c.finish()
    }

    /// The session cookie for a new session.
    pub fn session_cookie(&self, token: String) -> Cookie<'static> {
        self.cookie(SESSION_COOKIE, token, Some(SESSION_TTL))
    }
}

/// A cookie that makes the browser forget `name`.
pub fn removal(name: &'static str) -> Cookie<'static> {
    let mut c = Cookie::build(name, "").path("/").http_only(true).same_site(SameSite::Lax).finish();
    c.make_removal();
    c
}

fn plain_http_on_loopback(base_url: &str) -> bool {
    let Ok(url) = url::Url::parse(base_url) else { return false };
    if url.scheme() != "http" {
        return false;
    }
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_secure_except_on_plain_http_loopback() {
        for insecure_ok in ["http://127.0.0.1:8080", "http://127.9.0.1", "http://localhost:3000", "http://[::1]:80"] {
            assert!(!CookiePolicy::for_base_url(insecure_ok).secure, "{insecure_ok}");
        }
        for secure in [
            "https://sb.example.com",
            "https://127.0.0.1",
            "http://sb.example.com",
            "http://10.0.0.5:8080",
            "http://0.0.0.0:8080",
            "http://localhost.example.com",
            "not a url",
        ] {
            assert!(CookiePolicy::for_base_url(secure).secure, "{secure}");
        }
    }

    #[test]
    fn the_session_cookie_is_http_only_lax_and_lives_as_long_as_the_session() {
        let c = CookiePolicy { secure: true }.session_cookie("sbs_x".into());
        assert_eq!(c.http_only(), Some(true));
        assert_eq!(c.same_site(), Some(SameSite::Lax));
        assert_eq!(c.secure(), Some(true));
        assert_eq!(c.path(), Some("/"));
        assert_eq!(c.max_age().map(|d| d.whole_hours()), Some(12));
    }
}
