//! The agent's `notifications` routes (grant `notifications`, never implied): its
//! owner's sinks, by name, in the endpoint's own owner scope. The answers are the
//! operator routes' (`SinkView`, `Subscriptions`, `TestAnswer`); no answer carries a
//! secret.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::auth::Agent;
use super::super::body::Json;
use super::super::operator::sinks::{SinkList, SinkView, Subscriptions, TestAnswer};
use crate::domain::ids::ConnectionId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::sinks::rules::vocabulary::{AppriseMode, SinkKind};
use crate::sinks::service::agent as agent_sinks;
use crate::sinks::service::{SinkSpec, Subscription};
use crate::store::endpoints::AgentPrincipal;
use crate::web::path_name::PathName;

/// A sink to create or replace under the name in the path. It posts to its connection's
/// destination, which only a human admin of the owner sets: an agent never chooses
/// where a secret goes.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PutSinkBody {
    /// An existing connection of the endpoint's owner, bound to a destination (else
    /// `reference_out_of_scope`, or 409 while it is unbound). Its secret is never read
    /// back.
    pub connection_id: ConnectionId,
    /// `gotify` or `apprise`; absent: the connection's kind (a different kind is
    /// `reference_out_of_scope`).
    pub kind: Option<SinkKind>,
    /// Optional, for clients that still send it: must be the connection's destination
    /// (normalised), else 422 `destination_mismatch` and nothing changes.
    pub base_url: Option<String>,
    /// Apprise only: `key` (default) or `urls` (which must pass the scheme allowlist).
    pub apprise_mode: Option<AppriseMode>,
    /// A new sink: default true. A replaced sink: absent leaves it as it was.
    pub enabled: Option<bool>,
}

/// The owner's sinks (never a secret).
#[utoipa::path(get, path = "/api/v1/agent/sinks", operation_id = "agent_list_sinks", tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = SinkList), (status = 403, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, agent: Agent) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(list_answer(&s, &agent.0).await?))
}

/// What `list` answers (the route and the MCP tool `list_sinks`).
pub async fn list_answer(s: &Services, me: &AgentPrincipal) -> Result<SinkList> {
    let rows = agent_sinks::list(s, me).await?;
    Ok(SinkList { sinks: rows.into_iter().map(SinkView::from).collect() })
}

/// Creates the owner's sink `name` (201), or replaces its kind, connection (and so
/// destination), mode and `enabled` (200; its budget and subscriptions stay). Refused as
/// the operator's create is: `reference_out_of_scope`, an unbound connection (409),
/// `destination_mismatch`, `forbidden_scheme`, the per-owner cap (409); nothing changes
/// when refused.
#[utoipa::path(put, path = "/api/v1/agent/sinks/{name}", operation_id = "agent_put_sink", request_body = PutSinkBody,
    tag = "agent", params(("name" = inline(PathName), Path, description = "the sink's name, 1–100 characters")),
    security(("endpoint_token" = [])),
    responses((status = 200, body = SinkView), (status = 201, body = SinkView), (status = 403, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn put(
    s: web::Data<Services>,
    agent: Agent,
    name: web::Path<PathName>,
    body: Json<PutSinkBody>,
) -> Result<HttpResponse> {
    let (view, created) = put_answer(&s, &agent.0, &name, body.0).await?;
    let mut answer = if created { HttpResponse::Created() } else { HttpResponse::Ok() };
    Ok(answer.json(view))
}

/// What `put` answers, and whether it created the sink (the route and the MCP tool
/// `set_sink`).
pub async fn put_answer(s: &Services, me: &AgentPrincipal, name: &str, b: PutSinkBody) -> Result<(SinkView, bool)> {
    let spec = SinkSpec {
        kind: b.kind,
        base_url: b.base_url,
        connection_id: b.connection_id,
        apprise_mode: b.apprise_mode,
        enabled: b.enabled,
    };
    let (row, created) = agent_sinks::put(s, me, name, spec).await?;
    Ok((SinkView::from(row), created))
}

/// Deletes the owner's sink `name` and its subscriptions.
#[utoipa::path(delete, path = "/api/v1/agent/sinks/{name}", operation_id = "agent_delete_sink", tag = "agent",
    params(("name" = inline(PathName), Path, description = "the sink's name")), security(("endpoint_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, agent: Agent, name: web::Path<PathName>) -> Result<HttpResponse> {
    agent_sinks::delete(&s, &agent.0, &name).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Sends the owner's sink `name` one harmless test message (past its budget and
/// subscriptions, never past the outbound guard); at most 6 a minute per sink (429).
#[utoipa::path(post, path = "/api/v1/agent/sinks/{name}/test", operation_id = "agent_test_sink", tag = "agent",
    params(("name" = inline(PathName), Path, description = "the sink's name")), security(("endpoint_token" = [])),
    responses((status = 200, body = TestAnswer), (status = 403, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope, description = "its connection is not bound to a destination"),
              (status = 429, body = ErrorEnvelope)))]
pub async fn test(s: web::Data<Services>, agent: Agent, name: web::Path<PathName>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(test_answer(&s, &agent.0, &name).await?))
}

/// What `test` answers (the route and the MCP tool `test_sink`).
pub async fn test_answer(s: &Services, me: &AgentPrincipal, name: &str) -> Result<TestAnswer> {
    Ok(TestAnswer::from(agent_sinks::test(s, me, name).await?))
}

/// Replaces the subscriptions of the owner's sink `name` (filters may name only the
/// owner's endpoints and webhooks, else `reference_out_of_scope` and nothing changes).
/// An agent may not turn payload excerpts on (`include_excerpt: true` is 403
/// `forbidden`); what it replaces goes, excerpts included.
#[utoipa::path(put, path = "/api/v1/agent/sinks/{name}/subscriptions", operation_id = "agent_set_subscriptions",
    request_body = Subscriptions, tag = "agent", params(("name" = inline(PathName), Path, description = "the sink's name")),
    security(("endpoint_token" = [])),
    responses((status = 200, body = Subscriptions), (status = 403, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn put_subscriptions(
    s: web::Data<Services>,
    agent: Agent,
    name: web::Path<PathName>,
    body: Json<Subscriptions>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(subscriptions_answer(&s, &agent.0, &name, body.0).await?))
}

/// What `put_subscriptions` answers (the route and the MCP tool `set_sink_subscriptions`).
pub async fn subscriptions_answer(
    s: &Services,
    me: &AgentPrincipal,
    name: &str,
    body: Subscriptions,
) -> Result<Subscriptions> {
    let subs = body.subscriptions.into_iter().map(Subscription::from).collect();
    Ok(Subscriptions::from(agent_sinks::set_subscriptions(s, me, name, subs).await?))
}
