//! Claims: those an admission budget refused, and long-poll `claim-next` requests
//! (held, woken, answered empty).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::Metrics;
use crate::domain::admission::Deferral;

label_values! {
    /// Why a long-poll `claim-next` answered without a claim.
    EmptyWait {
        /// Its `wait_seconds` passed with nothing it could claim.
        TimedOut => "timed_out",
        /// The instance already held its most waiting requests: answered at once.
        Full => "full",
        /// The server was stopping.
        Shutdown => "shutdown",
        /// Its owner scope already held its fair share of the waiting requests: answered
        /// at once.
        ScopeShare => "scope_share",
    }
}

label_values_of!(Deferral);

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DeferredLabels {
    reason: Deferral,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct EmptyWaitLabels {
    reason: EmptyWait,
}

/// The claim families.
pub(super) struct ClaimFamilies {
    deferred: Family<DeferredLabels, Counter>,
    long_poll_waiters: Gauge,
    long_poll_wakeups: Counter,
    long_poll_empty: Family<EmptyWaitLabels, Counter>,
}

impl ClaimFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = ClaimFamilies {
            deferred: Family::default(),
            long_poll_waiters: Gauge::default(),
            long_poll_wakeups: Counter::default(),
            long_poll_empty: Family::default(),
        };
        registry.register(
            "switchboard_claims_deferred",
            "Claims (and resumes of interrupted todos) an admission budget refused (the queue paused, its \
             in-flight cap reached, its hourly window spent), by reason",
            families.deferred.clone(),
        );
        registry.register(
            "switchboard_long_poll_waiters",
            "claim-next requests held waiting for work (wait_seconds) on this instance, past their first empty claim",
            families.long_poll_waiters.clone(),
        );
        registry.register(
            "switchboard_long_poll_wakeups",
            "Times a waiting claim-next request was woken to claim again (work arrived on its queues, or the \
             claim listener reconnected)",
            families.long_poll_wakeups.clone(),
        );
        registry.register(
            "switchboard_long_poll_empty",
            "Long-poll claim-next requests (wait_seconds above 0) answered without a claim, by why",
            families.long_poll_empty.clone(),
        );
        for &reason in Deferral::ALL {
            drop(families.deferred.get_or_create(&DeferredLabels { reason }));
        }
        for &reason in EmptyWait::ALL {
            drop(families.long_poll_empty.get_or_create(&EmptyWaitLabels { reason }));
        }
        families
    }
}

impl Metrics {
    /// Counts a claim (or a resume) an admission budget refused.
    pub fn claim_deferred(&self, reason: Deferral) {
        self.inner.claims.deferred.get_or_create(&DeferredLabels { reason }).inc();
    }

    /// Sets how many claim-next requests are held waiting.
    pub fn set_long_poll_waiters(&self, held: usize) {
        self.inner.claims.long_poll_waiters.set(i64::try_from(held).unwrap_or(i64::MAX));
    }

    /// Counts a waiting claim-next request woken to claim again.
    pub fn long_poll_wakeup(&self) {
        self.inner.claims.long_poll_wakeups.inc();
    }

    /// Counts a long-poll claim-next answered without a claim.
    pub fn long_poll_empty(&self, reason: EmptyWait) {
        self.inner.claims.long_poll_empty.get_or_create(&EmptyWaitLabels { reason }).inc();
    }
}
