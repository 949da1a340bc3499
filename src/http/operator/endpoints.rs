//! Operator routes for endpoints: vend (token shown once), list, revoke.

use actix_web::{HttpResponse, web};
use chrono::Datelike;

use super::super::AppState;
use super::super::auth::Operator;
use super::super::body::Json;
use super::super::dto::*;
use crate::domain::ids::EndpointId;
use crate::error::{Error, ErrorEnvelope, Result};
use crate::store::endpoints::{Revoked, VendEndpoint, VendedEndpoint};
use crate::store::tenancy::{OwnerRef, Reach};

/// Vends an endpoint in the caller's scope (or a team they administer).
#[utoipa::path(post, path = "/api/v1/endpoints", request_body = VendBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = VendedView), (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn vend(state: web::Data<AppState>, op: Operator, body: Json<VendBody>) -> Result<HttpResponse> {
    let vended = vend_for(&state, &op.0, body.0).await?;
    let e = vended.endpoint;
    Ok(HttpResponse::Created().json(VendedView { id: e.id, grants: e.verbs(), slug: e.slug, token: vended.token }))
}

/// Vends an endpoint for `reach` (the operator API and the Board both come here): in
/// their own scope, or in the team `b.owner` names if they administer it. A foreign or
/// unknown owner is refused alike; the store checks the slug and the lease.
pub async fn vend_for(state: &AppState, reach: &Reach, b: VendBody) -> Result<VendedEndpoint> {
    // PostgreSQL cannot hold every instant chrono parses (it stops at 4713 BC), so a far
    // past expiry used to fail in the database as a 500; keep to RFC 3339's years.
    if b.expires_at.is_some_and(|e| !(1..=9999).contains(&e.year())) {
        return Err(Error::invalid("expires_at", "year must be between 1 and 9999"));
    }
    let scope = match b.owner.as_deref() {
        None => reach.personal,
        Some(raw) => {
            let owner = OwnerRef::parse(raw)?;
            // A foreign owner is refused exactly like one that does not exist; a
            // database failure stays a 503.
            let refused = || Error::invalid("owner", "no such owner that you administer");
            match state.store.resolve_owner(&owner).await {
                Ok(scope) if reach.is_admin_of(scope) => scope,
                Ok(_) | Err(Error::InvalidArgument(_)) => return Err(refused()),
                Err(e) => return Err(e),
            }
        }
    };
    state
        .store
        .vend_endpoint(VendEndpoint {
            scope,
            slug: b.slug,
            grants: b.grants.unwrap_or_default(),
            default_lease_seconds: b.default_lease_seconds,
            expires_at: b.expires_at,
        })
        .await
}

/// Endpoints in every scope the caller belongs to.
#[utoipa::path(get, path = "/api/v1/endpoints", operation_id = "list_endpoints", tag = "operator", security(("operator_token" = [])),
    responses((status = 200, body = EndpointList), (status = 401, body = ErrorEnvelope)))]
pub async fn list(state: web::Data<AppState>, op: Operator) -> Result<HttpResponse> {
    let rows = state.store.list_endpoints(&op.0.scope_ids()).await?;
    Ok(HttpResponse::Ok().json(EndpointList { endpoints: rows.iter().map(EndpointView::from).collect() }))
}

/// Revokes an endpoint: its token stops working and every live todo it held becomes a
/// dead letter (`endpoint_revoked`), silently.
#[utoipa::path(post, path = "/api/v1/endpoints/{id}/revoke", tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 200, body = RevokedView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn revoke(state: web::Data<AppState>, op: Operator, id: web::Path<EndpointId>) -> Result<HttpResponse> {
    let id = id.into_inner();
    let revoked = revoke_for(&state, &op.0, id).await?;
    Ok(HttpResponse::Ok().json(RevokedView { id, revoked: true, dead_lettered: revoked.dead_lettered }))
}

/// Revokes an endpoint `reach` administers, with its silent cascade, and returns once
/// every instance forgot its cached token (the operator API and the Board both come here). Another scope's
/// endpoint is unknown (404); a team member who is not an admin is refused (403).
pub async fn revoke_for(state: &AppState, reach: &Reach, id: EndpointId) -> Result<Revoked> {
    let endpoint = state.store.endpoint_in(&reach.scope_ids(), id).await?;
    if !reach.is_admin_of(endpoint.scope_id) {
        return Err(Error::Forbidden("only a team admin may revoke the team's endpoints".into()));
    }
    let scope = [endpoint.scope_id];
    let revocation = state.store.revoke_endpoint(&scope, id);
    let revoked = crate::http::auth::confirm::everywhere(&state.store, id, revocation).await?;
    state.auth_cache.evict(id);
    Ok(revoked)
}

/// Who may fan out onto an endpoint.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FanoutGrantBody {
    /// The grantee: a human's email or `team:<name>`.
    pub owner: String,
}

/// Lets another owner's webhooks route deliveries onto this endpoint (rules may then
/// name it in `endpoints[]`). Only an admin of the endpoint's scope may grant, and only
/// to themselves, a team they belong to or a human in one of their teams; any other
/// owner, existing or not, is not found.
#[utoipa::path(post, path = "/api/v1/endpoints/{id}/fanout-grants", request_body = FanoutGrantBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn grant_fanout(
    state: web::Data<AppState>,
    op: Operator,
    id: web::Path<EndpointId>,
    body: Json<FanoutGrantBody>,
) -> Result<HttpResponse> {
    let (endpoint, grantee) = fanout_parties(&state, &op, id.into_inner(), &body.0.owner).await?;
    state.store.grant_fanout(endpoint, grantee, op.0.human).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The endpoint (which the caller must administer) and the grantee's scope. A grantee
/// the caller shares no team with answers 404 exactly like one that does not exist
/// (and like an unknown grant), through the same statement, so the route tells nobody
/// which accounts exist.
async fn fanout_parties(
    state: &AppState,
    op: &Operator,
    id: EndpointId,
    owner: &str,
) -> Result<(EndpointId, crate::domain::ids::ScopeId)> {
    let endpoint = state.store.endpoint_in(&op.0.scope_ids(), id).await?;
    if !op.0.is_admin_of(endpoint.scope_id) {
        return Err(Error::Forbidden("only an admin of the endpoint's owner may change its fan-out grants".into()));
    }
    let owner = OwnerRef::parse(owner)?;
    let grantee = state.store.fanout_grantee(&owner, op.0.human, endpoint.id).await?;
    Ok((endpoint.id, grantee.ok_or(Error::NotFound)?))
}

/// Withdraws a fan-out grant: the grantee's webhooks stop routing onto this endpoint
/// from the next delivery on.
#[utoipa::path(delete, path = "/api/v1/endpoints/{id}/fanout-grants", request_body = FanoutGrantBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn revoke_fanout(
    state: web::Data<AppState>,
    op: Operator,
    id: web::Path<EndpointId>,
    body: Json<FanoutGrantBody>,
) -> Result<HttpResponse> {
    let (endpoint, grantee) = fanout_parties(&state, &op, id.into_inner(), &body.0.owner).await?;
    state.store.revoke_fanout(endpoint, grantee).await?;
    Ok(HttpResponse::NoContent().finish())
}
