//! Ids in the Board's URLs. A malformed id is an unknown id (404), exactly like another
//! scope's id (which the services answer with 404 in turn), so a page reveals nothing
//! about what other people own.

use std::str::FromStr;

use super::error::BoardError;
use crate::error::Error;

/// Parses an id from a URL; a malformed id is an unknown id (404).
pub fn parse_id<I: FromStr>(raw: &str) -> Result<I, BoardError> {
    raw.parse().map_err(|_| BoardError::App(Error::NotFound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::TodoId;

    #[test]
    fn a_malformed_id_is_not_found() {
        assert!(matches!(parse_id::<TodoId>("td_nope"), Err(BoardError::App(Error::NotFound))));
        let id = TodoId::new();
        assert_eq!(parse_id::<TodoId>(&id.to_string()).unwrap(), id);
    }
}
