//! The agent's `notifications` routes (grant `notifications`, never implied): its
//! owner's sinks, by name, in the endpoint's own owner scope. Each returns its verb's
//! answer, [`crate::agent_api::sinks`], as the MCP tool does; the answers are the
//! operator routes' (`SinkView`, `Subscriptions`, `TestAnswer`); no answer carries a
//! secret.

use actix_web::{HttpResponse, web};

use super::super::body::Json;
use crate::agent_api::auth::Agent;
use crate::agent_api::sink_dto::{SinkList, SinkView, Subscriptions, TestAnswer};
use crate::agent_api::sinks::{PutSinkBody, list_answer, put_answer, subscriptions_answer, test_answer};
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::sinks::service::agent as agent_sinks;
use crate::web::path_name::PathName;

/// The owner's sinks (never a secret).
#[utoipa::path(get, path = "/api/v1/agent/sinks", operation_id = "agent_list_sinks", tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = SinkList), (status = 403, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, agent: Agent) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(list_answer(&s, &agent.0).await?))
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
