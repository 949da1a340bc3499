//! Keeping hand-written statements prepared. Diesel never caches a `sql_query`, so each
//! call would parse and plan its SQL again, in an extra round trip. The store's hot
//! statements have fixed text, so they are safe to keep prepared per connection, keyed
//! by that text: wrap them in [`Prepared`].

use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};

/// A raw SQL statement (with its binds) that the connection keeps prepared.
///
/// Only for statements whose text is fixed (or drawn from a small fixed set): the
/// connection's statement cache is keyed by the text and is not bounded.
#[derive(Debug, Clone)]
pub struct Prepared<Q>(pub Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Prepared<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(true)
    }
}

impl<Q> QueryId for Prepared<Q> {
    type QueryId = ();
    // No static id: the cache keys the statement by its SQL text and bind types.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Prepared<Q> {
    type SqlType = Q::SqlType;
}
