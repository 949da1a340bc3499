//! Operator routes for webhooks: create (ingest token and signing secret shown once),
//! list, rules (save and dry run).

use actix_web::{HttpResponse, web};

use super::super::AppState;
use super::super::auth::Operator;
use super::super::body::Json;
use super::super::dto::{CreateWebhookBody, CreatedWebhookView, WebhookList, WebhookView};
use crate::error::{Error, ErrorEnvelope, Result};
use crate::intake::actors::TrustedActors;
use crate::store::webhooks::NewWebhook;

/// Creates a webhook on an endpoint the caller administers.
#[utoipa::path(post, path = "/api/v1/webhooks", request_body = CreateWebhookBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = CreatedWebhookView), (status = 404, body = ErrorEnvelope),
              (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(state: web::Data<AppState>, op: Operator, body: Json<CreateWebhookBody>) -> Result<HttpResponse> {
    let b = body.0;
    let endpoint = state.store.endpoint_in(&op.0.scope_ids(), b.endpoint_id).await?;
    if !op.0.is_admin_of(endpoint.scope_id) {
        return Err(Error::Forbidden("only a team admin may add webhooks to the team's endpoints".into()));
    }
    if let Some(actors) = &b.trusted_actors {
        actors.validate().map_err(|why| Error::invalid("trusted_actors", why))?;
    }
    let created = state
        .store
        .create_webhook(
            &state.vault,
            NewWebhook {
                scope: endpoint.scope_id,
                endpoint_id: endpoint.id,
                source_type: b.source_type,
                queue: b.queue,
                max_attempts: b.max_attempts,
                trusted_actors: b.trusted_actors.as_ref().map(TrustedActors::to_json),
                secret: b.secret,
                unverified: b.unverified.unwrap_or(false),
            },
        )
        .await?;
    let ingest_url = format!("{}/webhooks/w/{}", state.base_url, created.ingest_token);
    Ok(HttpResponse::Created().json(CreatedWebhookView {
        id: created.webhook.id,
        ingest_url,
        ingest_token: created.ingest_token,
        signing_secret: created.signing_secret,
    }))
}

/// Webhooks in every scope the caller belongs to (never their credentials).
#[utoipa::path(get, path = "/api/v1/webhooks", tag = "operator", security(("operator_token" = [])),
    responses((status = 200, body = WebhookList)))]
pub async fn list(state: web::Data<AppState>, op: Operator) -> Result<HttpResponse> {
    let rows = state.store.list_webhooks(&op.0.scope_ids()).await?;
    Ok(HttpResponse::Ok().json(WebhookList { webhooks: rows.iter().map(WebhookView::from).collect() }))
}
