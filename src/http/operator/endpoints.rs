//! Operator routes for endpoints: vend (token shown once), list, revoke.

use actix_web::{HttpResponse, web};

use super::super::auth::Operator;
use super::super::body::Json;
use super::super::dto::*;
use crate::domain::ids::EndpointId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::{Services, endpoints};

/// Vends an endpoint in the caller's scope (or a team they administer).
#[utoipa::path(post, path = "/api/v1/endpoints", request_body = VendBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = VendedView), (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn vend(s: web::Data<Services>, op: Operator, body: Json<VendBody>) -> Result<HttpResponse> {
    let vended = endpoints::vend(&s, &op.0, body.0.into()).await?;
    let e = vended.endpoint;
    Ok(HttpResponse::Created().json(VendedView { id: e.id, grants: e.verbs(), slug: e.slug, token: vended.token }))
}

/// Endpoints in every scope the caller belongs to.
#[utoipa::path(get, path = "/api/v1/endpoints", operation_id = "list_endpoints", tag = "operator", security(("operator_token" = [])),
    responses((status = 200, body = EndpointList), (status = 401, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, op: Operator) -> Result<HttpResponse> {
    let rows = endpoints::list(&s, &op.0).await?;
    Ok(HttpResponse::Ok().json(EndpointList { endpoints: rows.iter().map(EndpointView::from).collect() }))
}

/// Revokes an endpoint: its token stops working and every live todo it held becomes a
/// dead letter (`endpoint_revoked`), silently.
#[utoipa::path(post, path = "/api/v1/endpoints/{id}/revoke", tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 200, body = RevokedView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn revoke(s: web::Data<Services>, op: Operator, id: web::Path<EndpointId>) -> Result<HttpResponse> {
    let id = id.into_inner();
    let revoked = endpoints::revoke(&s, &op.0, id).await?;
    Ok(HttpResponse::Ok().json(RevokedView { id, revoked: true, dead_lettered: revoked.dead_lettered }))
}

/// Who may fan out onto an endpoint.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FanoutGrantBody {
    /// The grantee: a human's email or `team:<name>`.
    pub owner: String,
}

/// Lets another owner's webhooks route deliveries onto this endpoint (rules may then
/// name it in `endpoints[]`). Only an admin of the endpoint's scope may grant. Any
/// well-formed email or `team:<name>` answers 204, whether or not it has an account or
/// shares a team with the caller; a grant to an address with no account takes effect
/// once that account (or team) exists. A malformed reference is 422.
#[utoipa::path(post, path = "/api/v1/endpoints/{id}/fanout-grants", request_body = FanoutGrantBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn grant_fanout(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<EndpointId>,
    body: Json<FanoutGrantBody>,
) -> Result<HttpResponse> {
    endpoints::grant_fanout(&s, &op.0, id.into_inner(), &body.0.owner).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Withdraws a fan-out grant: the grantee's webhooks stop routing onto this endpoint
/// from the next delivery on. Any well-formed reference answers 204, a grant never
/// made or an address with no account included.
#[utoipa::path(delete, path = "/api/v1/endpoints/{id}/fanout-grants", request_body = FanoutGrantBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
              (status = 422, body = ErrorEnvelope)))]
pub async fn revoke_fanout(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<EndpointId>,
    body: Json<FanoutGrantBody>,
) -> Result<HttpResponse> {
    endpoints::revoke_fanout(&s, &op.0, id.into_inner(), &body.0.owner).await?;
    Ok(HttpResponse::NoContent().finish())
}
