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
    fn a_pattern_gets_its_one_segment_filled_and_a_plain_path_stays() {
        assert_eq!(fill("/hooks/{id}/rotate", "hk_1"), "/hooks/hk_1/rotate");
        assert_eq!(fill("/endpoints/{id}", 7), "/endpoints/7");
        assert_eq!(fill(STATIC, "board.css"), "/static/board.css");
        assert_eq!(fill(LOGIN, "x"), "/login");
    }
}
