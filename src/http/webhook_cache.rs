//! Webhooks by ingest token, kept briefly in memory with their secret opened and their
//! rules parsed. Every delivery would otherwise pay a database round trip, an AES-GCM
//! open and a rules parse before its own work; a busy provider sends many per second
//! to the same webhook.
//!
//! Entries live for the same short time as verified endpoint tokens (`auth_cache_ms`).
//! A change made through this instance (new rules) evicts at once; one made through
//! another instance is seen within that time.

use std::sync::Arc;
use std::time::Duration;

use crate::domain::ids::WebhookId;
use crate::intake::actors::TrustedActors;
use crate::intake::rules::{self, RuleSet};
use crate::store::webhooks::IngestTarget;
use crate::ttl_cache::TtlCache;
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
pub struct WebhookCache(TtlCache<[u8; 32], Arc<IngestWebhook>>);

impl WebhookCache {
    /// A cache trusting entries for `ttl` (zero disables caching).
    pub fn new(ttl: Duration) -> Self {
        WebhookCache(TtlCache::new(ttl, WEBHOOK_CACHE_MAX))
    }

    /// The fresh entry for a token hash, if any.
    pub fn get(&self, key: &[u8; 32]) -> Option<Arc<IngestWebhook>> {
        self.0.get(key)
    }

    /// Keeps a freshly loaded webhook.
    pub fn put(&self, key: [u8; 32], webhook: Arc<IngestWebhook>) {
        self.0.put(key, webhook);
    }

    /// Forgets a webhook (its rules or settings changed).
    pub fn evict(&self, id: WebhookId) {
        self.0.retain(|_, w| w.webhook.id != id);
    }
}
