//! Names taken from a URL path (a sink's name, a queue's) and how a bad path segment is
//! answered, in one place for every route.
//!
//! PostgreSQL's `text` cannot hold NUL, so `%00` in a name used to reach a statement and
//! come back as a 500 with an ERROR in the log; and actix decodes a segment that is not
//! UTF-8 (`%FF`) lossily, to U+FFFD, so the name a statement would see is not the one
//! sent. A [`PathName`] refuses both (and every other control character) while the path
//! is extracted, and [`path_error`] answers that refusal with 422 `invalid_argument`;
//! every other path that does not parse (a malformed id) is an unknown id, 404, as the
//! README says.

use actix_web::error::PathError;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use crate::error::Error;

/// What a refused name's deserialisation error starts with: [`path_error`] tells a
/// refused name (422) from a malformed id (404) by it. Both live here, so they cannot
/// drift apart.
const REFUSED: &str = "switchboard: path name refused: ";

/// A name from a URL path segment, as a route takes it (`web::Path<PathName>`, or a
/// tuple with ids before it): text a statement can hold and that is exactly what the
/// client sent. Whether it names anything, and its length and alphabet, are the
/// service's to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathName(String);

impl PathName {
    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for PathName {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// Why `segment` (a decoded path segment) cannot be a name, if it cannot: NUL, which no
/// statement can bind as text; U+FFFD, which is what a segment that was not UTF-8
/// decodes to (no name needs the replacement character); any other control character.
pub fn refusal(segment: &str) -> Option<&'static str> {
    if segment.contains('\0') {
        Some("a name may not contain NUL (%00)")
    } else if segment.contains('\u{fffd}') {
        Some("a name must be valid UTF-8")
    } else if segment.chars().any(char::is_control) {
        Some("a name may not contain control characters")
    } else {
        None
    }
}

/// The title of a [`PathName`]'s schema in the OpenAPI document, by which the document
/// adds the 422 a refused name answers to every operation that takes one.
pub const SCHEMA_TITLE: &str = "PathName";

impl utoipa::PartialSchema for PathName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .title(Some(SCHEMA_TITLE))
            .description(Some("A name: UTF-8 text without NUL or other control characters (else 422)."))
            .min_length(Some(1))
            .into()
    }
}

impl utoipa::ToSchema for PathName {}

impl<'de> Deserialize<'de> for PathName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        match refusal(&raw) {
            Some(why) => Err(D::Error::custom(format!("{REFUSED}{why}"))),
            None => Ok(PathName(raw)),
        }
    }
}

/// How a path that does not extract is answered, on every route: a refused
/// [`PathName`] is `invalid_argument` (422) naming why; anything else (a malformed id)
/// is `not_found` (404), exactly as an unknown id.
pub fn path_error(e: &PathError) -> Error {
    let refused = match e {
        PathError::Deserialize(inner) => inner.to_string().strip_prefix(REFUSED).map(str::to_owned),
        _ => None,
    };
    match refused {
        Some(why) => Error::invalid("path", why),
        None => Error::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(segment: &str) -> Result<PathName, serde::de::value::Error> {
        PathName::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(segment))
    }

    #[test]
    fn a_name_is_any_text_but_nul_control_characters_and_undecodable_bytes() {
        for fine in ["alerts", "Ops pager", "ünïcødé", "a.b_c-d", "💥"] {
            assert_eq!(from(fine).unwrap().as_str(), fine);
        }
        for refused in ["\0", "a\0b", "\u{fffd}", "x\u{fffd}", "a\nb", "\u{7f}", "\u{1b}[31m"] {
            assert!(refusal(refused).is_some(), "{refused:?}");
            let e = from(refused).unwrap_err();
            assert!(matches!(path_error(&PathError::Deserialize(e)), Error::InvalidArgument(_)), "{refused:?}");
        }
    }

    #[test]
    fn any_other_path_that_does_not_extract_is_not_found() {
        let e = <serde::de::value::Error as serde::de::Error>::custom("invalid id");
        assert!(matches!(path_error(&PathError::Deserialize(e)), Error::NotFound));
    }
}
