//! The agent's hook routes (grant `notify_hooks`, never implied): an agent
//! manages its own endpoint's hooks only; any other hook is not found.

use actix_web::{HttpResponse, web};

use super::super::auth::Agent;
use super::super::body::Json;
use super::super::hooks::{CreateHookBody, CreatedHookView, DeletedHookView, HookList, RotatedHookView};
use crate::domain::ids::HookId;
use crate::error::{ErrorEnvelope, Result};
use crate::hooks::service as hooks;
use crate::service::Services;
use crate::store::endpoints::AgentPrincipal;

/// Adds a notify hook to this endpoint; the signing secret is answered once.
#[utoipa::path(post, path = "/api/v1/agent/hooks", operation_id = "agent_create_hook", request_body = CreateHookBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 201, body = CreatedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, agent: Agent, body: Json<CreateHookBody>) -> Result<HttpResponse> {
    Ok(HttpResponse::Created().json(create_answer(&s, &agent.0, body.0).await?))
}

/// What `create` answers (the route and the MCP tool `create_hook`).
pub async fn create_answer(s: &Services, me: &AgentPrincipal, body: CreateHookBody) -> Result<CreatedHookView> {
    Ok(CreatedHookView::from(hooks::agent_create(s, me, body.into()).await?))
}

/// This endpoint's hooks with their health and the ceiling (never a secret).
#[utoipa::path(get, path = "/api/v1/agent/hooks", operation_id = "agent_list_hooks", tag = "agent", security(("endpoint_token" = [])),
    responses((status = 200, body = HookList), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, agent: Agent) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(list_answer(&s, &agent.0).await?))
}

/// What `list` answers (the route and the MCP tool `list_hooks`).
pub async fn list_answer(s: &Services, me: &AgentPrincipal) -> Result<HookList> {
    let rows = hooks::agent_list(s, me).await?;
    Ok(HookList::new(&rows, s.hook_settings().max))
}

/// Replaces one of this endpoint's hooks' signing secret (answered once); see the
/// operator route for what rotation re-enables.
#[utoipa::path(post, path = "/api/v1/agent/hooks/{id}/rotate", operation_id = "agent_rotate_hook", tag = "agent",
    params(("id" = HookId, Path, description = "notify hook id")), security(("endpoint_token" = [])),
    responses((status = 200, body = RotatedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope)))]
pub async fn rotate(s: web::Data<Services>, agent: Agent, id: web::Path<HookId>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(rotate_answer(&s, &agent.0, id.into_inner()).await?))
}

/// What `rotate` answers (the route and the MCP tool `rotate_hook`).
pub async fn rotate_answer(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<RotatedHookView> {
    Ok(RotatedHookView::from(hooks::agent_rotate(s, me, id).await?))
}

/// Deletes one of this endpoint's hooks.
#[utoipa::path(delete, path = "/api/v1/agent/hooks/{id}", operation_id = "agent_delete_hook", tag = "agent",
    params(("id" = HookId, Path, description = "notify hook id")), security(("endpoint_token" = [])),
    responses((status = 200, body = DeletedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, agent: Agent, id: web::Path<HookId>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(delete_answer(&s, &agent.0, id.into_inner()).await?))
}

/// What `delete` answers (the route and the MCP tool `delete_hook`).
pub async fn delete_answer(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<DeletedHookView> {
    hooks::agent_delete(s, me, id).await?;
    Ok(DeletedHookView { hook_id: id, deleted: true })
}
