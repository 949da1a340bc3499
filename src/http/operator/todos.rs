//! Operator routes for todos: read, fail (the cap rule applies), retry now.

use actix_web::{HttpResponse, web};

use super::super::auth::Operator;
use super::super::body::OptionalJson;
use super::super::dto::OperatorActionBody;
use crate::agent_api::todo_views::{TodoDetail, TodoView};
use crate::domain::ids::TodoId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::{Services, todos};

/// One todo in the caller's scopes, with attempts.
#[utoipa::path(get, path = "/api/v1/todos/{id}", operation_id = "operator_get_todo", tag = "operator",
    params(("id" = TodoId, Path, description = "todo id")), security(("operator_token" = [])),
    responses((status = 200, body = TodoDetail), (status = 404, body = ErrorEnvelope)))]
pub async fn get(s: web::Data<Services>, op: Operator, id: web::Path<TodoId>) -> Result<HttpResponse> {
    let t = todos::show(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(TodoDetail::new(&t.todo, Some(&t.attempts))))
}

/// Operator fail: a retry below the cap, a dead letter (`attempts_exhausted`) at it.
#[utoipa::path(post, path = "/api/v1/todos/{id}/fail", operation_id = "operator_fail", request_body = Option<OperatorActionBody>, tag = "operator",
    params(("id" = TodoId, Path, description = "todo id")), security(("operator_token" = [])),
    responses((status = 200, body = TodoView), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn fail(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<TodoId>,
    body: OptionalJson<OperatorActionBody>,
) -> Result<HttpResponse> {
    let row = todos::fail(&s, &op.0, id.into_inner(), body.0.summary).await?;
    Ok(HttpResponse::Ok().json(TodoView::from(&row)))
}

/// Retry now: a failed todo goes back to pending with its attempt counter reset.
#[utoipa::path(post, path = "/api/v1/todos/{id}/retry", request_body = Option<OperatorActionBody>, tag = "operator",
    params(("id" = TodoId, Path, description = "todo id")), security(("operator_token" = [])),
    responses((status = 200, body = TodoView), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn retry(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<TodoId>,
    _body: OptionalJson<OperatorActionBody>,
) -> Result<HttpResponse> {
    let row = todos::retry_now(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(TodoView::from(&row)))
}
