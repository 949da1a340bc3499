//! Operator routes for webhooks: create (ingest token and signing secret shown once),
//! list, rules (save and dry run).

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::ToSchema;

use super::super::auth::Operator;
use super::super::body::Json;
use super::super::dto::{CreateWebhookBody, CreatedWebhookView, WebhookList, WebhookView};
use crate::domain::ids::WebhookId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::service::webhooks::{self, RuleTestAnswer, Sample};

/// Creates a webhook on an endpoint the caller administers.
#[utoipa::path(post, path = "/api/v1/webhooks", operation_id = "create_webhook", request_body = CreateWebhookBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = CreatedWebhookView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, op: Operator, body: Json<CreateWebhookBody>) -> Result<HttpResponse> {
    let created = webhooks::create(&s, &op.0, body.0.into()).await?;
    Ok(HttpResponse::Created().json(CreatedWebhookView::new(created, s.base_url())))
}

/// Webhooks in every scope the caller belongs to (never their credentials).
#[utoipa::path(get, path = "/api/v1/webhooks", operation_id = "list_webhooks", tag = "operator", security(("operator_token" = [])),
    responses((status = 200, body = WebhookList)))]
pub async fn list(s: web::Data<Services>, op: Operator) -> Result<HttpResponse> {
    let rows = webhooks::list(&s, &op.0).await?;
    Ok(HttpResponse::Ok().json(WebhookList { webhooks: rows.iter().map(WebhookView::from).collect() }))
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
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<WebhookId>,
    body: Json<serde_json::Value>,
) -> Result<HttpResponse> {
    let row = webhooks::save_rules(&s, &op.0, id.into_inner(), &body.0).await?;
    Ok(HttpResponse::Ok().json(WebhookView::from(&row)))
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

/// Dry run: which rule matches a sample delivery and what would happen. Changes nothing.
#[utoipa::path(post, path = "/api/v1/webhooks/{id}/rules/test", request_body = RuleTestBody, tag = "operator",
    params(("id" = WebhookId, Path, description = "webhook id")), security(("operator_token" = [])),
    responses((status = 200, body = RuleTestAnswer), (status = 404, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn test_rules(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<WebhookId>,
    body: Json<RuleTestBody>,
) -> Result<HttpResponse> {
    let b = body.0;
    let sample = Sample {
        rules: b.rules.map(|rules| serde_json::json!({ "rules": rules })),
        headers: b.headers.into_iter().collect(),
        body: b.body,
    };
    let answer = webhooks::dry_run(&s, &op.0, id.into_inner(), sample).await?;
    Ok(HttpResponse::Ok().json(answer))
}
