//! Notify hooks: rings by type and outcome, delivery attempts, hooks switched
//! off, change notices applied to the hook cache, rings under way.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::Metrics;
use crate::hooks::rules::body::HookEvent;
use crate::hooks::rules::hook::HookDisabledReason;
use crate::hooks::rules::retry::AttemptResult;

label_values! {
    /// What became of one notification to one hook.
    RingOutcome {
        /// A 2xx answer.
        Delivered => "delivered",
        /// Every attempt failed, or a failure was not retryable.
        Failed => "failed",
        /// Never attempted: over the hook's rate or the dispatcher's capacity.
        Dropped => "dropped",
    }
}

label_values_of!(HookEvent, AttemptResult, HookDisabledReason);

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RingLabels {
    r#type: HookEvent,
    outcome: RingOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct AttemptLabels {
    result: AttemptResult,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DisabledLabels {
    reason: HookDisabledReason,
}

/// The notify-hook families.
pub(super) struct HookFamilies {
    rings: Family<RingLabels, Counter>,
    attempts: Family<AttemptLabels, Counter>,
    disabled: Family<DisabledLabels, Counter>,
    change_notices: Counter,
    in_flight: Gauge,
}

impl HookFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = HookFamilies {
            rings: Family::default(),
            attempts: Family::default(),
            disabled: Family::default(),
            change_notices: Counter::default(),
            in_flight: Gauge::default(),
        };
        // The registry appends `_total` to counter names.
        registry.register(
            "switchboard_notify_hook_notifications",
            "Notifications to notify hooks, by event type and outcome",
            families.rings.clone(),
        );
        registry.register(
            "switchboard_notify_hook_attempts",
            "Notify-hook delivery attempts, by result",
            families.attempts.clone(),
        );
        registry.register(
            "switchboard_notify_hooks_disabled",
            "Notify hooks switched off by Switchboard, by reason",
            families.disabled.clone(),
        );
        registry.register(
            "switchboard_notify_hook_change_notices",
            "Hook change notices from the database (NOTIFY) applied to this instance's hook cache",
            families.change_notices.clone(),
        );
        registry.register(
            "switchboard_notify_hook_notifications_in_flight",
            "Notifications to hooks not yet ended: waiting for their hook lookup, queued at their \
             endpoint's supervisor, or being delivered",
            families.in_flight.clone(),
        );
        for &event in HookEvent::ALL {
            for &outcome in RingOutcome::ALL {
                drop(families.rings.get_or_create(&RingLabels { r#type: event, outcome }));
            }
        }
        for &result in AttemptResult::ALL {
            drop(families.attempts.get_or_create(&AttemptLabels { result }));
        }
        for &reason in HookDisabledReason::ALL {
            drop(families.disabled.get_or_create(&DisabledLabels { reason }));
        }
        families
    }
}

impl Metrics {
    /// Counts one notification's fate.
    pub fn ring(&self, event: HookEvent, outcome: RingOutcome) {
        self.inner.hooks.rings.get_or_create(&RingLabels { r#type: event, outcome }).inc();
    }

    /// Counts one delivery attempt.
    pub fn attempt(&self, result: AttemptResult) {
        self.inner.hooks.attempts.get_or_create(&AttemptLabels { result }).inc();
    }

    /// Counts a hook Switchboard switched off.
    pub fn hook_disabled(&self, reason: HookDisabledReason) {
        self.inner.hooks.disabled.get_or_create(&DisabledLabels { reason }).inc();
    }

    /// Counts a hook change notice the listener applied to the cache.
    pub fn hook_change_notice(&self) {
        self.inner.hooks.change_notices.inc();
    }

    /// Counts one notification as under way for as long as the returned token, or a
    /// clone of it, exists.
    pub fn ring_in_flight(&self) -> InFlight {
        self.inner.hooks.in_flight.inc();
        InFlight(self.inner.hooks.in_flight.clone())
    }
}

/// One notification under way (see [`Metrics::ring_in_flight`]): each clone
/// counts once more, and each drop once less, however the notification ends (delivered,
/// dropped, refused by a full mailbox, or lost with a panicking actor).
#[derive(Debug)]
pub struct InFlight(Gauge);

impl Clone for InFlight {
    fn clone(&self) -> Self {
        self.0.inc();
        InFlight(self.0.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}
