//! The listener session's loop: connect, LISTEN on every subscribed channel, route each
//! notification to its channel's follower, prove the connection alive when it is quiet,
//! and connect again when it is lost — for every follower at once.

use std::sync::Arc;
use std::time::Duration;

use super::connection::{Channel, ListenError, Listener};
use crate::db::statement::statement;
use crate::metrics::Metrics;

/// The session's name in `pg_stat_activity` (what revocations look for, to wait for
/// each instance's acknowledgement).
pub const LISTENER_SESSION_NAME: &str = "switchboard listener";

/// Every session name that acknowledges credential changes: this release's one session,
/// and the auth listener of releases before it (one session per concern), which a
/// rolling upgrade runs beside this one for a while. A revocation waits for both.
pub const LISTENER_SESSION_NAMES_ACKING: [&str; 2] = [LISTENER_SESSION_NAME, "switchboard auth listener"];

statement! {
    static LISTEN_PINGS = "LISTEN switchboard_listeners";
}

/// Where listener sessions ping themselves (and hear every other instance's pings,
/// which prove the path as well as their own). Not a follower's channel: a ping never
/// reaches a follower.
const PINGS: Channel = Channel::new("switchboard_listeners", &LISTEN_PINGS);

/// What one channel's notifications keep current: a cache that forgets what a
/// notification names, waiters to wake, a worker to nudge.
pub trait Follower: Send + Sync {
    /// Whether notifications are being heard. Called with `false` before every connection
    /// attempt and when a connection is lost, and with `true` once LISTEN is in place;
    /// a follower forgets everything at both (changes made meanwhile were missed).
    fn set_current(&self, current: bool);

    /// One notification's payload.
    fn changed(&self, payload: &str);

    /// The channel on which to acknowledge each notification once [`Follower::changed`]
    /// has handled it (the same payload, from the listener's session), if any.
    fn acks(&self) -> Option<&'static str> {
        None
    }
}

/// One channel and the follower its notifications go to.
#[derive(Clone)]
pub struct ChannelSubscription {
    channel: Channel,
    /// The `listener` label of `switchboard_change_listener_listening` for this channel.
    gauge: &'static str,
    follower: Arc<dyn Follower>,
}

impl ChannelSubscription {
    /// `follower` hears `channel`; the listening gauge shows it as `gauge`.
    pub fn new(channel: Channel, gauge: &'static str, follower: impl Follower + 'static) -> ChannelSubscription {
        ChannelSubscription { channel, gauge, follower: Arc::new(follower) }
    }

    /// The channel.
    pub fn channel(&self) -> Channel {
        self.channel
    }
}

/// How long the session waits for a notification before it pings itself.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// How long a ping may take to come back before the connection counts as lost.
const PING_LIMIT: Duration = Duration::from_secs(5);

/// The payload of a session's own pings (never an id).
const PING: &str = "ping";

/// The wait before connecting again after a failure.
const RECONNECT_WAIT: Duration = Duration::from_secs(1);

/// Tells every follower (and the gauge, per channel) whether notifications are heard.
fn set_current(subscriptions: &[ChannelSubscription], metrics: &Metrics, now: bool) {
    for s in subscriptions {
        s.follower.set_current(now);
        metrics.listener_listening(s.gauge, now);
    }
}

/// Listens on every subscription's channel as the session `name` for as long as the
/// returned future is polled, passing every notification to its channel's follower and
/// telling each whether it is current; a lost connection is made again after
/// [`RECONNECT_WAIT`], for all of them together.
pub async fn follow(database_url: &str, name: &str, subscriptions: &[ChannelSubscription], metrics: &Metrics) {
    let mut channels: Vec<Channel> = subscriptions.iter().map(|s| s.channel).collect();
    channels.push(PINGS);
    loop {
        set_current(subscriptions, metrics, false);
        match Listener::connect(database_url, name, &channels).await {
            Ok(mut listener) => {
                // Listening from here on: what changed before is forgotten now.
                set_current(subscriptions, metrics, true);
                let lost = follow_connection(&mut listener, subscriptions).await;
                set_current(subscriptions, metrics, false);
                tracing::warn!(error = %lost, "listener session lost its connection; caches are off and waits fall back on polls until it is back");
            }
            Err(e) => tracing::warn!(error = %e, "listener session cannot connect; caches are off"),
        }
        tokio::time::sleep(RECONNECT_WAIT).await;
    }
}

/// Passes on every notification until the connection fails: after [`IDLE_CHECK`]
/// without one, the session pings itself and must hear a ping within [`PING_LIMIT`].
async fn follow_connection(listener: &mut Listener, subscriptions: &[ChannelSubscription]) -> ListenError {
    let mut ping_outstanding = false;
    loop {
        let wait = if ping_outstanding { PING_LIMIT } else { IDLE_CHECK };
        match listener.next(wait).await {
            Ok(Some(heard)) => {
                // Anything heard proves the path, as a ping would.
                ping_outstanding = false;
                let Some(s) = subscriptions.iter().find(|s| s.channel.name() == heard.channel) else {
                    continue;
                };
                s.follower.changed(&heard.payload);
                if let Some(acks) = s.follower.acks()
                    && let Err(e) = listener.ping(acks, &heard.payload, PING_LIMIT).await
                {
                    return e;
                }
            }
            Ok(None) if ping_outstanding => return ListenError::Silent,
            Ok(None) => {
                if let Err(e) = listener.ping(PINGS.name(), PING, PING_LIMIT).await {
                    return e;
                }
                ping_outstanding = true;
            }
            Err(e) => return e,
        }
    }
}

/// The instance's listener session, on a thread (arbiter) of its own so no request
/// handling or sweep delays an eviction: a revocation's NOTIFY reaches it at the
/// revoking commit. Stops when dropped, and then tells every follower it is no longer
/// current (nobody evicts any more: caches serve nothing).
pub struct ListenerSession {
    arbiter: Option<actix::Arbiter>,
    subscriptions: Vec<ChannelSubscription>,
    metrics: Metrics,
}

impl ListenerSession {
    /// Starts following `subscriptions` on one connection to `database_url`. Must run
    /// inside an actix system.
    pub fn start(database_url: &str, subscriptions: Vec<ChannelSubscription>, metrics: &Metrics) -> ListenerSession {
        let arbiter = actix::Arbiter::new();
        let (url, followed, m) = (database_url.to_owned(), subscriptions.clone(), metrics.clone());
        arbiter.spawn(async move { follow(&url, LISTENER_SESSION_NAME, &followed, &m).await });
        ListenerSession { arbiter: Some(arbiter), subscriptions, metrics: metrics.clone() }
    }
}

impl Drop for ListenerSession {
    fn drop(&mut self) {
        if let Some(arbiter) = self.arbiter.take() {
            arbiter.stop();
        }
        set_current(&self.subscriptions, &self.metrics, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pings_listen_on_their_own_channel() {
        assert_eq!(PINGS.listen().text(), format!("LISTEN {}", PINGS.name()));
    }

    #[test]
    fn revocations_wait_for_this_release_and_the_one_before() {
        assert!(LISTENER_SESSION_NAMES_ACKING.contains(&LISTENER_SESSION_NAME));
        assert!(LISTENER_SESSION_NAMES_ACKING.contains(&"switchboard auth listener"));
    }
}
