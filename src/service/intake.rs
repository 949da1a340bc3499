//! Receiving one delivery: find the webhook its ingest token names (the token is the
//! credential), verify the delivery on its raw body, apply the trusted-actor gate and
//! the webhook's rules, and record the event with its todos. A refused delivery stores
//! nothing but a count. The adapter reads the body (bounded) and renders the answer.

use std::sync::Arc;

use serde::Serialize;

use super::Services;
use super::webhook_cache::IngestWebhook;
use crate::domain::ids::{EndpointId, EventId, ScopeId, TodoId};
use crate::domain::todo_state::{Disposition, TrustMode};
use crate::domain::tokens;
use crate::error::{Error, Result};
use crate::intake::redact::redacted_headers;
use crate::intake::routing::{Inputs, Routed, route};
use crate::intake::rules::{self, Envelope, Route, RoutingDecision, RuleSet};
use crate::intake::trusted_senders::is_trusted;
use crate::intake::verify::{self, Inbound, VerifyError};
use crate::store::deliveries::{Delivery, Recorded, RuleNotice};
use crate::store::webhooks::WebhookRow;

/// What the provider is told.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct IngestAnswer {
    /// The recorded event.
    pub event_id: EventId,
    /// `routed`, `dropped`, `quarantined` or `faulted`.
    pub disposition: Disposition,
    /// Todos created for it.
    pub todos: Vec<TodoId>,
    /// True when this delivery id was already recorded (nothing new was created).
    pub duplicate: bool,
}

/// Receives one delivery for `target` (from [`webhook`]): `token` is the ingest token
/// it came in with (redacted from the stored headers), `headers` and `body` as received.
pub async fn receive(
    s: &Services,
    target: &IngestWebhook,
    token: &str,
    headers: Vec<(String, String)>,
    body: &[u8],
) -> Result<IngestAnswer> {
    let wh = &target.webhook;
    let inbound = Inbound { headers: &headers, body };

    let (trust_mode, verified) = if !wh.source_type.is_signed() {
        (TrustMode::Token, false)
    } else if wh.unverified {
        (TrustMode::Open, false)
    } else {
        let secret = target.secret.as_ref().map_err(|e| Error::Unavailable(e.clone()))?;
        match verify::verify(wh.source_type, secret.as_deref(), &inbound, chrono::Utc::now()) {
            Ok(_) => (TrustMode::Signed, true),
            Err(VerifyError::NoSecret) => return Err(Error::Unavailable("the webhook has no signing secret".into())),
            Err(refused) => {
                s.metrics.webhook_verify_failure();
                s.store.count_refused_delivery(wh.id).await?;
                tracing::info!(webhook = %wh.id, reason = %refused, "delivery refused");
                return Err(Error::Unauthenticated);
            }
        }
    };

    // Stripe and Standard take these labels from the JSON body, where `\u0000` is valid;
    // a PostgreSQL text column cannot hold U+0000, so storing one was a 500. Replace it.
    let event_type = verify::event_type(wh.source_type, &inbound).map(|t| t.replace('\0', "\u{fffd}"));
    let external_id = verify::delivery_id(wh.source_type, &inbound).map(|id| id.replace('\0', "\u{fffd}"));
    let redacted = redacted_headers(&headers, &[token]);
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let trusted = is_trusted(wh.source_type.as_str(), target.trusted_actors.as_ref(), json.as_ref());
    let raw_text = String::from_utf8_lossy(body);
    // The envelope takes the headers and body by value: the rules read them, then
    // routing reads them back from it, so neither is copied per delivery.
    let envelope = Envelope { source: wh.source_type.to_string(), event_type, headers, body: json };
    let (routed, notice) = route_delivery(s, wh, &target.rules, trusted, &envelope, &raw_text).await?;
    let recorded = s
        .store
        .record_delivery(Delivery {
            webhook_id: wh.id,
            scope_id: wh.scope_id,
            endpoint_id: wh.endpoint_id,
            source: envelope.source,
            event_type: envelope.event_type,
            external_id,
            trust_mode,
            verified,
            headers: redacted,
            payload: body.to_vec(),
            disposition: routed.disposition,
            todos: routed.todos,
            notice,
        })
        .await?;
    let answer = match recorded {
        Recorded::New { event_id, todos } => IngestAnswer {
            event_id,
            disposition: routed.disposition,
            todos: todos.iter().map(|t| t.todo.id).collect(),
            duplicate: false,
        },
        Recorded::Duplicate { event_id, disposition } => {
            IngestAnswer { event_id, disposition, todos: Vec::new(), duplicate: true }
        }
    };
    s.metrics.webhook_delivery();
    Ok(answer)
}

/// The webhook an ingest token names, from the cache or loaded (and then cached); an
/// unknown token is not found.
pub async fn webhook(s: &Services, token: &str) -> Result<Arc<IngestWebhook>> {
    let key = tokens::sha256(token.as_bytes());
    if let Some(hit) = s.webhook_cache.get(&key) {
        return Ok(hit);
    }
    let generation = s.webhook_cache.generation();
    let target = s.store.webhook_by_ingest_token(token).await?.ok_or(Error::NotFound)?;
    let prepared = Arc::new(IngestWebhook::prepare(target, &s.vault));
    s.webhook_cache.put(generation, key, prepared.clone());
    Ok(prepared)
}

/// Runs the webhook's rules on a delivery and decides what it becomes (shared by intake
/// and by a quarantine release, which passes `trusted = true`), and the matched rule's
/// `notify`, if it has one and the delivery went where the rule said (a sender the gate
/// holds is told through `delivery.quarantined` instead).
pub(super) async fn route_delivery(
    s: &Services,
    wh: &WebhookRow,
    rules: &std::result::Result<RuleSet, String>,
    trusted: bool,
    envelope: &Envelope,
    raw_text: &str,
) -> Result<(Routed, Option<RuleNotice>)> {
    let decision = match rules {
        Ok(set) => rules::evaluate(set, envelope, rules::DEFAULT_BUDGET),
        Err(e) => RoutingDecision::Fault { rule_id: String::new(), reason: e.clone() },
    };
    let fan_out = granted_fan_out(s, &wh.scope_id, &decision).await?;
    let inputs = Inputs {
        endpoint_id: wh.endpoint_id,
        default_queue: &wh.queue,
        max_attempts: wh.max_attempts,
        source: wh.source_type.as_str(),
        event_type: envelope.event_type.as_deref(),
        body: envelope.body.as_ref(),
        raw_text,
    };
    let routed = route(&inputs, trusted, &decision, &fan_out);
    let notice = match &decision {
        RoutingDecision::Matched { rule_id, action }
            if trusted && routed.rule_id.as_deref() == Some(rule_id.as_str()) =>
        {
            action.notification().map(|(sink, severity)| RuleNotice {
                sink: sink.to_owned(),
                severity,
                rule_id: rule_id.clone(),
                queue: match &action.route {
                    Route::Queue { queue, .. } => Some(queue.clone()),
                    _ => None,
                },
            })
        }
        _ => None,
    };
    Ok((routed, notice))
}

/// The extra endpoints a matched queue rule names that the webhook's owner may still
/// reach (own scope, or granted by the endpoint's owner); the others are skipped.
async fn granted_fan_out(s: &Services, scope: &ScopeId, decision: &RoutingDecision) -> Result<Vec<EndpointId>> {
    let RoutingDecision::Matched { action, .. } = decision else { return Ok(Vec::new()) };
    let Route::Queue { endpoints, .. } = &action.route else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for raw in endpoints {
        let Ok(id) = raw.parse::<EndpointId>() else { continue };
        if s.store.may_fan_out(*scope, id).await? {
            out.push(id);
        }
    }
    Ok(out)
}
