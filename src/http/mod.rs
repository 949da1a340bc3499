//! The REST API: one route table (each route naming the service action it performs),
//! the operator's auth extractor, body extractors, agent and operator handlers, health,
//! metrics and the OpenAPI document. Handlers parse, call one [`crate::service`]
//! function (an agent route: its verb's answer in [`crate::agent_api`], shared with the
//! MCP tools), and render JSON.

pub mod abandoned;
pub mod agent;
pub mod auth;
pub mod body;
pub mod dto;
pub mod health;
pub mod intake;
pub mod metrics;
pub mod openapi;
pub mod operator;

use actix_web::http::Method;
use actix_web::{HttpResponse, web};

use crate::error::Error;
use crate::intake::INGEST_PREFIX;
use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The answer to a route that does not exist: a JSON 404.
pub async fn not_found() -> Result<HttpResponse, Error> {
    Err(Error::NotFound)
}

/// Every route of the API, each with the action it performs. Order matters where
/// patterns overlap: `claim-next` and the batch verbs (`complete`, `fail`, `batch`) come
/// before `{id}`.
pub fn table() -> Vec<Entry> {
    use Method as M;
    use agent::{batches, hooks as ah, owner_page, presence, sinks as asinks, todos as at};
    use operator::{
        admission, connections, dead_letters, digests, endpoints, hooks as oh, quarantine, queues, sinks, todos as ot,
        webhooks,
    };
    vec![
        Entry::new(M::GET, "/healthz", Action::Health, health::healthz),
        Entry::new(M::GET, "/readyz", Action::Health, health::readyz),
        Entry::new(M::GET, "/metrics", Action::ScrapeMetrics, metrics::scrape),
        Entry::new(M::GET, "/api/openapi.json", Action::ReadApiDocument, openapi::document),
        Entry::new(M::POST, INGEST_ROUTE, Action::Ingest, intake::ingest),
        Entry::new(M::GET, "/api/v1/agent/todos", Action::AgentListTodos, at::list),
        Entry::new(M::POST, "/api/v1/agent/todos", Action::AgentCreateTodo, at::create),
        // Literal paths before `{id}`: `claim-next`, and the batch verbs.
        Entry::new(M::POST, "/api/v1/agent/todos/claim-next", Action::ClaimNext, at::claim_next),
        Entry::new(M::POST, "/api/v1/agent/todos/complete", Action::CompleteMany, batches::complete),
        Entry::new(M::POST, "/api/v1/agent/todos/fail", Action::FailMany, batches::fail),
        Entry::new(M::POST, "/api/v1/agent/todos/batch", Action::AgentCreateTodos, batches::create),
        Entry::new(M::GET, "/api/v1/agent/todos/{id}", Action::AgentGetTodo, at::get),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/claim", Action::Claim, at::claim),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/heartbeat", Action::Heartbeat, at::heartbeat),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/complete", Action::Complete, at::complete),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/fail", Action::Fail, at::fail),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/release", Action::Release, at::release),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/interrupt", Action::Interrupt, at::interrupt),
        Entry::new(M::POST, "/api/v1/agent/todos/{id}/resume", Action::Resume, at::resume),
        Entry::new(M::POST, "/api/v1/agent/presence/clock-in", Action::ClockIn, presence::clock_in),
        Entry::new(M::POST, "/api/v1/agent/presence/clock-out", Action::ClockOut, presence::clock_out),
        Entry::new(M::POST, "/api/v1/agent/hooks", Action::AgentCreateHook, ah::create),
        Entry::new(M::GET, "/api/v1/agent/hooks", Action::AgentListHooks, ah::list),
        Entry::new(M::POST, "/api/v1/agent/hooks/{id}/rotate", Action::AgentRotateHook, ah::rotate),
        Entry::new(M::DELETE, "/api/v1/agent/hooks/{id}", Action::AgentDeleteHook, ah::delete),
        Entry::new(M::GET, "/api/v1/agent/sinks", Action::AgentListSinks, asinks::list),
        Entry::new(M::PUT, "/api/v1/agent/sinks/{name}", Action::AgentPutSink, asinks::put),
        Entry::new(M::DELETE, "/api/v1/agent/sinks/{name}", Action::AgentDeleteSink, asinks::delete),
        Entry::new(M::POST, "/api/v1/agent/sinks/{name}/test", Action::AgentTestSink, asinks::test),
        Entry::new(
            M::PUT,
            "/api/v1/agent/sinks/{name}/subscriptions",
            Action::AgentSetSubscriptions,
            asinks::put_subscriptions,
        ),
        Entry::new(M::POST, "/api/v1/agent/notify-owner", Action::PageOwner, owner_page::page),
        Entry::new(M::POST, "/api/v1/endpoints", Action::VendEndpoint, endpoints::vend),
        Entry::new(M::GET, "/api/v1/endpoints", Action::ListEndpoints, endpoints::list),
        Entry::new(M::POST, "/api/v1/endpoints/{id}/revoke", Action::RevokeEndpoint, endpoints::revoke),
        Entry::new(M::POST, "/api/v1/endpoints/{id}/fanout-grants", Action::GrantFanout, endpoints::grant_fanout),
        Entry::new(M::DELETE, "/api/v1/endpoints/{id}/fanout-grants", Action::RevokeFanout, endpoints::revoke_fanout),
        Entry::new(M::POST, "/api/v1/endpoints/{id}/hooks", Action::CreateHook, oh::create),
        Entry::new(M::GET, "/api/v1/endpoints/{id}/hooks", Action::ListHooks, oh::list),
        Entry::new(M::PUT, "/api/v1/endpoints/{id}/queues/{queue}/admission", Action::SetAdmission, admission::set),
        Entry::new(M::GET, "/api/v1/endpoints/{id}/admission", Action::ListAdmission, admission::list),
        Entry::new(M::POST, "/api/v1/hooks/{id}/rotate", Action::RotateHook, oh::rotate),
        Entry::new(M::POST, "/api/v1/hooks/{id}/enable", Action::EnableHook, oh::enable),
        Entry::new(M::POST, "/api/v1/hooks/{id}/disable", Action::DisableHook, oh::disable),
        Entry::new(M::DELETE, "/api/v1/hooks/{id}", Action::DeleteHook, oh::delete),
        Entry::new(M::GET, "/api/v1/todos/{id}", Action::ShowTodo, ot::get),
        Entry::new(M::POST, "/api/v1/todos/{id}/fail", Action::OperatorFail, ot::fail),
        Entry::new(M::POST, "/api/v1/todos/{id}/retry", Action::RetryNow, ot::retry),
        Entry::new(M::GET, "/api/v1/dead-letters", Action::ListDeadLetters, dead_letters::list),
        Entry::new(M::GET, "/api/v1/queues", Action::ListQueues, queues::list),
        Entry::new(M::POST, "/api/v1/webhooks", Action::CreateWebhook, webhooks::create),
        Entry::new(M::GET, "/api/v1/webhooks", Action::ListWebhooks, webhooks::list),
        Entry::new(M::PUT, "/api/v1/webhooks/{id}/rules", Action::SaveRules, webhooks::put_rules),
        Entry::new(M::POST, "/api/v1/webhooks/{id}/rules/test", Action::DryRunRules, webhooks::test_rules),
        Entry::new(M::GET, "/api/v1/quarantine", Action::ListHeld, quarantine::list),
        Entry::new(M::POST, "/api/v1/quarantine/{id}/release", Action::ReleaseHeld, quarantine::release),
        Entry::new(M::POST, "/api/v1/quarantine/{id}/discard", Action::DiscardHeld, quarantine::discard),
        Entry::new(M::POST, "/api/v1/connections", Action::CreateConnection, connections::create),
        Entry::new(M::GET, "/api/v1/connections", Action::ListConnections, connections::list),
        Entry::new(M::POST, "/api/v1/connections/{id}/rotate", Action::RotateConnection, connections::rotate),
        Entry::new(M::POST, "/api/v1/connections/{id}/test", Action::TestConnection, connections::test),
        Entry::new(M::DELETE, "/api/v1/connections/{id}", Action::DeleteConnection, connections::delete),
        Entry::new(M::POST, "/api/v1/sinks", Action::CreateSink, sinks::create),
        Entry::new(M::GET, "/api/v1/sinks", Action::ListSinks, sinks::list),
        Entry::new(M::PATCH, "/api/v1/sinks/{id}", Action::UpdateSink, sinks::update),
        Entry::new(M::DELETE, "/api/v1/sinks/{id}", Action::DeleteSink, sinks::delete),
        Entry::new(M::POST, "/api/v1/sinks/{id}/test", Action::TestSink, sinks::test),
        Entry::new(M::GET, "/api/v1/sinks/{id}/deliveries", Action::ListSinkSends, sinks::sends),
        Entry::new(M::PUT, "/api/v1/sinks/{id}/subscriptions", Action::SetSubscriptions, sinks::put_subscriptions),
        Entry::new(M::GET, "/api/v1/sinks/{id}/subscriptions", Action::ShowSubscriptions, sinks::get_subscriptions),
        Entry::new(M::POST, "/api/v1/digests", Action::CreateDigest, digests::create),
        Entry::new(M::GET, "/api/v1/digests", Action::ListDigests, digests::list),
        Entry::new(M::GET, "/api/v1/digests/{id}", Action::ShowDigest, digests::get),
        Entry::new(M::PUT, "/api/v1/digests/{id}", Action::UpdateDigest, digests::replace),
        Entry::new(M::DELETE, "/api/v1/digests/{id}", Action::DeleteDigest, digests::delete),
        Entry::new(M::POST, "/api/v1/digests/{id}/preview", Action::PreviewDigest, digests::preview),
    ]
}

/// The ingest route's pattern.
const INGEST_ROUTE: &str = "/webhooks/w/{ingest_token}";

/// Mounts the API's routes, with the query and path extractors' JSON refusals.
pub fn routes(cfg: &mut web::ServiceConfig) {
    debug_assert!(INGEST_ROUTE.starts_with(INGEST_PREFIX));
    cfg.app_data(body::query_config()).app_data(body::path_config());
    crate::web::routes::mount(cfg, table());
}
