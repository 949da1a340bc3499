//! One connection LISTENing on one channel, outside the pool (a pooled connection is
//! handed to other work between notifications and would miss them).

use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use futures_util::StreamExt;

use super::statement::{Statement, statement};
use crate::metrics::Metrics;

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
    /// The backend pids of the sessions named `$1` (listeners name their sessions)
    /// connected to this database.
    pub static SESSIONS_NAMED =
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()";
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

/// A connection subscribed to one channel.
pub struct Listener {
    conn: AsyncPgConnection,
}

impl Listener {
    /// Connects to `database_url`, names the session `name` (what `pg_stat_activity`
    /// shows as its application) and LISTENs on `channel`.
    pub async fn connect(database_url: &str, name: &str, channel: Channel) -> Result<Self, ListenError> {
        let mut conn = AsyncPgConnection::establish(database_url).await?;
        channel.listen().query().execute(&mut conn).await?;
        // Named only once it listens: a session of that name hears every change from then
        // on (a change waiting for the listeners' acknowledgements relies on it).
        NAME_SESSION.query().bind::<diesel::sql_types::Text, _>(name).execute(&mut conn).await?;
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

/// What a change listener keeps current: a cache that forgets what a notification names.
pub trait Follower {
    /// Whether notifications are being heard. Called with `false` before every connection
    /// attempt and when a connection is lost, and with `true` once LISTEN is in place;
    /// a follower forgets everything at both (changes made meanwhile were missed).
    fn set_current(&self, current: bool);

    /// One notification's payload (never the listener's own ping).
    fn changed(&self, payload: &str);

    /// The channel on which to acknowledge each notification once [`Follower::changed`]
    /// has handled it (the same payload, from the listener's session), if any.
    fn acks(&self) -> Option<&'static str> {
        None
    }
}

/// How long a follower waits for a notification before it pings itself.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// How long a ping may take to come back before the connection counts as lost.
const PING_LIMIT: Duration = Duration::from_secs(5);

/// The payload of a follower's own pings (never an id).
const PING: &str = "ping";

/// The wait before connecting again after a failure.
const RECONNECT_WAIT: Duration = Duration::from_secs(1);

/// Listens on `channel` as the session `name` for as long as the returned future is
/// polled, passing every notification to `follower` and telling it whether it is current
/// (and `metrics`, per session name); a lost connection is made again after
/// [`RECONNECT_WAIT`].
pub async fn follow(
    database_url: &str,
    name: &'static str,
    channel: Channel,
    follower: &impl Follower,
    metrics: &Metrics,
) {
    let current = |now: bool| {
        follower.set_current(now);
        metrics.listener_listening(name, now);
    };
    loop {
        current(false);
        match Listener::connect(database_url, name, channel).await {
            Ok(mut listener) => {
                // Listening from here on: what changed before is forgotten now.
                current(true);
                let lost = follow_connection(&mut listener, channel, follower).await;
                current(false);
                tracing::warn!(listener = name, error = %lost, "change listener lost its connection; its cache is off until it is back");
            }
            Err(e) => tracing::warn!(listener = name, error = %e, "change listener cannot connect; its cache is off"),
        }
        tokio::time::sleep(RECONNECT_WAIT).await;
    }
}

/// Passes on every notification until the connection fails: after [`IDLE_CHECK`]
/// without one, the listener pings itself and must hear a ping within [`PING_LIMIT`].
async fn follow_connection(listener: &mut Listener, channel: Channel, follower: &impl Follower) -> ListenError {
    let mut ping_outstanding = false;
    loop {
        let wait = if ping_outstanding { PING_LIMIT } else { IDLE_CHECK };
        match listener.next(wait).await {
            // Another instance's ping proves the path as well as our own.
            Ok(Some(payload)) if payload == PING => ping_outstanding = false,
            Ok(Some(payload)) => {
                follower.changed(&payload);
                if let Some(acks) = follower.acks()
                    && let Err(e) = listener.ping(acks, &payload, PING_LIMIT).await
                {
                    return e;
                }
            }
            Ok(None) if ping_outstanding => return ListenError::Silent,
            Ok(None) => {
                if let Err(e) = listener.ping(channel.name(), PING, PING_LIMIT).await {
                    return e;
                }
                ping_outstanding = true;
            }
            Err(e) => return e,
        }
    }
}
