//! The quarantine pages' handlers: load in the human's scopes, release and discard
//! through the operator API's own functions, render. Another scope's held delivery
//! answers 404; a team member who is not its admin sees it but may not let it out (403).

use actix_web::{HttpResponse, web};
use chrono::Utc;
use serde::Deserialize;

use super::paths;
use super::view::{self, Names};
use crate::board::csrf::{NoFields, Posted};
use crate::board::error::BoardError;
use crate::board::layout::{self, Nav};
use crate::board::respond::{self, Notice};
use crate::board::scope::parse_id;
use crate::board::session::Human;
use crate::domain::ids::{ScopeId, TodoId};
use crate::error::Error;
use crate::http::AppState;
use crate::http::operator::quarantine::{discard_held, release_held};

/// Most held deliveries the list shows.
const LIST_LIMIT: i64 = 200;

/// The release form's field.
#[derive(Debug, Deserialize)]
pub struct ReleaseForm {
    /// A queue to release to; empty: the webhook's rules decide.
    #[serde(default)]
    pub queue: String,
}

async fn names(state: &AppState, scopes: &[ScopeId]) -> Result<Names, BoardError> {
    let endpoints = state.store.list_endpoints(scopes).await?.into_iter().map(|e| (e.id, e.slug)).collect();
    let webhooks = state
        .store
        .list_webhooks(scopes)
        .await?
        .into_iter()
        .map(|w| (w.id, format!("{} → {}", w.source_type.as_str(), w.queue)))
        .collect();
    Ok(Names { endpoints, webhooks })
}

/// `GET /quarantine`.
pub async fn list(state: web::Data<AppState>, human: Human) -> Result<HttpResponse, BoardError> {
    let scopes = human.scope_ids();
    let rows = state.store.list_quarantine(&scopes, LIST_LIMIT).await?;
    let names = names(&state, &scopes).await?;
    let body = view::quarantine_page(&rows, &names, Utc::now());
    Ok(respond::page(&human, layout::page(&human, Nav::Quarantine, "Quarantine", body)))
}

/// `GET /quarantine/{id}`: the held delivery with its payload as text.
pub async fn detail(
    state: web::Data<AppState>,
    human: Human,
    path: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let scopes = human.scope_ids();
    let id: TodoId = parse_id(&path)?;
    let held = state.store.held(&scopes, id).await?;
    let payload = match held.event_id {
        Some(event) => match state.store.event_payload(&scopes, event).await {
            Ok(p) => p,
            // The event is gone (or another scope's): show the todo's own copy.
            Err(Error::NotFound) => todo_payload(&held.todo.payload),
            Err(e) => return Err(e.into()),
        },
        None => todo_payload(&held.todo.payload),
    };
    let names = names(&state, &scopes).await?;
    // Only an admin of the delivery's scope gets the release and discard forms.
    let csrf = human.csrf_field();
    let actions = human.reach.is_admin_of(held.todo.scope_id).then_some(&csrf);
    let body = view::held_page(&held, &payload, &names, Utc::now(), actions);
    Ok(respond::page(&human, layout::page(&human, Nav::Quarantine, "Held delivery", body)))
}

fn todo_payload(p: &Option<serde_json::Value>) -> Vec<u8> {
    p.as_ref().map(|v| v.to_string().into_bytes()).unwrap_or_default()
}

/// `POST /quarantine/{id}/release`: routed again (by the rules, or to the queue named);
/// back to the list with a notice, or to the delivery with the reason it was refused.
pub async fn release(
    state: web::Data<AppState>,
    path: web::Path<String>,
    posted: Posted<ReleaseForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: TodoId = parse_id(&path)?;
    let queue = form.queue.trim();
    let to_queue = (!queue.is_empty()).then_some(queue);
    match release_held(&state, &human.reach, id, to_queue).await {
        Ok(todos) => {
            let text = match (todos.len(), to_queue) {
                (0, _) => "Released; the webhook's rules now drop it, so it became no todo.".to_owned(),
                (1, Some(q)) => format!("Released to the queue {q}."),
                (n, _) => format!("Released; it became {n} todo{}.", if n == 1 { "" } else { "s" }),
            };
            Ok(respond::see_other_with_notice(&state.board.cookies, paths::QUARANTINE, &Notice::done(text)))
        }
        Err(e @ (Error::InvalidArgument(_) | Error::Conflict(_))) => Ok(respond::see_other_with_notice(
            &state.board.cookies,
            &paths::held(id),
            &Notice::warn(format!("Not released: {e}")),
        )),
        Err(other) => Err(other.into()),
    }
}

/// `POST /quarantine/{id}/discard` (the page asks first).
pub async fn discard(
    state: web::Data<AppState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: TodoId = parse_id(&path)?;
    match discard_held(&state, &human.reach, id).await {
        Ok(()) => Ok(respond::see_other_with_notice(
            &state.board.cookies,
            paths::QUARANTINE,
            &Notice::done(format!("Discarded the held delivery {id}.")),
        )),
        Err(e @ Error::Conflict(_)) => Ok(respond::see_other_with_notice(
            &state.board.cookies,
            &paths::held(id),
            &Notice::warn(format!("Not discarded: {e}")),
        )),
        Err(other) => Err(other.into()),
    }
}
