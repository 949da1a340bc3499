//! The Todos view's pages: `GET /todos?filter=&q=&limit=` (the pills with their counts,
//! the list of the pill on show, the search; on Dead also the chart and bulk retry; and
//! the queue admission panel) and
//! `GET /todos/{id}` (one todo). Thin: read the query, ask the store for the signed-in
//! human's scopes through [`crate::service::todos`], render with the pure bodies of
//! this section ([`super`]).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::Utc;

use super::super::error::BoardError;
use super::super::ids::parse_id;
use super::super::layout::{self, Nav};
use super::super::respond;
use super::super::session::Human;
use super::admission_view::{AdmissionPanel, admission_panel};
use super::detail::{TodoDetailView, home_pill, todo_detail};
use super::query::{self, BadQuery, TodosQuery};
use super::view::{PillRows, TodosView, bad_query, todos_view};
use crate::domain::ids::TodoId;
use crate::domain::todo_state::EndpointState;
use crate::error::Error;
use crate::service::todos::{self as service_todos};
use crate::service::{Services, admission, endpoints, todos};
use maud::html;

/// `GET /todos`: the Todos view. An unknown `filter`, a `limit` that is not a positive
/// number or a search the store cannot run answers 400 with a page saying why.
pub async fn list(human: Human, s: web::Data<Services>, req: HttpRequest) -> Result<HttpResponse, BoardError> {
    let query = match TodosQuery::parse(req.query_string()) {
        Ok(q) => q,
        Err(BadQuery(why)) => {
            let page = layout::page(&human, Nav::Todos, "Todos", bad_query(&why));
            return Ok(respond::html(StatusCode::BAD_REQUEST, page));
        }
    };
    let search = query.store_search();
    let csrf = human.csrf.as_str();
    let title = query.filter.label();
    let found = todos::view(&s, &human.reach, query.filter, search, query.limit).await?;
    let (rows, chart, matching) = match &found.rows {
        service_todos::PillList::Dead { rows, chart, matching } => (PillRows::Dead(rows), Some(chart), Some(*matching)),
        service_todos::PillList::Todos(rows) => (PillRows::Todos(rows), None, None),
    };
    let view = TodosView {
        pill: query.filter,
        counts: &found.counts,
        search: &query.search,
        rows,
        limit: query.limit,
        now: Utc::now(),
        chart,
        matching,
    };
    let budgets = admission::in_scopes(&s, &human.reach).await?;
    let mut endpoints = endpoints::list(&s, &human.reach).await?;
    endpoints.retain(|e| e.state == EndpointState::Active && human.reach.is_admin_of(e.scope_id));
    let panel = AdmissionPanel {
        budgets: &budgets,
        endpoints: &endpoints,
        reach: &human.reach,
        pill: query.filter,
        search: &query.search,
    };
    let body = html! { (todos_view(&view, csrf)) (admission_panel(&panel, &human.csrf)) };
    Ok(respond::page(&human, layout::page(&human, Nav::Todos, &format!("{title} todos"), body)))
}

/// `GET /todos/{id}`: one todo with its attempts, "Retry now" and the way back to the
/// list it was opened from (`?filter=&q=`; without them, the pill the todo is on). A
/// malformed, unknown or another scope's id answers 404.
pub async fn detail(
    human: Human,
    s: web::Data<Services>,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, BoardError> {
    let id: TodoId = parse_id(&id)?;
    let found = todos::show(&s, &human.reach, id).await?;
    let endpoint = match endpoints::show(&s, &human.reach, found.todo.endpoint_id).await {
        Ok(ep) => ep.slug,
        Err(Error::NotFound) => found.todo.endpoint_id.to_string(),
        Err(e) => return Err(e.into()),
    };
    let (back_filter, back_search) = query::back_to(req.query_string());
    let told = todos::told_about(&s, &human.reach, id).await?;
    let view = TodoDetailView {
        todo: &found.todo,
        endpoint: &endpoint,
        attempts: &found.attempts,
        now: Utc::now(),
        back_pill: back_filter.unwrap_or_else(|| home_pill(&found.todo)),
        back_search: &back_search,
        told: &told,
    };
    let body = todo_detail(&view, human.csrf.as_str());
    Ok(respond::page(&human, layout::page(&human, Nav::Todos, &found.todo.title, body)))
}
