//! A small in-memory cache whose entries are trusted for a fixed time and whose size is
//! bounded (full → cleared: it only bounds memory against a flood of distinct keys).
//! The service keeps such caches in front of hot lookups (webhooks by ingest token,
//! hooks by endpoint); each says why its staleness is safe. Verified endpoint tokens
//! have a cache of their own (`service::auth::AuthCache`), coherent through the database.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Key → (when stored, value). Cheap to clone; clones share entries.
pub struct TtlCache<K, V> {
    ttl: Duration,
    max: usize,
    entries: Arc<Mutex<HashMap<K, (Instant, V)>>>,
}

impl<K, V> Clone for TtlCache<K, V> {
    fn clone(&self) -> Self {
        TtlCache { ttl: self.ttl, max: self.max, entries: self.entries.clone() }
    }
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    /// A cache trusting entries for `ttl` (zero disables it) and holding at most `max`.
    pub fn new(ttl: Duration, max: usize) -> Self {
        TtlCache { ttl, max, entries: Arc::default() }
    }

    /// The value stored for `key` less than `ttl` ago.
    pub fn get(&self, key: &K) -> Option<V> {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.lock().ok()?;
        let (at, value) = entries.get(key)?;
        (at.elapsed() < self.ttl).then(|| value.clone())
    }

    /// The value stored for `key` less than `ttl` ago, with its age.
    pub fn get_aged(&self, key: &K) -> Option<(V, Duration)> {
        if self.ttl.is_zero() {
            return None;
        }
        let entries = self.entries.lock().ok()?;
        let (at, value) = entries.get(key)?;
        let age = at.elapsed();
        (age < self.ttl).then(|| (value.clone(), age))
    }

    /// Stores `value` for `key`.
    pub fn put(&self, key: K, value: V) {
        if self.ttl.is_zero() {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= self.max {
                entries.clear();
            }
            entries.insert(key, (Instant::now(), value));
        }
    }

    /// Forgets `key`.
    pub fn remove(&self, key: &K) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(key);
        }
    }

    /// Keeps only the entries `keep` accepts (eviction after a change).
    pub fn retain(&self, mut keep: impl FnMut(&K, &V) -> bool) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.retain(|k, (_, v)| keep(k, v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_are_evicted_and_a_full_cache_starts_over() {
        let cache = TtlCache::new(Duration::from_millis(50), 2);
        cache.put(1, "a");
        assert_eq!(cache.get(&1), Some("a"));
        cache.retain(|k, _| *k != 1);
        assert_eq!(cache.get(&1), None);
        cache.put(1, "a");
        cache.put(2, "b");
        cache.put(3, "c");
        assert_eq!((cache.get(&1), cache.get(&3)), (None, Some("c")));
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(cache.get(&3), None);
    }

    #[test]
    fn a_zero_ttl_caches_nothing() {
        let cache = TtlCache::new(Duration::ZERO, 2);
        cache.put(1, "a");
        assert_eq!(cache.get(&1), None);
    }
}
