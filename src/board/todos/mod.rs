//! The Todos view's page bodies: the pills with their counts, the lists (the Dead
//! list first among them), the search, single and bulk retry, the todo detail, the
//! dead-letters-per-day chart and the queue admission panel ([`admission_view`], its
//! forms handled by [`admission`]); and how the list's query string reads ([`query`]).
//! Pure functions from plain data (and the session's CSRF token, for their forms) to
//! [`maud::Markup`]; the handlers that load the data and put the layout around them
//! are [`pages`] (the GET pages) and [`retry`] (the POSTs).
//!
//! Everything a sender or an agent wrote (titles, summaries, queue names, payloads) is
//! interpolated by maud, which escapes it. Plain HTML forms and links: it works without
//! JavaScript, and the `sb-` classes lay it out for a phone as well as a desk.

pub mod admission;
pub mod admission_view;
pub mod bulk;
pub mod chart;
pub mod detail;
pub mod format;
pub mod pages;
pub mod paths;
pub mod query;
pub mod retry;
pub mod view;

use actix_web::http::Method;

use crate::service::permissions::Action;
use crate::web::routes::Entry;

/// The Todos view's routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<Entry> {
    vec![
        Entry::new(Method::GET, paths::TODOS, Action::ListTodos, pages::list),
        // Before `/todos/{id}/retry`, whose `{id}` would otherwise take "dead".
        Entry::new(Method::POST, paths::BULK_RETRY, Action::BulkRetry, retry::retry_dead),
        Entry::new(Method::POST, paths::ADMISSION, Action::SetAdmission, admission::set_admission),
        Entry::new(Method::GET, paths::TODO, Action::ShowTodo, pages::detail),
        Entry::new(Method::POST, paths::RETRY, Action::RetryNow, retry::retry_one),
    ]
}

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod open_attempt_tests;
