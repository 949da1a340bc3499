//! Who is asking: a human (through the operator API's `sbo_…` token or a Board
//! session) with their scopes and roles, or an endpoint (through its `sbk_…` token)
//! with its grants. The adapters authenticate; the services decide what the caller
//! may do with [`super::permissions::check`].

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
