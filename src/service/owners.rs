//! Owner scopes: the scope a new resource is created in (`owner`), and the names of a
//! human's scopes for pickers and labels.

use super::Services;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::domain::ids::ScopeId;
use crate::error::{Error, Result};
use crate::store::tenancy::{OwnerRef, Reach};

/// The scope a resource created by `who` with `action` goes into: their own without
/// an `owner`, else the owner it names (`team:T` or an email) if they administer it.
/// Any other owner, existing or not, a team they are only a member of included, is
/// refused alike (422 "no such owner that you administer"): the answer tells nobody
/// which owners exist or who is in them.
pub async fn scope_to_create_in(s: &Services, who: &Reach, owner: Option<&str>, action: Action) -> Result<ScopeId> {
    let Some(raw) = owner else {
        check(action, Principal::Human(who), Some(Place::scope(who.personal)))?;
        return Ok(who.personal);
    };
    let owner = OwnerRef::parse(raw)?;
    let refused = || Error::invalid("owner", "no such owner that you administer");
    match s.store.resolve_owner(&owner).await {
        Ok(scope) => {
            check(action, Principal::Human(who), Some(Place::scope(scope))).map_err(|_| refused())?;
            Ok(scope)
        }
        // A database failure stays a 503.
        Err(Error::InvalidArgument(_)) => Err(refused()),
        Err(e) => Err(e),
    }
}

/// The names of the caller's team scopes (`(scope, team name)`).
pub async fn team_names(s: &Services, who: &Reach) -> Result<Vec<(ScopeId, String)>> {
    s.store.team_names(&who.scope_ids()).await
}
