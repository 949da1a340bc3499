//! Which hooks an endpoint's queue has, kept for a second. Every ready todo is a
//! dispatch; without this, each would cost a database lookup even on the many
//! endpoints that have no hooks at all. A hook changed through this instance evicts
//! its endpoint at once; every delivery attempt re-checks its hook in the database, so
//! a stale entry can delay a new hook's first notification by at most the TTL, never
//! send to a deleted or disabled one.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::ids::{EndpointId, HookId};
use crate::ttl_cache::TtlCache;

/// How long a lookup is trusted.
pub const HOOK_CACHE_TTL: Duration = Duration::from_secs(1);

/// Most (endpoint, queue) entries held before the cache is cleared; it only bounds memory.
const HOOK_CACHE_MAX: usize = 10_000;

/// The cache. Cheap to clone; clones share entries.
#[derive(Clone)]
pub struct HookCache(TtlCache<(EndpointId, String), Arc<[HookId]>>);

impl Default for HookCache {
    fn default() -> Self {
        HookCache(TtlCache::new(HOOK_CACHE_TTL, HOOK_CACHE_MAX))
    }
}

impl HookCache {
    /// The hooks of `endpoint` matching `queue`, if looked up within the TTL.
    pub fn get(&self, endpoint: EndpointId, queue: &str) -> Option<Arc<[HookId]>> {
        self.0.get(&(endpoint, queue.to_owned()))
    }

    /// Keeps a fresh lookup.
    pub fn put(&self, endpoint: EndpointId, queue: &str, hooks: Arc<[HookId]>) {
        self.0.put((endpoint, queue.to_owned()), hooks);
    }

    /// Forgets everything about `endpoint` (one of its hooks was created, changed or deleted).
    pub fn evict(&self, endpoint: EndpointId) {
        self.0.retain(|(e, _), _| *e != endpoint);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_answers_for_its_queue_until_its_endpoint_is_evicted() {
        let cache = HookCache::default();
        let (a, b) = (EndpointId(uuid::Uuid::from_u128(1)), EndpointId(uuid::Uuid::from_u128(2)));
        let hooks: Arc<[HookId]> = Arc::from(vec![HookId(uuid::Uuid::from_u128(9))]);
        cache.put(a, "builds", hooks.clone());
        cache.put(b, "builds", Arc::from(Vec::new()));
        assert_eq!(cache.get(a, "builds").as_deref(), Some(&hooks[..]));
        assert_eq!(cache.get(a, "deploys"), None);
        cache.evict(a);
        assert_eq!(cache.get(a, "builds"), None);
        assert_eq!(cache.get(b, "builds").map(|h| h.len()), Some(0));
    }
}
