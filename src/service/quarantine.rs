//! The quarantine: deliveries held because their sender is not trusted or a rule
//! faulted. Every member of a scope sees its held deliveries; only its admins release
//! or discard them, since a release overrides the admin's trusted-actor list and may
//! fan out onto granted endpoints.

use super::Services;
use super::intake::route_delivery;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::domain::ids::TodoId;
use crate::domain::text::{QUARANTINE_QUEUE, valid_queue_name};
use crate::domain::todo_state::{Disposition, TodoState};
use crate::error::{Error, Result};
use crate::intake::routing::{Inputs, route};
use crate::intake::rules::{Envelope, RoutingDecision};
use crate::store::quarantine::HeldDelivery;
use crate::store::tenancy::Reach;

/// Deliveries held across the caller's scopes, newest first (`limit` 1–500).
pub async fn list(s: &Services, who: &Reach, limit: i64) -> Result<Vec<HeldDelivery>> {
    check(Action::ListHeld, Principal::Human(who), None)?;
    s.store.list_quarantine(&who.scope_ids(), limit).await
}

/// One held delivery in the caller's scopes (else 404) with its payload as received
/// (or, when its event is gone, the todo's own copy).
pub async fn show(s: &Services, who: &Reach, id: TodoId) -> Result<(HeldDelivery, Vec<u8>)> {
    let scopes = who.scope_ids();
    let held = s.store.held(&scopes, id).await?;
    check(Action::ShowHeld, Principal::Human(who), Some(Place::scope(held.todo.scope_id)))?;
    let own_copy = || held.todo.payload.as_ref().map(|v| v.to_string().into_bytes()).unwrap_or_default();
    let payload = match held.event_id {
        Some(event) => match s.store.event_payload(&scopes, event).await {
            Ok(p) => p,
            Err(Error::NotFound) => own_copy(),
            Err(e) => return Err(e),
        },
        None => own_copy(),
    };
    Ok((held, payload))
}

/// Releases a held delivery: in the caller's scopes
/// (else 404), in one they administer (else 403), is routed again, its sender trusted:
/// by the webhook's rules, or straight to `to_queue` on the webhook's endpoint. Returns
/// the todos it became (none when a rule now drops it). Refused when it has left
/// already, its webhook is gone, or routing would only hold it again.
pub async fn release(s: &Services, who: &Reach, id: TodoId, to_queue: Option<&str>) -> Result<Vec<TodoId>> {
    if let Some(q) = to_queue
        && (!valid_queue_name(q) || q == QUARANTINE_QUEUE)
    {
        return Err(Error::invalid(
            "queue",
            "must be 1–64 of a-z 0-9 . _ - starting with a letter or digit, and not quarantine",
        ));
    }
    let scopes = &who.scope_ids()[..];
    let held = s.store.held(scopes, id).await?;
    check(Action::ReleaseHeld, Principal::Human(who), Some(Place::scope(held.todo.scope_id)))?;
    if held.todo.state != TodoState::Pending {
        return Err(Error::Conflict("this delivery has already left quarantine".into()));
    }
    let gone = || Error::Conflict("this delivery's webhook is gone; it can only be discarded".into());
    let (Some(event_id), Some(webhook_id)) = (held.event_id, held.webhook_id) else {
        return Err(gone());
    };
    // The event keeps naming its webhook after the webhook is deleted.
    let webhook = s.store.webhook_in(scopes, webhook_id).await.map_err(|e| match e {
        Error::NotFound => gone(),
        other => other,
    })?;
    let body = s.store.event_payload(scopes, event_id).await?;
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
            route(&inputs, true, &RoutingDecision::NoMatch, &[])
        }
        None => {
            let rules = crate::intake::rules::parse(&webhook.rules).map_err(|e| e.to_string());
            route_delivery(s, &webhook, &rules, true, &envelope, &raw_text).await?.0
        }
    };
    if matches!(routed.disposition, Disposition::Quarantined | Disposition::Faulted) {
        return Err(Error::Conflict("the webhook's rules would quarantine this delivery again".into()));
    }
    let outcomes = s.store.release_held(scopes, held.todo.id, routed.todos).await?;
    Ok(outcomes.iter().map(|o| o.todo.id).collect())
}

/// Discards a held delivery in the caller's scopes (else 404), for an admin of its
/// scope (else 403): it closes without becoming work.
pub async fn discard(s: &Services, who: &Reach, id: TodoId) -> Result<()> {
    let held = s.store.held(&who.scope_ids(), id).await?;
    check(Action::DiscardHeld, Principal::Human(who), Some(Place::scope(held.todo.scope_id)))?;
    s.store.discard_held(&[held.todo.scope_id], id).await
}
