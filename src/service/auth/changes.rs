//! Keeps an instance's [`AuthCache`] and webhook cache coherent with the database: one
//! connection LISTENs on the channel the endpoint and webhook triggers NOTIFY
//! (migrations `auth_change_notify`, `webhook_change_notify`) and evicts the endpoint or
//! webhook each notification names. While it is not listening the caches serve nothing,
//! so every request checks the database.
//!
//! It is a connection of its own, not the hook dispatcher's listener: that one lives and
//! dies with the dispatcher (which the kill switch does not start at all), and the hook
//! cache's race-freedom relies on it evicting on the dispatcher's thread. It runs on a
//! thread of its own, so no other work delays an eviction: the notification reaches it
//! at the revoking commit, before the revoking client has even heard its COMMIT answer.

use super::AuthCache;
use crate::db::listen::{self, Follower};
use crate::metrics::Metrics;
use crate::service::webhook_cache::{WEBHOOK_CHANGE_PREFIX, WebhookCache};

/// The channel the endpoint triggers notify; its payload is an endpoint id.
pub const AUTH_CHANGES_CHANNEL: &str = crate::db::channels::AUTH.name();

/// The listener's session name in `pg_stat_activity`.
pub const AUTH_LISTENER_NAME: &str = "switchboard auth listener";

/// What the listener keeps current: verified endpoint tokens, and webhooks by ingest
/// token (their changes come on the same channel as `webhook:<id>`, migration
/// `webhook_change_notify`).
#[derive(Clone)]
struct Caches {
    auth: AuthCache,
    webhooks: WebhookCache,
}

impl Follower for Caches {
    fn set_current(&self, current: bool) {
        self.auth.set_current(current);
        self.webhooks.set_current(current);
    }

    fn changed(&self, payload: &str) {
        if payload.starts_with(WEBHOOK_CHANGE_PREFIX) {
            self.webhooks.changed(payload);
        } else {
            // An endpoint id, or `*` (a TRUNCATE), which both caches take as "forget all".
            self.auth.changed(payload);
            self.webhooks.changed(payload);
        }
    }

    fn acks(&self) -> Option<&'static str> {
        self.auth.acks()
    }
}

/// The task following endpoint and webhook changes for one instance; stops it when
/// dropped.
pub struct AuthListener {
    arbiter: Option<actix::Arbiter>,
    caches: Caches,
}

impl AuthListener {
    /// Starts following changes into `cache` and `webhooks` on a new arbiter (nothing to
    /// follow when the caches are off). Must run inside an actix system. The connection
    /// is its own, outside the pool.
    pub fn start(database_url: &str, cache: &AuthCache, webhooks: &WebhookCache, metrics: &Metrics) -> Self {
        let caches = Caches { auth: cache.clone(), webhooks: webhooks.clone() };
        let arbiter = cache.enabled().then(|| {
            let arbiter = actix::Arbiter::new();
            let (url, follower, metrics) = (database_url.to_owned(), caches.clone(), metrics.clone());
            arbiter.spawn(async move {
                listen::follow(&url, AUTH_LISTENER_NAME, crate::db::channels::AUTH, &follower, &metrics).await
            });
            arbiter
        });
        AuthListener { arbiter, caches }
    }
}

impl Drop for AuthListener {
    fn drop(&mut self) {
        if let Some(arbiter) = self.arbiter.take() {
            arbiter.stop();
        }
        // Nobody evicts any more: serve nothing.
        self.caches.set_current(false);
    }
}
