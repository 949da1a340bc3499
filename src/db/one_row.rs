//! One row from a statement, answered only once PostgreSQL has finished it.
//!
//! diesel-async's `get_result` (and `first`, which is `limit(1).get_result`) hands back
//! the first row as soon as it arrives and drops the rest of the answer. In autocommit,
//! PostgreSQL commits after sending that row: a commit that then fails (a deferred
//! constraint, or the backend dying in a restart or failover between the row and the
//! commit) is never seen, and the caller answers 2xx for a write that was rolled back.
//! The fleet test (`bench/src/fleet/`) caught one: a webhook delivery answered 202 13 ms
//! into a database restart, with neither its event nor its todo stored. [`OneRow::one_row`]
//! reads the whole answer (`load`), so the statement's own end, commit included, decides
//! success; it costs no extra round trip. `clippy.toml` refuses `get_result`.

use diesel::result::{Error, QueryResult};
use diesel_async::methods::LoadQuery;
use diesel_async::return_futures::LoadFuture;
use diesel_async::{AsyncConnectionCore, RunQueryDsl};
use futures_util::FutureExt;
use futures_util::future::Map;

/// The future [`OneRow::one_row`] returns: the whole answer loaded, then its first row.
pub type OneRowFuture<'conn, 'query, Q, Conn, U> =
    Map<LoadFuture<'conn, 'query, Q, Conn, U>, fn(QueryResult<Vec<U>>) -> QueryResult<U>>;

/// The first of `rows`, or `NotFound`.
fn first_of<U>(rows: QueryResult<Vec<U>>) -> QueryResult<U> {
    rows?.into_iter().next().ok_or(Error::NotFound)
}

/// [`OneRow::one_row`] on every query diesel-async can run.
pub trait OneRow<Conn>: RunQueryDsl<Conn> {
    /// The statement's first row (`NotFound` when it returned none), once the statement
    /// has completed, and in autocommit committed.
    fn one_row<'query, 'conn, U>(self, conn: &'conn mut Conn) -> OneRowFuture<'conn, 'query, Self, Conn, U>
    where
        U: Send,
        Conn: AsyncConnectionCore,
        Self: LoadQuery<'query, Conn, U> + 'query,
    {
        self.load::<U>(conn).map(first_of::<U> as fn(QueryResult<Vec<U>>) -> QueryResult<U>)
    }
}

impl<Q: RunQueryDsl<Conn>, Conn> OneRow<Conn> for Q {}
