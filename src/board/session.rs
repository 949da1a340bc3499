//! Who is signed in: the [`Human`] every page takes (the extractor that finds it from
//! the `sb_session` cookie is [`super::extract`]; the cookie rules are
//! [`super::cookies`]).

use maud::Markup;

use super::csrf::CsrfToken;
use super::notice::Notice;
use crate::store::tenancy::Reach;

pub use super::cookies::SESSION_COOKIE;
pub use crate::service::sessions::SESSION_TTL;

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
    /// The hidden `csrf_token` input every POST form must contain.
    pub fn csrf_field(&self) -> Markup {
        self.csrf.field()
    }
}
