//! Operator routes for queue digests: schedule, list, show with recent send times,
//! replace, delete, and preview (measured now, sent nowhere).

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::super::auth::Operator;
use super::super::body::Json;
use crate::digests::rules::render;
use crate::digests::service::compose::local_label;
use crate::digests::service::{self as digests, DigestInput};
use crate::digests::statements::{DigestRow, RunRow};
use crate::domain::ids::{ConnectionId, DigestId, DigestRunId, SinkId};
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;

/// A digest to schedule (or the whole of one to replace it with).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DigestBody {
    /// Unique among the owner's digests, 1–100 characters.
    pub name: String,
    /// When it is sent: optional `TZ=<IANA zone>` (or `CRON_TZ=`), a day spec
    /// (`Mon`–`Sun`, ranges that may wrap like `Fri-Mon`, comma lists) and one or more
    /// `HH:MM` times, e.g. `TZ=America/Los_Angeles Mon-Fri 09:00,17:00`.
    pub schedule: String,
    /// Queues it covers (absent or empty: every queue the owner's endpoints hold).
    #[serde(default)]
    pub queues: Vec<String>,
    /// Sinks of the same owner it goes to (at most 10; at least one unless it
    /// publishes to Cairn); another owner's answers `reference_out_of_scope`.
    #[serde(default)]
    pub sink_ids: Vec<SinkId>,
    /// Skip a quiet digest (every section measured, nothing needs attention); default true.
    pub skip_when_quiet: Option<bool>,
    /// A queue whose oldest pending todo is older than this needs attention; default 3600.
    pub age_threshold_seconds: Option<i32>,
    /// A `cairn` connection of the same owner: the digest is published there as a
    /// Markdown artifact and the sinks get a short message linking it.
    pub cairn_connection_id: Option<ConnectionId>,
    /// The artifact's time to live; default 604 800 (7 days), at most 2 592 000.
    pub cairn_ttl_seconds: Option<i32>,
    /// `team:<name>` or a human's email the caller administers (creation only; absent:
    /// the caller's own scope).
    pub owner: Option<String>,
}

impl From<DigestBody> for DigestInput {
    fn from(b: DigestBody) -> Self {
        DigestInput {
            name: b.name,
            schedule: b.schedule,
            queues: b.queues,
            sink_ids: b.sink_ids,
            skip_when_quiet: b.skip_when_quiet,
            age_threshold_seconds: b.age_threshold_seconds,
            cairn_connection_id: b.cairn_connection_id,
            cairn_ttl_seconds: b.cairn_ttl_seconds,
            owner: b.owner,
        }
    }
}

/// A digest as answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct DigestView {
    /// The digest's id.
    pub id: DigestId,
    /// Its name.
    pub name: String,
    /// Its schedule, in canonical form.
    pub schedule: String,
    /// Covered queues (empty: all).
    pub queues: Vec<String>,
    /// Its sinks.
    pub sink_ids: Vec<SinkId>,
    /// Whether a quiet digest is skipped.
    pub skip_when_quiet: bool,
    /// Seconds.
    pub age_threshold_seconds: i32,
    /// Where it is published, if anywhere.
    pub cairn_connection_id: Option<ConnectionId>,
    /// Seconds.
    pub cairn_ttl_seconds: i32,
    /// The next send time (UTC).
    pub next_send_at: DateTime<Utc>,
    /// The next send time in the schedule's zone, e.g. `Tue 09:00 Europe/Berlin`.
    pub next_send_local: String,
    /// The last send time it covered (sent or skipped as quiet), if any.
    pub covered_until: Option<DateTime<Utc>>,
}

impl From<DigestRow> for DigestView {
    fn from(d: DigestRow) -> Self {
        DigestView {
            next_send_local: local_label(&d.schedule, d.next_send_at),
            id: d.id,
            name: d.name,
            schedule: d.schedule,
            queues: d.queues,
            sink_ids: d.sink_ids,
            skip_when_quiet: d.skip_when_quiet,
            age_threshold_seconds: d.age_threshold_seconds,
            cairn_connection_id: d.cairn_connection_id,
            cairn_ttl_seconds: d.cairn_ttl_seconds,
            next_send_at: d.next_send_at,
            covered_until: d.covered_until,
        }
    }
}

/// One send time of a digest.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunView {
    /// The run's id.
    pub id: DigestRunId,
    /// The scheduled instant.
    pub send_at: DateTime<Utc>,
    /// `sent`, `publishing` (waiting for Cairn), `skipped_quiet` or `skipped_late`
    /// (missed by an hour or more while no instance ran).
    pub outcome: String,
    /// Whether it was quiet.
    pub quiet: bool,
    /// Sections that could not be measured.
    pub unavailable: i32,
    /// Sinks it was queued for.
    pub sinks_told: i32,
    /// The published artifact, if any.
    pub artifact_url: Option<String>,
    /// Why publishing to Cairn failed, if it did (the sinks then got the full text).
    pub cairn_error: Option<String>,
}

impl From<RunRow> for RunView {
    fn from(r: RunRow) -> Self {
        RunView {
            id: r.id,
            send_at: r.send_at,
            outcome: r.outcome,
            quiet: r.quiet,
            unavailable: r.unavailable,
            sinks_told: r.sinks_told,
            artifact_url: r.artifact_url,
            cairn_error: r.cairn_error,
        }
    }
}

/// A digest with its latest send times.
#[derive(Debug, Serialize, ToSchema)]
pub struct DigestDetail {
    /// The digest.
    #[serde(flatten)]
    pub digest: DigestView,
    /// The latest send times, newest first (at most 10).
    pub runs: Vec<RunView>,
}

/// Every digest in the caller's scopes.
#[derive(Debug, Serialize, ToSchema)]
pub struct DigestList {
    /// By name.
    pub digests: Vec<DigestView>,
}

/// What a digest would say now.
#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewView {
    /// The title a sink would get.
    pub title: String,
    /// The full text.
    pub text: String,
    /// Whether it is quiet (and would be skipped with `skip_when_quiet`).
    pub quiet: bool,
    /// Each section: `{name, endpoint?, queue?, status: "ok"|"unavailable", reason?, …}`;
    /// an unavailable section carries its reason and no figure.
    #[schema(value_type = Vec<Object>)]
    pub sections: Vec<serde_json::Value>,
}

/// Schedules a digest. The schedule must parse (`invalid_argument` naming the token);
/// sinks and the Cairn connection must be the owner's (`reference_out_of_scope`); at
/// most 5 digests per owner (409).
#[utoipa::path(post, path = "/api/v1/digests", operation_id = "create_digest", request_body = DigestBody, tag = "operator",
    security(("operator_token" = [])),
    responses((status = 201, body = DigestView), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, op: Operator, body: Json<DigestBody>) -> Result<HttpResponse> {
    let row = digests::create(&s, &op.0, body.0.into()).await?;
    Ok(HttpResponse::Created().json(DigestView::from(row)))
}

/// Digests in every scope the caller belongs to.
#[utoipa::path(get, path = "/api/v1/digests", operation_id = "list_digests", tag = "operator",
    security(("operator_token" = [])), responses((status = 200, body = DigestList)))]
pub async fn list(s: web::Data<Services>, op: Operator) -> Result<HttpResponse> {
    let rows = digests::list(&s, &op.0).await?;
    Ok(HttpResponse::Ok().json(DigestList { digests: rows.into_iter().map(DigestView::from).collect() }))
}

/// One digest with its latest send times: sent, skipped and why.
#[utoipa::path(get, path = "/api/v1/digests/{id}", operation_id = "get_digest", tag = "operator",
    params(("id" = DigestId, Path, description = "digest id")), security(("operator_token" = [])),
    responses((status = 200, body = DigestDetail), (status = 404, body = ErrorEnvelope)))]
pub async fn get(s: web::Data<Services>, op: Operator, id: web::Path<DigestId>) -> Result<HttpResponse> {
    let (d, runs) = digests::show(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::Ok()
        .json(DigestDetail { digest: DigestView::from(d), runs: runs.into_iter().map(RunView::from).collect() }))
}

/// Replaces a digest (the whole body, as on creation; `owner` is ignored). Its next
/// send time follows the new schedule.
#[utoipa::path(put, path = "/api/v1/digests/{id}", operation_id = "replace_digest", request_body = DigestBody, tag = "operator",
    params(("id" = DigestId, Path, description = "digest id")), security(("operator_token" = [])),
    responses((status = 200, body = DigestView), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn replace(
    s: web::Data<Services>,
    op: Operator,
    id: web::Path<DigestId>,
    body: Json<DigestBody>,
) -> Result<HttpResponse> {
    let row = digests::replace(&s, &op.0, id.into_inner(), body.0.into()).await?;
    Ok(HttpResponse::Ok().json(DigestView::from(row)))
}

/// Deletes a digest and its history.
#[utoipa::path(delete, path = "/api/v1/digests/{id}", operation_id = "delete_digest", tag = "operator",
    params(("id" = DigestId, Path, description = "digest id")), security(("operator_token" = [])),
    responses((status = 204), (status = 403, body = ErrorEnvelope)))]
pub async fn delete(s: web::Data<Services>, op: Operator, id: web::Path<DigestId>) -> Result<HttpResponse> {
    digests::delete(&s, &op.0, id.into_inner()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// What the digest would say if it were sent now. Sends nothing, records nothing.
#[utoipa::path(post, path = "/api/v1/digests/{id}/preview", operation_id = "preview_digest", tag = "operator",
    params(("id" = DigestId, Path, description = "digest id")), security(("operator_token" = [])),
    responses((status = 200, body = PreviewView), (status = 404, body = ErrorEnvelope)))]
pub async fn preview(s: web::Data<Services>, op: Operator, id: web::Path<DigestId>) -> Result<HttpResponse> {
    let c = digests::preview(&s, &op.0, id.into_inner()).await?;
    let sections = render::sections(&c.report);
    Ok(HttpResponse::Ok().json(PreviewView { title: c.title, text: c.body, quiet: c.quiet, sections }))
}
