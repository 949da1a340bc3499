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
}

/// A connection subscribed to one channel.
pub struct Listener {
    conn: AsyncPgConnection,
}

impl Listener {
    /// Connects to `database_url` and LISTENs on `channel` (a fixed identifier, never
    /// user input: LISTEN takes no bind parameters).
    pub async fn connect(database_url: &str, channel: &'static str) -> Result<Self, ListenError> {
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        diesel::sql_query(format!("LISTEN {channel}")).execute(&mut conn).await?;
        Ok(Listener { conn })
    }

    /// The next notification's payload, or `None` when `idle` passed without one and
    /// the connection still answers (a dead TCP peer is otherwise never noticed).
    pub async fn next(&mut self, idle: Duration) -> Result<Option<String>, ListenError> {
        let next = {
            let mut stream = std::pin::pin!(self.conn.notifications_stream());
            tokio::time::timeout(idle, stream.next()).await
        };
        match next {
            Ok(Some(Ok(notification))) => Ok(Some(notification.payload)),
            Ok(Some(Err(e))) => Err(ListenError::Lost(e)),
            Ok(None) => Err(ListenError::Ended),
            Err(_) => {
                diesel::sql_query("SELECT 1").execute(&mut self.conn).await?;
                Ok(None)
            }
        }
    }
}
