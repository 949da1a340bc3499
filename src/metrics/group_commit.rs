//! Single agent requests committed as a group (`service::group_commit`): runs, the requests
//! they answered, those waiting, those given back to run alone.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::Metrics;

label_values! {
    /// A single agent verb whose concurrent requests are committed as a group (`service::group_commit`).
    GroupCommitVerb {
        /// `claim-next` without a `limit` above 1.
        ClaimNext => "claim_next",
        /// `POST /api/v1/agent/todos/{id}/complete`.
        Complete => "complete",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct GroupCommitLabels {
    verb: GroupCommitVerb,
}

/// The group-commit families.
pub(super) struct GroupCommitFamilies {
    runs: Family<GroupCommitLabels, Counter>,
    requests: Family<GroupCommitLabels, Counter>,
    waiting: Family<GroupCommitLabels, Gauge>,
    alone: Family<GroupCommitLabels, Counter>,
}

impl GroupCommitFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = GroupCommitFamilies {
            runs: Family::default(),
            requests: Family::default(),
            waiting: Family::default(),
            alone: Family::default(),
        };
        registry.register(
            "switchboard_coalesced_runs",
            "Statements (claims) or transactions (completions) that answered single agent requests, by verb; a \
             run answers one request, or several that arrived while the verb's earlier runs were at the database",
            families.runs.clone(),
        );
        registry.register(
            "switchboard_coalesced_requests",
            "Single agent requests answered by those runs, by verb (requests / runs is the mean batch)",
            families.requests.clone(),
        );
        registry.register(
            "switchboard_coalesce_waiting",
            "Single agent requests waiting for their verb's earlier runs to leave the database, by verb (they go \
             in the next run)",
            families.waiting.clone(),
        );
        registry.register(
            "switchboard_coalesced_alone",
            "Single agent requests a run gave back to run on their own, by verb: claims on a budgeted queue, \
             completions its statement did not complete (refusals, misses, attempts an earlier release opened), \
             and every request of a run that failed",
            families.alone.clone(),
        );
        for &verb in GroupCommitVerb::ALL {
            let labels = GroupCommitLabels { verb };
            drop(families.alone.get_or_create(&labels));
            drop(families.runs.get_or_create(&labels));
            drop(families.requests.get_or_create(&labels));
            drop(families.waiting.get_or_create(&labels));
        }
        families
    }
}

impl Metrics {
    /// Counts one group commit of single requests that answered `n` of them.
    pub fn group_commit_run(&self, verb: GroupCommitVerb, n: usize) {
        let labels = GroupCommitLabels { verb };
        self.inner.group_commit.runs.get_or_create(&labels).inc();
        self.inner.group_commit.requests.get_or_create(&labels).inc_by(n as u64);
    }

    /// Counts `n` requests of `verb` a run gave back to run on their own.
    pub fn group_commit_alone(&self, verb: GroupCommitVerb, n: usize) {
        if n > 0 {
            self.inner.group_commit.alone.get_or_create(&GroupCommitLabels { verb }).inc_by(n as u64);
        }
    }

    /// How many single requests of `verb` wait for a run now.
    pub fn group_commit_waiting(&self, verb: GroupCommitVerb, n: usize) {
        self.inner.group_commit.waiting.get_or_create(&GroupCommitLabels { verb }).set(n as i64);
    }
}
