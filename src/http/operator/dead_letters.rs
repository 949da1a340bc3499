//! `GET /api/v1/dead-letters`: every dead letter across the caller's scopes.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use super::super::auth::Operator;
use super::super::body::Query;
use super::super::dto::{DeadLetterList, DeadLetterView};
use crate::error::{ErrorEnvelope, Result};
use crate::service::{Services, todos};

/// Query of the dead-letter listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct DeadLetterQuery {
    /// Matches a todo id exactly, or source, kind, queue or title as a substring.
    pub q: Option<String>,
    /// 1–500, default 100.
    pub limit: Option<i64>,
}

/// Dead letters (failed, no retry scheduled) across every endpoint the caller's scopes
/// own, quarantine excluded, newest first.
#[utoipa::path(get, path = "/api/v1/dead-letters", operation_id = "list_dead_letters", params(DeadLetterQuery), tag = "operator",
    security(("operator_token" = [])),
    responses((status = 200, body = DeadLetterList), (status = 401, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, op: Operator, q: Query<DeadLetterQuery>) -> Result<HttpResponse> {
    let q = q.into_inner();
    let rows = todos::dead_letters(&s, &op.0, q.q.as_deref(), q.limit.unwrap_or(100)).await?;
    Ok(HttpResponse::Ok().json(DeadLetterList { dead_letters: rows.into_iter().map(DeadLetterView::from).collect() }))
}
