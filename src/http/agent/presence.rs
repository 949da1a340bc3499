//! Presence: an agent says it is (or is no longer) working its queues. Any valid
//! endpoint token may set its own presence.

use actix_web::{HttpResponse, web};

use super::super::auth::Agent;
use super::super::dto::PresenceView;
use crate::domain::todo_state::Presence;
use crate::error::{ErrorEnvelope, Result};
use crate::service::{Services, agent as service};
use crate::store::endpoints::AgentPrincipal;

/// What `clock_in` and `clock_out` answer (the routes and the MCP tools of the same names).
pub async fn clock_answer(s: &Services, me: &AgentPrincipal, presence: Presence) -> Result<PresenceView> {
    let row = service::clock(s, me, presence).await?;
    Ok(PresenceView { endpoint: row.slug, presence: row.presence, changed_at: row.presence_changed_at })
}

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
