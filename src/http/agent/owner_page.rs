//! `POST /api/v1/agent/notify-owner` (grant `notify_owner`, never implied): the agent
//! pages its owner through the owner's subscribed sinks. The route returns the verb's
//! answer, [`crate::agent_api::owner_page`], as the MCP tool does.

use actix_web::{HttpResponse, web};

use super::super::body::Json;
use crate::agent_api::auth::Agent;
use crate::agent_api::owner_page::{OwnerPageAnswer, OwnerPageBody, page_answer};
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;

/// Pages the endpoint's owner: one `agent.notify` message per enabled sink of the
/// owner whose subscriptions match, queued in one transaction. At most 5 calls an hour
/// per endpoint (429 `rate_limited` with `Retry-After`, queuing nothing).
#[utoipa::path(post, path = "/api/v1/agent/notify-owner", operation_id = "notify_owner", request_body = OwnerPageBody,
    tag = "agent", security(("endpoint_token" = [])),
    responses((status = 202, body = OwnerPageAnswer), (status = 403, body = ErrorEnvelope),
              (status = 404, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope),
              (status = 429, body = ErrorEnvelope)))]
pub async fn page(s: web::Data<Services>, agent: Agent, body: Json<OwnerPageBody>) -> Result<HttpResponse> {
    Ok(HttpResponse::Accepted().json(page_answer(&s, &agent.0, body.0).await?))
}
