//! What the Board shares across workers: the cookie rules and the sign-in limits.

use super::cookies::CookiePolicy;
use super::rate_limit::LoginLimits;

/// What the Board shares across workers: the cookie rules and the sign-in limits.
#[derive(Clone)]
pub struct BoardState {
    /// How session cookies are set.
    pub cookies: CookiePolicy,
    /// Sign-in attempts per email and per client address.
    pub login_limits: LoginLimits,
}

impl BoardState {
    /// The Board's state for a service reachable at `base_url`.
    pub fn new(base_url: &str) -> Self {
        crate::domain::passwords::prepare_dummy_hash();
        BoardState { cookies: CookiePolicy::for_base_url(base_url), login_limits: LoginLimits::default() }
    }
}
