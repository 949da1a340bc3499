//! The names of a human's owner scopes, for pickers and labels.

use super::Services;
use crate::domain::ids::ScopeId;
use crate::error::Result;
use crate::store::tenancy::Reach;

/// The names of the caller's team scopes (`(scope, team name)`).
pub async fn team_names(s: &Services, who: &Reach) -> Result<Vec<(ScopeId, String)>> {
    s.store.team_names(&who.scope_ids()).await
}
