//! Dead letters: how many were decided, by reason, and how many reached no one (no hook
//! and no sink told of them).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;
use crate::domain::todo_state::DeadReason;

label_values_of!(DeadReason);

label_values! {
    /// Why a dead letter reached no one.
    Unreached {
        /// No hook rang for it (none matched, or its todo may ring none) and no sink was
        /// subscribed to it.
        NoSubscriber => "no_subscriber",
        /// A hook or a sink was subscribed, and every ring failed (or was dropped) and
        /// every sink's message ended undeliverable.
        AllFailed => "all_failed",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabels {
    reason: DeadReason,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct UnreachedLabels {
    why: Unreached,
}

/// The dead-letter families.
pub(super) struct DeadLetterFamilies {
    decided: Family<ReasonLabels, Counter>,
    unreached: Family<UnreachedLabels, Counter>,
}

impl DeadLetterFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = DeadLetterFamilies { decided: Family::default(), unreached: Family::default() };
        registry.register(
            "switchboard_dead_letters",
            "Todos that became dead letters, by reason, counted once each by the instance whose commit decided \
             it (an agent's or operator's fail, a lease or interrupt reaper, an endpoint's revocation or expiry)",
            families.decided.clone(),
        );
        registry.register(
            "switchboard_dead_letters_unreached",
            "Dead letters that reached no one: no hook delivery succeeded and no sink was told (sent, \
             coalesced or partly sent). Counted once each, by the instance whose commit decided it, when both \
             sides have ended: its hooks' rings (in memory: this instance rang them) and then every sink's \
             outbox row (read in the database, whichever instance sent them). why=no_subscriber: no hook \
             matched it (or its todo may ring none) and no sink was subscribed; why=all_failed: something \
             was subscribed and every ring and every sink message failed. Not counted: a revocation's or \
             expiry's dead letters (told once per cascade), one whose signal was dropped \
             (switchboard_signals_dropped_total), one whose instance stopped first, one whose sink rows \
             stayed open (held by a budget or an unbound connection) for a day",
            families.unreached.clone(),
        );
        for &reason in DeadReason::ALL {
            drop(families.decided.get_or_create(&ReasonLabels { reason }));
        }
        for &why in Unreached::ALL {
            drop(families.unreached.get_or_create(&UnreachedLabels { why }));
        }
        families
    }
}

impl Metrics {
    /// Counts `todos` dead letters of `reason` this instance's commit decided.
    pub fn dead_lettered(&self, reason: DeadReason, todos: u64) {
        self.inner.dead_letters.decided.get_or_create(&ReasonLabels { reason }).inc_by(todos);
    }

    /// Counts a dead letter that reached no one.
    pub fn dead_letter_unreached(&self, why: Unreached) {
        self.inner.dead_letters.unreached.get_or_create(&UnreachedLabels { why }).inc();
    }
}
