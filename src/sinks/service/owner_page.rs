//! `notify_owner`: an agent pages its owner. Off by default (grant `notify_owner`),
//! because an injected agent holding it could page a person at will; so it is capped at
//! [`PER_HOUR`] calls an hour per endpoint (counted in the database, across instances),
//! and each message still spends its sink's own budget in the outbox. The agent's text
//! is neutralised, cut to 120 characters and labelled as agent-written in the message;
//! no payload travels. Fire and forget: no acknowledgement, no state to manage.

use crate::domain::ids::TodoId;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::permissions::{Action, check};
use crate::service::principal::Principal;
use crate::sinks::rules::content::{TITLE_MAX_CHARS, clip};
use crate::sinks::rules::vocabulary::Severity;
use crate::sinks::statements::owner_pages::{OwnerPage, Paged};
use crate::store::endpoints::AgentPrincipal;

/// Pages an endpoint may send an hour (SPEC section 5).
pub const PER_HOUR: u32 = 5;

/// A page as the agent asked for it.
#[derive(Debug, Clone)]
pub struct OwnerNotice {
    /// What to tell the owner (agent-written; 1–120 characters once neutralised).
    pub title: String,
    /// Default `normal`.
    pub severity: Option<Severity>,
    /// A todo of this endpoint the page is about.
    pub todo_id: Option<TodoId>,
}

/// Queues `notice` as one `agent.notify` message per enabled sink of the endpoint's
/// owner scope whose subscriptions match (grant `notify_owner`); answers how many
/// sinks that is (0 when none subscribes). A todo of another endpoint is not found; the
/// [`PER_HOUR`]th call of the hour is the last (`rate_limited`, with the wait). A
/// refused call queues nothing and does not count.
pub async fn page_owner(s: &Services, me: &AgentPrincipal, notice: OwnerNotice) -> Result<u32> {
    check(Action::PageOwner, Principal::Endpoint(me), None)?;
    let title = clip(&notice.title, TITLE_MAX_CHARS);
    if title.is_empty() {
        return Err(Error::invalid("title", "must say something: 1–120 characters other than control characters"));
    }
    let page = OwnerPage {
        scope: me.scope_id,
        endpoint: me.endpoint_id,
        slug: me.slug.clone(),
        title,
        severity: notice.severity.unwrap_or(Severity::Normal),
        todo: notice.todo_id,
    };
    match s.store.page_owner(&page, PER_HOUR).await? {
        Paged::Enqueued(n) => Ok(n),
        Paged::RateLimited(wait) => {
            Err(Error::rate_limited(format!("at most {PER_HOUR} notify_owner calls an hour per endpoint"), wait))
        }
    }
}
