//! The Todos view's query string (`filter`, `q`, `limit`), read leniently where that
//! costs nothing (unknown parameters are ignored, an empty value means the default, a
//! `limit` above [`LIST_MAX`] is cut to it) and refused with a reason where guessing
//! would show the wrong list (an unknown filter, a `limit` that is not a positive
//! number, a search the store cannot run).
//!
//! With no `filter` the view opens on **Dead**: `/todos` is where sign-in lands, and
//! the human who opens the Board at 3 a.m. has come for what is waiting on them. Every
//! other pill is one click away and every link names its filter explicitly.

use url::form_urlencoded;

use super::paths::FILTER_FIELD;
use crate::domain::pills::Pill;
use crate::domain::todo_search::TodoSearch;
use crate::store::board::LIST_MAX;

/// The pill shown when the query names none.
pub const DEFAULT_FILTER: Pill = Pill::Dead;
/// Rows shown when the query asks for no number.
pub const DEFAULT_LIMIT: i64 = 100;

/// A read query string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TodosQuery {
    /// The pill on show.
    pub filter: Pill,
    /// The search as it goes back in the box (trimmed; empty: no search).
    pub search: String,
    /// Rows to show, 1–[`LIST_MAX`].
    pub limit: i64,
}

impl Default for TodosQuery {
    fn default() -> Self {
        TodosQuery { filter: DEFAULT_FILTER, search: String::new(), limit: DEFAULT_LIMIT }
    }
}

/// Why a query string was refused (a sentence for the 400 page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadQuery(pub String);

/// The filter named `raw` (empty: the default).
pub fn filter(raw: &str) -> Result<Pill, BadQuery> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(DEFAULT_FILTER);
    }
    raw.to_ascii_lowercase().parse().map_err(|_| {
        let known: Vec<&str> = Pill::ALL.iter().map(|p| p.as_str()).collect();
        BadQuery(format!("There is no “{raw}” filter. The filters are {}.", known.join(", ")))
    })
}

/// The search `raw` as the store will read it, trimmed, or why it cannot be run.
pub fn search(raw: &str) -> Result<String, BadQuery> {
    TodoSearch::parse(Some(raw)).map(|s| s.typed()).map_err(|e| BadQuery(format!("The search cannot be run: {e}.")))
}

fn limit(raw: &str) -> Result<i64, BadQuery> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(DEFAULT_LIMIT);
    }
    let refused = || BadQuery(format!("“{raw}” is not a number of rows: ask for 1 to {LIST_MAX}."));
    if !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused());
    }
    // All digits: too many for an i64 is simply more than the most shown.
    let n = raw.parse::<i64>().unwrap_or(i64::MAX);
    if n < 1 { Err(refused()) } else { Ok(n.min(LIST_MAX)) }
}

impl TodosQuery {
    /// Reads a query string (without the `?`). The first of a repeated parameter wins.
    pub fn parse(query_string: &str) -> Result<TodosQuery, BadQuery> {
        let (mut f, mut q, mut l) = (None, None, None);
        for (key, value) in form_urlencoded::parse(query_string.as_bytes()) {
            let slot = match key.as_ref() {
                k if k == FILTER_FIELD => &mut f,
                "q" => &mut q,
                "limit" => &mut l,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.into_owned());
            }
        }
        Ok(TodosQuery {
            filter: filter(f.as_deref().unwrap_or(""))?,
            search: search(q.as_deref().unwrap_or(""))?,
            limit: limit(l.as_deref().unwrap_or(""))?,
        })
    }

    /// The search for the store (`None`: no search).
    pub fn store_search(&self) -> Option<&str> {
        (!self.search.is_empty()).then_some(self.search.as_str())
    }
}

/// The list a detail page goes back to, from its own query string: the filter if one
/// is named and known, and the search if it is one (never refused: a bad value only
/// means the default way back).
pub fn back_to(query_string: &str) -> (Option<Pill>, String) {
    let (mut f, mut q) = (None, None);
    for (key, value) in form_urlencoded::parse(query_string.as_bytes()) {
        match key.as_ref() {
            k if k == FILTER_FIELD && f.is_none() => f = Some(value.into_owned()),
            "q" if q.is_none() => q = Some(value.into_owned()),
            _ => {}
        }
    }
    let filter = f.filter(|f| !f.trim().is_empty()).and_then(|f| filter(&f).ok());
    (filter, q.and_then(|q| search(&q).ok()).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<TodosQuery, BadQuery> {
        TodosQuery::parse(q)
    }

    #[test]
    fn no_query_opens_the_dead_view_with_the_default_page() {
        assert_eq!(parse("").unwrap(), TodosQuery { filter: Pill::Dead, search: String::new(), limit: 100 });
        assert_eq!(parse("filter=&q=&limit=").unwrap(), TodosQuery::default());
        assert_eq!(parse("utm_source=mail").unwrap(), TodosQuery::default(), "unknown parameters are ignored");
    }

    #[test]
    fn every_pill_is_a_filter_in_any_case() {
        for pill in Pill::ALL {
            assert_eq!(parse(&format!("filter={}", pill.as_str())).unwrap().filter, *pill);
        }
        assert_eq!(parse("filter=DEAD").unwrap().filter, Pill::Dead);
        assert_eq!(parse("filter=done&filter=dead").unwrap().filter, Pill::Done, "the first one wins");
    }

    #[test]
    fn an_unknown_filter_is_refused_naming_the_known_ones() {
        let BadQuery(why) = parse("filter=zombie").unwrap_err();
        assert!(why.contains("“zombie”") && why.contains("all, pending, claimed, done, failed, dead"), "{why}");
    }

    #[test]
    fn a_limit_is_cut_to_the_most_shown_and_anything_but_a_positive_number_is_refused() {
        assert_eq!(parse("limit=50").unwrap().limit, 50);
        assert_eq!(parse("limit=5000").unwrap().limit, LIST_MAX);
        assert_eq!(parse("limit=99999999999999999999999").unwrap().limit, LIST_MAX);
        for bad in ["0", "-1", "ten", "1e3", "5%200"] {
            let BadQuery(why) = parse(&format!("limit={bad}")).unwrap_err();
            assert!(why.contains("not a number of rows"), "{bad}: {why}");
        }
    }

    #[test]
    fn the_way_back_reads_what_it_can_and_ignores_the_rest() {
        assert_eq!(back_to(""), (None, String::new()));
        assert_eq!(back_to("filter=done&q=+x+"), (Some(Pill::Done), "x".to_owned()));
        assert_eq!(back_to("filter=zombie&q=a%00b"), (None, String::new()));
    }

    #[test]
    fn the_search_is_trimmed_decoded_and_refused_when_the_store_could_not_run_it() {
        let q = parse("filter=dead&q=+deploy+%26+co+").unwrap();
        assert_eq!(q.search, "deploy & co");
        assert_eq!(q.store_search(), Some("deploy & co"));
        assert_eq!(parse("q=+++").unwrap().store_search(), None);
        assert!(parse(&format!("q={}", "x".repeat(201))).unwrap_err().0.contains("at most 200 bytes"));
        assert!(parse("q=a%00b").is_err());
    }
}
