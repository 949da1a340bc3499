//! One connection LISTENing on one channel, outside the pool (a pooled connection is
//! handed to other work between notifications and would miss them).

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;

/// Why a listener stopped: it must be connected again (notifications may have been
/// missed meanwhile).
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The connection could not be made.
    #[error("cannot connect: {0}")]
    Connect(#[from] diesel::ConnectionError),
    /// A statement failed, or the connection was lost.
    #[error("connection lost: {0}")]
    Lost(#[from] diesel::result::Error),
    /// The server closed the notification stream.
    #[error("notification stream ended")]
    Ended,
    /// The connection stopped answering.
    #[error("connection silent")]
    Silent,
}

/// A connection subscribed to one channel.
pub struct Listener {
    conn: AsyncPgConnection,
}

impl Listener {
    /// Connects to `database_url`, names the session `name` (what `pg_stat_activity`
    /// shows as its application) and LISTENs on `channel` (a fixed identifier, never
    /// user input: LISTEN takes no bind parameters).
    pub async fn connect(database_url: &str, name: &str, channel: &'static str) -> Result<Self, ListenError> {
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        diesel::sql_query("SELECT set_config('application_name', $1, false)")
            .bind::<diesel::sql_types::Text, _>(name)
            .execute(&mut conn)
            .await?;
        diesel::sql_query(format!("LISTEN {channel}")).execute(&mut conn).await?;
        Ok(Listener { conn })
    }

    /// The next notification's payload, or `None` when `idle` passed without one.
    pub async fn next(&mut self, idle: Duration) -> Result<Option<String>, ListenError> {
        let mut stream = std::pin::pin!(self.conn.notifications_stream());
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(Ok(notification))) => Ok(Some(notification.payload)),
            Ok(Some(Err(e))) => Err(ListenError::Lost(e)),
            Ok(None) => Err(ListenError::Ended),
            Err(_) => Ok(None),
        }
    }

    /// Notifies `channel` with `payload` from this connection: a listener hears its own
    /// notifications, so hearing it back proves the whole path (a dead TCP peer, or a
    /// pooler that dropped the LISTEN, is otherwise never noticed). Fails after `limit`.
    pub async fn ping(&mut self, channel: &'static str, payload: &str, limit: Duration) -> Result<(), ListenError> {
        let sent = diesel::sql_query("SELECT pg_notify($1, $2)")
            .bind::<diesel::sql_types::Text, _>(channel)
            .bind::<diesel::sql_types::Text, _>(payload)
            .execute(&mut self.conn);
        match tokio::time::timeout(limit, sent).await {
            Ok(done) => done.map(|_| ()).map_err(ListenError::Lost),
            Err(_) => Err(ListenError::Silent),
        }
    }
}
