//! Endpoints: vend (token shown once), list, show, revoke (with its silent cascade,
//! confirmed on every instance), and fan-out grants.

use chrono::{DateTime, Datelike, Utc};

use super::Services;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::db::models::EndpointRow;
use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::error::{Error, Result};
use crate::store::endpoints::{Revoked, VendEndpoint, VendedEndpoint};
use crate::store::held_work::HeldWork;
use crate::store::tenancy::{OwnerRef, Reach};

/// What a vend asks for.
#[derive(Debug, Clone)]
pub struct Vend {
    /// The endpoint's slug.
    pub slug: String,
    /// `team:<name>` or an email; none: the caller's own scope.
    pub owner: Option<String>,
    /// Grants; none or empty: the drain family.
    pub grants: Option<Vec<Verb>>,
    /// Default lease, 60–86 400 seconds.
    pub default_lease_seconds: Option<i32>,
    /// When the endpoint stops working, if ever.
    pub expires_at: Option<DateTime<Utc>>,
}

/// Vends an endpoint in the caller's own scope, or in the team `v.owner` names if they
/// administer it; any other owner, existing or not, a team they are only a member of
/// included, is refused alike (422 "no such owner"). The store checks the slug and the
/// lease.
pub async fn vend(s: &Services, who: &Reach, v: Vend) -> Result<VendedEndpoint> {
    // PostgreSQL cannot hold every instant chrono parses (it stops at 4713 BC), so a far
    // past expiry used to fail in the database as a 500; keep to RFC 3339's years.
    if v.expires_at.is_some_and(|e| !(1..=9999).contains(&e.year())) {
        return Err(Error::invalid("expires_at", "year must be between 1 and 9999"));
    }
    let scope = super::owners::scope_to_create_in(s, who, v.owner.as_deref(), Action::VendEndpoint).await?;
    s.store
        .vend_endpoint(VendEndpoint {
            scope,
            slug: v.slug,
            grants: v.grants.unwrap_or_default(),
            default_lease_seconds: v.default_lease_seconds,
            expires_at: v.expires_at,
        })
        .await
}

/// Every endpoint in the caller's scopes.
pub async fn list(s: &Services, who: &Reach) -> Result<Vec<EndpointRow>> {
    check(Action::ListEndpoints, Principal::Human(who), None)?;
    s.store.list_endpoints(&who.scope_ids()).await
}

/// One endpoint in the caller's scopes (else 404).
pub async fn show(s: &Services, who: &Reach, id: EndpointId) -> Result<EndpointRow> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), id).await?;
    check(Action::ShowEndpoint, Principal::Human(who), Some(Place::scope(endpoint.scope_id)))?;
    Ok(endpoint)
}

/// What revoking the endpoint would dead-letter, for the confirmation page: asked by
/// someone who may revoke it (a member who may not: 403, before any counting).
pub async fn held_work(s: &Services, who: &Reach, id: EndpointId) -> Result<(EndpointRow, HeldWork)> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), id).await?;
    check(Action::RevokeEndpoint, Principal::Human(who), Some(Place::scope(endpoint.scope_id)))?;
    let held = s.store.held_work(&endpoint).await?;
    Ok((endpoint, held))
}

/// Revokes an endpoint the caller administers, with its silent cascade, and returns
/// once every instance forgot its cached token. Another scope's endpoint is unknown
/// (404); a team member who is not an admin is refused (403).
pub async fn revoke(s: &Services, who: &Reach, id: EndpointId) -> Result<Revoked> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), id).await?;
    check(Action::RevokeEndpoint, Principal::Human(who), Some(Place::scope(endpoint.scope_id)))?;
    let scope = [endpoint.scope_id];
    let revocation = s.store.revoke_endpoint(&scope, id);
    let revoked = super::auth::confirm::everywhere(&s.store, id, revocation).await?;
    s.auth_cache.evict(id);
    Ok(revoked)
}

/// The endpoint's scope (the caller must administer it for `action`) and the grantee
/// reference, which must be well-formed (else 422) and may name anyone: a human or team
/// the caller shares nothing with, or no account at all, is answered alike (SPEC 13,
/// "Fan-out grants"), so the route tells nobody which accounts exist.
async fn fanout_parties(
    s: &Services,
    who: &Reach,
    action: Action,
    id: EndpointId,
    grantee: &str,
) -> Result<(ScopeId, OwnerRef)> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), id).await?;
    check(action, Principal::Human(who), Some(Place::scope(endpoint.scope_id)))?;
    let owner = OwnerRef::parse_grantee(grantee)?;
    Ok((endpoint.scope_id, owner))
}

/// Lets `grantee`'s webhooks route deliveries onto the endpoint (rules may then name
/// it): at once if the account exists, else once it does.
pub async fn grant_fanout(s: &Services, who: &Reach, id: EndpointId, grantee: &str) -> Result<()> {
    let (scope, owner) = fanout_parties(s, who, Action::GrantFanout, id, grantee).await?;
    s.store.grant_fanout(scope, id, &owner, who.human).await
}

/// Withdraws a fan-out grant: the grantee's webhooks stop routing onto the endpoint
/// from the next delivery on. A grant never made is withdrawn all the same (204).
pub async fn revoke_fanout(s: &Services, who: &Reach, id: EndpointId, grantee: &str) -> Result<()> {
    let (scope, owner) = fanout_parties(s, who, Action::RevokeFanout, id, grantee).await?;
    s.store.revoke_fanout(scope, id, &owner).await
}
