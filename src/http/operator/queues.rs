//! `GET /api/v1/queues`: the Queues overview (SPEC 13), every (endpoint, queue) in the
//! caller's reach, trouble first, as the last census measured it.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::super::auth::Operator;
use super::super::body::Query;
use crate::domain::ids::EndpointId;
use crate::error::{ErrorEnvelope, Result};
use crate::queues::service;
use crate::queues::statements::overview::QueueStanding;
use crate::service::Services;

/// Query of the overview.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct QueuesQuery {
    /// 1–1000, default 200.
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    pub cursor: Option<String>,
}

/// A queue's admission budget, as it is now.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueAdmission {
    /// Whether the queue is paused.
    pub paused: bool,
    /// Most todos claimed at once (none: no cap).
    pub max_in_flight: Option<i32>,
    /// Most claims per clock hour (none: no cap).
    pub per_hour: Option<i32>,
}

/// Where one queue stands.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueView {
    /// The endpoint.
    pub endpoint_id: EndpointId,
    /// Its slug.
    pub endpoint_slug: String,
    /// The queue.
    pub queue: String,
    /// Pending todos, counted up to 10 000 (as the Board's pills count).
    pub pending: i64,
    /// True when more than `pending` wait: the count stopped at 10 000.
    pub pending_capped: bool,
    /// Age of the oldest pending todo when measured, in seconds (0: none pending).
    pub oldest_pending_seconds: i64,
    /// Claimed todos.
    pub claimed: i64,
    /// Claimed todos whose lease had lapsed and that no reaper had taken back yet.
    pub stalled: i64,
    /// Todos waiting on input or authorisation.
    pub interrupted: i64,
    /// Failed todos with a retry scheduled.
    pub retrying: i64,
    /// Completions in the last hour.
    pub done_last_hour: i64,
    /// Failed attempts (agent fail, lapsed lease or interrupt) in the last hour.
    pub failed_attempts_last_hour: i64,
    /// Dead letters in the last 24 hours.
    pub dead_last_24h: i64,
    /// The admission budget now; none when the queue has none.
    pub admission: Option<QueueAdmission>,
    /// Whether the endpoint is clocked in now.
    pub clocked_in: bool,
    /// When these counts were measured.
    pub measured_at: DateTime<Utc>,
}

impl From<&QueueStanding> for QueueView {
    fn from(q: &QueueStanding) -> Self {
        QueueView {
            endpoint_id: q.endpoint_id,
            endpoint_slug: q.endpoint_slug.clone(),
            queue: q.queue.clone(),
            pending: q.pending,
            pending_capped: q.pending_capped,
            oldest_pending_seconds: q.oldest_pending_seconds(),
            claimed: q.claimed,
            stalled: q.stalled,
            interrupted: q.interrupted,
            retrying: q.retrying,
            done_last_hour: q.done_last_hour,
            failed_attempts_last_hour: q.failed_attempts_last_hour,
            dead_last_24h: q.dead_last_24h,
            admission: q.budgeted.then_some(QueueAdmission {
                paused: q.paused,
                max_in_flight: q.max_in_flight,
                per_hour: q.per_hour,
            }),
            clocked_in: q.clocked_in,
            measured_at: q.measured_at,
        }
    }
}

/// One page of the overview.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueList {
    /// The queues, trouble first: most dead letters in 24 hours, most stalled leases,
    /// oldest pending todo, then by endpoint slug and queue.
    pub queues: Vec<QueueView>,
    /// Pass as `cursor` for the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// Every (endpoint, queue) in the caller's reach that holds a live todo, finished one
/// in the last 24 hours, or has an admission budget; quarantine excluded; trouble first.
/// The counts are the last census's (every `SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS`,
/// `measured_at` says when); the budget and presence are as they are now.
#[utoipa::path(get, path = "/api/v1/queues", operation_id = "list_queues", params(QueuesQuery), tag = "operator",
    security(("operator_token" = [])),
    responses((status = 200, body = QueueList), (status = 401, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, op: Operator, q: Query<QueuesQuery>) -> Result<HttpResponse> {
    let q = q.into_inner();
    let page = service::list(&s, &op.0, q.limit, q.cursor.as_deref()).await?;
    Ok(HttpResponse::Ok()
        .json(QueueList { queues: page.queues.iter().map(QueueView::from).collect(), next_cursor: page.next_cursor }))
}
