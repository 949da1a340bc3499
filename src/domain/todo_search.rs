//! What a Board search box (and the operator API's `q`) means: a todo id matches that
//! todo exactly; anything else matches source, kind, queue or title as a
//! case-insensitive substring, with `%`, `_` and `\` taken literally.

use super::ids::TodoId;
use crate::error::{Error, Result};

/// Longest search string accepted, in bytes (after trimming).
pub const QUERY_MAX_BYTES: usize = 200;

/// A parsed search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TodoSearch {
    /// No search: everything matches.
    Everything,
    /// Exactly this todo.
    Id(TodoId),
    /// A substring of source, kind, queue or title.
    Text {
        /// What was typed (trimmed), for showing back.
        typed: String,
        /// `%typed%` with the LIKE wildcards escaped, for `ILIKE`.
        pattern: String,
    },
}

impl TodoSearch {
    /// Parses a search box: blank is no search; a `td_…` id is an id search; anything
    /// else is a substring. Refuses more than [`QUERY_MAX_BYTES`] and U+0000 (which
    /// PostgreSQL text cannot hold).
    pub fn parse(query: Option<&str>) -> Result<TodoSearch> {
        let Some(q) = query.map(str::trim).filter(|q| !q.is_empty()) else {
            return Ok(TodoSearch::Everything);
        };
        if q.len() > QUERY_MAX_BYTES {
            return Err(Error::invalid("q", format!("must be at most {QUERY_MAX_BYTES} bytes")));
        }
        if q.contains('\0') {
            return Err(Error::invalid("q", "must not contain U+0000"));
        }
        if let Ok(id) = q.parse::<TodoId>() {
            return Ok(TodoSearch::Id(id));
        }
        Ok(TodoSearch::Text { typed: q.to_owned(), pattern: like_pattern(q) })
    }

    /// What to put back in the search box.
    pub fn typed(&self) -> String {
        match self {
            TodoSearch::Everything => String::new(),
            TodoSearch::Id(id) => id.to_string(),
            TodoSearch::Text { typed, .. } => typed.clone(),
        }
    }
}

/// `%q%` with `%`, `_` and `\` escaped, so that `q` matches literally inside `ILIKE`
/// (whose default escape character is `\`).
pub fn like_pattern(q: &str) -> String {
    let mut out = String::with_capacity(q.len() + 2);
    out.push('%');
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blank_search_matches_everything() {
        assert_eq!(TodoSearch::parse(None).unwrap(), TodoSearch::Everything);
        assert_eq!(TodoSearch::parse(Some("  \t ")).unwrap(), TodoSearch::Everything);
    }

    #[test]
    fn a_todo_id_is_an_exact_id_search_and_anything_else_a_substring() {
        let id = TodoId::new();
        assert_eq!(TodoSearch::parse(Some(&format!(" {id} "))).unwrap(), TodoSearch::Id(id));
        // An id with a typo is just text.
        let typo = format!("{id}x");
        assert!(matches!(TodoSearch::parse(Some(&typo)).unwrap(), TodoSearch::Text { .. }));
        assert_eq!(
            TodoSearch::parse(Some(" Deploys ")).unwrap(),
            TodoSearch::Text { typed: "Deploys".into(), pattern: "%Deploys%".into() }
        );
    }

    #[test]
    fn like_wildcards_and_the_escape_character_match_literally() {
        assert_eq!(like_pattern("100%_done\\"), "%100\\%\\_done\\\\%");
    }

    #[test]
    fn overlong_searches_and_nul_are_refused() {
        assert!(TodoSearch::parse(Some(&"x".repeat(QUERY_MAX_BYTES))).is_ok());
        assert!(TodoSearch::parse(Some(&"x".repeat(QUERY_MAX_BYTES + 1))).is_err());
        assert!(TodoSearch::parse(Some("a\0b")).is_err());
    }

    #[test]
    fn the_search_box_shows_back_what_was_typed() {
        assert_eq!(TodoSearch::parse(Some("  ship it ")).unwrap().typed(), "ship it");
        assert_eq!(TodoSearch::Everything.typed(), "");
    }
}
