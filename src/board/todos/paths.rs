//! Where the Todos view's links and forms point, and the form fields the handlers
//! read. One place, so the routes and the markup cannot drift apart.
//!
//! The list's query parameter is `filter` (`GET /todos?filter=dead&q=…` is the Dead
//! view, SPEC §13); forms that return to a list carry the same `filter` and `q`.

use url::form_urlencoded;

use crate::domain::ids::TodoId;
use crate::domain::pills::Pill;

/// The Todos view (`GET`, query [`FILTER_FIELD`], `q`, `limit`).
pub const TODOS: &str = "/todos";
/// One todo's page (`GET`, optional `filter` and `q` of the list to go back to).
pub const TODO: &str = "/todos/{id}";
/// "Retry now" of one todo (`POST`).
pub const RETRY: &str = "/todos/{id}/retry";
/// Bulk retry of the dead letters matching `q` (`POST`, fields [`CSRF_FIELD`], `q`,
/// and `confirm=yes` once confirmed).
pub const BULK_RETRY: &str = "/todos/dead/retry";
/// Pausing or resuming a queue, or changing its admission limits (`POST`, fields
/// `endpoint_id`, `queue`, and `paused` or `max_in_flight` and `per_hour`, with
/// [`FILTER_FIELD`] and `q` of the list to return to).
pub const ADMISSION: &str = "/todos/queues/admission";
/// Where on the Todos view the admission panel is.
pub const ADMISSION_ANCHOR: &str = "admission";
/// The hidden form field that carries the session's CSRF token.
pub const CSRF_FIELD: &str = "csrf_token";
/// The query parameter (and hidden form field) naming the pill on show.
pub const FILTER_FIELD: &str = "filter";
/// The bulk retry's confirmation field, and the value that confirms.
pub const CONFIRM_FIELD: &str = "confirm";
/// The bulk retry's cut-off (RFC 3339): only dead letters that died by then move, so
/// the confirmed count is what moves (one that dies after the page was shown stays).
pub const DIED_BY_FIELD: &str = "died_by";
/// See [`CONFIRM_FIELD`].
pub const CONFIRMED: &str = "yes";

/// The list of `pill` searched for `q` (`q` empty: no search).
pub fn list(pill: Pill, q: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair(FILTER_FIELD, pill.as_str());
    if !q.is_empty() {
        query.append_pair("q", q);
    }
    format!("{TODOS}?{}", query.finish())
}

/// The same list asking for `limit` rows.
pub fn list_with_limit(pill: Pill, q: &str, limit: i64) -> String {
    format!("{}&limit={limit}", list(pill, q))
}

/// One todo's detail page.
pub fn todo(id: TodoId) -> String {
    format!("{TODOS}/{id}")
}

/// "Retry now" of one todo (`POST`, fields [`CSRF_FIELD`], and [`FILTER_FIELD`] and
/// `q` to return to the list the retry was made from).
pub fn retry(id: TodoId) -> String {
    format!("{TODOS}/{id}/retry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_links_carry_the_filter_and_an_encoded_search() {
        assert_eq!(list(Pill::Dead, ""), "/todos?filter=dead");
        assert_eq!(list(Pill::Failed, "a&b=c d"), "/todos?filter=failed&q=a%26b%3Dc+d");
        assert_eq!(list_with_limit(Pill::All, "", 200), "/todos?filter=all&limit=200");
    }

    #[test]
    fn todo_links_use_the_prefixed_id() {
        let id = TodoId::new();
        assert_eq!(todo(id), format!("/todos/{id}"));
        assert_eq!(retry(id), format!("/todos/{id}/retry"));
        assert_eq!(TODO.replace("{id}", &id.to_string()), todo(id));
        assert_eq!(RETRY.replace("{id}", &id.to_string()), retry(id));
    }
}
