//! Verified endpoint tokens, kept briefly so a claim/complete cycle costs one database
//! round trip per call instead of two.
//!
//! The cache is coherent across instances through the database: triggers NOTIFY every
//! endpoint change that can change an authentication answer (migration
//! `auth_change_notify`) and each instance's listener ([`super::changes`]) evicts the
//! endpoint it names. An entry is only ever served while that listener is known current:
//! while it is connecting, disconnected or reconnecting every lookup is a miss and
//! every request asks the database. A lookup that an eviction raced (the generation
//! moved between its start and its result) is not kept. An entry is never served past
//! its endpoint's `expires_at`, nor past the TTL.

use std::time::Duration;

use chrono::Utc;

use crate::coherent_cache::CoherentCache;
use crate::db::listen::Follower;
use crate::domain::ids::EndpointId;
use crate::store::endpoints::AgentPrincipal;

/// Most entries held before the cache is cleared (tokens are few; this only bounds
/// memory against a flood of distinct valid tokens).
const AUTH_CACHE_MAX: usize = 10_000;

/// The cache: token hash → what it authenticated as. Cheap to clone; clones share
/// entries.
#[derive(Clone)]
pub struct AuthCache(CoherentCache<[u8; 32], AgentPrincipal>);

impl AuthCache {
    /// A cache trusting entries for `ttl` (zero disables caching). It serves nothing
    /// until its change listener reports itself current.
    pub fn new(ttl: Duration) -> Self {
        AuthCache(CoherentCache::new(ttl, AUTH_CACHE_MAX))
    }

    /// Whether the cache is on at all (a zero TTL needs no listener).
    pub fn enabled(&self) -> bool {
        self.0.enabled()
    }

    /// The principal `key` (a token's SHA-256) was verified as, if it was verified
    /// within the TTL, its endpoint has not expired and the listener is current.
    pub fn get(&self, key: &[u8; 32]) -> Option<AgentPrincipal> {
        self.0.get(key, |p| p.expires_at.is_none_or(|e| e > Utc::now()))
    }

    /// The generation now: take it before a lookup and pass it to [`AuthCache::put`].
    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    /// Keeps a lookup started at `generation`, unless an eviction (or a change of the
    /// listener's state) happened since: its answer may predate the change.
    pub fn put(&self, generation: u64, key: [u8; 32], principal: AgentPrincipal) {
        self.0.put(generation, key, principal);
    }

    /// Forgets every cached token of `endpoint` (it was revoked or changed).
    pub fn evict(&self, endpoint: EndpointId) {
        self.0.evict(|p| p.endpoint_id == endpoint);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.0.clear();
    }

    /// Whether the change listener is listening (entries are served only then).
    pub fn is_current(&self) -> bool {
        self.0.is_current()
    }
}

impl Follower for AuthCache {
    fn set_current(&self, current: bool) {
        self.0.set_current(current);
    }

    /// The payload is an endpoint id; anything else (a TRUNCATE's `*`) forgets all.
    fn changed(&self, payload: &str) {
        match payload.parse::<uuid::Uuid>() {
            Ok(id) => self.evict(EndpointId(id)),
            Err(_) => self.clear(),
        }
    }

    /// Revocations wait for this acknowledgement (see [`super::confirm`]).
    fn acks(&self) -> Option<&'static str> {
        Some(super::confirm::AUTH_ACKS_CHANNEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::ScopeId;

    fn principal(endpoint: u128, expires_at: Option<chrono::DateTime<Utc>>) -> AgentPrincipal {
        AgentPrincipal {
            endpoint_id: EndpointId(uuid::Uuid::from_u128(endpoint)),
            scope_id: ScopeId(uuid::Uuid::from_u128(100)),
            slug: "worker".into(),
            grants: Vec::new(),
            default_lease_seconds: None,
            expires_at,
        }
    }

    fn listening() -> AuthCache {
        let cache = AuthCache::new(Duration::from_secs(60));
        cache.set_current(true);
        cache
    }

    #[test]
    fn an_entry_is_served_until_its_endpoint_is_evicted() {
        let cache = listening();
        let g = cache.generation();
        cache.put(g, [1; 32], principal(1, None));
        cache.put(g, [2; 32], principal(2, None));
        assert!(cache.get(&[1; 32]).is_some());
        cache.changed(&uuid::Uuid::from_u128(1).to_string());
        assert!(cache.get(&[1; 32]).is_none());
        assert!(cache.get(&[2; 32]).is_some(), "another endpoint's token is kept");
        cache.changed("*");
        assert!(cache.get(&[2; 32]).is_none(), "an unreadable payload forgets everything");
    }

    #[test]
    fn nothing_is_served_or_kept_while_the_listener_is_not_current() {
        let cache = AuthCache::new(Duration::from_secs(60));
        cache.put(cache.generation(), [1; 32], principal(1, None));
        assert!(cache.get(&[1; 32]).is_none(), "before the listener first listens");
        cache.set_current(true);
        cache.put(cache.generation(), [1; 32], principal(1, None));
        assert!(cache.get(&[1; 32]).is_some());
        cache.set_current(false);
        assert!(cache.get(&[1; 32]).is_none(), "a lost listener turns the cache off");
        cache.set_current(true);
        assert!(cache.get(&[1; 32]).is_none(), "what was cached before the loss is gone after it");
    }

    #[test]
    fn a_lookup_that_raced_an_eviction_or_a_reconnect_is_not_kept() {
        let cache = listening();
        let started = cache.generation();
        cache.evict(EndpointId(uuid::Uuid::from_u128(2)));
        cache.put(started, [1; 32], principal(1, None));
        assert!(cache.get(&[1; 32]).is_none(), "an eviction of any endpoint raced it");
        let started = cache.generation();
        cache.set_current(false);
        cache.set_current(true);
        cache.put(started, [1; 32], principal(1, None));
        assert!(cache.get(&[1; 32]).is_none(), "the listener reconnected meanwhile");
    }

    #[test]
    fn an_entry_is_never_served_past_its_endpoints_expiry_or_the_ttl() {
        let cache = listening();
        let past = Utc::now() - chrono::Duration::seconds(1);
        cache.put(cache.generation(), [1; 32], principal(1, Some(past)));
        assert!(cache.get(&[1; 32]).is_none());
        let off = AuthCache::new(Duration::ZERO);
        off.set_current(true);
        off.put(off.generation(), [1; 32], principal(1, None));
        assert!(!off.enabled() && off.get(&[1; 32]).is_none(), "a zero TTL caches nothing");
    }
}
