//! Webhooks by ingest token, kept briefly in memory with their secret opened and their
//! rules parsed. Every delivery would otherwise pay a database round trip, an AES-GCM
//! open and a rules parse before its own work; a busy provider sends many per second
//! to the same webhook.
//!
//! Entries live for the same short time as verified endpoint tokens (`auth_cache_ms`)
//! and are kept coherent the same way: triggers NOTIFY every change of a webhook
//! (migration `webhook_change_notify`, payload `webhook:<id>` on the auth channel) and
//! the instance's auth listener evicts it, whichever instance made the change; while
//! that listener is not current nothing is served.

use std::sync::Arc;
use std::time::Duration;

use crate::coherent_cache::CoherentCache;
use crate::domain::ids::WebhookId;
use crate::intake::rules::{self, RuleSet};
use crate::intake::trusted_senders::TrustedActors;
use crate::store::webhooks::IngestTarget;
use crate::vault::Vault;

/// A webhook ready to take deliveries.
#[derive(Debug)]
pub struct IngestWebhook {
    /// The webhook's row (without its sealed secret).
    pub webhook: crate::store::webhooks::WebhookRow,
    /// The signing secret: none when the webhook has none, an error text when the
    /// stored secret cannot be opened (the delivery then answers 503).
    pub secret: Result<Option<Vec<u8>>, String>,
    /// The rules, or why they do not parse (a delivery then faults into quarantine).
    pub rules: Result<RuleSet, String>,
    /// Whose deliveries are trusted (none: nobody's, for sources with actors).
    pub trusted_actors: Option<TrustedActors>,
}

impl IngestWebhook {
    /// Opens and parses what every delivery needs, once.
    pub fn prepare(target: IngestTarget, vault: &Vault) -> Self {
        let secret = match target.sealed_secret.as_deref() {
            Some(sealed) => vault.open(sealed).map(Some).map_err(|e| e.to_string()),
            None => Ok(None),
        };
        let webhook = target.webhook;
        let rules = rules::parse(&webhook.rules).map_err(|e| e.to_string());
        let trusted_actors = webhook.trusted_actors.clone().and_then(|v| serde_json::from_value(v).ok());
        IngestWebhook { webhook, secret, rules, trusted_actors }
    }
}

/// Most entries held before the cache is cleared; it only bounds memory.
const WEBHOOK_CACHE_MAX: usize = 10_000;

/// The cache: token hash → the prepared webhook. Cheap to clone; clones share entries.
#[derive(Clone)]
pub struct WebhookCache(CoherentCache<[u8; 32], Arc<IngestWebhook>>);

/// What a change notification names for a webhook: `webhook:<id>`.
pub const WEBHOOK_CHANGE_PREFIX: &str = "webhook:";

impl WebhookCache {
    /// A cache trusting entries for `ttl` (zero disables caching); it serves nothing
    /// until the change listener reports itself current.
    pub fn new(ttl: Duration) -> Self {
        WebhookCache(CoherentCache::new(ttl, WEBHOOK_CACHE_MAX))
    }

    /// The fresh entry for a token hash, if any.
    pub fn get(&self, key: &[u8; 32]) -> Option<Arc<IngestWebhook>> {
        self.0.get(key, |_| true)
    }

    /// The generation now: take it before a lookup and pass it to [`WebhookCache::put`].
    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    /// Keeps a webhook loaded by a lookup started at `generation` (unless a change
    /// raced it).
    pub fn put(&self, generation: u64, key: [u8; 32], webhook: Arc<IngestWebhook>) {
        self.0.put(generation, key, webhook);
    }

    /// Forgets a webhook (its rules or settings changed).
    pub fn evict(&self, id: WebhookId) {
        self.0.evict(|w| w.webhook.id == id);
    }

    /// Forgets everything.
    pub fn clear(&self) {
        self.0.clear();
    }

    /// The change listener is (or is no longer) listening.
    pub fn set_current(&self, current: bool) {
        self.0.set_current(current);
    }

    /// Applies a change notification: `webhook:<id>` evicts that webhook, `*` (a
    /// TRUNCATE) forgets everything, anything else is not about webhooks.
    pub fn changed(&self, payload: &str) {
        if payload == "*" {
            self.clear();
        } else if let Some(id) = payload.strip_prefix(WEBHOOK_CHANGE_PREFIX) {
            match id.parse::<uuid::Uuid>() {
                Ok(id) => self.evict(WebhookId(id)),
                Err(_) => self.clear(),
            }
        }
    }
}
