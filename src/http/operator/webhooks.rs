//! Operator routes for webhooks: create (ingest token and signing secret shown once),
//! list, rules (save and dry run).

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::AppState;
use super::super::auth::Operator;
use super::super::body::Json;
use super::super::dto::{CreateWebhookBody, CreatedWebhookView, WebhookList, WebhookView};
use crate::domain::ids::WebhookId;
use crate::error::{Error, ErrorEnvelope, Result};
use crate::intake::rules::{self, Decision, Envelope, Route, RuleSet};
use crate::store::tenancy::Reach;
use crate::store::webhooks::{CreatedWebhook, NewWebhook, trusted_actors_json};

/// Creates a webhook on an endpoint the caller administers.
#[utoipa::path(post, path = "/api/v1/webhooks", operation_id = "create_webhook", request_body = CreateWebhookBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = CreatedWebhookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(state: web::Data<AppState>, op: Operator, body: Json<CreateWebhookBody>) -> Result<HttpResponse> {
    let created = create_for(&state, &op.0, body.0).await?;
    Ok(HttpResponse::Created().json(CreatedWebhookView::new(created, &state.base_url)))
}

/// Creates a webhook on an endpoint `reach` administers (the operator API and the Board
/// both come here): another scope's endpoint is unknown (404), a team member who is not
/// an admin is refused (403); the store checks the queue, attempts and secret.
pub async fn create_for(state: &AppState, reach: &Reach, b: CreateWebhookBody) -> Result<CreatedWebhook> {
    let endpoint = state.store.endpoint_in(&reach.scope_ids(), b.endpoint_id).await?;
    if !reach.is_admin_of(endpoint.scope_id) {
        return Err(Error::Forbidden("only a team admin may add webhooks to the team's endpoints".into()));
    }
    let trusted_actors = trusted_actors_json(b.trusted_actors.as_ref())?;
    state
        .store
        .create_webhook(
            &state.vault,
            NewWebhook {
                scope: endpoint.scope_id,
                endpoint_id: endpoint.id,
                source_type: b.source_type,
                queue: b.queue,
                max_attempts: b.max_attempts,
                trusted_actors,
                secret: b.secret,
                unverified: b.unverified.unwrap_or(false),
            },
        )
        .await
}

/// Webhooks in every scope the caller belongs to (never their credentials).
#[utoipa::path(get, path = "/api/v1/webhooks", operation_id = "list_webhooks", tag = "operator", security(("operator_token" = [])),
    responses((status = 200, body = WebhookList)))]
pub async fn list(state: web::Data<AppState>, op: Operator) -> Result<HttpResponse> {
    let rows = state.store.list_webhooks(&op.0.scope_ids()).await?;
    Ok(HttpResponse::Ok().json(WebhookList { webhooks: rows.iter().map(WebhookView::from).collect() }))
}

/// Parses and validates a rules body; every refusal names the rule and the reason.
fn checked_rules(body: &serde_json::Value) -> Result<RuleSet> {
    let set = rules::parse(body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    rules::validate(&set).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    // Notification sinks are not built yet, so no sink can exist in the scope: a rule
    // naming one is refused now rather than failing silently when it fires.
    if let Some(rule) = set.rules.iter().find(|r| r.action.notify.is_some()) {
        return Err(Error::InvalidArgument(format!(
            "rule {:?}: notify names a sink, but notification sinks are not available on this instance yet",
            rule.id
        )));
    }
    Ok(set)
}

/// Refuses a rule that fans out to an endpoint the webhook's owner may not reach
/// (`reference_out_of_scope`; a foreign endpoint reads like an unknown one).
async fn check_fan_out(state: &AppState, webhook: &crate::store::webhooks::WebhookRow, set: &RuleSet) -> Result<()> {
    for rule in &set.rules {
        if let Route::Queue { endpoints, .. } = &rule.action.route {
            for raw in endpoints {
                let reachable = match raw.parse() {
                    Ok(id) => state.store.may_fan_out(webhook.scope_id, id).await?,
                    Err(_) => false,
                };
                if !reachable {
                    return Err(Error::InvalidArgument(format!(
                        "rule {:?}: reference_out_of_scope: endpoint {raw} is unknown or not granted to this webhook's owner",
                        rule.id
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The body of `PUT …/rules`, as documented: the handler reads it as JSON and the rule
/// parser checks each rule, naming the one it refuses.
#[derive(ToSchema)]
pub struct RulesBody {
    /// Ordered rules; first match wins.
    pub rules: Vec<serde_json::Value>,
}

/// Replaces a webhook's routing rules (ordered; first match wins).
#[utoipa::path(put, path = "/api/v1/webhooks/{id}/rules", request_body = RulesBody, tag = "operator",
    params(("id" = WebhookId, Path, description = "webhook id")), security(("operator_token" = [])),
    responses((status = 200, body = WebhookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn put_rules(
    state: web::Data<AppState>,
    op: Operator,
    id: web::Path<WebhookId>,
    body: Json<serde_json::Value>,
) -> Result<HttpResponse> {
    let row = save_rules_for(&state, &op.0, id.into_inner(), &body.0).await?;
    Ok(HttpResponse::Ok().json(WebhookView::from(&row)))
}

/// Validates and saves a webhook's rules (`{"rules": [...]}`) for `reach`, and evicts
/// the webhook from the intake cache (the operator API and the Board both come here).
/// Invalid rules are refused (422) and nothing is saved.
pub async fn save_rules_for(
    state: &AppState,
    reach: &Reach,
    id: WebhookId,
    body: &serde_json::Value,
) -> Result<crate::store::webhooks::WebhookRow> {
    let webhook = state.store.webhook_in(&reach.scope_ids(), id).await?;
    if !reach.is_admin_of(webhook.scope_id) {
        return Err(Error::Forbidden("only a team admin may change the team's rules".into()));
    }
    let set = checked_rules(body)?;
    check_fan_out(state, &webhook, &set).await?;
    let stored = serde_json::to_value(&set).map_err(|e| Error::internal_from("encoding rules", e))?;
    let row = state.store.set_webhook_rules(&[webhook.scope_id], webhook.id, stored).await?;
    state.webhook_cache.evict(row.id);
    Ok(row)
}

/// A sample delivery for a dry run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleTestBody {
    /// Rules to try instead of the saved ones (same shape as `PUT …/rules`).
    pub rules: Option<Vec<serde_json::Value>>,
    /// Sample headers.
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Sample JSON body.
    pub body: Option<serde_json::Value>,
}

/// What a dry run found.
#[derive(Debug, Serialize, ToSchema)]
pub struct RuleTestAnswer {
    /// The rule that matched, if any.
    pub matched_rule: Option<String>,
    /// `queue`, `drop`, `quarantine` or `default_queue`; `fault` when a rule faulted.
    pub outcome: String,
    /// The queue a todo would land on (none for a drop).
    pub queue: Option<String>,
    /// Why a rule faulted, if one did.
    pub fault: Option<String>,
}

/// Dry run: which rule matches a sample delivery and what would happen. Changes nothing.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/rules/test", request_body = RuleTestBody, tag = "operator",
    params(("id" = WebhookId, Path, description = "webhook id")), security(("operator_token" = [])),
    responses((status = 200, body = RuleTestAnswer), (status = 404, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn test_rules(
    state: web::Data<AppState>,
    op: Operator,
    id: web::Path<WebhookId>,
    body: Json<RuleTestBody>,
) -> Result<HttpResponse> {
    let b = body.0;
    let rules = b.rules.map(|rules| serde_json::json!({ "rules": rules }));
    let answer = dry_run_for(&state, &op.0, id.into_inner(), rules, b.headers.into_iter().collect(), b.body).await?;
    Ok(HttpResponse::Ok().json(answer))
}

/// A dry run for `reach` (the operator API and the Board both come here): which rule of
/// `rules` (`{"rules": [...]}`, validated like a save; none: the saved rules) matches a
/// sample delivery, and what would happen. Changes nothing.
pub async fn dry_run_for(
    state: &AppState,
    reach: &Reach,
    id: WebhookId,
    rules: Option<serde_json::Value>,
    headers: Vec<(String, String)>,
    body: Option<serde_json::Value>,
) -> Result<RuleTestAnswer> {
    let webhook = state.store.webhook_in(&reach.scope_ids(), id).await?;
    let set = match rules {
        Some(rules) => checked_rules(&rules)?,
        None => rules::parse(&webhook.rules).map_err(|e| Error::internal(format!("stored rules do not parse: {e}")))?,
    };
    let envelope = Envelope { source: webhook.source_type.to_string(), event_type: None, headers, body };
    Ok(match rules::evaluate(&set, &envelope, rules::DEFAULT_BUDGET) {
        Decision::NoMatch => RuleTestAnswer {
            matched_rule: None,
            outcome: "default_queue".into(),
            queue: Some(webhook.queue),
            fault: None,
        },
        Decision::Fault { rule_id, reason } => RuleTestAnswer {
            matched_rule: Some(rule_id),
            outcome: "fault".into(),
            queue: Some("quarantine".into()),
            fault: Some(reason),
        },
        Decision::Matched { rule_id, action } => {
            let (outcome, queue) = match action.route {
                Route::Queue { queue, .. } => ("queue", Some(queue)),
                Route::Drop => ("drop", None),
                Route::Quarantine => ("quarantine", Some("quarantine".to_owned())),
            };
            RuleTestAnswer { matched_rule: Some(rule_id), outcome: outcome.into(), queue, fault: None }
        }
    })
}
