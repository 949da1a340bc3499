//! Agent batch requests (claim-next with a limit above 1, batch complete, fail and
//! create): each request as a whole, and each item.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

label_values! {
    /// An agent verb that takes a batch.
    BatchVerb {
        /// `claim-next` with a `limit` above 1.
        ClaimNext => "claim_next",
        /// `POST /api/v1/agent/todos/complete`.
        Complete => "complete",
        /// `POST /api/v1/agent/todos/fail`.
        Fail => "fail",
        /// `POST /api/v1/agent/todos/batch`.
        CreateTodo => "create_todo",
    }
}

label_values! {
    /// What became of one batch request as a whole.
    BatchCallOutcome {
        /// Answered (each item with its own answer).
        Answered => "answered",
        /// Refused as a whole (its grant, its size, a malformed item, the database).
        Refused => "refused",
    }
}

label_values! {
    /// What one item of a batch came to: done, or the error code the single verb gives.
    BatchItemOutcome {
        /// Done as asked (a todo claimed, completed, failed or created, or an
        /// idempotency key's live todo returned).
        Ok => "ok",
        /// `not_found`.
        NotFound => "not_found",
        /// `conflict`.
        Conflict => "conflict",
        /// `invalid_argument`.
        InvalidArgument => "invalid_argument",
        /// Any other error code.
        Other => "other",
    }
}

impl BatchItemOutcome {
    /// The outcome an item's error code stands for.
    pub fn of_code(code: &str) -> Self {
        match code {
            "not_found" => BatchItemOutcome::NotFound,
            "conflict" => BatchItemOutcome::Conflict,
            "invalid_argument" => BatchItemOutcome::InvalidArgument,
            _ => BatchItemOutcome::Other,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct BatchCallLabels {
    verb: BatchVerb,
    outcome: BatchCallOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct BatchItemLabels {
    verb: BatchVerb,
    outcome: BatchItemOutcome,
}

/// The batch families.
pub(super) struct BatchFamilies {
    calls: Family<BatchCallLabels, Counter>,
    items: Family<BatchItemLabels, Counter>,
}

impl BatchFamilies {
    /// Registers them in `registry`, every label set at zero.
    pub(super) fn register(registry: &mut Registry) -> Self {
        let families = BatchFamilies { calls: Family::default(), items: Family::default() };
        registry.register(
            "switchboard_agent_batches",
            "Agent batch requests (claim-next with a limit above 1, batch complete, fail and create), by verb \
             and whether they were answered or refused as a whole",
            families.calls.clone(),
        );
        registry.register(
            "switchboard_agent_batch_items",
            "Items of answered agent batches, by verb and outcome (ok, or the error code the single verb gives); \
             a batch claim counts each todo it claimed",
            families.items.clone(),
        );
        for &verb in BatchVerb::ALL {
            for &outcome in BatchCallOutcome::ALL {
                drop(families.calls.get_or_create(&BatchCallLabels { verb, outcome }));
            }
            for &outcome in BatchItemOutcome::ALL {
                drop(families.items.get_or_create(&BatchItemLabels { verb, outcome }));
            }
        }
        families
    }
}

impl Metrics {
    /// Counts one agent batch request, answered or refused as a whole.
    pub fn batch_call(&self, verb: BatchVerb, outcome: BatchCallOutcome) {
        self.inner.batches.calls.get_or_create(&BatchCallLabels { verb, outcome }).inc();
    }

    /// Counts `n` items of an answered batch that came to `outcome`.
    pub fn batch_items(&self, verb: BatchVerb, outcome: BatchItemOutcome, n: u64) {
        if n > 0 {
            self.inner.batches.items.get_or_create(&BatchItemLabels { verb, outcome }).inc_by(n);
        }
    }
}
