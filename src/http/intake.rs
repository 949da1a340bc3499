//! `POST /webhooks/w/{ingest_token}`: the front door for providers. Verifies the
//! delivery on its raw body, applies the trusted-actor gate and the webhook's rules,
//! and records the event with its todos. A refused delivery stores nothing but a count.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::ToSchema;

use super::AppState;
use super::body_read::{declared_length, read_bounded};
use crate::domain::ids::{EndpointId, EventId, TodoId};
use crate::domain::todo_state::{Disposition, TrustMode};
use crate::error::{Error, ErrorEnvelope, Result};
use std::sync::Arc;

use super::webhook_cache::IngestWebhook;
use crate::domain::tokens;
use crate::intake::redact::redacted_headers;
use crate::intake::routing::{Inputs, Routed, route};
use crate::intake::rules::{self, Decision, Envelope, Route, RuleSet};
use crate::intake::trusted_senders::is_trusted;
use crate::intake::verify::{self, Inbound, VerifyError};
use crate::store::deliveries::{Delivery, Recorded};
use crate::store::webhooks::WebhookRow;

/// Largest delivery accepted.
pub const INGEST_BODY_LIMIT: usize = 5 * 1024 * 1024;

/// What the provider is told.
#[derive(Debug, Serialize, ToSchema)]
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

/// Receives one delivery.
#[utoipa::path(post, path = "/webhooks/w/{ingest_token}", tag = "intake",
    params(("ingest_token" = String, Path, description = "the webhook's ingest token")),
    responses((status = 202, body = IngestAnswer), (status = 401, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 408, body = ErrorEnvelope), (status = 413, body = ErrorEnvelope), (status = 503, body = ErrorEnvelope)))]
pub async fn ingest(
    state: web::Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
    payload: web::Payload,
) -> Result<HttpResponse> {
    let target = ingest_webhook(&state, &token).await?;
    let body = read_bounded(payload, declared_length(&req), INGEST_BODY_LIMIT, state.body_read_timeout).await?;
    let wh = &target.webhook;
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let inbound = Inbound { headers: &headers, body: &body };

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
                state.metrics.webhook_verify_failure();
                state.store.count_refused_delivery(wh.id).await?;
                tracing::info!(webhook = %wh.id, reason = %refused, "delivery refused");
                return Err(Error::Unauthenticated);
            }
        }
    };

    // Stripe and Standard take these labels from the JSON body, where `\u0000` is valid;
    // a PostgreSQL text column cannot hold U+0000, so storing one was a 500. Replace it.
    let event_type = verify::event_type(wh.source_type, &inbound).map(|t| t.replace('\0', "\u{fffd}"));
    let external_id = verify::delivery_id(wh.source_type, &inbound).map(|id| id.replace('\0', "\u{fffd}"));
    let redacted = redacted_headers(&headers, &[token.as_str()]);
    let json: Option<serde_json::Value> = serde_json::from_slice(&body).ok();
    let trusted = is_trusted(wh.source_type.as_str(), target.trusted_actors.as_ref(), json.as_ref());
    let raw_text = String::from_utf8_lossy(&body);
    // The envelope takes the headers and body by value: the rules read them, then
    // routing reads them back from it, so neither is copied per delivery.
    let envelope = Envelope { source: wh.source_type.to_string(), event_type, headers, body: json };
    let routed = route_delivery(&state, wh, &target.rules, trusted, &envelope, &raw_text).await?;
    let recorded = state
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
    state.metrics.webhook_delivery();
    Ok(HttpResponse::Accepted().json(answer))
}

/// The webhook an ingest token names, from the cache or loaded (and then cached).
async fn ingest_webhook(state: &AppState, token: &str) -> Result<Arc<IngestWebhook>> {
    let key = tokens::sha256(token.as_bytes());
    if let Some(hit) = state.webhook_cache.get(&key) {
        return Ok(hit);
    }
    let generation = state.webhook_cache.generation();
    let target = state.store.webhook_by_ingest_token(token).await?.ok_or(Error::NotFound)?;
    let prepared = Arc::new(IngestWebhook::prepare(target, &state.vault));
    state.webhook_cache.put(generation, key, prepared.clone());
    Ok(prepared)
}

/// Runs the webhook's rules on a delivery and decides what it becomes (shared by intake
/// and by a quarantine release, which passes `trusted = true`).
pub(crate) async fn route_delivery(
    state: &AppState,
    wh: &WebhookRow,
    rules: &std::result::Result<RuleSet, String>,
    trusted: bool,
    envelope: &Envelope,
    raw_text: &str,
) -> Result<Routed> {
    let decision = match rules {
        Ok(set) => rules::evaluate(set, envelope, rules::DEFAULT_BUDGET),
        Err(e) => Decision::Fault { rule_id: String::new(), reason: e.clone() },
    };
    let fan_out = granted_fan_out(state, &wh.scope_id, &decision).await?;
    let inputs = Inputs {
        endpoint_id: wh.endpoint_id,
        default_queue: &wh.queue,
        max_attempts: wh.max_attempts,
        source: wh.source_type.as_str(),
        event_type: envelope.event_type.as_deref(),
        body: envelope.body.as_ref(),
        raw_text,
    };
    Ok(route(&inputs, trusted, &decision, &fan_out))
}

/// The extra endpoints a matched queue rule names that the webhook's owner may still
/// reach (own scope, or granted by the endpoint's owner); the others are skipped.
async fn granted_fan_out(
    state: &AppState,
    scope: &crate::domain::ids::ScopeId,
    decision: &Decision,
) -> Result<Vec<EndpointId>> {
    let Decision::Matched { action, .. } = decision else { return Ok(Vec::new()) };
    let Route::Queue { endpoints, .. } = &action.route else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for raw in endpoints {
        let Ok(id) = raw.parse::<EndpointId>() else { continue };
        if state.store.may_fan_out(*scope, id).await? {
            out.push(id);
        }
    }
    Ok(out)
}
