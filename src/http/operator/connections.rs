//! Operator routes for the connection vault: store a credential (answered with its
//! fingerprint, never itself), list, rotate, test (a cairn connection), delete. No
//! answer ever carries a secret.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::auth::Operator;
use super::super::body::Json;
use crate::agent_api::sink_dto::TestAnswer;
use crate::domain::ids::ConnectionId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::sinks::rules::vocabulary::ConnectionKind;
use crate::sinks::service::connections::{self, CreateConnection};
use crate::sinks::statements::ConnectionRow;

/// A connection to store. Its Debug form hides the secret.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateConnectionBody {
    /// Unique among the owner's connections, 1–100 characters.
    pub name: String,
    /// `gotify`, `apprise` or `cairn`.
    pub kind: ConnectionKind,
    /// The credential, at most 4 096 bytes: the Gotify application token, the Apprise
    /// config key or the stateless Apprise URLs, or the `cairn_pat_…` token. Stored
    /// sealed; never returned.
    pub secret: String,
    /// Where the secret may be sent, required for every kind: the Gotify server, the
    /// Apprise API server, or the Cairn (https; http only where the instance allows it;
    /// no query or fragment). Checked by the outbound guard now and on every dial. Its
    /// sinks post here; only a rotation with the secret moves it.
    pub base_url: Option<String>,
    /// `team:<name>` or a human's email the caller administers; absent: the caller's
    /// own scope.
    pub owner: Option<String>,
}

impl std::fmt::Debug for CreateConnectionBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreateConnectionBody").field("name", &self.name).finish_non_exhaustive()
    }
}

/// A new secret for a connection. Its Debug form hides it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateConnectionBody {
    /// The replacement credential (same rules as on create).
    pub secret: String,
    /// A new destination for the secret (same rules as on create); absent: unchanged.
    /// Binds an unbound connection: its sinks' held messages then go out there.
    pub base_url: Option<String>,
}

/// A connection as answered: never its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionView {
    /// The connection's id.
    pub id: ConnectionId,
    /// Its name.
    pub name: String,
    /// `gotify`, `apprise` or `cairn`.
    pub kind: ConnectionKind,
    /// First 12 hex characters of an HMAC-SHA256 of the secret under a key derived from
    /// the instance's master key: tells secrets apart, reveals none, and cannot test a
    /// guess without the master key.
    pub fingerprint: String,
    /// Where the secret may be sent (normalised); null for a connection an earlier
    /// release stored that could not be bound.
    pub base_url: Option<String>,
    /// Whether it is bound to `base_url`. False: its sinks' messages are held until an
    /// admin rotates it with its secret and a `base_url`.
    pub bound: bool,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
    /// When its secret was last replaced; null if never.
    pub rotated_at: Option<DateTime<Utc>>,
}

impl From<ConnectionRow> for ConnectionView {
    fn from(c: ConnectionRow) -> Self {
        ConnectionView {
            id: c.id,
            name: c.name,
            kind: c.kind,
            fingerprint: c.fingerprint,
            base_url: c.base_url,
            bound: c.bound,
            created_at: c.created_at,
            rotated_at: c.rotated_at,
        }
    }
}

/// Every connection in the caller's scopes.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConnectionList {
    /// By name.
    pub connections: Vec<ConnectionView>,
}

/// Stores a credential, sealed. Refused with `encryption_required` (409) when the
/// instance has no `SWITCHBOARD_SECRET_ENCRYPTION_KEY`, and with `forbidden_scheme`
/// (422, naming the scheme) for Apprise URLs outside the allowlist; nothing is stored.
#[utoipa::path(post, path = "/api/v1/connections", operation_id = "create_connection", request_body = CreateConnectionBody,
    tag = "operator", security(("operator_token" = [])),
    responses((status = 201, body = ConnectionView), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, op: Operator, body: Json<CreateConnectionBody>) -> Result<HttpResponse> {
    let b = body.0;
    let c = CreateConnection { name: b.name, kind: b.kind, secret: b.secret, base_url: b.base_url, owner: b.owner };
    let row = connections::create(&s, &op.0, c).await?;
    Ok(HttpResponse::Created().json(ConnectionView::from(row)))
}

/// Connections in every scope the caller belongs to (never a secret).
#[utoipa::path(get, path = "/api/v1/connections", operation_id = "list_connections", tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = ConnectionList)))]
pub async fn list(s: web::Data<Services>, op: Operator) -> Result<HttpResponse> {
    let rows = connections::list(&s, &op.0).await?;
    Ok(HttpResponse::Ok().json(ConnectionList { connections: rows.into_iter().map(ConnectionView::from).collect() }))
}

/// Replaces a connection's secret (and with `base_url` its destination, binding it);
/// answers the new fingerprint. For a human admin of the connection's owner only.
#[utoipa::path(post, path = "/api/v1/connections/{id}/rotate", operation_id = "rotate_connection",
    request_body = RotateConnectionBody, tag = "operator",
    params(("id" = ConnectionId, Path, description = "connection id")), security(("operator_token" = [])),
    responses((status = 200, body = ConnectionView), (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope),
        (status = 422, body = ErrorEnvelope)))]
pub async fn rotate(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<ConnectionId>,
    body: Json<RotateConnectionBody>,
) -> Result<HttpResponse> {
    let b = body.0;
    let row = connections::rotate(&s, &op.0, id.into_inner(), &b.secret, b.base_url.as_deref()).await?;
    Ok(HttpResponse::Ok().json(ConnectionView::from(row)))
}

/// Deletes a connection; refused (409) while a sink uses it.
#[utoipa::path(delete, path = "/api/v1/connections/{id}", operation_id = "delete_connection", tag = "operator",
    params(("id" = ConnectionId, Path, description = "connection id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, op: Operator, id: web::Path<ConnectionId>) -> Result<HttpResponse> {
    connections::delete(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Tests a cairn connection: one `GET {base}/v1/whoami` with its token, which changes
/// nothing on the Cairn. Answers as a sink's test does: `{ok: true}`, or `{ok: false,
/// error: {code, message}}` with the error class (`auth` for a refused token,
/// `not_found`, `server_error`, `timeout`, `network`, `tls`, `rejected_ssrf`,
/// `forbidden_target`, …). A gotify
/// or apprise connection is tested through a sink that posts with it (409).
#[utoipa::path(post, path = "/api/v1/connections/{id}/test", operation_id = "test_connection", tag = "operator",
    params(("id" = ConnectionId, Path, description = "connection id")), security(("operator_token" = [])),
    responses((status = 200, body = TestAnswer), (status = 403, body = ErrorEnvelope),
        (status = 409, body = ErrorEnvelope, description = "not a cairn connection: test a sink that posts with it")))]
pub async fn test(s: web::Data<Services>, op: Operator, id: web::Path<ConnectionId>) -> Result<HttpResponse> {
    let found = connections::test(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(TestAnswer::from(found)))
}
