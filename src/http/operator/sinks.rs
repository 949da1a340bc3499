//! Operator routes for notification sinks: add, list, change (enabled, budget),
//! delete, and replace or read a sink's subscriptions. The shapes the agent's sink
//! verbs answer too are [`crate::agent_api::sink_dto`].

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::auth::Operator;
use super::super::body::{Json, Query};
use crate::agent_api::sink_dto::{CreatedSinkView, SinkList, SinkView, SubscriptionBody, Subscriptions, TestAnswer};
use crate::domain::ids::{ConnectionId, SinkId};
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::sinks::rules::vocabulary::{AppriseMode, SinkEvent, SinkKind};
use crate::sinks::service::{self as sinks, CreateSink, SinkSpec, Subscription};
use crate::sinks::statements::SinkChange;

/// A sink to add.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSinkBody {
    /// Unique among the owner's sinks, 1–100 characters.
    pub name: String,
    /// `gotify` or `apprise`.
    pub kind: SinkKind,
    /// Optional: the sink posts to its connection's destination. A client that still
    /// sends it must send that destination (compared after normalising case, default
    /// port and trailing slash), else 422 `destination_mismatch` and nothing is stored.
    pub base_url: Option<String>,
    /// A connection of the same owner and kind (else `reference_out_of_scope`), bound
    /// to a destination (else 409).
    pub connection_id: ConnectionId,
    /// Apprise only: `key` (default; the connection holds the config key) or `urls`
    /// (the connection holds the Apprise URLs, which must pass the scheme allowlist).
    pub apprise_mode: Option<AppriseMode>,
    /// Default true.
    pub enabled: Option<bool>,
    /// `team:<name>` or a human's email the caller administers; absent: the caller's
    /// own scope.
    pub owner: Option<String>,
    /// Its subscriptions, in the shape `PUT /api/v1/sinks/{id}/subscriptions` takes and
    /// checked the same way, written in the same transaction as the sink (a refused one
    /// stores neither). Absent: the sink hears `todo.dead_lettered` and
    /// `relay.exhausted` on every queue; `[]`: it hears nothing.
    #[serde(default)]
    pub subscriptions: Option<Vec<SubscriptionBody>>,
}

/// What to change on a sink (absent: unchanged).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateSinkBody {
    /// Switch notifications on or off.
    pub enabled: Option<bool>,
    /// Messages per hour, 1 to the operator's bound (`SWITCHBOARD_SINK_BUDGET_MAX_PER_HOUR`, default 3 600).
    pub budget_per_hour: Option<i32>,
    /// Messages at once before the budget holds the rest, 1 to the operator's bound (`SWITCHBOARD_SINK_BURST_MAX`, default 100).
    pub burst: Option<i32>,
}

/// Adds a sink. The URL is checked by the outbound guard (`forbidden_target`, one
/// message for every cause, when its host does not resolve or resolves to an address
/// the instance does not call); the connection must be the
/// same owner's and kind's (`reference_out_of_scope`); stateless Apprise URLs must pass
/// the scheme allowlist (`forbidden_scheme`); `subscriptions` are checked as
/// `PUT …/subscriptions` checks them. Nothing is stored when refused. Without
/// `subscriptions` the sink hears dead letters (`todo.dead_lettered`,
/// `relay.exhausted`); the answer lists what it hears.
#[utoipa::path(post, path = "/api/v1/sinks", operation_id = "create_sink", request_body = CreateSinkBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = CreatedSinkView), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, op: Operator, body: Json<CreateSinkBody>) -> Result<HttpResponse> {
    let b = body.0;
    let spec = SinkSpec {
        kind: Some(b.kind),
        base_url: b.base_url,
        connection_id: b.connection_id,
        apprise_mode: b.apprise_mode,
        enabled: b.enabled,
    };
    let subscriptions = b.subscriptions.map(|subs| subs.into_iter().map(Subscription::from).collect());
    let c = CreateSink { name: b.name, spec, owner: b.owner, subscriptions };
    let created = sinks::create(&s, &op.0, c).await?;
    Ok(HttpResponse::Created().json(CreatedSinkView::from(created)))
}

/// Sinks in every scope the caller belongs to.
#[utoipa::path(get, path = "/api/v1/sinks", operation_id = "list_sinks", tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = SinkList)))]
pub async fn list(s: web::Data<Services>, op: Operator) -> Result<HttpResponse> {
    let rows = sinks::list(&s, &op.0).await?;
    Ok(HttpResponse::Ok().json(SinkList { sinks: rows.into_iter().map(SinkView::from).collect() }))
}

/// Switches a sink on or off, or changes its budget.
#[utoipa::path(patch, path = "/api/v1/sinks/{id}", operation_id = "update_sink", request_body = UpdateSinkBody, tag = "operator",
    params(("id" = SinkId, Path, description = "sink id")), security(("operator_token" = [])),
    responses((status = 200, body = SinkView), (status = 403, body = ErrorEnvelope)))]
pub async fn update(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<SinkId>,
    body: Json<UpdateSinkBody>,
) -> Result<HttpResponse> {
    let b = body.0;
    let change = SinkChange { enabled: b.enabled, budget_per_hour: b.budget_per_hour, burst: b.burst };
    let row = sinks::update(&s, &op.0, id.into_inner(), change).await?;
    Ok(HttpResponse::Ok().json(SinkView::from(row)))
}

/// Deletes a sink and its subscriptions.
#[utoipa::path(delete, path = "/api/v1/sinks/{id}", operation_id = "delete_sink", tag = "operator",
    params(("id" = SinkId, Path, description = "sink id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, op: Operator, id: web::Path<SinkId>) -> Result<HttpResponse> {
    sinks::delete(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Replaces a sink's subscriptions (filters may name only the sink owner's endpoints
/// and webhooks, else `reference_out_of_scope` and nothing changes).
#[utoipa::path(put, path = "/api/v1/sinks/{id}/subscriptions", operation_id = "set_subscriptions", request_body = Subscriptions,
    tag = "operator", params(("id" = SinkId, Path, description = "sink id")), security(("operator_token" = [])),
    responses((status = 200, body = Subscriptions), (status = 403, body = ErrorEnvelope)))]
pub async fn put_subscriptions(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<SinkId>,
    body: Json<Subscriptions>,
) -> Result<HttpResponse> {
    let subs = body.0.subscriptions.into_iter().map(Subscription::from).collect();
    let rows = sinks::set_subscriptions(&s, &op.0, id.into_inner(), subs).await?;
    Ok(HttpResponse::Ok().json(Subscriptions::from(rows)))
}

/// A sink's subscriptions.
#[utoipa::path(get, path = "/api/v1/sinks/{id}/subscriptions", operation_id = "get_subscriptions", tag = "operator",
    params(("id" = SinkId, Path, description = "sink id")), security(("operator_token" = [])),
    responses((status = 200, body = Subscriptions)))]
pub async fn get_subscriptions(s: web::Data<Services>, op: Operator, id: web::Path<SinkId>) -> Result<HttpResponse> {
    let (_, rows) = sinks::subscriptions(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(Subscriptions::from(rows)))
}

/// Sends the sink one harmless test message (past its budget and subscriptions, never
/// past the outbound guard); at most 6 a minute per sink (429 `rate_limited`). When the
/// sink has no subscription the answer adds a `warning` that it hears nothing.
#[utoipa::path(post, path = "/api/v1/sinks/{id}/test", operation_id = "test_sink", tag = "operator",
    params(("id" = SinkId, Path, description = "sink id")), security(("operator_token" = [])),
    responses((status = 200, body = TestAnswer), (status = 403, body = ErrorEnvelope),
        (status = 409, body = ErrorEnvelope, description = "its connection is not bound to a destination"),
        (status = 429, body = ErrorEnvelope)))]
pub async fn test(s: web::Data<Services>, op: Operator, id: web::Path<SinkId>) -> Result<HttpResponse> {
    let found = sinks::test(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok().json(TestAnswer::from(found)))
}

/// Query of the send log.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
pub struct SendsQuery {
    /// 1–500, default 100.
    pub limit: Option<i64>,
}

/// One notification as the outbox recorded it.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DeliveryView)]
pub struct SendView {
    /// The outbox row's id.
    pub id: uuid::Uuid,
    /// The event.
    pub event: SinkEvent,
    /// What it is about: a todo id, or (a revocation cascade) an endpoint id.
    pub subject: String,
    /// `pending`, `sent`, `held`, `coalesced`, `partial` or `undeliverable`.
    pub status: crate::sinks::rules::vocabulary::OutboxStatus,
    /// Repeats folded into it (1: none).
    pub count: i32,
    /// Attempts made.
    pub attempts: i32,
    /// The last attempt's error class, if it failed.
    pub last_error: Option<String>,
    /// When it was queued.
    pub created_at: DateTime<Utc>,
    /// When it went out; null until then.
    pub sent_at: Option<DateTime<Utc>>,
}

/// A sink's delivery log.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = DeliveryList)]
pub struct SendList {
    /// Newest first.
    pub deliveries: Vec<SendView>,
}

/// A sink's delivery log, newest first: what was sent, held, coalesced, and what
/// could not be delivered.
#[utoipa::path(get, path = "/api/v1/sinks/{id}/deliveries", operation_id = "list_sink_deliveries", tag = "operator",
    params(("id" = SinkId, Path, description = "sink id"), SendsQuery), security(("operator_token" = [])),
    responses((status = 200, body = SendList)))]
pub async fn sends(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<SinkId>,
    q: Query<SendsQuery>,
) -> Result<HttpResponse> {
    let rows = sinks::sends(&s, &op.0, id.into_inner(), q.limit.unwrap_or(100)).await?;
    let deliveries = rows
        .into_iter()
        .map(|r| SendView {
            id: r.id,
            event: r.event,
            subject: match (r.todo_id, r.endpoint_id) {
                (Some(todo), _) => todo.to_string(),
                (None, Some(endpoint)) => endpoint.to_string(),
                (None, None) => String::new(),
            },
            status: r.status,
            count: r.count,
            attempts: r.attempts,
            last_error: r.last_error,
            created_at: r.created_at,
            sent_at: r.sent_at,
        })
        .collect();
    Ok(HttpResponse::Ok().json(SendList { deliveries }))
}

#[cfg(test)]
mod tests {
    use utoipa::OpenApi;

    use crate::http::openapi::ApiDoc;

    #[test]
    fn the_document_names_a_create_bodys_subscriptions_and_the_answer_lists_them() {
        let doc = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let schemas = &doc["components"]["schemas"];
        let body = &schemas["CreateSinkBody"]["properties"]["subscriptions"];
        assert!(body.to_string().contains("SubscriptionBody"), "{body}");
        let described = body["description"].as_str().unwrap_or_default();
        assert!(described.contains("todo.dead_lettered") && described.contains("`[]`"), "{body}");
        let created = &doc["paths"]["/api/v1/sinks"]["post"]["responses"]["201"];
        assert!(created.to_string().contains("CreatedSinkView"), "{created}");
        assert!(schemas["CreatedSinkView"].to_string().contains("subscriptions"), "{}", schemas["CreatedSinkView"]);
        assert!(schemas["TestAnswer"]["properties"]["warning"].is_object(), "{}", schemas["TestAnswer"]);
        assert_eq!(schemas["Phase"]["enum"], serde_json::json!(["pending", "claimed", "done", "failed", "dead"]));
    }
}
