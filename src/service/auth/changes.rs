//! Keeps an instance's [`AuthCache`] and webhook cache coherent with the database: the
//! instance's listener session ([`crate::db::listen`]) LISTENs on the channel the
//! endpoint and webhook triggers NOTIFY (migrations `auth_change_notify`,
//! `webhook_change_notify`) and this follower evicts the endpoint or webhook each
//! notification names, then acknowledges it (revocations wait for that,
//! [`super::confirm`]). While the session is not listening the caches serve nothing, so
//! every request checks the database.
//!
//! The session runs on a thread of its own, so no other work delays an eviction: the
//! notification reaches it at the revoking commit, before the revoking client has even
//! heard its COMMIT answer. It follows this channel even with the caches off (nothing to
//! evict, but revocations still hear its acknowledgement rather than wait it out).

use super::AuthCache;
use crate::db::listen::{ChannelSubscription, Follower};
use crate::service::webhook_cache::{WEBHOOK_CHANGE_PREFIX, WebhookCache};

/// The channel the endpoint triggers notify; its payload is an endpoint id.
pub const AUTH_CHANGES_CHANNEL: &str = crate::db::channels::AUTH.name();

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

/// The listener session's subscription that keeps `cache` and `webhooks` coherent.
pub fn subscription(cache: &AuthCache, webhooks: &WebhookCache) -> ChannelSubscription {
    ChannelSubscription::new(
        crate::db::channels::AUTH,
        "auth",
        Caches { auth: cache.clone(), webhooks: webhooks.clone() },
    )
}
