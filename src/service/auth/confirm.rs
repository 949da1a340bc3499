//! A revocation returns only once every instance has forgotten the token.
//!
//! The NOTIFY of a committed change reaches each instance's auth listener a few
//! milliseconds after the commit (more on a loaded host): a request sent the moment a
//! revocation returned could still meet the old cached token. So a revocation (CLI, API,
//! Board) LISTENs for acknowledgements before it commits, notes which auth listeners are
//! listening, commits, and waits until each of them has acknowledged the endpoint (a
//! listener acknowledges after it evicted) or has gone (its instance then serves nothing
//! from its cache until it listens again, and forgets everything when it does), for at
//! most [`ACK_LIMIT`]. A listener that does not answer in time is logged; its instance's
//! entries lapse within `SWITCHBOARD_AUTH_CACHE_MS`.

use std::collections::HashSet;
use std::future::Future;
use std::time::{Duration, Instant};

use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use futures_util::{FutureExt, StreamExt};

use crate::db::DbConn;
use crate::db::listen::LISTENER_SESSION_NAMES_ACKING;
use crate::domain::ids::EndpointId;
use crate::error::Result;
use crate::store::Store;

/// The channel each auth listener acknowledges an eviction on (payload: what it evicted).
pub const AUTH_ACKS_CHANNEL: &str = crate::db::channels::AUTH_ACKS.name();

/// How long a change waits for every listener's acknowledgement.
pub const ACK_LIMIT: Duration = Duration::from_secs(5);

/// Turns for revocations waiting on acknowledgements (see [`everywhere`]).
static TURNS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();

/// How often the wait looks again at which listeners are still there.
const RECHECK: Duration = Duration::from_millis(200);

/// Runs `change` (which commits a change to `endpoint`) and returns its outcome once
/// every auth listener has acknowledged it, or after [`ACK_LIMIT`]. A failed change
/// waits for nothing. It holds one pooled connection while `change` takes another, so
/// with a pool of one it runs `change` unconfirmed (the NOTIFY still evicts), and at
/// most a quarter of the pool waits at once.
pub async fn everywhere<T>(store: &Store, endpoint: EndpointId, change: impl Future<Output = Result<T>>) -> Result<T> {
    let pool_size = store.pool().status().max_size;
    if pool_size < 2 {
        return change.await;
    }
    // Revocations waiting for acknowledgements hold a pooled connection each: at most a
    // quarter of the pool does at once, the rest take turns, so a burst of revocations
    // never starves the agents (or itself) of connections.
    let turns = TURNS.get_or_init(|| tokio::sync::Semaphore::new((pool_size / 4).max(1)));
    let _turn = turns.acquire().await.map_err(|_| crate::error::Error::internal("confirmation turns closed"))?;
    let mut held = Listening(Some(store.conn().await?));
    let Some(conn) = held.0.as_mut() else { return change.await };
    let mut listening = prepare(conn).await?;
    let outcome = change.await;
    let unconfirmed = match &outcome {
        Ok(_) => {
            // A listener that named itself between `prepare` and the commit was already
            // listening (it names itself only once LISTEN is in place) and may have
            // cached the old answer: wait for it too. One named after this read starts
            // with an empty cache that only reads committed data.
            if let Ok(now) = listeners(conn).await {
                listening.extend(now);
            }
            wait(conn, listening, &endpoint.0.to_string()).await
        }
        Err(_) => 0,
    };
    if unconfirmed > 0 {
        tracing::warn!(
            endpoint = %endpoint,
            instances = unconfirmed,
            "an endpoint change was not acknowledged by every auth listener in time; \
             their cached tokens lapse within SWITCHBOARD_AUTH_CACHE_MS"
        );
    }
    if finish(conn).await.is_ok() {
        held.release();
    }
    outcome
}

/// A pooled connection that may be LISTENing: unless released after UNLISTEN, it leaves
/// the pool when dropped (a failure, or the caller's future dropped mid-way), so no
/// other user gets a connection that buffers every acknowledgement.
struct Listening(Option<DbConn>);

impl Listening {
    /// Back to the pool: it no longer listens.
    fn release(mut self) {
        drop(self.0.take());
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            drop(deadpool::managed::Object::take(conn));
        }
    }
}

/// LISTENs for acknowledgements, forgets any buffered from earlier use of this
/// connection, and returns the auth listeners now listening.
async fn prepare(conn: &mut DbConn) -> diesel::QueryResult<HashSet<i32>> {
    crate::db::channels::AUTH_ACKS.listen().query().execute(&mut **conn).await?;
    drain(conn);
    listeners(conn).await
}

/// Stops listening and forgets whatever arrived meanwhile.
async fn finish(conn: &mut DbConn) -> diesel::QueryResult<()> {
    crate::db::channels::UNLISTEN_AUTH_ACKS.query().execute(&mut **conn).await?;
    drain(conn);
    Ok(())
}

fn drain(conn: &mut AsyncPgConnection) {
    let mut stream = std::pin::pin!(conn.notifications_stream());
    while let Some(Some(_)) = stream.next().now_or_never() {}
}

/// The backend pids of the listener sessions that acknowledge credential changes
/// (this release's and the previous release's auth listener) connected to this database.
async fn listeners(conn: &mut AsyncPgConnection) -> diesel::QueryResult<HashSet<i32>> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Integer)]
        pid: i32,
    }
    let rows: Vec<Row> = crate::db::listen::SESSIONS_NAMED
        .query()
        .bind::<diesel::sql_types::Array<diesel::sql_types::Text>, _>(&LISTENER_SESSION_NAMES_ACKING[..])
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(|r| r.pid).collect())
}

/// Waits until each of `waiting` acknowledged `payload` (or `*`) or is gone; how many
/// neither did within [`ACK_LIMIT`].
async fn wait(conn: &mut DbConn, mut waiting: HashSet<i32>, payload: &str) -> usize {
    let deadline = Instant::now() + ACK_LIMIT;
    while !waiting.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let next = {
            let mut stream = std::pin::pin!(conn.notifications_stream());
            tokio::time::timeout(left.min(RECHECK), stream.next()).await
        };
        match next {
            Ok(Some(Ok(ack))) => {
                if ack.channel == AUTH_ACKS_CHANNEL && (ack.payload == payload || ack.payload == "*") {
                    waiting.remove(&ack.process_id);
                }
            }
            // The connection is gone: nothing more will be heard on it.
            Ok(Some(Err(_)) | None) => break,
            Err(_) => match listeners(conn).await {
                Ok(now) => waiting.retain(|pid| now.contains(pid)),
                Err(_) => break,
            },
        }
    }
    waiting.len()
}
