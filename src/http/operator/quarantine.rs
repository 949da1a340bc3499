//! Operator routes for the quarantine: list held deliveries, release one (routed again
//! by the webhook's rules, trusting its sender), discard one.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::auth::Operator;
use super::super::dto::TodoView;
use super::super::intake::route_delivery;
use crate::domain::ids::{EventId, TodoId, WebhookId};
use crate::domain::todo_state::{Disposition, QuarantineReason, TodoState};
use crate::error::{Error, ErrorEnvelope, Result};
use crate::intake::rules::Envelope;
use crate::store::quarantine::Held;

/// One held delivery.
#[derive(Debug, Serialize, ToSchema)]
pub struct HeldView {
    #[serde(flatten)]
    pub todo: TodoView,
    pub reason: Option<QuarantineReason>,
    pub event_id: Option<EventId>,
    pub webhook_id: Option<WebhookId>,
}

impl From<&Held> for HeldView {
    fn from(h: &Held) -> Self {
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
#[utoipa::path(get, path = "/api/v1/quarantine", params(HeldQuery), tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = HeldList)))]
pub async fn list(state: web::Data<AppState>, op: Operator, q: web::Query<HeldQuery>) -> Result<HttpResponse> {
    let rows = state.store.list_quarantine(&op.0.scope_ids(), q.limit.unwrap_or(100)).await?;
    Ok(HttpResponse::Ok().json(HeldList { held: rows.iter().map(HeldView::from).collect() }))
}

/// Releases a held delivery: the webhook's rules route it again, its sender now
/// trusted. Refused (409) when routing would only quarantine it again.
#[utoipa::path(post, path = "/api/v1/quarantine/{id}/release", tag = "operator",
    params(("id" = TodoId, Path, description = "the held todo")), security(("operator_token" = [])),
    responses((status = 200, body = Released), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn release(state: web::Data<AppState>, op: Operator, id: web::Path<TodoId>) -> Result<HttpResponse> {
    let scopes = op.0.scope_ids();
    let held = state.store.held(&scopes, id.into_inner()).await?;
    if held.todo.state != TodoState::Pending {
        return Err(Error::Conflict("this delivery has already left quarantine".into()));
    }
    let gone = || Error::Conflict("this delivery's webhook is gone; it can only be discarded".into());
    let (Some(event_id), Some(webhook_id)) = (held.event_id, held.webhook_id) else {
        return Err(gone());
    };
    // The event keeps naming its webhook after the webhook is deleted.
    let webhook = state.store.webhook_in(&scopes, webhook_id).await.map_err(|e| match e {
        Error::NotFound => gone(),
        other => other,
    })?;
    let body = state.store.event_payload(&scopes, event_id).await?;
    let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let headers: Vec<(String, String)> = held
        .headers
        .as_ref()
        .and_then(|h| h.as_object())
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default();
    let raw_text = String::from_utf8_lossy(&body);
    let kind = held.todo.kind.clone();
    let rules = crate::intake::rules::parse(&webhook.rules).map_err(|e| e.to_string());
    let envelope = Envelope { source: webhook.source_type.to_string(), event_type: kind, headers, body: json };
    let routed = route_delivery(&state, &webhook, &rules, true, &envelope, &raw_text).await?;
    if matches!(routed.disposition, Disposition::Quarantined | Disposition::Faulted) {
        return Err(Error::Conflict("the webhook's rules would quarantine this delivery again".into()));
    }
    let outcomes = state.store.release_held(&scopes, held.todo.id, routed.todos).await?;
    Ok(HttpResponse::Ok().json(Released { todos: outcomes.iter().map(|o| o.todo.id).collect() }))
}

/// Discards a held delivery.
#[utoipa::path(post, path = "/api/v1/quarantine/{id}/discard", tag = "operator",
    params(("id" = TodoId, Path, description = "the held todo")), security(("operator_token" = [])),
    responses((status = 204), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn discard(state: web::Data<AppState>, op: Operator, id: web::Path<TodoId>) -> Result<HttpResponse> {
    state.store.discard_held(&op.0.scope_ids(), id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}
