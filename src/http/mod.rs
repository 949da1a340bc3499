//! The HTTP surface: one route table, auth extractors, agent and operator handlers,
//! health and the OpenAPI document.

pub mod abandoned;
pub mod agent;
pub mod auth;
pub mod body;
pub mod body_read;
pub mod dto;
pub mod health;
pub mod hooks;
pub mod intake;
pub mod metrics;
pub mod openapi;
pub mod operator;
pub mod webhook_cache;

use actix_web::{HttpResponse, web};

use crate::error::Error;
use crate::store::Store;
use auth::AuthCache;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The store.
    pub store: Store,
    /// Verified endpoint tokens.
    pub auth_cache: AuthCache,
    /// Webhooks by ingest token, briefly.
    pub webhook_cache: webhook_cache::WebhookCache,
    /// Secrets at rest.
    pub vault: crate::vault::Vault,
    /// Public base URL (links, ingest URLs), without a trailing slash.
    pub base_url: String,
    /// The process's metrics.
    pub metrics: crate::metrics::Metrics,
    /// Bearer token for `/metrics`; none refuses every scrape.
    pub metrics_token: Option<String>,
    /// Notify-hook kill switch, ceiling and plain-http allowance.
    pub hooks: hooks::HookSettings,
    /// The outbound SSRF guard (hook URLs are checked with it when saved).
    pub guard: crate::outbound::Guard,
    /// The dispatcher's view of which hooks exist (evicted when one changes here).
    pub hook_cache: crate::actors::notify::HookCache,
    /// The Board's cookie rules and sign-in limits.
    pub board: crate::board::BoardState,
    /// Longest a request body may take to arrive once its headers have.
    pub body_read_timeout: std::time::Duration,
}

async fn not_found() -> Result<HttpResponse, Error> {
    Err(Error::NotFound)
}

/// Where deliveries come in: `POST {INGEST_PREFIX}{ingest_token}`.
pub const INGEST_PREFIX: &str = "/webhooks/w/";

/// The prefix of every ingest route. The outbound guard refuses targets under any of
/// them, so a hook cannot feed notifications back in as deliveries.
pub const INGEST_ROUTE_PREFIXES: &[&str] = &[INGEST_PREFIX];

/// The route table.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.app_data(body::query_config())
        .app_data(body::path_config())
        .route("/healthz", web::get().to(health::healthz))
        .route("/readyz", web::get().to(health::readyz))
        .route("/metrics", web::get().to(metrics::scrape))
        .route("/api/openapi.json", web::get().to(openapi::document))
        .route(&format!("{INGEST_PREFIX}{{ingest_token}}"), web::post().to(intake::ingest))
        .service(
            web::scope("/api/v1/agent")
                .route("/todos", web::get().to(agent::todos::list))
                .route("/todos", web::post().to(agent::todos::create))
                .route("/todos/claim-next", web::post().to(agent::todos::claim_next))
                .route("/todos/{id}", web::get().to(agent::todos::get))
                .route("/todos/{id}/claim", web::post().to(agent::todos::claim))
                .route("/todos/{id}/heartbeat", web::post().to(agent::todos::heartbeat))
                .route("/todos/{id}/complete", web::post().to(agent::todos::complete))
                .route("/todos/{id}/fail", web::post().to(agent::todos::fail))
                .route("/todos/{id}/release", web::post().to(agent::todos::release))
                .route("/todos/{id}/interrupt", web::post().to(agent::todos::interrupt))
                .route("/todos/{id}/resume", web::post().to(agent::todos::resume))
                .route("/presence/clock-in", web::post().to(agent::presence::clock_in))
                .route("/presence/clock-out", web::post().to(agent::presence::clock_out))
                .route("/hooks", web::post().to(agent::hooks::create))
                .route("/hooks", web::get().to(agent::hooks::list))
                .route("/hooks/{id}/rotate", web::post().to(agent::hooks::rotate))
                .route("/hooks/{id}", web::delete().to(agent::hooks::delete)),
        )
        .service(
            web::scope("/api/v1")
                .route("/endpoints", web::post().to(operator::endpoints::vend))
                .route("/endpoints", web::get().to(operator::endpoints::list))
                .route("/endpoints/{id}/revoke", web::post().to(operator::endpoints::revoke))
                .route("/endpoints/{id}/fanout-grants", web::post().to(operator::endpoints::grant_fanout))
                .route("/endpoints/{id}/fanout-grants", web::delete().to(operator::endpoints::revoke_fanout))
                .route("/endpoints/{id}/hooks", web::post().to(operator::hooks::create))
                .route("/endpoints/{id}/hooks", web::get().to(operator::hooks::list))
                .route("/hooks/{id}/rotate", web::post().to(operator::hooks::rotate))
                .route("/hooks/{id}/enable", web::post().to(operator::hooks::enable))
                .route("/hooks/{id}/disable", web::post().to(operator::hooks::disable))
                .route("/hooks/{id}", web::delete().to(operator::hooks::delete))
                .route("/todos/{id}", web::get().to(operator::todos::get))
                .route("/todos/{id}/fail", web::post().to(operator::todos::fail))
                .route("/todos/{id}/retry", web::post().to(operator::todos::retry))
                .route("/dead-letters", web::get().to(operator::dead_letters::list))
                .route("/webhooks", web::post().to(operator::webhooks::create))
                .route("/webhooks", web::get().to(operator::webhooks::list))
                .route("/webhooks/{id}/rules", web::put().to(operator::webhooks::put_rules))
                .route("/webhooks/{id}/rules/test", web::post().to(operator::webhooks::test_rules))
                .route("/quarantine", web::get().to(operator::quarantine::list))
                .route("/quarantine/{id}/release", web::post().to(operator::quarantine::release))
                .route("/quarantine/{id}/discard", web::post().to(operator::quarantine::discard)),
        )
        .configure(crate::board::routes)
        .default_service(web::to(not_found));
}
