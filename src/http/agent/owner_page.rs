//! `POST /api/v1/agent/notify-owner` (grant `notify_owner`, never implied): the agent
//! pages its owner through the owner's subscribed sinks.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::auth::Agent;
use super::super::body::Json;
use crate::domain::ids::TodoId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::sinks::rules::vocabulary::Severity;
use crate::sinks::service::owner_page::{self, OwnerNotice};
use crate::store::endpoints::AgentPrincipal;

/// A page of the owner.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[schema(as = NotifyOwnerBody)]
#[serde(deny_unknown_fields)]
pub struct OwnerPageBody {
    /// What to tell the owner. Control characters are stripped and line breaks become
    /// spaces; longer than 120 characters it is cut (an ellipsis marks the cut). The
    /// message labels it as agent-written. Nothing left once stripped: 422.
    pub title: String,
    /// `low`, `normal` (default) or `high`; a subscription with a higher minimum
    /// severity is not told.
    pub severity: Option<Severity>,
    /// A todo of this endpoint the page is about: the message links it, and
    /// subscriptions filtered by queue or webhook match on it. Another endpoint's todo:
    /// 404, and nothing is queued.
    pub todo_id: Option<TodoId>,
}

/// What a page queued.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = NotifyOwnerAnswer)]
pub struct OwnerPageAnswer {
    /// Sinks the page was queued for, one message each (0: none of the owner's
    /// enabled sinks subscribes to `agent.notify` at this severity for this endpoint).
    /// Each message still waits for its sink's budget.
    pub enqueued: u32,
}

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

/// What `page` answers (the route and the MCP tool `notify_owner`).
pub async fn page_answer(s: &Services, me: &AgentPrincipal, b: OwnerPageBody) -> Result<OwnerPageAnswer> {
    let notice = OwnerNotice { title: b.title, severity: b.severity, todo_id: b.todo_id };
    Ok(OwnerPageAnswer { enqueued: owner_page::page_owner(s, me, notice).await? })
}
