//! An owner page: what the agent's `notify_owner` verb takes and answers (grant `notify_owner`, never
//! implied): the agent pages its owner through the owner's subscribed sinks.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::TodoId;
use crate::error::Result;
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

/// What `POST /api/v1/agent/notify-owner` and the MCP tool `notify_owner` answer.
pub async fn page_answer(s: &Services, me: &AgentPrincipal, b: OwnerPageBody) -> Result<OwnerPageAnswer> {
    let notice = OwnerNotice { title: b.title, severity: b.severity, todo_id: b.todo_id };
    Ok(OwnerPageAnswer { enqueued: owner_page::page_owner(s, me, notice).await? })
}
