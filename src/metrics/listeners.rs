//! The listener session (the one LISTEN connection that keeps caches and waiters
//! coherent): whether it is listening, per channel it follows.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::Metrics;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ListenerLabels {
    listener: &'static str,
}

/// The change-listener family (a series per listener, made as each first reports).
pub(super) struct ListenerFamilies {
    listening: Family<ListenerLabels, Gauge>,
}

impl ListenerFamilies {
    /// Registers it in `registry`.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = ListenerFamilies { listening: Family::default() };
        registry.register(
            "switchboard_change_listener_listening",
            "1 while this instance's listener session (one LISTEN connection per instance) is \
             listening on the channel named by `listener` (auth, claims, hooks, outbox), 0 while it is \
             away: what that channel keeps coherent is off meanwhile (the auth and hook caches ask the \
             database, waiting claims and the outbox fall back on their polls)",
            families.listening.clone(),
        );
        families
    }
}

impl Metrics {
    /// Records whether the listener session is listening on the channel `listener`.
    pub fn listener_listening(&self, listener: &'static str, listening: bool) {
        self.inner.listeners.listening.get_or_create(&ListenerLabels { listener }).set(i64::from(listening));
    }
}
