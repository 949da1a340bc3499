//! Presence: an agent says it is (or is no longer) working its queues. Any valid
//! endpoint token may set its own presence. The routes return the verbs' answer,
//! [`crate::agent_api::presence`], as the MCP tools do.

use actix_web::{HttpResponse, web};

use crate::agent_api::auth::Agent;
use crate::agent_api::presence::{PresenceView, clock_answer};
use crate::domain::todo_state::Presence;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;

async fn set(s: web::Data<Services>, agent: Agent, presence: Presence) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(clock_answer(&s, &agent.0, presence).await?))
}

/// Clocks the agent in.
#[utoipa::path(post, path = "/api/v1/agent/presence/clock-in", tag = "agent", security(("endpoint_token" = [])),
    responses((status = 200, body = PresenceView), (status = 401, body = ErrorEnvelope)))]
pub async fn clock_in(s: web::Data<Services>, agent: Agent) -> Result<HttpResponse> {
    set(s, agent, Presence::In).await
}

/// Clocks the agent out.
#[utoipa::path(post, path = "/api/v1/agent/presence/clock-out", tag = "agent", security(("endpoint_token" = [])),
    responses((status = 200, body = PresenceView), (status = 401, body = ErrorEnvelope)))]
pub async fn clock_out(s: web::Data<Services>, agent: Agent) -> Result<HttpResponse> {
    set(s, agent, Presence::Out).await
}
