//! A hook's health after a delivery (all of a notification's attempts to one hook):
//! success resets the failure count, and the tenth failure in a row disables the hook,
//! so a receiver that has gone away stops costing every notification three attempts.
//!
//! The result is written once per delivery, in one UPDATE, by the caller.

use super::retry::{AttemptClass, LastError};
use crate::domain::text_enum::text_enum;

/// Consecutive failed deliveries that disable a hook.
pub const DISABLE_AFTER: i32 = 10;

text_enum!(
    /// Why a hook is disabled.
    DisabledReason {
        /// Switchboard disabled it after [`DISABLE_AFTER`] failed deliveries in a row.
        /// Rotating the secret re-enables it.
        ConsecutiveFailures => "consecutive_failures",
        /// An operator disabled it; only an operator re-enables it.
        Operator => "operator",
    }
);

impl DisabledReason {
    /// Whether rotating the hook's secret re-enables it (an automatic disable, yes;
    /// an operator's decision, no).
    pub fn rotation_reenables(self) -> bool {
        matches!(self, DisabledReason::ConsecutiveFailures)
    }
}

/// How a whole delivery ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryOutcome {
    /// An attempt got a 2xx.
    Delivered {
        /// That status.
        status: u16,
    },
    /// Every attempt failed, or a final failure stopped the retries.
    Failed {
        /// The last attempt's status, if the receiver answered.
        last_status: Option<u16>,
        /// The last attempt's error.
        last_error: LastError,
    },
}

impl DeliveryOutcome {
    /// The outcome of a delivery whose last attempt came to `class`.
    pub fn from_last_attempt(class: AttemptClass) -> Self {
        match class.last_error() {
            None => DeliveryOutcome::Delivered { status: class.status().unwrap_or(200) },
            Some(last_error) => DeliveryOutcome::Failed { last_status: class.status(), last_error },
        }
    }
}

/// The health columns to write after a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthUpdate {
    /// The new `consecutive_failures`.
    pub consecutive_failures: i32,
    /// The new `last_status` (the last attempt's; none when it got no answer).
    pub last_status: Option<u16>,
    /// The new `last_error` (none after a success).
    pub last_error: Option<LastError>,
    /// Disable the hook for this reason, if set.
    pub disable: Option<DisabledReason>,
}

/// The health after a delivery that ended in `outcome`, given the hook's
/// `consecutive_failures` before it. A count already at or past the threshold (a hook
/// re-enabled without a reset) disables again on the next failure.
pub fn after_delivery(consecutive_failures: i32, outcome: DeliveryOutcome) -> HealthUpdate {
    match outcome {
        DeliveryOutcome::Delivered { status } => {
            HealthUpdate { consecutive_failures: 0, last_status: Some(status), last_error: None, disable: None }
        }
        DeliveryOutcome::Failed { last_status, last_error } => {
            let failures = consecutive_failures.max(0).saturating_add(1);
            HealthUpdate {
                consecutive_failures: failures,
                last_status,
                last_error: Some(last_error),
                disable: (failures >= DISABLE_AFTER).then_some(DisabledReason::ConsecutiveFailures),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed() -> DeliveryOutcome {
        DeliveryOutcome::Failed { last_status: Some(503), last_error: LastError::ServerError }
    }

    #[test]
    fn success_resets_the_failure_count_and_clears_the_error() {
        let health = after_delivery(9, DeliveryOutcome::Delivered { status: 204 });
        assert_eq!(
            health,
            HealthUpdate { consecutive_failures: 0, last_status: Some(204), last_error: None, disable: None }
        );
    }

    #[test]
    fn a_failure_counts_and_records_the_last_attempt() {
        let health = after_delivery(0, failed());
        assert_eq!(health.consecutive_failures, 1);
        assert_eq!(health.last_status, Some(503));
        assert_eq!(health.last_error, Some(LastError::ServerError));
        assert_eq!(health.disable, None);
    }

    #[test]
    fn the_tenth_consecutive_failure_disables_the_hook() {
        let mut failures = 0;
        for n in 1..=DISABLE_AFTER {
            let health = after_delivery(failures, failed());
            failures = health.consecutive_failures;
            assert_eq!(failures, n);
            assert_eq!(health.disable.is_some(), n == DISABLE_AFTER, "failure {n}");
        }
        assert_eq!(after_delivery(9, failed()).disable.map(DisabledReason::as_str), Some("consecutive_failures"));
    }

    #[test]
    fn a_count_past_the_threshold_still_disables_and_never_overflows() {
        assert!(after_delivery(15, failed()).disable.is_some());
        assert_eq!(after_delivery(i32::MAX, failed()).consecutive_failures, i32::MAX);
        assert_eq!(after_delivery(-3, failed()).consecutive_failures, 1);
    }

    #[test]
    fn a_failure_without_an_answer_has_no_status() {
        let outcome = DeliveryOutcome::from_last_attempt(AttemptClass::Timeout);
        assert_eq!(outcome, DeliveryOutcome::Failed { last_status: None, last_error: LastError::Timeout });
        assert_eq!(after_delivery(2, outcome).last_status, None);
    }

    #[test]
    fn the_last_attempt_decides_the_outcome() {
        assert_eq!(
            DeliveryOutcome::from_last_attempt(AttemptClass::from_status(202)),
            DeliveryOutcome::Delivered { status: 202 }
        );
        assert_eq!(
            DeliveryOutcome::from_last_attempt(AttemptClass::from_status(302)),
            DeliveryOutcome::Failed { last_status: Some(302), last_error: LastError::Redirect }
        );
        assert_eq!(
            DeliveryOutcome::from_last_attempt(AttemptClass::RejectedSsrf),
            DeliveryOutcome::Failed { last_status: None, last_error: LastError::RejectedSsrf }
        );
    }

    #[test]
    fn rotation_reenables_only_an_automatic_disable() {
        assert!(DisabledReason::ConsecutiveFailures.rotation_reenables());
        assert!(!DisabledReason::Operator.rotation_reenables());
    }
}
