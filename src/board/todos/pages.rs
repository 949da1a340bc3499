//! The Todos view's pages: `GET /todos?filter=&q=&limit=` (the pills with their counts,
//! the list of the pill on show, the search; on Dead also the chart and bulk retry) and
//! `GET /todos/{id}` (one todo). Thin: read the query, ask the store for the signed-in
//! human's scopes only, render with the pure bodies of this section ([`super`]).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use chrono::Utc;

use super::super::error::BoardError;
use super::super::layout::{self, Nav};
use super::super::respond;
use super::super::scope::parse_id;
use super::super::session::Human;
use super::detail::{TodoDetailView, home_pill, todo_detail};
use super::query::{self, BadQuery, ListQuery};
use super::view::{Rows, TodosView, bad_query, todos_view};
use crate::domain::ids::TodoId;
use crate::domain::pills::Pill;
use crate::error::Error;
use crate::http::AppState;
use crate::store::todos::Caller;

/// `GET /todos`: the Todos view. An unknown `filter`, a `limit` that is not a positive
/// number or a search the store cannot run answers 400 with a page saying why.
pub async fn list(human: Human, state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, BoardError> {
    let query = match ListQuery::parse(req.query_string()) {
        Ok(q) => q,
        Err(BadQuery(why)) => {
            let page = layout::page(&human, Nav::Todos, "Todos", bad_query(&why));
            return Ok(respond::html(StatusCode::BAD_REQUEST, page));
        }
    };
    let store = &state.store;
    let scopes = human.scope_ids();
    let search = query.store_search();
    let csrf = human.csrf.as_str();
    let title = query.filter.label();
    let now = Utc::now();
    let body = if query.filter == Pill::Dead {
        // The four reads are independent: each takes its own pooled connection.
        let matching = async {
            match search {
                Some(q) => store.count_dead_letters(&scopes, Some(q)).await.map(Some),
                None => Ok(None),
            }
        };
        let (counts, rows, chart, matching) = tokio::try_join!(
            store.pill_counts(&scopes),
            store.list_dead_letters(&scopes, search, query.limit),
            store.dead_letters_per_day(&scopes),
            matching,
        )?;
        let view = TodosView {
            pill: Pill::Dead,
            counts: &counts,
            search: &query.search,
            rows: Rows::Dead(&rows),
            limit: query.limit,
            now,
            chart: Some(&chart),
            // Unsearched, the matches are the Dead pill's own count.
            matching: Some(matching.unwrap_or(counts.dead)),
        };
        todos_view(&view, csrf)
    } else {
        let (counts, rows) = tokio::try_join!(
            store.pill_counts(&scopes),
            store.list_todos_for(&scopes, query.filter, search, query.limit),
        )?;
        let view = TodosView {
            pill: query.filter,
            counts: &counts,
            search: &query.search,
            rows: Rows::Todos(&rows),
            limit: query.limit,
            now,
            chart: None,
            matching: None,
        };
        todos_view(&view, csrf)
    };
    Ok(respond::page(&human, layout::page(&human, Nav::Todos, &format!("{title} todos"), body)))
}

/// `GET /todos/{id}`: one todo with its attempts, "Retry now" and the way back to the
/// list it was opened from (`?filter=&q=`; without them, the pill the todo is on). A
/// malformed, unknown or another scope's id answers 404.
pub async fn detail(
    human: Human,
    state: web::Data<AppState>,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, BoardError> {
    let id: TodoId = parse_id(&id)?;
    let scopes = human.scope_ids();
    let found = state.store.get_todo(&Caller::Operator(scopes.clone()), id).await?;
    let endpoint = match state.store.endpoint_in(&scopes, found.todo.endpoint_id).await {
        Ok(ep) => ep.slug,
        Err(Error::NotFound) => found.todo.endpoint_id.to_string(),
        Err(e) => return Err(e.into()),
    };
    let (back_filter, back_search) = query::back_to(req.query_string());
    let view = TodoDetailView {
        todo: &found.todo,
        endpoint: &endpoint,
        attempts: &found.attempts,
        now: Utc::now(),
        back_pill: back_filter.unwrap_or_else(|| home_pill(&found.todo)),
        back_search: &back_search,
    };
    let body = todo_detail(&view, human.csrf.as_str());
    Ok(respond::page(&human, layout::page(&human, Nav::Todos, &found.todo.title, body)))
}
