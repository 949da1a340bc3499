//! Where the Todos view's links and forms point, and the form fields the handlers
//! read. One place, so the routes and the markup cannot drift apart.

use url::form_urlencoded;

use crate::domain::ids::TodoId;
use crate::domain::pills::Pill;

/// The Todos view (`GET`, query `pill`, `q`, `limit`).
pub const TODOS: &str = "/todos";
/// Bulk retry of the dead letters matching `q` (`POST`, fields [`CSRF_FIELD`], `q`).
pub const BULK_RETRY: &str = "/todos/dead/retry";
/// The hidden form field that carries the session's CSRF token.
pub const CSRF_FIELD: &str = "csrf_token";

/// The list of `pill` searched for `q` (`q` empty: no search).
pub fn list(pill: Pill, q: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair("pill", pill.as_str());
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

/// "Retry now" of one todo (`POST`, fields [`CSRF_FIELD`], and `pill` and `q` to
/// return to the list the retry was made from).
pub fn retry(id: TodoId) -> String {
    format!("{TODOS}/{id}/retry")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_links_carry_the_pill_and_an_encoded_search() {
        assert_eq!(list(Pill::Dead, ""), "/todos?pill=dead");
        assert_eq!(list(Pill::Failed, "a&b=c d"), "/todos?pill=failed&q=a%26b%3Dc+d");
        assert_eq!(list_with_limit(Pill::All, "", 200), "/todos?pill=all&limit=200");
    }

    #[test]
    fn todo_links_use_the_prefixed_id() {
        let id = TodoId::new();
        assert_eq!(todo(id), format!("/todos/{id}"));
        assert_eq!(retry(id), format!("/todos/{id}/retry"));
    }
}
