//! What reaches people: outbox rows' attempts at sinks, the outbox's depth and age, and
//! the digest scheduler's ticks.

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::Metrics;
use crate::sinks::rules::vocabulary::SinkEvent;

label_values! {
    /// What became of one outbox row's attempt at a sink.
    SinkOutcome {
        /// The sink took it.
        Sent => "sent",
        /// It went out inside a coalesced message.
        Coalesced => "coalesced",
        /// The attempt failed; another is scheduled.
        Retried => "retried",
        /// The sink's budget held it.
        Held => "held",
        /// Apprise reached only some targets, on the last try.
        Partial => "partial",
        /// No attempt will reach the sink.
        Undeliverable => "undeliverable",
    }
}

label_values_of!(SinkEvent);

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SinkLabels {
    event: SinkEvent,
    outcome: SinkOutcome,
}

/// The sink, outbox and digest families.
pub(super) struct SinkFamilies {
    deliveries: Family<SinkLabels, Counter>,
    outbox_depth: Gauge,
    outbox_oldest: Gauge<f64, AtomicU64>,
    outbox_read: Gauge,
    digest_ticks: Counter,
}

impl SinkFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = SinkFamilies {
            deliveries: Family::default(),
            outbox_depth: Gauge::default(),
            outbox_oldest: Gauge::default(),
            outbox_read: Gauge::default(),
            digest_ticks: Counter::default(),
        };
        registry.register(
            "switchboard_sink_deliveries",
            "Outbox rows' attempts at notification sinks, by event type and outcome",
            families.deliveries.clone(),
        );
        registry.register(
            "switchboard_outbox_depth",
            "Outbox rows not yet ended (pending or held by a budget) and dead letters not yet written for every sink, read at each scrape",
            families.outbox_depth.clone(),
        );
        registry.register(
            "switchboard_outbox_oldest_pending_seconds",
            "Age of the oldest pending outbox row or unsent dead letter (0 when none), read at each scrape",
            families.outbox_oldest.clone(),
        );
        registry.register(
            "switchboard_outbox_depth_read",
            "1 when this scrape read the outbox's depth and age; 0 when the database could not be read, and \
             switchboard_outbox_depth and switchboard_outbox_oldest_pending_seconds then hold their last reading (the scrape itself still answers, with every other family)",
            families.outbox_read.clone(),
        );
        registry.register(
            "switchboard_digest_scheduler_ticks",
            "Digest scheduler ticks this instance finished, whatever they decided (a scheduler that stopped \
             ticking stops counting)",
            families.digest_ticks.clone(),
        );
        for &event in SinkEvent::ALL {
            for &outcome in SinkOutcome::ALL {
                drop(families.deliveries.get_or_create(&SinkLabels { event, outcome }));
            }
        }
        families
    }
}

impl Metrics {
    /// Counts an outbox row's attempt at a sink.
    pub fn sink_send(&self, event: SinkEvent, outcome: SinkOutcome) {
        self.inner.sinks.deliveries.get_or_create(&SinkLabels { event, outcome }).inc();
    }

    /// Sets the outbox gauges (rows not yet ended; the oldest pending row's age).
    pub fn set_outbox(&self, depth: i64, oldest_pending_seconds: f64) {
        self.inner.sinks.outbox_depth.set(depth);
        self.inner.sinks.outbox_oldest.set(oldest_pending_seconds);
        self.inner.sinks.outbox_read.set(1);
    }

    /// Records that this scrape could not read the outbox: its gauges keep their last
    /// reading, `switchboard_outbox_depth_read` says so.
    pub fn outbox_unread(&self) {
        self.inner.sinks.outbox_read.set(0);
    }

    /// Counts one finished digest scheduler tick.
    pub fn digest_tick(&self) {
        self.inner.sinks.digest_ticks.inc();
    }
}
