//! Outbound targets the SSRF guard refused, by cause.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;
use crate::outbound::refusal::REFUSAL_REASONS;

/// The `reason` of an outbound refusal: one of
/// [`crate::outbound::refusal::REFUSAL_REASONS`].
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusedLabels {
    reason: &'static str,
}

/// The outbound family.
pub(super) struct OutboundFamilies {
    refused: Family<RefusedLabels, Counter>,
}

impl OutboundFamilies {
    /// Registers it in `registry`, every reason at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = OutboundFamilies { refused: Family::default() };
        registry.register(
            "switchboard_outbound_refused",
            "Outbound targets the SSRF guard refused, when saved or tested and at dial time, by cause (an \
             address class, own_address, unresolved, dns_timeout, or a rule of the URL's own text); callers are \
             told only forbidden_target for every cause that depends on where a name points",
            families.refused.clone(),
        );
        for &reason in REFUSAL_REASONS {
            drop(families.refused.get_or_create(&RefusedLabels { reason }));
        }
        families
    }
}

impl Metrics {
    /// Counts an outbound target the guard refused, by its cause: a
    /// [`crate::outbound::refusal::REFUSAL_REASONS`] entry (the family's series stay
    /// that fixed set; the guard gives no other reason, which its tests pin).
    pub fn outbound_refused(&self, reason: &'static str) {
        if REFUSAL_REASONS.contains(&reason) {
            self.inner.outbound.refused.get_or_create(&RefusedLabels { reason }).inc();
        }
    }
}
