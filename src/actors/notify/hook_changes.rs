//! Keeps the dispatcher's [`HookCache`] coherent across instances: LISTENs on the
//! channel the database's triggers NOTIFY (migration `hook_change_notify`) and evicts
//! the endpoint each notification names. While disconnected the cache is switched off
//! (every dispatch reads the database) and the connection is retried.

use std::time::Duration;

use super::HookCache;
use crate::db::listen::Listener;
use crate::domain::ids::EndpointId;

/// The channel the triggers notify; its payload is an endpoint id.
pub const HOOK_CHANGES_CHANNEL: &str = "switchboard_hooks";

/// How long the listener waits for a notification before it checks the connection.
const IDLE_CHECK: Duration = Duration::from_secs(10);

/// The wait before connecting again after a failure.
const RECONNECT_WAIT: Duration = Duration::from_secs(1);

/// Follows hook changes for as long as the returned future is polled (the dispatcher
/// spawns it, so it ends with the dispatcher).
pub async fn follow(database_url: String, cache: HookCache) {
    loop {
        cache.set_coherent(false);
        match Listener::connect(&database_url, HOOK_CHANGES_CHANNEL).await {
            Ok(mut listener) => {
                // Listening from here on: what changed before was forgotten just now.
                cache.set_coherent(true);
                let lost = loop {
                    match listener.next(IDLE_CHECK).await {
                        Ok(Some(payload)) => evict(&cache, &payload),
                        Ok(None) => {}
                        Err(e) => break e,
                    }
                };
                cache.set_coherent(false);
                tracing::warn!(error = %lost, "hook change listener lost its connection; cache off until it is back");
            }
            Err(e) => tracing::warn!(error = %e, "hook change listener cannot connect; cache off"),
        }
        actix_rt::time::sleep(RECONNECT_WAIT).await;
    }
}

/// Evicts the endpoint `payload` names; anything unreadable clears the whole cache.
fn evict(cache: &HookCache, payload: &str) {
    match payload.parse::<uuid::Uuid>() {
        Ok(id) => cache.evict(EndpointId(id)),
        Err(_) => cache.clear(),
    }
}
