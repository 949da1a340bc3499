//! The instance's one listener session: a connection outside the pool (a pooled
//! connection is handed to other work between notifications and would miss them) that
//! LISTENs on every channel this instance follows — credential changes, claim wake-ups,
//! hook changes, outbox wake-ups — and hands each notification to that channel's
//! [`Follower`]. One session per instance, not one per concern: ten replicas hold ten
//! listening connections, not forty, and every follower is current, or not, together.
//!
//! - `connection`: one connection listening on a set of channels, and its pings;
//! - `session`: the loop that keeps it connected and routes notifications, and
//!   [`ListenerSession`], which runs that loop on a thread of its own.

mod connection;
mod session;

pub use connection::{Channel, Heard, ListenError, Listener, SESSIONS_NAMED};
pub use session::{
    ChannelSubscription, Follower, LISTENER_SESSION_NAME, LISTENER_SESSION_NAMES_ACKING, ListenerSession, follow,
};
