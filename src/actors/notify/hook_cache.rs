//! Which hooks (with their targets and sealed secrets) an endpoint's queue has, kept
//! for a second. Every ready todo is a dispatch; without this, each would cost a
//! database lookup, even on the many endpoints that have no hooks at all.
//!
//! The first attempt of a delivery uses this answer (at most a second old); every
//! retry re-checks the hook in the database. A hook created, changed, rotated or
//! deleted through this instance evicts its endpoint at once, so the staleness is only
//! ever another instance's change, for at most [`HOOK_CACHE_TTL`]. A revoked endpoint
//! cannot be announced at all: revocation dead-letters its work silently.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::ids::EndpointId;
use crate::store::hooks::HookTarget;
use crate::ttl_cache::TtlCache;

/// How long a lookup is trusted.
pub const HOOK_CACHE_TTL: Duration = Duration::from_secs(1);

/// Most (endpoint, queue) entries held before the cache is cleared; it only bounds memory.
const HOOK_CACHE_MAX: usize = 10_000;

/// The cache. Cheap to clone; clones share entries.
#[derive(Clone)]
pub struct HookCache(TtlCache<(EndpointId, String), Arc<[HookTarget]>>);

impl Default for HookCache {
    fn default() -> Self {
        HookCache(TtlCache::new(HOOK_CACHE_TTL, HOOK_CACHE_MAX))
    }
}

impl HookCache {
    /// The hooks of `endpoint` matching `queue`, if looked up within the TTL.
    pub fn get(&self, endpoint: EndpointId, queue: &str) -> Option<Arc<[HookTarget]>> {
        self.0.get(&(endpoint, queue.to_owned()))
    }

    /// As [`HookCache::get`], and whether the entry is past half its TTL (a busy entry
    /// is then looked up again in the background, so it never expires under load and
    /// no notification waits for the database).
    pub fn get_fresh(&self, endpoint: EndpointId, queue: &str) -> Option<(Arc<[HookTarget]>, bool)> {
        self.0.get_aged(&(endpoint, queue.to_owned())).map(|(hooks, age)| (hooks, age >= HOOK_CACHE_TTL / 2))
    }

    /// Keeps a fresh lookup.
    pub fn put(&self, endpoint: EndpointId, queue: &str, hooks: Arc<[HookTarget]>) {
        self.0.put((endpoint, queue.to_owned()), hooks);
    }

    /// Forgets everything (a hook whose endpoint the caller does not know was deleted).
    pub fn clear(&self) {
        self.0.retain(|_, _| false);
    }

    /// Forgets everything about `endpoint` (one of its hooks was created, changed or deleted).
    pub fn evict(&self, endpoint: EndpointId) {
        self.0.retain(|(e, _), _| *e != endpoint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::HookId;

    fn target(endpoint: EndpointId) -> HookTarget {
        HookTarget {
            hook_id: HookId(uuid::Uuid::from_u128(9)),
            endpoint_id: endpoint,
            url: "https://203.0.113.10/h".into(),
            sealed_secret: "enc:v1:x".into(),
            sealed_previous_secret: None,
            previous_valid_until: None,
        }
    }

    #[test]
    fn an_entry_answers_for_its_queue_until_its_endpoint_is_evicted() {
        let cache = HookCache::default();
        let (a, b) = (EndpointId(uuid::Uuid::from_u128(1)), EndpointId(uuid::Uuid::from_u128(2)));
        cache.put(a, "builds", Arc::from(vec![target(a)]));
        cache.put(b, "builds", Arc::from(Vec::new()));
        assert_eq!(cache.get(a, "builds").map(|h| h[0].hook_id), Some(HookId(uuid::Uuid::from_u128(9))));
        assert!(cache.get(a, "deploys").is_none());
        cache.evict(a);
        assert!(cache.get(a, "builds").is_none());
        assert_eq!(cache.get(b, "builds").map(|h| h.len()), Some(0));
    }
}
