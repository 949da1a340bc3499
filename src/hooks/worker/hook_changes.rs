//! Keeps the dispatcher's [`HookCache`] coherent across instances: the instance's
//! listener session ([`crate::db::listen`]) follows the channel the database's triggers
//! NOTIFY (migration `hook_change_notify`) and this follower evicts the endpoint each
//! notification names. While the session is disconnected the cache is switched off
//! (every dispatch reads the database) until it is back.

use crate::db::listen::{ChannelSubscription, Follower};
use crate::domain::ids::EndpointId;
use crate::hooks::cache::HookCache;
use crate::metrics::Metrics;

/// The channel the triggers notify; its payload is an endpoint id.
pub const HOOK_CHANGES_CHANNEL: &str = crate::db::channels::HOOKS.name();

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

/// The listener session's subscription that keeps `cache` coherent. Evictions arrive on
/// the session's thread, not the dispatcher's: [`HookCache::put`] is safe against that.
pub fn subscription(cache: &HookCache, metrics: &Metrics) -> ChannelSubscription {
    ChannelSubscription::new(
        crate::db::channels::HOOKS,
        "hooks",
        HookFollower { cache: cache.clone(), metrics: metrics.clone() },
    )
}
