//! Operator routes for the quarantine: list held deliveries, release one (routed again
//! by the webhook's rules, trusting its sender), discard one. Every member of a scope
//! sees its held deliveries; only its admins release or discard them, since a release
//! overrides the admin's trusted-actor list and may fan out onto granted endpoints.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::AppState;
use super::super::auth::Operator;
use super::super::body::OptionalJson;
use super::super::dto::TodoView;
use super::super::intake::route_delivery;
use crate::domain::ids::{EventId, ScopeId, TodoId, WebhookId};
use crate::domain::text::{QUARANTINE_QUEUE, valid_queue_name};
use crate::domain::todo_state::{Disposition, QuarantineReason, TodoState};
use crate::error::{Error, ErrorEnvelope, Result};
use crate::intake::routing::{Inputs, route};
use crate::intake::rules::{Decision, Envelope};
use crate::store::quarantine::Held;
use crate::store::tenancy::Reach;

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
#[utoipa::path(get, path = "/api/v1/quarantine", operation_id = "list_quarantine", params(HeldQuery), tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = HeldList)))]
pub async fn list(state: web::Data<AppState>, op: Operator, q: web::Query<HeldQuery>) -> Result<HttpResponse> {
    let rows = state.store.list_quarantine(&op.0.scope_ids(), q.limit.unwrap_or(100)).await?;
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
    state: web::Data<AppState>,
    op: Operator,
    id: web::Path<TodoId>,
    body: OptionalJson<ReleaseBody>,
) -> Result<HttpResponse> {
    let todos = release_held(&state, &op.0, id.into_inner(), body.0.queue.as_deref()).await?;
    Ok(HttpResponse::Ok().json(Released { todos }))
}

/// The release both the API and the Board make: the held delivery in `reach`'s scopes
/// (else 404), in one they administer (else 403), is routed again, its sender trusted:
/// by the webhook's rules, or straight to `to_queue` on the webhook's endpoint. Returns
/// the todos it became (none when a rule now drops it). Refused when it has left
/// already, its webhook is gone, or routing would only hold it again.
pub async fn release_held(state: &AppState, reach: &Reach, id: TodoId, to_queue: Option<&str>) -> Result<Vec<TodoId>> {
    if let Some(q) = to_queue
        && (!valid_queue_name(q) || q == QUARANTINE_QUEUE)
    {
        return Err(Error::invalid(
            "queue",
            "must be 1–64 of a-z 0-9 . _ - starting with a letter or digit, and not quarantine",
        ));
    }
    let scopes = &reach.scope_ids()[..];
    let held = state.store.held(scopes, id).await?;
    require_admin(reach, held.todo.scope_id)?;
    if held.todo.state != TodoState::Pending {
        return Err(Error::Conflict("this delivery has already left quarantine".into()));
    }
    let gone = || Error::Conflict("this delivery's webhook is gone; it can only be discarded".into());
    let (Some(event_id), Some(webhook_id)) = (held.event_id, held.webhook_id) else {
        return Err(gone());
    };
    // The event keeps naming its webhook after the webhook is deleted.
    let webhook = state.store.webhook_in(scopes, webhook_id).await.map_err(|e| match e {
        Error::NotFound => gone(),
        other => other,
    })?;
    let body = state.store.event_payload(scopes, event_id).await?;
    let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let headers: Vec<(String, String)> = held
        .headers
        .as_ref()
        .and_then(|h| h.as_object())
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned())).collect())
        .unwrap_or_default();
    let raw_text = String::from_utf8_lossy(&body);
    let kind = held.todo.kind.clone();
    let envelope = Envelope { source: webhook.source_type.to_string(), event_type: kind, headers, body: json };
    let routed = match to_queue {
        // As if no rule matched and the webhook's default queue were `queue`.
        Some(queue) => {
            let inputs = Inputs {
                endpoint_id: webhook.endpoint_id,
                default_queue: queue,
                max_attempts: webhook.max_attempts,
                source: webhook.source_type.as_str(),
                event_type: envelope.event_type.as_deref(),
                body: envelope.body.as_ref(),
                raw_text: &raw_text,
            };
            route(&inputs, true, &Decision::NoMatch, &[])
        }
        None => {
            let rules = crate::intake::rules::parse(&webhook.rules).map_err(|e| e.to_string());
            route_delivery(state, &webhook, &rules, true, &envelope, &raw_text).await?
        }
    };
    if matches!(routed.disposition, Disposition::Quarantined | Disposition::Faulted) {
        return Err(Error::Conflict("the webhook's rules would quarantine this delivery again".into()));
    }
    let outcomes = state.store.release_held(scopes, held.todo.id, routed.todos).await?;
    Ok(outcomes.iter().map(|o| o.todo.id).collect())
}

/// Discards a held delivery.
#[utoipa::path(post, path = "/api/v1/quarantine/{id}/discard", tag = "operator",
    params(("id" = TodoId, Path, description = "the held todo")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope)))]
pub async fn discard(state: web::Data<AppState>, op: Operator, id: web::Path<TodoId>) -> Result<HttpResponse> {
    discard_held(&state, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The discard both the API and the Board make: the held delivery in `reach`'s scopes
/// (else 404), in one they administer (else 403), closes without becoming work.
pub async fn discard_held(state: &AppState, reach: &Reach, id: TodoId) -> Result<()> {
    let held = state.store.held(&reach.scope_ids(), id).await?;
    require_admin(reach, held.todo.scope_id)?;
    state.store.discard_held(&[held.todo.scope_id], id).await
}

/// Refuses unless `reach` administers `scope`: a plain team member sees the team's
/// held deliveries but may not let them out.
fn require_admin(reach: &Reach, scope: ScopeId) -> Result<()> {
    if reach.is_admin_of(scope) {
        Ok(())
    } else {
        Err(Error::Forbidden("only a team admin may release or discard the team's held deliveries".into()))
    }
}
