//! Keeps an instance's [`AuthCache`] coherent with the database: one connection LISTENs
//! on the channel the endpoint triggers NOTIFY (migration `auth_change_notify`) and
//! evicts the endpoint each notification names. While it is not listening the cache
//! serves nothing, so every request checks the database.
//!
//! It is a connection of its own, not the hook dispatcher's listener: that one lives and
//! dies with the dispatcher (which the kill switch does not start at all), and the hook
//! cache's race-freedom relies on it evicting on the dispatcher's thread. It runs on a
//! thread of its own, so no other work delays an eviction: the notification reaches it
//! at the revoking commit, before the revoking client has even heard its COMMIT answer.

use super::AuthCache;
use crate::db::listen;

/// The channel the endpoint triggers notify; its payload is an endpoint id.
pub const AUTH_CHANGES_CHANNEL: &str = "switchboard_auth";

/// The listener's session name in `pg_stat_activity`.
pub const AUTH_LISTENER_NAME: &str = "switchboard auth listener";

/// The task following endpoint changes for one instance; stops it when dropped.
pub struct AuthListener {
    arbiter: Option<actix::Arbiter>,
    cache: AuthCache,
}

impl AuthListener {
    /// Starts following changes into `cache` on a new arbiter (nothing to follow when
    /// the cache is off). Must run inside an actix system. The connection is its own,
    /// outside the pool.
    pub fn start(database_url: &str, cache: &AuthCache) -> Self {
        let arbiter = cache.enabled().then(|| {
            let arbiter = actix::Arbiter::new();
            let (url, follower) = (database_url.to_owned(), cache.clone());
            arbiter
                .spawn(async move { listen::follow(&url, AUTH_LISTENER_NAME, AUTH_CHANGES_CHANNEL, &follower).await });
            arbiter
        });
        AuthListener { arbiter, cache: cache.clone() }
    }
}

impl Drop for AuthListener {
    fn drop(&mut self) {
        if let Some(arbiter) = self.arbiter.take() {
            arbiter.stop();
        }
        // Nobody evicts any more: serve nothing.
        listen::Follower::set_current(&self.cache, false);
    }
}
