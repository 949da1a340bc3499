//! The agent's notify-hook routes (grant `notify_hooks`, never implied): an agent
//! manages its own endpoint's hooks only; any other hook is not found.

use actix_web::{HttpResponse, web};

use super::super::AppState;
use super::super::auth::Agent;
use super::super::body::Json;
use super::super::hooks::{self, CreateHookBody, CreatedHookView, DeletedHookView, HookList, RotatedHookView};
use crate::domain::grants::Verb;
use crate::domain::ids::HookId;
use crate::error::{ErrorEnvelope, Result};
use crate::store::endpoints::AgentPrincipal;
use crate::store::hooks::HookReach;

fn own(me: &AgentPrincipal) -> HookReach<'static> {
    HookReach::Endpoint { scope: me.scope_id, endpoint: me.endpoint_id }
}

/// Adds a notify hook to this endpoint; the signing secret is answered once.
#[utoipa::path(post, path = "/api/v1/agent/hooks", operation_id = "agent_create_hook", request_body = CreateHookBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 201, body = CreatedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn create(state: web::Data<AppState>, agent: Agent, body: Json<CreateHookBody>) -> Result<HttpResponse> {
    let me = agent.require(Verb::NotifyHooks)?;
    hooks::create(&state, me.scope_id, me.endpoint_id, body.0).await
}

/// This endpoint's hooks with their health and the ceiling (never a secret).
#[utoipa::path(get, path = "/api/v1/agent/hooks", operation_id = "agent_list_hooks", tag = "agent", security(("endpoint_token" = [])),
    responses((status = 200, body = HookList), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope)))]
pub async fn list(state: web::Data<AppState>, agent: Agent) -> Result<HttpResponse> {
    let me = agent.require(Verb::NotifyHooks)?;
    let rows = state.store.list_hooks(own(me), me.endpoint_id).await?;
    Ok(HttpResponse::Ok().json(HookList::new(&rows, state.hooks.max)))
}

/// Replaces one of this endpoint's hooks' signing secret (answered once); see the
/// operator route for what rotation re-enables.
#[utoipa::path(post, path = "/api/v1/agent/hooks/{id}/rotate", operation_id = "agent_rotate_hook", tag = "agent",
    params(("id" = HookId, Path, description = "notify hook id")), security(("endpoint_token" = [])),
    responses((status = 200, body = RotatedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope)))]
pub async fn rotate(state: web::Data<AppState>, agent: Agent, id: web::Path<HookId>) -> Result<HttpResponse> {
    let me = agent.require(Verb::NotifyHooks)?;
    let rotated = state.store.rotate_hook(&state.vault, own(me), id.into_inner()).await?;
    state.hook_cache.evict(rotated.hook.endpoint_id);
    Ok(HttpResponse::Ok().json(RotatedHookView::from(rotated)))
}

/// Deletes one of this endpoint's hooks.
#[utoipa::path(delete, path = "/api/v1/agent/hooks/{id}", operation_id = "agent_delete_hook", tag = "agent",
    params(("id" = HookId, Path, description = "notify hook id")), security(("endpoint_token" = [])),
    responses((status = 200, body = DeletedHookView), (status = 401, body = ErrorEnvelope),
              (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn delete(state: web::Data<AppState>, agent: Agent, id: web::Path<HookId>) -> Result<HttpResponse> {
    let me = agent.require(Verb::NotifyHooks)?;
    let id = id.into_inner();
    state.store.delete_hook(own(me), id).await?;
    // A first attempt uses the dispatcher's cached match: it must not outlive the hook.
    state.hook_cache.clear();
    Ok(HttpResponse::Ok().json(DeletedHookView { hook_id: id, deleted: true }))
}
