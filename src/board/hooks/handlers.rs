//! The hook pages' handlers: parse, call [`crate::hooks::service`] (the same services
//! the operator API takes), render. A hook or endpoint outside the human's scopes
//! answers 404; changing one in a team they do not administer answers 403.

use actix_web::{HttpResponse, web};
use chrono::Utc;
use serde::Deserialize;

use super::paths;
use super::view::{self, EndpointHooks, HooksView, RefusedCreate};
use crate::board::error::BoardError;
use crate::board::extract::{NoFields, Posted};
use crate::board::ids::parse_id;
use crate::board::layout::{self, Nav};
use crate::board::respond::{self, Notice};
use crate::board::session::Human;
use crate::board::state::BoardState;
use crate::domain::ids::{EndpointId, HookId};
use crate::error::Error;
use crate::hooks::rules::hook::url_host;
use crate::hooks::service::{self as hooks, NewHook};
use crate::service::{Services, endpoints};

/// The create form's fields.
#[derive(Debug, Deserialize)]
pub struct HookForm {
    /// Where notifications go.
    #[serde(default)]
    pub url: String,
    /// Queue filter, comma- or space-separated; empty: every queue.
    #[serde(default)]
    pub queues: String,
}

/// The queue names a form field lists (commas or whitespace between them).
pub fn split_queues(raw: &str) -> Vec<String> {
    raw.split(|c: char| c == ',' || c.is_whitespace()).filter(|q| !q.is_empty()).map(str::to_owned).collect()
}

/// Every endpoint in reach that is live or still holds hooks, each with its hooks.
async fn sections(s: &Services, human: &Human) -> Result<Vec<EndpointHooks>, BoardError> {
    let now = Utc::now();
    let mut out = Vec::new();
    for endpoint in endpoints::list(s, &human.reach).await? {
        let hooks = hooks::list(s, &human.reach, endpoint.id).await?;
        if hooks.is_empty() && !view::is_live(&endpoint, now) {
            continue;
        }
        let may_change = human.reach.is_admin_of(endpoint.scope_id);
        out.push(EndpointHooks { endpoint, hooks, may_change });
    }
    Ok(out)
}

async fn render(
    s: &Services,
    human: &Human,
    refused: Option<&RefusedCreate>,
    status: actix_web::http::StatusCode,
) -> Result<HttpResponse, BoardError> {
    let endpoints = sections(s, human).await?;
    let settings = s.hook_settings();
    let v = HooksView {
        endpoints: &endpoints,
        accepting: settings.accepting(),
        max: settings.max,
        now: Utc::now(),
        refused,
    };
    let body = view::hooks_page(&v, &human.csrf_field());
    let mut resp = respond::page(human, layout::page(human, Nav::Hooks, "Notify hooks", body));
    *resp.status_mut() = status;
    Ok(resp)
}

/// `GET /hooks`.
pub async fn list(s: web::Data<Services>, human: Human) -> Result<HttpResponse, BoardError> {
    render(&s, &human, None, actix_web::http::StatusCode::OK).await
}

/// `POST /hooks/endpoint/{id}`: adds a hook; the answer (200, never cached) shows the
/// signing secret once. A refusal (switched off, bad URL, the guard, the ceiling)
/// shows the page again with the reason beside the form, and nothing is created.
pub async fn create(
    s: web::Data<Services>,
    path: web::Path<String>,
    posted: Posted<HookForm>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: EndpointId = parse_id(&path)?;
    let endpoint = endpoints::show(&s, &human.reach, id).await?;
    let hook = NewHook { url: form.url.trim().to_owned(), queues: split_queues(&form.queues) };
    match hooks::create(&s, &human.reach, endpoint.id, hook).await {
        Ok(created) => {
            let body = view::created_page(&endpoint.slug, &created.hook, &created.signing_secret);
            Ok(respond::page(&human, layout::page(&human, Nav::Hooks, "Hook added", body)))
        }
        Err(
            e @ (Error::InvalidArgument(_) | Error::ForbiddenTarget | Error::Conflict(_) | Error::EncryptionRequired),
        ) => {
            let refused =
                RefusedCreate { endpoint: endpoint.id, url: form.url, queues: form.queues, message: e.to_string() };
            render(&s, &human, Some(&refused), actix_web::ResponseError::status_code(&e)).await
        }
        Err(other) => Err(other.into()),
    }
}

/// `POST /hooks/{id}/rotate`: the new secret, shown once (200, never cached).
pub async fn rotate(
    s: web::Data<Services>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: HookId = parse_id(&path)?;
    let rotated = hooks::rotate(&s, &human.reach, id).await?;
    let body = view::rotated_page(&rotated.hook, &rotated.signing_secret, Utc::now());
    Ok(respond::page(&human, layout::page(&human, Nav::Hooks, "Signing secret rotated", body)))
}

async fn set_enabled(
    s: &Services,
    board: &BoardState,
    path: &str,
    posted: Posted<NoFields>,
    on: bool,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: HookId = parse_id(path)?;
    let row = hooks::set_enabled(s, &human.reach, id, on).await?;
    let text = if on {
        format!("Enabled the hook to {}; its failure count starts over.", url_host(&row.url))
    } else {
        format!("Disabled the hook to {}; nothing is sent to it until it is enabled.", url_host(&row.url))
    };
    Ok(respond::see_other_with_notice(&board.cookies, &paths::endpoint_section(row.endpoint_id), &Notice::done(text)))
}

/// `POST /hooks/{id}/enable`.
pub async fn enable(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    set_enabled(&s, &board, &path, posted, true).await
}

/// `POST /hooks/{id}/disable`.
pub async fn disable(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    set_enabled(&s, &board, &path, posted, false).await
}

/// `POST /hooks/{id}/delete` (the page asks first).
pub async fn delete(
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    path: web::Path<String>,
    posted: Posted<NoFields>,
) -> Result<HttpResponse, BoardError> {
    let human = posted.human;
    let id: HookId = parse_id(&path)?;
    let row = hooks::delete(&s, &human.reach, id).await?;
    let text = format!("Deleted the hook to {}.", url_host(&row.url));
    Ok(respond::see_other_with_notice(&board.cookies, &paths::endpoint_section(row.endpoint_id), &Notice::done(text)))
}
