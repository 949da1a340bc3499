//! One connection LISTENing on a set of channels, outside the pool (a pooled connection
//! is handed to other work between notifications and would miss them).

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;

use crate::db::statement::{Statement, statement};

/// A notification channel: its name, and the registered statement that LISTENs on it
/// (LISTEN takes no bind parameters). The channels are [`super::channels`].
#[derive(Debug, Clone, Copy)]
pub struct Channel {
    name: &'static str,
    listen: &'static Statement,
}

impl Channel {
    /// The channel `name`, listened on by `listen` (`LISTEN <name>`).
    pub const fn new(name: &'static str, listen: &'static Statement) -> Channel {
        Channel { name, listen }
    }

    /// The channel's name (what `pg_notify` takes).
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The statement that listens on it.
    pub fn listen(&self) -> &'static Statement {
        self.listen
    }
}

statement! {
    /// Names the session (`$1`, what `pg_stat_activity` shows as its application).
    static NAME_SESSION = "SELECT set_config('application_name', $1, false)";
    /// Notifies channel `$1` with payload `$2`.
    static NOTIFY = "SELECT pg_notify($1, $2)";
    /// The backend pids of the sessions named any of `$1` (listener sessions name
    /// themselves) connected to this database.
    pub static SESSIONS_NAMED =
        "SELECT pid FROM pg_stat_activity WHERE application_name = ANY($1) AND datname = current_database()";
}

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

/// A connection subscribed to a set of channels.
pub struct Listener {
    conn: AsyncPgConnection,
}

/// One notification: the channel it came on and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heard {
    /// The channel's name.
    pub channel: String,
    /// What the notifier sent (an id, `*`, a ping).
    pub payload: String,
}

impl Listener {
    /// Connects to `database_url`, LISTENs on every one of `channels`, then names the
    /// session `name` (what `pg_stat_activity` shows as its application).
    pub async fn connect(database_url: &str, name: &str, channels: &[Channel]) -> Result<Self, ListenError> {
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        for channel in channels {
            channel.listen().query().execute(&mut conn).await?;
        }
        // Named only once it listens: a session of that name hears every change from then
        // on (a change waiting for the listeners' acknowledgements relies on it).
        NAME_SESSION.query().bind::<diesel::sql_types::Text, _>(name).execute(&mut conn).await?;
        Ok(Listener { conn })
    }

    /// The next notification, or `None` when `idle` passed without one.
    pub async fn next(&mut self, idle: Duration) -> Result<Option<Heard>, ListenError> {
        let mut stream = std::pin::pin!(self.conn.notifications_stream());
        match tokio::time::timeout(idle, stream.next()).await {
            Ok(Some(Ok(n))) => Ok(Some(Heard { channel: n.channel, payload: n.payload })),
            Ok(Some(Err(e))) => Err(ListenError::Lost(e)),
            Ok(None) => Err(ListenError::Ended),
            Err(_) => Ok(None),
        }
    }

    /// Notifies `channel` with `payload` from this connection (a ping, or an
    /// acknowledgement on another channel): a listener hears its own
    /// notifications, so hearing it back proves the whole path (a dead TCP peer, or a
    /// pooler that dropped the LISTEN, is otherwise never noticed). Fails after `limit`.
    pub async fn ping(&mut self, channel: &'static str, payload: &str, limit: Duration) -> Result<(), ListenError> {
        let sent = NOTIFY
            .query()
            .bind::<diesel::sql_types::Text, _>(channel)
            .bind::<diesel::sql_types::Text, _>(payload)
            .execute(&mut self.conn);
        match tokio::time::timeout(limit, sent).await {
            Ok(done) => done.map(|_| ()).map_err(ListenError::Lost),
            Err(_) => Err(ListenError::Silent),
        }
    }
}
