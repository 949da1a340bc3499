//! The Todos view's actions: `POST /todos/{id}/retry` ("Retry now" of one failed todo)
//! and `POST /todos/dead/retry` (every dead letter matching the Dead view's search,
//! after a confirmation page). Both take [`Posted`] (a missing or wrong CSRF token is
//! refused before anything moves), act on the signed-in human's scopes only through the
//! services the operator REST API calls ([`crate::service::todos`]), and
//! answer 303 back to the list with a notice (post/redirect/get).

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use super::super::error::BoardError;
use super::super::extract::Posted;
use super::super::ids::parse_id;
use super::super::layout::{self, Nav};
use super::super::respond;
use super::bulk::bulk_confirm;
use super::paths::{self, CONFIRMED, DIED_BY_FIELD};
use super::query;
use super::view::TodosNotice;
use chrono::{DateTime, Utc};

use crate::board::state::BoardState;
use crate::domain::ids::TodoId;
use crate::domain::pills::Pill;
use crate::error::Error;
use crate::service::{Services, todos};

/// The list a form returns to: its `filter` and `q` (anything unreadable returns to
/// the default list, unsearched: it only decides where the browser lands).
#[derive(Debug, Default, Deserialize)]
pub struct ReturnTo {
    /// The pill on show.
    #[serde(default)]
    pub filter: String,
    /// The search.
    #[serde(default)]
    pub q: String,
}

impl ReturnTo {
    /// The list this names.
    pub fn location(&self) -> String {
        let filter = query::filter(&self.filter).unwrap_or(query::DEFAULT_FILTER);
        paths::list(filter, &query::search(&self.q).unwrap_or_default())
    }
}

/// `POST /todos/{id}/retry`: back to pending with the attempt counter reset. 404 for
/// an unknown or another scope's id; a refusal (not failed, endpoint revoked or
/// expired, idempotency key taken) returns to the list saying why.
pub async fn retry_one(
    posted: Posted<ReturnTo>,
    s: web::Data<Services>,
    board: web::Data<BoardState>,
    id: web::Path<String>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let id: TodoId = parse_id(&id)?;
    let notice = match todos::retry_now(&s, &human.reach, id).await {
        Ok(_) => TodosNotice::Retried(id),
        Err(Error::Conflict(why)) => TodosNotice::Refused(why),
        Err(e) => return Err(e.into()),
    };
    Ok(respond::see_other_with_notice(&board.cookies, &form.location(), &notice.flash()))
}

/// The bulk retry's fields.
#[derive(Debug, Default, Deserialize)]
pub struct BulkForm {
    #[serde(default)]
    q: String,
    #[serde(default)]
    confirm: String,
    /// The confirmation's cut-off (see [`DIED_BY_FIELD`]).
    #[serde(default)]
    died_by: String,
}

/// `POST /todos/dead/retry`: without `confirm=yes`, a page saying how many dead
/// letters match `q` (in the human's scopes) with the button that retries them; with
/// it, the retry, and 303 to the Dead view searched for `q` with the count as a notice.
pub async fn retry_dead(
    posted: Posted<BulkForm>,
    s: web::Data<Services>,
    board: web::Data<BoardState>,
) -> Result<HttpResponse, BoardError> {
    let Posted { human, form } = posted;
    let search = query::search(&form.q).map_err(|query::BadQuery(why)| Error::InvalidArgument(why))?;
    let q = (!search.is_empty()).then_some(search.as_str());
    if form.confirm != CONFIRMED {
        let counted_at = Utc::now();
        let matching = todos::count_dead_letters(&s, &human.reach, q).await?;
        let body = bulk_confirm(&search, matching, counted_at, human.csrf.as_str());
        return Ok(respond::page(&human, layout::page(&human, Nav::Todos, "Retry dead letters?", body)));
    }
    let died_by = DateTime::parse_from_rfc3339(&form.died_by)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| Error::invalid(DIED_BY_FIELD, "missing or not an RFC 3339 time: confirm again"))?;
    let notice = match todos::bulk_retry(&s, &human.reach, q, Some(died_by)).await {
        Ok(done) => TodosNotice::BulkRetried(done),
        Err(Error::Conflict(why)) => TodosNotice::Refused(why),
        Err(e) => return Err(e.into()),
    };
    Ok(respond::see_other_with_notice(&board.cookies, &paths::list(Pill::Dead, &search), &notice.flash()))
}
