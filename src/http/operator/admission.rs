//! Operator routes for admission budgets: set one queue's (pause, `max_in_flight`,
//! `per_hour`) and list an endpoint's.

use actix_web::{HttpResponse, web};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::ToSchema;

use super::super::auth::Operator;
use super::super::body::Json;
use crate::domain::admission::{AdmissionChange, Change};
use crate::domain::ids::EndpointId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;
use crate::service::admission::{self, QueueBudget};
use crate::web::path_name::PathName;

/// A change of one queue's admission budget. A field left out is unchanged; a limit set
/// to `null` is lifted. A budget set back to the defaults (not paused, no limits) is no
/// budget at all.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdmissionBody {
    /// `true` pauses the queue (every claim of its work is deferred); `false` resumes it.
    pub paused: Option<bool>,
    /// Most of the queue's todos claimed at once, 1–10 000; `null`: no cap.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i32>, nullable = true, minimum = 1, maximum = 10000)]
    pub max_in_flight: Option<Option<i64>>,
    /// Most claims the queue admits per clock hour (UTC), 1–1 000 000; `null`: no cap.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<i32>, nullable = true, minimum = 1, maximum = 1000000)]
    pub per_hour: Option<Option<i64>>,
}

/// A field that is present (its value possibly `null`), as opposed to left out.
fn present<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Option<i64>>, D::Error> {
    Option::<i64>::deserialize(d).map(Some)
}

/// A limit as sent, as a change. A number too large (or small) for the column is
/// clamped to one that is still out of bounds, so the service refuses it naming the
/// field, after it has checked who is asking.
fn limit(sent: Option<Option<i64>>) -> Change<Option<i32>> {
    match sent {
        None => Change::Keep,
        Some(n) => Change::Set(n.map(|n| i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX }))),
    }
}

impl From<AdmissionBody> for AdmissionChange {
    fn from(b: AdmissionBody) -> Self {
        AdmissionChange {
            paused: b.paused.map_or(Change::Keep, Change::Set),
            max_in_flight: limit(b.max_in_flight),
            per_hour: limit(b.per_hour),
        }
    }
}

/// One queue's admission budget.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdmissionView {
    /// The endpoint (`ep_…`).
    pub endpoint_id: EndpointId,
    /// The queue.
    pub queue: String,
    /// Whether the queue is paused.
    pub paused: bool,
    /// Most of its todos claimed at once; null: no cap.
    pub max_in_flight: Option<i32>,
    /// Most claims per clock hour (UTC); null: no cap.
    pub per_hour: Option<i32>,
}

impl From<QueueBudget> for AdmissionView {
    fn from(s: QueueBudget) -> Self {
        let b = s.budget;
        AdmissionView {
            endpoint_id: s.endpoint_id,
            queue: s.queue,
            paused: b.paused,
            max_in_flight: b.max_in_flight,
            per_hour: b.per_hour,
        }
    }
}

/// An endpoint's budgets.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdmissionList {
    /// Every queue with a budget, by name; a queue not listed has none.
    pub queues: Vec<AdmissionView>,
}

/// Pauses or resumes one queue of an endpoint, or changes its admission limits, and
/// answers the settings after the change. Claims the budget refuses answer
/// `{"empty": true, "deferred": …}`. Only an admin of the endpoint's scope may change
/// it; a queue name no agent could drain, or a limit out of bounds, is refused naming
/// the field, and nothing changes.
#[utoipa::path(put, path = "/api/v1/endpoints/{id}/queues/{queue}/admission", operation_id = "set_admission",
    request_body = AdmissionBody, tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id"),
           ("queue" = inline(PathName), Path, description = "queue name: 1–64 of a-z 0-9 . _ -, starting with a letter or digit; not quarantine")),
    security(("operator_token" = [])),
    responses((status = 200, body = AdmissionView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn set(
    s: web::Data<Services>,
    op: Operator,
    path: web::Path<(EndpointId, PathName)>,
    body: Json<AdmissionBody>,
) -> Result<HttpResponse> {
    let (id, queue) = path.into_inner();
    let settings = admission::set(&s, &op.0, id, &queue, body.0.into()).await?;
    Ok(HttpResponse::Ok().json(AdmissionView::from(settings)))
}

/// The admission budgets of an endpoint's queues (a queue not listed has none).
#[utoipa::path(get, path = "/api/v1/endpoints/{id}/admission", operation_id = "list_admission", tag = "operator",
    params(("id" = EndpointId, Path, description = "endpoint id")), security(("operator_token" = [])),
    responses((status = 200, body = AdmissionList), (status = 404, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, op: Operator, id: web::Path<EndpointId>) -> Result<HttpResponse> {
    let id = id.into_inner();
    let rows = admission::of_endpoint(&s, &op.0, id).await?;
    let queues = rows
        .iter()
        .map(|r| AdmissionView::from(QueueBudget { endpoint_id: id, queue: r.queue.clone(), budget: r.budget() }))
        .collect();
    Ok(HttpResponse::Ok().json(AdmissionList { queues }))
}
