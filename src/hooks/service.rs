//! Hooks, for humans (an endpoint's hooks, in their scopes: any member lists,
//! an admin changes) and for agents (their own endpoint's hooks, with the
//! `notify_hooks` grant). Every change makes the dispatcher forget what it cached of
//! the endpoint's hooks. Creation obeys the kill switch and the ceiling, and checks the
//! URL with the same outbound guard every ring dials through.

use crate::domain::ids::{EndpointId, HookId, ScopeId};
use crate::error::{Error, Result};
use crate::hooks::rules::hook::HookSpec;
use crate::hooks::statements::{CreatedHook, HookReach, HookRow, RotatedHook};
use crate::service::Services;
use crate::service::permissions::{Action, Place, check};
use crate::service::principal::Principal;
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;

/// What a new hook is to be.
#[derive(Debug, Clone, Default)]
pub struct NewHook {
    /// Where rings are posted.
    pub url: String,
    /// Only todos on these queues; empty: every queue.
    pub queues: Vec<String>,
}

/// The hooks of `endpoint` (in the caller's scopes, else 404), for any member.
pub async fn list(s: &Services, who: &Reach, endpoint: EndpointId) -> Result<Vec<HookRow>> {
    // The store answers only for an endpoint in these scopes (else 404), which is
    // all the member rule asks.
    check(Action::ListHooks, Principal::Human(who), None)?;
    let scopes = who.scope_ids();
    s.store.list_hooks(HookReach::Scopes(&scopes), endpoint).await
}

/// Adds a hook to `endpoint`, for an admin of its scope (a member: 403; another
/// scope's endpoint: 404). The signing secret is in the answer, once.
pub async fn create(s: &Services, who: &Reach, endpoint: EndpointId, hook: NewHook) -> Result<CreatedHook> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), endpoint).await?;
    check(Action::CreateHook, Principal::Human(who), Some(Place::endpoint(endpoint.scope_id, endpoint.id)))?;
    create_on(s, endpoint.scope_id, endpoint.id, &hook, false).await
}

/// Adds a hook to the agent's own endpoint (grant `notify_hooks`).
pub async fn agent_create(s: &Services, me: &AgentPrincipal, hook: NewHook) -> Result<CreatedHook> {
    check(Action::AgentCreateHook, Principal::Endpoint(me), None)?;
    create_on(s, me.scope_id, me.endpoint_id, &hook, true).await
}

/// The create path once the caller is known to hold the endpoint: refused while hooks
/// are switched off, then the URL and queue checks, then the outbound guard at save
/// time, then the store (ceiling, sealing). The dispatcher's cache forgets the endpoint.
async fn create_on(
    s: &Services,
    owner: ScopeId,
    endpoint: EndpointId,
    hook: &NewHook,
    by_agent: bool,
) -> Result<CreatedHook> {
    s.hooks.refuse_when_off()?;
    let spec = HookSpec::parse(&hook.url, &hook.queues, s.hooks.allow_http)
        .map_err(|e| Error::InvalidArgument(e.to_string()))?;
    // The same guard every ring dials through: a private, loopback or metadata
    // target (unless allowlisted) is refused now, not only at the first attempt.
    // Where the name points (or that it does not resolve) is answered one way,
    // `forbidden_target`, whatever the cause.
    s.guard.check(spec.url()).await.map_err(|e| e.saving("url"))?;
    let created = s.store.create_hook(&s.vault, owner, endpoint, &spec, s.hooks.max, by_agent).await?;
    s.hook_cache.evict(endpoint);
    Ok(created)
}

/// The agent's own endpoint's hooks (grant `notify_hooks`).
pub async fn agent_list(s: &Services, me: &AgentPrincipal) -> Result<Vec<HookRow>> {
    check(Action::AgentListHooks, Principal::Endpoint(me), None)?;
    s.store.list_hooks(own(me), me.endpoint_id).await
}

fn own(me: &AgentPrincipal) -> HookReach<'static> {
    HookReach::Endpoint { scope: me.scope_id, endpoint: me.endpoint_id }
}

/// A hook a human may change with `action`: in their scopes (else 404) and in one they
/// administer (else 403). Returns it and its scope, to change it under.
async fn changeable(s: &Services, who: &Reach, action: Action, id: HookId) -> Result<(HookRow, ScopeId)> {
    let scopes = who.scope_ids();
    let (row, scope) = s.store.hook_in(HookReach::Scopes(&scopes), id).await?;
    check(action, Principal::Human(who), Some(Place::endpoint(scope, row.endpoint_id)))?;
    Ok((row, scope))
}

/// Replaces a hook's signing secret (answered once), for an admin of its scope; the
/// dispatcher's cache forgets its endpoint, since a rotation may re-enable a hook
/// failures disabled.
pub async fn rotate(s: &Services, who: &Reach, id: HookId) -> Result<RotatedHook> {
    let (_, scope) = changeable(s, who, Action::RotateHook, id).await?;
    let rotated = s.store.rotate_hook(&s.vault, HookReach::Scopes(&[scope]), id).await?;
    s.hook_cache.evict(rotated.hook.endpoint_id);
    Ok(rotated)
}

/// Rotates a hook the agent created (grant `notify_hooks`; any other hook, a human's on
/// its own endpoint included: 404, so it never holds a secret a human's receiver trusts).
pub async fn agent_rotate(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<RotatedHook> {
    check(Action::AgentRotateHook, Principal::Endpoint(me), None)?;
    let rotated = s.store.rotate_hook(&s.vault, own(me), id).await?;
    s.hook_cache.evict(rotated.hook.endpoint_id);
    Ok(rotated)
}

/// Switches a hook on or off, for an admin of its scope; the dispatcher's cache
/// forgets its endpoint.
pub async fn set_enabled(s: &Services, who: &Reach, id: HookId, enabled: bool) -> Result<HookRow> {
    let action = if enabled { Action::EnableHook } else { Action::DisableHook };
    let (_, scope) = changeable(s, who, action, id).await?;
    let row = s.store.set_hook_enabled(HookReach::Scopes(&[scope]), id, enabled).await?;
    s.hook_cache.evict(row.endpoint_id);
    Ok(row)
}

/// Deletes a hook, for an admin of its scope; returns what it was.
pub async fn delete(s: &Services, who: &Reach, id: HookId) -> Result<HookRow> {
    let (row, scope) = changeable(s, who, Action::DeleteHook, id).await?;
    s.store.delete_hook(HookReach::Scopes(&[scope]), id).await?;
    forget_deleted(s);
    Ok(row)
}

/// Deletes one of the agent's own hooks (grant `notify_hooks`; any other hook: 404).
pub async fn agent_delete(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<()> {
    check(Action::AgentDeleteHook, Principal::Endpoint(me), None)?;
    s.store.delete_hook(own(me), id).await?;
    forget_deleted(s);
    Ok(())
}

fn forget_deleted(s: &Services) {
    // A first attempt uses the dispatcher's cached match: it must not outlive the hook.
    s.hook_cache.clear();
}
