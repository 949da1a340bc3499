//! A short-lived cache in front of something security-relevant (verified tokens,
//! webhooks by ingest token), kept coherent by the database: a change listener
//! ([`crate::db::listen`]) evicts what each NOTIFY names, and while that listener is not
//! known current (connecting, disconnected, reconnecting) the cache serves nothing, so
//! every request asks the database.
//!
//! A lookup that an eviction raced (the generation moved between its start and its
//! result) is not kept: its answer may predate the change. The check and the insert
//! happen under one lock, so an eviction cannot fall between them.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Everything under one lock.
struct Inner<K, V> {
    entries: HashMap<K, (Instant, V)>,
    /// Bumped by every eviction and every change of `current`.
    generation: u64,
    /// The change listener is listening: evictions arrive, entries may be served.
    current: bool,
}

/// The cache. Cheap to clone; clones share entries.
pub struct CoherentCache<K, V> {
    ttl: Duration,
    max: usize,
    inner: Arc<Mutex<Inner<K, V>>>,
}

impl<K, V> Clone for CoherentCache<K, V> {
    fn clone(&self) -> Self {
        CoherentCache { ttl: self.ttl, max: self.max, inner: self.inner.clone() }
    }
}

impl<K: Eq + Hash, V: Clone> CoherentCache<K, V> {
    /// A cache trusting entries for `ttl` (zero disables it), holding at most `max`
    /// (then it starts over: the bound is for memory, not for hit rate). It serves
    /// nothing until its listener reports itself current.
    pub fn new(ttl: Duration, max: usize) -> Self {
        let inner = Inner { entries: HashMap::new(), generation: 0, current: false };
        CoherentCache { ttl, max, inner: Arc::new(Mutex::new(inner)) }
    }

    /// Whether the cache is on at all (a zero TTL needs no listener).
    pub fn enabled(&self) -> bool {
        !self.ttl.is_zero()
    }

    /// The entry for `key` if it was stored within the TTL, `live` accepts it and the
    /// listener is current.
    pub fn get(&self, key: &K, live: impl FnOnce(&V) -> bool) -> Option<V> {
        let inner = self.inner.lock().ok()?;
        if !inner.current {
            return None;
        }
        let (at, value) = inner.entries.get(key)?;
        (at.elapsed() < self.ttl && live(value)).then(|| value.clone())
    }

    /// The generation now: take it before a lookup and pass it to [`CoherentCache::put`].
    pub fn generation(&self) -> u64 {
        self.inner.lock().map(|i| i.generation).unwrap_or(u64::MAX)
    }

    /// Keeps a lookup started at `generation`, unless an eviction (or a change of the
    /// listener's state) happened since.
    pub fn put(&self, generation: u64, key: K, value: V) {
        if !self.enabled() {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else { return };
        if !inner.current || inner.generation != generation {
            return;
        }
        if inner.entries.len() >= self.max {
            inner.entries.clear();
        }
        inner.entries.insert(key, (Instant::now(), value));
    }

    /// Forgets every entry `stale` names.
    pub fn evict(&self, mut stale: impl FnMut(&V) -> bool) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.generation = inner.generation.wrapping_add(1);
            inner.entries.retain(|_, (_, v)| !stale(v));
        }
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.evict(|_| true);
    }

    /// The listener is (or is no longer) listening; either way what was cached may have
    /// missed a change, so it is forgotten.
    pub fn set_current(&self, current: bool) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.generation = inner.generation.wrapping_add(1);
            inner.entries.clear();
            inner.current = current;
        }
    }

    /// Whether the change listener is listening (entries are served only then).
    pub fn is_current(&self) -> bool {
        self.inner.lock().is_ok_and(|i| i.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listening() -> CoherentCache<u8, u32> {
        let cache = CoherentCache::new(Duration::from_secs(60), 10);
        cache.set_current(true);
        cache
    }

    #[test]
    fn eviction_forgets_only_what_it_names_and_the_bound_starts_over() {
        let cache = listening();
        for k in 0..10u8 {
            cache.put(cache.generation(), k, u32::from(k));
        }
        cache.evict(|v| *v == 3);
        assert_eq!(cache.get(&3, |_| true), None);
        assert_eq!(cache.get(&4, |_| true), Some(4));
        cache.put(cache.generation(), 3, 3);
        cache.put(cache.generation(), 10, 10);
        assert_eq!(cache.get(&4, |_| true), None, "the eleventh entry cleared the rest");
        assert_eq!(cache.get(&10, |_| true), Some(10));
        assert_eq!(cache.get(&10, |v| *v != 10), None, "the caller's liveness check applies");
    }
}
