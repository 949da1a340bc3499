//! Where the quarantine pages' links and forms point.

use super::super::paths::fill;
use crate::domain::ids::TodoId;

/// The quarantine list (`GET`).
pub const QUARANTINE: &str = "/quarantine";

/// One held delivery (route pattern).
pub const HELD: &str = "/quarantine/{id}";
/// Release it (route pattern).
pub const RELEASE: &str = "/quarantine/{id}/release";
/// Discard it (route pattern).
pub const DISCARD: &str = "/quarantine/{id}/discard";

/// One held delivery (`GET`).
pub fn held(id: TodoId) -> String {
    fill(HELD, id)
}

/// Release it (`POST`, fields `csrf_token`, `queue`: empty lets the webhook's rules decide).
pub fn release(id: TodoId) -> String {
    fill(RELEASE, id)
}

/// Discard it (`POST`, after the page's confirm step).
pub fn discard(id: TodoId) -> String {
    fill(DISCARD, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_paths_use_the_prefixed_todo_id() {
        let id = TodoId::new();
        assert_eq!(held(id), format!("/quarantine/{id}"));
        assert_eq!(release(id), format!("/quarantine/{id}/release"));
        assert_eq!(discard(id), format!("/quarantine/{id}/discard"));
    }
}
