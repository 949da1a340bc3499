//! What the agent's presence verbs answer: an agent says it is (or is no longer)
//! working its queues. Any valid endpoint token may set its own presence.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::todo_state::Presence;
use crate::error::Result;
use crate::service::{Services, agent as service};
use crate::store::endpoints::AgentPrincipal;

/// Presence answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct PresenceView {
    /// The endpoint's slug.
    pub endpoint: String,
    /// `in` after a clock-in, `out` after a clock-out.
    pub presence: Presence,
    /// When presence was last set: the time of this call.
    pub changed_at: Option<DateTime<Utc>>,
}

/// What `POST /api/v1/agent/presence/clock-in` and `…/clock-out` answer, and the MCP
/// tools `clock_in` and `clock_out`.
pub async fn clock_answer(s: &Services, me: &AgentPrincipal, presence: Presence) -> Result<PresenceView> {
    let row = service::clock(s, me, presence).await?;
    Ok(PresenceView { endpoint: row.slug, presence: row.presence, changed_at: row.presence_changed_at })
}
