//! The agent's `notifications` verbs: list, create or replace (by name), delete, test
//! and re-subscribe its owner's sinks. An agent is an untrusted principal (whatever it
//! reads can steer it), so these verbs are built for the worst an injected agent does
//! with them:
//!
//! - it never chooses where a secret goes: a sink takes its destination from its
//!   connection, which only a human admin binds (a base URL it names must be that
//!   destination, `destination_mismatch`); it can point the owner's alerts only at
//!   destinations the owner chose;
//! - it never widens what leaves: a subscription it sets may not carry payload excerpts
//!   (`include_excerpt: true` is `forbidden`), and replacing subscriptions drops any;
//! - it acts only in its own owner scope (another scope's sink is not found; another
//!   scope's connection, endpoint or webhook is `reference_out_of_scope`), with exactly
//!   the checks the operator's routes make (the same cores in [`super::sinks`]), and
//!   never reads a secret: answers carry connection ids, never what a connection holds.
//!
//! What remains is what the grant is for, and why it is off by default: its holder can
//! redirect (among the owner's destinations) or silence the owner's alerts.

use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::permissions::{Action, check};
use crate::service::principal::Principal;
use crate::sinks::service::{SinkSpec, Subscription, TestSend, checked_subscriptions, put_in, resolved, test_sink};
use crate::sinks::statements::{SinkRow, SubscriptionRow};
use crate::store::endpoints::AgentPrincipal;

/// The owner's sinks, by name (grant `notifications`).
pub async fn list(s: &Services, me: &AgentPrincipal) -> Result<Vec<SinkRow>> {
    check(Action::AgentListSinks, Principal::Endpoint(me), None)?;
    s.store.list_sinks(&[me.scope_id]).await
}

/// Creates the owner's sink `name`, or replaces its kind, connection (and so
/// destination), mode and (when given) `enabled`; its budget stays. `subs`, when given,
/// replaces its subscriptions (with the agent's restrictions: no excerpts); otherwise a
/// created sink hears the dead letters (the default every new sink gets) and a replaced
/// one keeps its own. Answers the sink and whether it was created (grant
/// `notifications`).
pub async fn put(
    s: &Services,
    me: &AgentPrincipal,
    name: &str,
    spec: SinkSpec,
    subs: Option<Vec<Subscription>>,
) -> Result<(SinkRow, bool)> {
    check(Action::AgentPutSink, Principal::Endpoint(me), None)?;
    let subs = match subs {
        Some(subs) => Some(agent_checked(subs)?),
        None => None,
    };
    let checked = resolved(s, me.scope_id, name, spec).await?;
    put_in(s, me.scope_id, checked, subs).await
}

/// A subscription list an agent sets, checked as anyone's and refusing payload
/// excerpts (`forbidden`): an agent must not make text it cannot read through the
/// agent API (other endpoints' payloads, quarantined bodies) leave through
/// notifications.
fn agent_checked(subs: Vec<Subscription>) -> Result<Vec<crate::sinks::statements::NewSubscription>> {
    if subs.iter().any(|sub| sub.include_excerpt == Some(true)) {
        return Err(Error::Forbidden(
            "an agent may not subscribe a sink with include_excerpt: payload excerpts are for the owner to turn on"
                .into(),
        ));
    }
    checked_subscriptions(subs)
}

/// Deletes the owner's sink `name` and its subscriptions (grant `notifications`).
pub async fn delete(s: &Services, me: &AgentPrincipal, name: &str) -> Result<()> {
    check(Action::AgentDeleteSink, Principal::Endpoint(me), None)?;
    let sink = named(s, me, name).await?;
    s.store.delete_sink(me.scope_id, sink.id).await
}

/// Sends the owner's sink `name` one harmless test message, as the operator's test
/// does (grant `notifications`).
pub async fn test(s: &Services, me: &AgentPrincipal, name: &str) -> Result<TestSend> {
    check(Action::AgentTestSink, Principal::Endpoint(me), None)?;
    let sink = named(s, me, name).await?;
    test_sink(s, &sink).await
}

/// Replaces the subscriptions of the owner's sink `name` (grant `notifications`). None
/// may carry payload excerpts (`forbidden`): an agent must not make text it cannot read
/// through the agent API (other endpoints' payloads, quarantined bodies) leave through
/// notifications. What it replaces goes, excerpts included.
pub async fn set_subscriptions(
    s: &Services,
    me: &AgentPrincipal,
    name: &str,
    subs: Vec<Subscription>,
) -> Result<Vec<SubscriptionRow>> {
    check(Action::AgentSetSubscriptions, Principal::Endpoint(me), None)?;
    let checked = agent_checked(subs)?;
    let sink = named(s, me, name).await?;
    s.store.set_subscriptions(me.scope_id, sink.id, checked).await
}

/// The sink of the endpoint's owner scope named `name`, else not found.
async fn named(s: &Services, me: &AgentPrincipal, name: &str) -> Result<SinkRow> {
    s.store.sink_named(me.scope_id, name).await?.ok_or(Error::NotFound)
}
