//! The quarantine pages' handlers: parse, call [`crate::service::quarantine`] (the
//! same services as the operator API), render. Another scope's held delivery
//! answers 404; a team member who is not its admin sees it but may not let it out (403).

use actix_web::{HttpResponse, web};
use chrono::Utc;
use serde::Deserialize;

use super::paths;
use super::view::{self, Names};
use crate::board::error::BoardError;
use crate::board::extract::{NoFields, Posted};
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::domain::ids::TodoId;
use crate::error::Error;
use crate::service::{Services, endpoints, quarantine, webhooks};

/// Most held deliveries the list shows.
const LIST_LIMIT: i64 = 200;

/// The release form's field.
#[derive(Debug, Deserialize)]
pub struct ReleaseForm {
    /// A queue to release to; empty: the webhook's rules decide.
    #[serde(default)]
    pub queue: String,
}

async fn names(s: &Services, human: &Human) -> Result<Names, BoardError> {
    let endpoints = endpoints::list(s, &human.reach).await?.into_iter().map(|e| (e.id, e.slug)).collect();
    let webhooks = webhooks::list(s, &human.reach)
        .await?
        .into_iter()
        .map(|w| (w.id, format!("{} → {}", w.source_type.as_str(), w.queue)))
        .collect();
    Ok(Names { endpoints, webhooks })
}

/// `GET /quarantine`.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    let rows = quarantine::list(&s, &human.reach, LIST_LIMIT).await?;
    let names = names(&s, &human).await?;
    let body = view::quarantine_page(&rows, &names, Utc::now());
    Ok(respond::page(&human, layout::page(&human, Nav::Quarantine, "Quarantine", body)))
}

/// `GET /quarantine/{id}`: the held delivery with its payload as text.
pub async fn detail(s: web::Data<Services>, human: Human, path: web::Path<String>) -> Result<HttpResponse, BoardError> {
    let id: TodoId = parse_id(&path)?;
    let (held, payload) = quarantine::show(&s, &human.reach, id).await?;
    let names = names(&s, &human).await?;
    // Only an admin of the delivery's scope gets the release and discard forms.
    let csrf = human.csrf_field();
    let actions = human.reach.is_admin_of(held.todo.scope_id).then_some(&csrf);
    let body = view::held_page(&held, &payload, &names, Utc::now(), actions);
    Ok(respond::page(&human, layout::page(&human, Nav::Quarantine, "Held delivery", body)))
}

/// `POST /quarantine/{id}/release`: routed again (by the rules, or to the queue named);
/// back to the list with a notice, or to the delivery with the reason it was refused.
pub async fn release(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<ReleaseForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: TodoId = parse_id(&path)?;
    let queue = form.queue.trim();
    let to_queue = (!queue.is_empty()).then_some(queue);
    match quarantine::release(&s, &human.reach, id, to_queue).await {
        Ok(todos) => {
            let text = match (todos.len(), to_queue) {
                (0, _) => "Released; the webhook's rules now drop it, so it became no todo.".to_owned(),
                (1, Some(q)) => format!("Released to the queue {q}."),
                (n, _) => format!("Released; it became {n} todo{}.", if n == 1 { "" } else { "s" }),
            };
            Ok(respond::see_other_with_notice(&board.cookies, paths::QUARANTINE, &Notice::done(text)))
        }
        Err(e @ (Error::InvalidArgument(_) | Error::Conflict(_))) => Ok(respond::see_other_with_notice(
            &board.cookies,
            &paths::held(id),
            &Notice::warn(format!("Not released: {e}")),
        )),
        Err(other) => Err(other.into()),
    }
}

/// `POST /quarantine/{id}/discard` (the page asks first).
pub async fn discard(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: TodoId = parse_id(&path)?;
    match quarantine::discard(&s, &human.reach, id).await {
        Ok(()) => Ok(respond::see_other_with_notice(
            &board.cookies,
            paths::QUARANTINE,
            &Notice::done(format!("Discarded the held delivery {id}.")),
        )),
        Err(e @ Error::Conflict(_)) => Ok(respond::see_other_with_notice(
            &board.cookies,
            &paths::held(id),
            &Notice::warn(format!("Not discarded: {e}")),
        )),
        Err(other) => Err(other.into()),
    }
}
