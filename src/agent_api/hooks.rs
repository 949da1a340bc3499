//! What the agent's notify-hook verbs answer (grant `notify_hooks`, never implied): an
//! agent manages its own endpoint's hooks only; any other hook is not found.

use super::hook_dto::{CreateHookBody, CreatedHookView, DeletedHookView, HookList, RotatedHookView};
use crate::domain::ids::HookId;
use crate::error::Result;
use crate::hooks::service as hooks;
use crate::service::Services;
use crate::store::endpoints::AgentPrincipal;

/// What `POST /api/v1/agent/hooks` and the MCP tool `create_hook` answer.
pub async fn create_answer(s: &Services, me: &AgentPrincipal, body: CreateHookBody) -> Result<CreatedHookView> {
    Ok(CreatedHookView::from(hooks::agent_create(s, me, body.into()).await?))
}

/// What `GET /api/v1/agent/hooks` and the MCP tool `list_hooks` answer.
pub async fn list_answer(s: &Services, me: &AgentPrincipal) -> Result<HookList> {
    let rows = hooks::agent_list(s, me).await?;
    Ok(HookList::new(&rows, s.hook_settings().max))
}

/// What `POST /api/v1/agent/hooks/{id}/rotate` and the MCP tool `rotate_hook` answer.
pub async fn rotate_answer(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<RotatedHookView> {
    Ok(RotatedHookView::from(hooks::agent_rotate(s, me, id).await?))
}

/// What `DELETE /api/v1/agent/hooks/{id}` and the MCP tool `delete_hook` answer.
pub async fn delete_answer(s: &Services, me: &AgentPrincipal, id: HookId) -> Result<DeletedHookView> {
    hooks::agent_delete(s, me, id).await?;
    Ok(DeletedHookView { hook_id: id, deleted: true })
}
