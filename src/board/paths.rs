//! Paths of the Board that belong to no section (sign-in, sign-out, assets), and the
//! one way every section turns a route pattern into a link. Each section's own
//! `paths.rs` holds its route patterns; the routes and the markup both read them, so
//! they cannot drift apart.

/// The sign-in form (`GET`) and sign-in (`POST`).
pub const LOGIN: &str = "/login";
/// Sign-out (`POST`).
pub const LOGOUT: &str = "/logout";
/// The embedded stylesheet and icon (`GET`, route pattern).
pub const STATIC: &str = "/static/{file}";

/// Where a signed-in human lands by default.
pub const LANDING: &str = super::todos::paths::TODOS;

/// Longest `next` path kept.
const NEXT_MAX: usize = 2048;

/// `next` if it is a path on this Board (`/…`), never another origin (`//host`,
/// `/\host`, a scheme) nor anything with control characters.
pub fn safe_next(next: &str) -> Option<&str> {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.contains('\\')
        && next.len() <= NEXT_MAX
        && !next.chars().any(char::is_control)
        && !next.starts_with(LOGIN)
        && !next.starts_with(LOGOUT);
    local.then_some(next)
}

/// The link for a route `pattern` with its one `{id}` (or `{file}`) segment filled in.
pub fn fill(pattern: &str, id: impl std::fmt::Display) -> String {
    match pattern.split_once('{').and_then(|(head, rest)| Some((head, rest.split_once('}')?.1))) {
        Some((head, tail)) => format!("{head}{id}{tail}"),
        None => pattern.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_board() {
        assert_eq!(safe_next("/todos?filter=dead&q=x"), Some("/todos?filter=dead&q=x"));
        for outside in ["//evil.example", "/\\evil.example", "https://evil.example", "evil", "", "/a\nb", "/login"] {
            assert_eq!(safe_next(outside), None, "{outside:?}");
        }
        assert_eq!(safe_next(&format!("/{}", "a".repeat(NEXT_MAX))), None);
    }

    #[test]
    fn a_pattern_gets_its_one_segment_filled_and_a_plain_path_stays() {
        assert_eq!(fill("/hooks/{id}/rotate", "hk_1"), "/hooks/hk_1/rotate");
        assert_eq!(fill("/endpoints/{id}", 7), "/endpoints/7");
        assert_eq!(fill(STATIC, "board.css"), "/static/board.css");
        assert_eq!(fill(LOGIN, "x"), "/login");
    }
}
