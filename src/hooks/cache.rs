//! Which hooks (with their targets and sealed secrets) an endpoint's queue has, kept
//! for a second. Every ready todo is a dispatch; without this, each would cost a
//! database lookup, even on the many endpoints that have no hooks at all.
//!
//! The cache is kept coherent with the database: triggers NOTIFY every change that can
//! alter a match (hooks created, changed, rotated, disabled or deleted; endpoints
//! revoked or expired), and `hook_changes` evicts the endpoint on each — whichever
//! instance, or psql, made the change. While that listener is connected, a cached
//! match is current and serves as the re-check before a first attempt; while it is
//! not, entries still answer for their TTL ("no hooks" needs no re-check), but a
//! ring from them re-checks its hook in the database first. Every retry re-checks
//! in the database anyway.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::domain::ids::EndpointId;
use crate::hooks::statements::HookTarget;
use crate::ttl_cache::TtlCache;

/// How long a lookup is trusted.
pub const HOOK_CACHE_TTL: Duration = Duration::from_secs(1);

/// Most (endpoint, queue) entries held before the cache is cleared; it only bounds memory.
const HOOK_CACHE_MAX: usize = 10_000;

/// The cache. Cheap to clone; clones share entries.
#[derive(Clone)]
pub struct HookCache {
    entries: TtlCache<(EndpointId, String), Arc<[HookTarget]>>,
    /// The change listener is connected: evictions arrive, entries may be trusted.
    coherent: Arc<AtomicBool>,
    /// Bumped by every eviction, so a lookup that started before one is not kept.
    generation: Arc<AtomicU64>,
}

impl Default for HookCache {
    fn default() -> Self {
        HookCache {
            entries: TtlCache::new(HOOK_CACHE_TTL, HOOK_CACHE_MAX),
            coherent: Arc::new(AtomicBool::new(false)),
            generation: Arc::new(AtomicU64::new(0)),
        }
    }
}

/// A cached answer.
pub struct Cached {
    /// The hooks of the endpoint's queue.
    pub hooks: Arc<[HookTarget]>,
    /// Past half its TTL: a busy entry is looked up again in the background, so it
    /// never expires under load and no notification waits for the database.
    pub refresh: bool,
    /// The change listener is connected: the answer is current.
    pub current: bool,
}

impl HookCache {
    /// The hooks of `endpoint` matching `queue`, if looked up within the TTL.
    pub fn get(&self, endpoint: EndpointId, queue: &str) -> Option<Arc<[HookTarget]>> {
        self.get_fresh(endpoint, queue).map(|c| c.hooks)
    }

    /// As [`HookCache::get`], with whether it is due a refresh and current.
    pub fn get_fresh(&self, endpoint: EndpointId, queue: &str) -> Option<Cached> {
        let current = self.is_coherent();
        self.entries.get_aged(&(endpoint, queue.to_owned())).map(|(hooks, age)| Cached {
            hooks,
            refresh: age >= HOOK_CACHE_TTL / 2,
            current,
        })
    }

    /// Whether the change listener is connected.
    pub fn is_coherent(&self) -> bool {
        self.coherent.load(Ordering::Acquire)
    }

    /// The eviction count now: pass it to [`HookCache::put`] with a lookup started after.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Keeps a lookup started at `generation`, unless an eviction happened since (its
    /// answer may predate the change; the next dispatch looks up again). Evictions come
    /// from the listener session's thread, so one may land between any two steps here:
    /// the entry is put first and the generation read again after; if it moved, the
    /// entry is taken out again. An eviction before the put is seen by that second
    /// read; one after it removes the entry itself.
    pub fn put(&self, generation: u64, endpoint: EndpointId, queue: &str, hooks: Arc<[HookTarget]>) {
        if self.generation() != generation {
            return;
        }
        let key = (endpoint, queue.to_owned());
        self.entries.put(key.clone(), hooks);
        if self.generation() != generation {
            // Only the dispatcher puts, so what is taken out is this lookup's answer.
            self.entries.remove(&key);
        }
    }

    /// Forgets everything (a hook whose endpoint the caller does not know was deleted).
    pub fn clear(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.retain(|_, _| false);
    }

    /// Forgets everything about `endpoint` (one of its hooks was created, changed or
    /// deleted, or the endpoint itself changed).
    pub fn evict(&self, endpoint: EndpointId) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.retain(|(e, _), _| *e != endpoint);
    }

    /// Whether evictions arrive: set once the change listener listens, cleared when it
    /// loses its connection (everything is forgotten at both: changes made meanwhile
    /// were missed).
    pub fn set_coherent(&self, coherent: bool) {
        self.clear();
        self.coherent.store(coherent, Ordering::Release);
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
            endpoint_expires_at: None,
        }
    }

    #[test]
    fn an_entry_answers_for_its_queue_until_its_endpoint_is_evicted() {
        let cache = HookCache::default();
        cache.set_coherent(true);
        let (a, b) = (EndpointId(uuid::Uuid::from_u128(1)), EndpointId(uuid::Uuid::from_u128(2)));
        let g = cache.generation();
        cache.put(g, a, "builds", Arc::from(vec![target(a)]));
        cache.put(g, b, "builds", Arc::from(Vec::new()));
        assert_eq!(cache.get(a, "builds").map(|h| h[0].hook_id), Some(HookId(uuid::Uuid::from_u128(9))));
        assert!(cache.get(a, "deploys").is_none());
        cache.evict(a);
        assert!(cache.get(a, "builds").is_none());
        assert_eq!(cache.get(b, "builds").map(|h| h.len()), Some(0));
    }

    #[test]
    fn without_the_listener_answers_are_not_current_and_a_reconnect_forgets_them() {
        let cache = HookCache::default();
        let a = EndpointId(uuid::Uuid::from_u128(1));
        cache.set_coherent(true);
        cache.put(cache.generation(), a, "builds", Arc::from(vec![target(a)]));
        assert!(cache.get_fresh(a, "builds").is_some_and(|c| c.current));
        cache.set_coherent(false);
        assert!(cache.get(a, "builds").is_none(), "what was cached while listening is gone");
        cache.put(cache.generation(), a, "builds", Arc::from(vec![target(a)]));
        assert!(cache.get_fresh(a, "builds").is_some_and(|c| !c.current), "kept, but not current");
        cache.set_coherent(true);
        assert!(cache.get(a, "builds").is_none(), "what was cached before the listener reconnected is gone");
    }

    #[test]
    fn a_lookup_that_raced_an_eviction_is_not_kept() {
        let cache = HookCache::default();
        cache.set_coherent(true);
        let (a, b) = (EndpointId(uuid::Uuid::from_u128(1)), EndpointId(uuid::Uuid::from_u128(2)));
        let started = cache.generation();
        cache.evict(b);
        cache.put(started, a, "builds", Arc::from(vec![target(a)]));
        assert!(cache.get(a, "builds").is_none());
        cache.put(cache.generation(), a, "builds", Arc::from(vec![target(a)]));
        assert!(cache.get(a, "builds").is_some());
    }
}
