//! Who is signed in: the `sb_session` cookie, the rule for its attributes, and the
//! [`Human`] extractor every page takes.
//!
//! Cookie attributes, and why:
//! - `HttpOnly`: no script can read the session.
//! - `SameSite=Lax`, not `Strict`: with `Strict` a link into the Board from a chat
//!   message, an alert e-mail or a notify hook's receiver arrives without the cookie and
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

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

use actix_web::cookie::{Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, web};
use maud::Markup;

use super::csrf::CsrfToken;
use super::error::BoardError;
use super::respond::Notice;
use crate::domain::ids::ScopeId;
use crate::error::Error;
use crate::service::{Services, sessions};
use crate::store::tenancy::Reach;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "sb_session";

pub use crate::service::sessions::SESSION_TTL;

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

/// A signed-in human: who they are, every scope they belong to, and the CSRF token of
/// their session. Taking it as a handler argument is what makes a page require sign-in:
/// without a live session a GET is redirected (303) to `/login?next=<this page>`, any
/// other method to `/login`.
#[derive(Clone)]
pub struct Human {
    /// Every scope the human belongs to, with roles.
    pub reach: Reach,
    /// Their email.
    pub email: String,
    /// Their display name (user-chosen: maud escapes it).
    pub name: String,
    /// The CSRF token every form of this session carries.
    pub csrf: CsrfToken,
    /// A notice carried over a redirect, shown once.
    pub notice: Option<Notice>,
    /// The session token (to end the session at sign-out); never displayed or logged.
    pub(super) session_token: String,
}

impl std::fmt::Debug for Human {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Human").field("human", &self.reach.human).field("email", &self.email).finish_non_exhaustive()
    }
}

impl Human {
    /// Every scope id, for store queries that take `scope_id = ANY(...)`.
    pub fn scope_ids(&self) -> Vec<ScopeId> {
        self.reach.scope_ids()
    }

    /// Whether `scope` is one of the human's.
    pub fn reaches(&self, scope: ScopeId) -> bool {
        self.reach.scopes.iter().any(|s| s.scope == scope)
    }

    /// The hidden `csrf_token` input every POST form must contain.
    pub fn csrf_field(&self) -> Markup {
        self.csrf.field()
    }
}

/// The services of the application serving `req`.
pub(super) fn services(req: &HttpRequest) -> Result<web::Data<Services>, BoardError> {
    req.app_data::<web::Data<Services>>().cloned().ok_or_else(|| BoardError::App(Error::internal("services missing")))
}

/// Where to return after signing in: this page, for a GET.
fn return_to(req: &HttpRequest) -> Option<String> {
    (req.method() == Method::GET)
        .then(|| req.uri().path_and_query().map(|pq| pq.as_str().to_owned()))
        .flatten()
        .filter(|p| p != "/")
}

impl FromRequest for Human {
    type Error = BoardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, BoardError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
        let notice = req.cookie(super::respond::NOTICE_COOKIE).and_then(|c| Notice::decode(c.value()));
        let services = services(req);
        let next = return_to(req);
        Box::pin(async move {
            let Some(token) = token else { return Err(BoardError::SignIn { next }) };
            let Some(session) = sessions::session(&*services?, &token).await? else {
                return Err(BoardError::SignIn { next });
            };
            Ok(Human {
                reach: session.reach,
                email: session.email,
                name: session.display_name,
                csrf: CsrfToken::for_session(&token),
                notice,
                session_token: token,
            })
        })
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
