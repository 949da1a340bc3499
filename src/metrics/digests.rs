//! Digest runs: what came of each send time this instance decided, and of each Cairn
//! publication it finished.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

label_values! {
    /// What came of one digest send time (or its Cairn publication).
    DigestRun {
        /// Queued for the digest's sinks.
        Sent => "sent",
        /// Published to Cairn, and the sinks told with its link.
        Published => "published",
        /// Not published to Cairn (the call failed, the connection is gone or
        /// unbound); the sinks got the full text with the failure noted.
        PublishFailed => "publish_failed",
        /// Quiet, and the digest skips quiet ones.
        SkippedQuiet => "skipped_quiet",
        /// Missed by an hour or more while every instance was down.
        SkippedLate => "skipped_late",
        /// Not decided for an error (the database, a section's query), or a tick that
        /// could not read what was due: tried again next tick, and counted again if it
        /// fails again; or put off a day because its stored schedule no longer parses.
        Failed => "failed",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RunLabels {
    outcome: DigestRun,
}

/// The digest-run family.
pub(super) struct DigestFamilies {
    runs: Family<RunLabels, Counter>,
}

impl DigestFamilies {
    /// Registers it in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = DigestFamilies { runs: Family::default() };
        registry.register(
            "switchboard_digest_runs",
            "Digest send times by outcome, each counted once fleet-wide by the instance that committed it \
             (sent, skipped_quiet, skipped_late; published or publish_failed by the instance that finished \
             its Cairn publication), and failed for each try an instance could not decide and each tick that \
             could not read what was due (both tried again next tick)",
            families.runs.clone(),
        );
        for &outcome in DigestRun::ALL {
            drop(families.runs.get_or_create(&RunLabels { outcome }));
        }
        families
    }
}

impl Metrics {
    /// Counts `n` digest send times with `outcome`.
    pub fn digest_runs(&self, outcome: DigestRun, n: u64) {
        self.inner.digests.runs.get_or_create(&RunLabels { outcome }).inc_by(n);
    }
}
