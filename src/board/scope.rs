//! Tenancy on the Board: another scope's ids answer exactly like unknown ids (404),
//! never 403, so a page reveals nothing about what other people own.

use std::str::FromStr;

use super::error::BoardError;
use super::session::Human;
use crate::domain::ids::ScopeId;
use crate::error::Error;

/// Parses an id from a URL; a malformed id is an unknown id (404).
pub fn parse_id<I: FromStr>(raw: &str) -> Result<I, BoardError> {
    raw.parse().map_err(|_| BoardError::App(Error::NotFound))
}

/// `item`, if it lives in one of the human's scopes; otherwise 404.
pub fn in_reach<T>(human: &Human, scope: ScopeId, item: T) -> Result<T, BoardError> {
    if human.reaches(scope) { Ok(item) } else { Err(BoardError::App(Error::NotFound)) }
}

/// The row a scoped query found, or 404.
pub fn found<T>(item: Option<T>) -> Result<T, BoardError> {
    item.ok_or(BoardError::App(Error::NotFound))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::csrf::CsrfToken;
    use crate::domain::ids::{HumanId, TodoId};
    use crate::domain::todo_state::TeamRole;
    use crate::store::tenancy::{Reach, ScopeGrant};

    fn human(scopes: &[ScopeId]) -> Human {
        Human {
            reach: Reach {
                human: HumanId::new(),
                personal: scopes[0],
                scopes: scopes.iter().map(|&scope| ScopeGrant { scope, role: TeamRole::Member }).collect(),
            },
            email: "a@example.com".into(),
            name: "A".into(),
            csrf: CsrfToken::random(),
            notice: None,
            session_token: String::new(),
        }
    }

    #[test]
    fn another_scopes_item_is_not_found_and_ones_own_is_returned() {
        let (mine, team, theirs) = (ScopeId::new(), ScopeId::new(), ScopeId::new());
        let h = human(&[mine, team]);
        assert_eq!(in_reach(&h, team, 7).unwrap(), 7);
        let err = in_reach(&h, theirs, 7).unwrap_err();
        assert!(matches!(err, BoardError::App(Error::NotFound)));
    }

    #[test]
    fn a_malformed_id_is_not_found() {
        assert!(matches!(parse_id::<TodoId>("td_nope"), Err(BoardError::App(Error::NotFound))));
        let id = TodoId::new();
        assert_eq!(parse_id::<TodoId>(&id.to_string()).unwrap(), id);
    }
}
