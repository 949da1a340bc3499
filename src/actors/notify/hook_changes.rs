//! Keeps the dispatcher's [`HookCache`] coherent across instances: LISTENs on the
//! channel the database's triggers NOTIFY (migration `hook_change_notify`) and evicts
//! the endpoint each notification names. While disconnected the cache is switched off
//! (every dispatch reads the database) and the connection is retried.

use std::time::Duration;

use super::HookCache;
use crate::db::listen::{ListenError, Listener};
use crate::domain::ids::EndpointId;
use crate::metrics::Metrics;

/// The channel the triggers notify; its payload is an endpoint id.
pub const HOOK_CHANGES_CHANNEL: &str = "switchboard_hooks";

/// The listener's session name in `pg_stat_activity`.
pub const HOOK_LISTENER_NAME: &str = "switchboard hook listener";

/// How long the listener waits for a notification before it pings itself.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// How long a ping may take to come back before the connection counts as lost.
const PING_LIMIT: Duration = Duration::from_secs(5);

/// The payload of the listener's own pings (never an endpoint id).
const PING: &str = "ping";

/// The wait before connecting again after a failure.
const RECONNECT_WAIT: Duration = Duration::from_secs(1);

/// Follows hook changes for as long as the returned future is polled (the dispatcher
/// spawns it as a task of its own on its arbiter, so a burst in the dispatcher's
/// mailbox does not hold evictions back, and aborts it when it stops).
pub async fn follow(database_url: String, cache: HookCache, metrics: Metrics) {
    loop {
        cache.set_coherent(false);
        match Listener::connect(&database_url, HOOK_LISTENER_NAME, HOOK_CHANGES_CHANNEL).await {
            Ok(mut listener) => {
                // Listening from here on: what changed before was forgotten just now.
                cache.set_coherent(true);
                let lost = follow_connection(&mut listener, &cache, &metrics).await;
                cache.set_coherent(false);
                tracing::warn!(error = %lost, "hook change listener lost its connection; cache off until it is back");
            }
            Err(e) => tracing::warn!(error = %e, "hook change listener cannot connect; cache off"),
        }
        actix_rt::time::sleep(RECONNECT_WAIT).await;
    }
}

/// Evicts on every notification until the connection fails: after [`IDLE_CHECK`]
/// without one, the listener pings itself and must hear the ping within [`PING_LIMIT`].
async fn follow_connection(listener: &mut Listener, cache: &HookCache, metrics: &Metrics) -> ListenError {
    let mut ping_outstanding = false;
    loop {
        let wait = if ping_outstanding { PING_LIMIT } else { IDLE_CHECK };
        match listener.next(wait).await {
            Ok(Some(payload)) if payload == PING => ping_outstanding = false,
            Ok(Some(payload)) => {
                evict(cache, &payload);
                metrics.hook_change_notice();
            }
            Ok(None) if ping_outstanding => return ListenError::Silent,
            Ok(None) => {
                if let Err(e) = listener.ping(HOOK_CHANGES_CHANNEL, PING, PING_LIMIT).await {
                    return e;
                }
                ping_outstanding = true;
            }
            Err(e) => return e,
        }
    }
}

/// Evicts the endpoint `payload` names; anything unreadable clears the whole cache.
fn evict(cache: &HookCache, payload: &str) {
    match payload.parse::<uuid::Uuid>() {
        Ok(id) => cache.evict(EndpointId(id)),
        Err(_) => cache.clear(),
    }
}
