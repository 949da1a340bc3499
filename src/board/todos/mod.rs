//! The Todos view's page bodies: the pills with their counts, the lists (the Dead
//! list first among them), the search, single and bulk retry, the todo detail and the
//! dead-letters-per-day chart; and how the list's query string reads ([`query`]).
//! Pure functions from plain data (and the session's CSRF token, for their forms) to
//! [`maud::Markup`]; the handlers that load the data and put the layout around them
//! are [`pages`] (the GET pages) and [`retry`] (the POSTs).
//!
//! Everything a sender or an agent wrote (titles, summaries, queue names, payloads) is
//! interpolated by maud, which escapes it. Plain HTML forms and links: it works without
//! JavaScript, and the `sb-` classes lay it out for a phone as well as a desk.

pub mod bulk;
pub mod chart;
pub mod detail;
pub mod format;
pub mod pages;
pub mod paths;
pub mod query;
pub mod retry;
pub mod view;

use actix_web::web;

/// The Todos view's routes, for [`crate::board`]'s page list.
pub fn routes() -> Vec<(&'static str, actix_web::Route)> {
    vec![
        (paths::TODOS, web::get().to(pages::list)),
        // Before `/todos/{id}/retry`, whose `{id}` would otherwise take "dead".
        (paths::BULK_RETRY, web::post().to(retry::retry_dead)),
        (paths::TODO, web::get().to(pages::detail)),
        (paths::RETRY, web::post().to(retry::retry_one)),
    ]
}

#[cfg(test)]
pub(crate) mod fixtures;
