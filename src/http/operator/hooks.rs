//! Operator routes for hooks: create on an endpoint (secret shown once), list
//! with health and ceiling, rotate, enable, disable, delete. Any member of the
//! endpoint's scope may list; changing a hook takes an admin of that scope. A hook or
//! endpoint outside the caller's scopes is not found.

use actix_web::{HttpResponse, web};

use super::super::auth::Operator;
use super::super::body::Json;
use crate::agent_api::hook_dto::{
    CreateHookBody, CreatedHookView, DeletedHookView, HookList, HookView, RotatedHookView,
};
use crate::domain::ids::{EndpointId, HookId};
use crate::error::{ErrorEnvelope, Result};
use crate::hooks::service as hooks;
use crate::service::Services;

/// Adds a notify hook to an endpoint: `todo.ready` and `todo.dead_lettered` of its
/// queues are posted to `url`, signed (Standard Webhooks) with the secret answered
/// here once. Refused (409) while hooks are switched off, at the ceiling, or without
/// `SWITCHBOARD_SECRET_ENCRYPTION_KEY`.
#[utoipa::path(post, path = "/api/v1/endpoints/{id}/hooks", operation_id = "create_hook", request_body = CreateHookBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 201, body = CreatedHookView), (status = 403, body = ErrorEnvelope),
              (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn create(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<EndpointId>,
    body: Json<CreateHookBody>,
) -> Result<HttpResponse> {
    let created = hooks::create(&s, &op.0, id.into_inner(), body.0.into()).await?;
    Ok(HttpResponse::Created().json(CreatedHookView::from(created)))
}

/// An endpoint's hooks with their health and the ceiling (never a secret).
#[utoipa::path(get, path = "/api/v1/endpoints/{id}/hooks", operation_id = "list_hooks", tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 200, body = HookList), (status = 404, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, op: Operator, id: web::Path<EndpointId>) -> Result<HttpResponse> {
    let rows = hooks::list(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(HookList::new(&rows, s.hook_settings().max)))
}

/// Replaces a hook's signing secret (answered once). For 24 h deliveries carry both
/// signatures; a hook that failures disabled is enabled again, one an operator
/// disabled is not.
#[utoipa::path(post, path = "/api/v1/hooks/{id}/rotate", operation_id = "rotate_hook", tag = "operator",
    params(("id" = HookId, Path, description = "notify hook id")), security(("operator_token" = [])),
    responses((status = 200, body = RotatedHookView), (status = 403, body = ErrorEnvelope),
              (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn rotate(s: web::Data<Services>, op: Operator, id: web::Path<HookId>) -> Result<HttpResponse> {
    let rotated = hooks::rotate(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(RotatedHookView::from(rotated)))
}

/// Switches a hook on again; its failure count starts over.
#[utoipa::path(post, path = "/api/v1/hooks/{id}/enable", tag = "operator",
    params(("id" = HookId, Path, description = "notify hook id")), security(("operator_token" = [])),
    responses((status = 200, body = HookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn enable(s: web::Data<Services>, op: Operator, id: web::Path<HookId>) -> Result<HttpResponse> {
    let row = hooks::set_enabled(&s, &op.0, id.into_inner(), true).await?;
    Ok(HttpResponse::Ok().json(HookView::from(&row)))
}

/// Switches a hook off (`disabled_reason: operator`); a rotation does not undo this.
#[utoipa::path(post, path = "/api/v1/hooks/{id}/disable", tag = "operator",
    params(("id" = HookId, Path, description = "notify hook id")), security(("operator_token" = [])),
    responses((status = 200, body = HookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn disable(s: web::Data<Services>, op: Operator, id: web::Path<HookId>) -> Result<HttpResponse> {
    let row = hooks::set_enabled(&s, &op.0, id.into_inner(), false).await?;
    Ok(HttpResponse::Ok().json(HookView::from(&row)))
}

/// Deletes a hook; nothing more is sent to it, not even an attempt already scheduled.
#[utoipa::path(delete, path = "/api/v1/hooks/{id}", operation_id = "delete_hook", tag = "operator",
    params(("id" = HookId, Path, description = "notify hook id")), security(("operator_token" = [])),
    responses((status = 200, body = DeletedHookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, op: Operator, id: web::Path<HookId>) -> Result<HttpResponse> {
    let id = id.into_inner();
    hooks::delete(&s, &op.0, id).await?;
    Ok(HttpResponse::Ok().json(DeletedHookView { hook_id: id, deleted: true }))
}
