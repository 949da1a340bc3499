//! Operator routes for the quarantine: list held deliveries, release one (routed again
//! by the webhook's rules, trusting its sender), discard one; the actions and who may
//! take them are [`crate::service::quarantine`].

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::auth::Operator;
use super::super::body::{OptionalJson, Query};
use crate::agent_api::todo_views::TodoView;
use crate::domain::ids::{EventId, TodoId, WebhookId};
use crate::domain::todo_state::QuarantineReason;
use crate::error::{ErrorEnvelope, Result};
use crate::service::{Services, quarantine};
use crate::store::quarantine::HeldDelivery;

/// One held delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldView {
    /// The held todo, on the reserved `quarantine` queue (invisible to agents).
    #[serde(flatten)]
    pub todo: TodoView,
    /// Why intake held it.
    pub reason: Option<QuarantineReason>,
    /// The recorded delivery (event) it holds; null if that record is gone.
    pub event_id: Option<EventId>,
    /// The webhook it arrived on, whose rules a release routes it through; null when that
    /// is not known (it can then only be discarded).
    pub webhook_id: Option<WebhookId>,
}

impl From<&HeldDelivery> for HeldView {
    fn from(h: &HeldDelivery) -> Self {
        HeldView {
            todo: (&h.todo).into(),
            reason: h.todo.quarantine_reason,
            event_id: h.event_id,
            webhook_id: h.webhook_id,
        }
    }
}

/// The quarantine listing.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldList {
    /// Held deliveries across the caller's scopes, newest first, at most `limit`.
    pub held: Vec<HeldView>,
}

/// Query of the listing.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct HeldQuery {
    /// 1–500, default 100.
    pub limit: Option<i64>,
}

/// What a release did.
#[derive(Debug, Serialize, ToSchema)]
pub struct Released {
    /// The todos the delivery became (none when a rule now drops it).
    pub todos: Vec<TodoId>,
}

/// Deliveries held in quarantine across the caller's scopes, newest first.
#[utoipa::path(get, path = "/api/v1/quarantine", operation_id = "list_quarantine", params(HeldQuery), tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = HeldList)))]
pub async fn list(s: web::Data<Services>, op: Operator, q: Query<HeldQuery>) -> Result<HttpResponse> {
    let rows = quarantine::list(&s, &op.0, q.limit.unwrap_or(100)).await?;
    Ok(HttpResponse::Ok().json(HeldList { held: rows.iter().map(HeldView::from).collect() }))
}

/// Release request: with `queue`, the delivery goes to that queue of the webhook's
/// endpoint instead of through the webhook's rules.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReleaseBody {
    /// A queue of the webhook's endpoint (not `quarantine`); absent: the rules decide.
    pub queue: Option<String>,
}

/// Releases a held delivery: the webhook's rules route it again, its sender now
/// trusted (or, with `queue`, it goes to that queue). Refused (409) when routing would
/// only quarantine it again.
#[utoipa::path(post, path = "/api/v1/quarantine/{id}/release", operation_id = "release_held", request_body = Option<ReleaseBody>, tag = "operator",
    params(("id" = TodoId, Path, description = "the held todo")), security(("operator_token" = [])),
    responses((status = 200, body = Released), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn release(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<TodoId>,
    body: OptionalJson<ReleaseBody>,
) -> Result<HttpResponse> {
    let todos = quarantine::release(&s, &op.0, id.into_inner(), body.0.queue.as_deref()).await?;
    Ok(HttpResponse::Ok().json(Released { todos }))
}

/// Discards a held delivery.
#[utoipa::path(post, path = "/api/v1/quarantine/{id}/discard", tag = "operator",
    params(("id" = TodoId, Path, description = "the held todo")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope)))]
pub async fn discard(s: web::Data<Services>, op: Operator, id: web::Path<TodoId>) -> Result<HttpResponse> {
    quarantine::discard(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
