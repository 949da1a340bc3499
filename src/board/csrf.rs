//! CSRF tokens. Every POST form carries a hidden `csrf_token` field, checked in
//! constant time before anything else happens; a missing or wrong token answers 403
//! and changes nothing.
//!
//! - Signed in: the token is an HMAC of the session token, so it is per session, needs
//!   no storage, and nothing in the database yields it. [`super::extract::Posted`]
//!   checks it.
//! - Signing in (no session yet): a double-submit token, a random value in the
//!   `sb_login_csrf` cookie that the form must repeat (login CSRF would otherwise let
//!   another site sign a victim in as the attacker).
//!
//! GET forms (search, filters) change nothing and carry no token: a token in a URL
//! would leak into history and logs.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use maud::{Markup, html};
use rand::RngCore;
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Name of the hidden form field.
pub const CSRF_FIELD: &str = "csrf_token";

/// Name of the pre-sign-in double-submit cookie.
pub const LOGIN_CSRF_COOKIE: &str = "sb_login_csrf";

/// Largest form body the Board accepts.
pub const FORM_LIMIT: usize = 64 * 1024;

/// Domain separation: this HMAC input means "the CSRF token of this session".
const CSRF_LABEL: &[u8] = b"switchboard board csrf v1";

/// A CSRF token (base64url). Its Debug form hides the value.
#[derive(Clone, PartialEq, Eq)]
pub struct CsrfToken(String);

impl std::fmt::Debug for CsrfToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CsrfToken(…)")
    }
}

impl CsrfToken {
    /// The token of the session whose cookie holds `session_token`.
    pub fn for_session(session_token: &str) -> Self {
        // HMAC accepts keys of any length; the error arm cannot happen.
        let tag = match Hmac::<Sha256>::new_from_slice(session_token.as_bytes()) {
            Ok(mut mac) => {
                mac.update(CSRF_LABEL);
                mac.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        };
        CsrfToken(URL_SAFE_NO_PAD.encode(tag))
    }

    /// A fresh random token (the sign-in form's double-submit value).
    pub fn random() -> Self {
        let mut buf = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut buf);
        CsrfToken(URL_SAFE_NO_PAD.encode(buf))
    }

    /// A token received from a client (a cookie), if it has the shape of one.
    pub fn parse(raw: &str) -> Option<Self> {
        (raw.len() == 43 && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
            .then(|| CsrfToken(raw.to_owned()))
    }

    /// Whether `submitted` is this token, compared in constant time.
    pub fn matches(&self, submitted: &str) -> bool {
        !self.0.is_empty() && bool::from(self.0.as_bytes().ct_eq(submitted.as_bytes()))
    }

    /// The value, for the form field or the cookie.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The hidden input a form carries.
    pub fn field(&self) -> Markup {
        html! { input type="hidden" name=(CSRF_FIELD) value=(self.0); }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_token_always_derives_the_same_csrf_token_and_another_session_another() {
        let a = CsrfToken::for_session("sbs_one");
        assert_eq!(a, CsrfToken::for_session("sbs_one"));
        assert_ne!(a, CsrfToken::for_session("sbs_two"));
        assert_eq!(a.as_str().len(), 43);
        assert!(!a.as_str().contains("sbs_one"));
    }

    #[test]
    fn only_the_exact_token_matches() {
        let t = CsrfToken::for_session("sbs_one");
        assert!(t.matches(t.as_str()));
        assert!(!t.matches(""));
        assert!(!t.matches(&t.as_str()[..42]));
        assert!(!t.matches(CsrfToken::random().as_str()));
        assert!(!CsrfToken(String::new()).matches(""), "an empty token never matches");
    }

    #[test]
    fn cookie_values_parse_only_in_the_shape_of_a_token() {
        let t = CsrfToken::random();
        assert_eq!(CsrfToken::parse(t.as_str()), Some(t));
        assert_eq!(CsrfToken::parse("short"), None);
        assert_eq!(CsrfToken::parse(&"a;".repeat(22)[..43]), None);
    }

    #[test]
    fn the_hidden_field_is_named_csrf_token() {
        let t = CsrfToken::random();
        let html = t.field().into_string();
        assert!(html.contains(r#"name="csrf_token""#) && html.contains(t.as_str()), "{html}");
    }
}
