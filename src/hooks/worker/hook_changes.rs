//! Keeps the dispatcher's [`HookCache`] coherent across instances: LISTENs on the
//! channel the database's triggers NOTIFY (migration `hook_change_notify`) and evicts
//! the endpoint each notification names. While disconnected the cache is switched off
//! (every dispatch reads the database) and the connection is retried.

use crate::db::listen::{self, Follower};
use crate::domain::ids::EndpointId;
use crate::hooks::cache::HookCache;
use crate::metrics::Metrics;

/// The channel the triggers notify; its payload is an endpoint id.
pub const HOOK_CHANGES_CHANNEL: &str = crate::db::channels::HOOKS.name();

/// The listener's session name in `pg_stat_activity`.
pub const HOOK_LISTENER_NAME: &str = "switchboard hook listener";

/// What the hook listener keeps current: the dispatcher's cache (and a count of the
/// notices it applied).
struct HookFollower {
    cache: HookCache,
    metrics: Metrics,
}

impl Follower for HookFollower {
    fn set_current(&self, current: bool) {
        self.cache.set_coherent(current);
    }

    /// Evicts the endpoint `payload` names; anything unreadable clears the whole cache.
    fn changed(&self, payload: &str) {
        match payload.parse::<uuid::Uuid>() {
            Ok(id) => self.cache.evict(EndpointId(id)),
            Err(_) => self.cache.clear(),
        }
        self.metrics.hook_change_notice();
    }
}

/// Follows hook changes for as long as the returned future is polled (the dispatcher
/// spawns it as a task of its own on its arbiter, so a burst in the dispatcher's
/// mailbox does not hold evictions back, and aborts it when it stops). The connection,
/// its pings and reconnects are [`listen::follow`]'s.
pub async fn follow(database_url: String, cache: HookCache, metrics: Metrics) {
    let follower = HookFollower { cache, metrics: metrics.clone() };
    listen::follow(&database_url, HOOK_LISTENER_NAME, crate::db::channels::HOOKS, &follower, &metrics).await;
}
