//! Who is asking: a human (through the operator API's `sbo_…` token or a Board
//! session) with their scopes and roles, or an endpoint (through its `sbk_…` token)
//! with its grants. The adapters authenticate; the services decide what the caller
//! may do with [`super::permissions::check`].

use crate::domain::ids::ScopeId;
use crate::store::endpoints::AgentPrincipal;
use crate::store::tenancy::Reach;

/// The caller of a service.
#[derive(Debug, Clone, Copy)]
pub enum Principal<'a> {
    /// A human: every scope they belong to, with their role in each.
    Human(&'a Reach),
    /// An endpoint: its own scope, id and grants.
    Endpoint(&'a AgentPrincipal),
}

impl Principal<'_> {
    /// The scopes whose resources the caller can see: a human's every scope, an
    /// endpoint's owner (whose resources it still reaches only when they are its own).
    pub fn scope_ids(&self) -> Vec<ScopeId> {
        match self {
            Principal::Human(reach) => reach.scope_ids(),
            Principal::Endpoint(me) => vec![me.scope_id],
        }
    }
}
