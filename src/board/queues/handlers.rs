//! The Queues pages' handlers: parse, call [`crate::queues::service`] (the service
//! `GET /api/v1/queues` calls) and, for pause and resume,
//! [`crate::service::admission::set`] (the service the admission API calls), render.
//! A queue outside the human's scopes, never measured, or with a malformed endpoint id
//! or name answers 404; pausing one in a team they do not administer answers 403.

use actix_web::{HttpResponse, web};
use chrono::Utc;
use serde::Deserialize;

use super::admission::BACK_TO_QUEUE;
use super::detail::queue_page;
use super::paths;
use super::view::{QueuesView, queues_page};
use crate::board::error::BoardError;
use crate::board::extract::Posted;
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::domain::admission::{AdmissionChange, Change};
use crate::domain::ids::EndpointId;
use crate::domain::text::valid_queue_name;
use crate::error::Error;
use crate::queues::service as queues;
use crate::service::Services;
use crate::service::admission;

/// The overview's query.
#[derive(Debug, Default, Deserialize)]
pub struct QueuesPageQuery {
    /// The next page's cursor.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `GET /queues`.
pub async fn list(
    human: Human,
    s: web::Data<Services>,
    q: web::Query<QueuesPageQuery>,
) -> Result<HttpResponse, BoardError> {
    let page = queues::list(&s, &human.reach, None, q.cursor.as_deref()).await?;
    let now = Utc::now();
    let sparks = queues::sparklines(&s, &page.queues, now).await?;
    let rows: Vec<_> = page
        .queues
        .into_iter()
        .map(|q| {
            let act = queues::may_act(&human.reach, &q);
            (q, act)
        })
        .collect();
    let v = QueuesView { queues: &rows, sparks: &sparks, next_cursor: page.next_cursor.as_deref(), now };
    let body = queues_page(&v, &human.csrf_field());
    Ok(respond::page(&human, layout::page(&human, Nav::Queues, "Queues", body)))
}

/// `GET /queues/{endpoint_id}/{queue}`.
pub async fn show(
    human: Human,
    s: web::Data<Services>,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, BoardError> {
    let (endpoint, queue) = path.into_inner();
    let endpoint: EndpointId = parse_id(&endpoint)?;
    if !valid_queue_name(&queue) {
        return Err(Error::NotFound.into());
    }
    let now = Utc::now();
    let day = queues::show(&s, &human.reach, endpoint, &queue, now).await?;
    let may_act = queues::may_act(&human.reach, &day.standing);
    let title = format!("{} / {}", day.standing.endpoint_slug, day.standing.queue);
    let body = queue_page(&day, may_act, &human.csrf_field(), now);
    Ok(respond::page(&human, layout::page(&human, Nav::Queues, &title, body)))
}

/// The pause / resume form.
#[derive(Debug, Default, Deserialize)]
pub struct PauseForm {
    /// The endpoint (`ep_…`).
    #[serde(default)]
    pub endpoint_id: String,
    /// The queue.
    #[serde(default)]
    pub queue: String,
    /// `true` to pause, `false` to resume.
    #[serde(default)]
    pub paused: String,
    /// [`BACK_TO_QUEUE`] to return to the queue's page; anything else, the overview.
    #[serde(default)]
    pub back: String,
}

/// `POST /queues/admission`: pauses or resumes, then back to where it was asked.
pub async fn set_paused(
    posted: Posted<PauseForm>,
    s: web::Data<Services>,
    board: web::Data<BoardState>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let endpoint: EndpointId = parse_id(form.endpoint_id.trim())?;
    let queue = form.queue.trim();
    let paused = match form.paused.trim() {
        "true" => true,
        "false" => false,
        _ => return Err(Error::invalid("paused", "must be true or false").into()),
    };
    let change = AdmissionChange { paused: Change::Set(paused), max_in_flight: Change::Keep, per_hour: Change::Keep };
    admission::set(&s, &human.reach, endpoint, queue, change).await?;
    let notice = Notice::done(if paused {
        format!("The queue {queue} is paused: no claim takes its todos until it is resumed.")
    } else {
        format!("The queue {queue} is resumed.")
    });
    let location = if form.back == BACK_TO_QUEUE { paths::queue(endpoint, queue) } else { paths::QUEUES.to_owned() };
    Ok(respond::see_other_with_notice(&board.cookies, &location, &notice))
}
