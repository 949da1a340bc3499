//! The Todos view's page bodies: the pills with their counts, the lists (the Dead
//! list first among them), the search, single and bulk retry, the todo detail and the
//! dead-letters-per-day chart; and how the list's query string reads ([`query`]).
//! Pure functions from plain data (and the session's CSRF token, for their forms) to
//! [`maud::Markup`]; the handlers that load the data and put the layout around them
//! are `board::todos_page` (the GET pages) and `board::todos_retry` (the POSTs).
//!
//! Everything a sender or an agent wrote (titles, summaries, queue names, payloads) is
//! interpolated by maud, which escapes it. Plain HTML forms and links: it works without
//! JavaScript, and the `sb-` classes lay it out for a phone as well as a desk.

pub mod bulk;
pub mod chart;
pub mod detail;
pub mod format;
pub mod paths;
pub mod query;
pub mod view;

#[cfg(test)]
pub(crate) mod fixtures;
