//! The one door for every action. The operator API, the agent API and the Board are
//! thin adapters over these functions: they authenticate and parse, call one service
//! function with the caller ([`Principal`]), and render what it answers. Each service
//! function validates its input, checks the caller against the permission table
//! ([`permissions`]), calls the store in the scope the caller acts in, and keeps the
//! instance's caches honest. The store itself is private to this module: an adapter
//! cannot reach the database except through a service, so a new page cannot skip a
//! check.
//!
//! | module | actions |
//! |---|---|
//! | [`endpoints`] | vend, list, show, revoke, fan-out grants |
//! | [`webhooks`] | create, list, show, save rules, dry run |
//! | [`intake`] | receive a delivery (verify, trust, route, record) |
//! | [`quarantine`] | list, show, release, discard held deliveries |
//! | [`admission`] | admission budgets per (endpoint, queue): set, list |
//! | [`todos`] | operator reads, fail, retry now, bulk retry, dead letters, the Board's Todos view |
//! | [`agent`] | the agent's verbs: list, get, create, claim, heartbeat, complete, fail, release, interrupt, resume, presence |
//! | [`agent_batch`] | the agent's verbs in batches: claim-next with a limit, complete, fail and create many |
//! | [`group_commit`] | single claim-next and complete requests, answered by one statement while many are in flight |
//! | [`long_poll`] | `claim-next` with `wait_seconds`: the waiting requests, the claim bell and listener |
//! | [`auth`] | who a token or a session is (with the NOTIFY-coherent token cache) |
//! | [`sessions`] | Board sign-in and sign-out |
//! | [`health`] | readiness, metrics |
//!
//! The features of the second seed keep their actions in their own homes, behind the
//! same door: [`crate::hooks::service`] (hooks), [`crate::sinks::service`] (connections,
//! sinks, the agent's `notifications` verbs, owner pages) and [`crate::digests::service`].

pub mod admission;
pub mod agent;
pub mod agent_batch;
pub mod auth;
pub mod endpoints;
pub mod group_commit;
pub mod health;
pub mod intake;
pub mod long_poll;
pub mod owners;
pub mod permissions;
pub mod principal;
pub mod quarantine;
pub mod sessions;
pub mod todos;
pub mod webhook_cache;
pub mod webhooks;

pub use principal::Principal;

use crate::hooks::cache::HookCache;
use crate::hooks::settings::HookSettings;
use crate::metrics::Metrics;
use crate::outbound::Guard;
use crate::store::Store;
use crate::vault::Vault;
use auth::AuthCache;
use webhook_cache::WebhookCache;

/// Everything the services need, shared by every worker. Its fields are private:
/// adapters hold a `Services` and call its modules' functions, never the store.
#[derive(Clone)]
pub struct Services {
    pub(crate) store: Store,
    pub(crate) auth_cache: AuthCache,
    pub(crate) webhook_cache: WebhookCache,
    pub(crate) vault: Vault,
    pub(crate) base_url: String,
    pub(crate) metrics: Metrics,
    pub(crate) metrics_token: Option<String>,
    pub(crate) hooks: HookSettings,
    pub(crate) guard: Guard,
    pub(crate) hook_cache: HookCache,
    pub(crate) sinks: crate::sinks::settings::SinkSettings,
    pub(crate) digests: crate::digests::service::compose::DigestSettings,
    pub(crate) waiters: long_poll::Waiters,
    pub(crate) group_commits: group_commit::GroupCommits,
}

/// The parts start-up assembles [`Services`] from.
pub struct Parts {
    /// The store.
    pub store: Store,
    /// Verified endpoint tokens (evicted by the auth listener).
    pub auth_cache: AuthCache,
    /// Webhooks by ingest token (evicted by the auth listener).
    pub webhook_cache: WebhookCache,
    /// Secrets at rest.
    pub vault: Vault,
    /// Public base URL (links, ingest URLs), without a trailing slash.
    pub base_url: String,
    /// The process's metrics.
    pub metrics: Metrics,
    /// Bearer token for `/metrics`; none refuses every scrape.
    pub metrics_token: Option<String>,
    /// Hook kill switch, ceiling and plain-http allowance.
    pub hooks: HookSettings,
    /// The outbound SSRF guard (hook URLs are checked with it when saved).
    pub guard: Guard,
    /// The dispatcher's view of which hooks exist (evicted when one changes here).
    pub hook_cache: HookCache,
    /// Sink budgets, the per-owner cap and the Apprise scheme allowlist.
    pub sinks: crate::sinks::settings::SinkSettings,
    /// Digest links, the doorbell window and section timeouts.
    pub digests: crate::digests::service::compose::DigestSettings,
    /// The instance's waiting `claim-next` requests (woken by its claim listener).
    pub waiters: long_poll::Waiters,
}

impl Services {
    /// The services over `parts`.
    pub fn new(parts: Parts) -> Self {
        let Parts {
            store,
            auth_cache,
            webhook_cache,
            vault,
            base_url,
            metrics,
            metrics_token,
            hooks,
            guard,
            hook_cache,
            sinks,
            digests,
            waiters,
        } = parts;
        let group_commits = group_commit::GroupCommits::new(&metrics);
        Services {
            store,
            auth_cache,
            webhook_cache,
            vault,
            base_url,
            metrics,
            metrics_token,
            hooks,
            guard,
            hook_cache,
            sinks,
            digests,
            waiters,
            group_commits,
        }
    }

    /// The public base URL, without a trailing slash (for links and ingest URLs).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// What the hook routes obey (the Board shows the ceiling and the switch).
    pub fn hook_settings(&self) -> HookSettings {
        self.hooks
    }

    /// The process's metrics (for the adapters' own counts, as the MCP gate's refusals).
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}
