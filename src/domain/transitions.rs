//! Pure decisions about a todo's next state: backoff, the attempt cap, lease and
//! interrupt-lease lengths. The store runs these inside its transactions; the sweeps
//! mirror [`at_cap`] in SQL (see `store::todos::sweeps`), and a test pins that both agree.

use std::time::Duration;

use super::todo_state::DeadReason;

/// Default attempt cap of a new todo.
pub const DEFAULT_MAX_ATTEMPTS: i32 = 5;
/// Bounds a client may set on `max_attempts`.
pub const MAX_ATTEMPTS_RANGE: (i32, i32) = (1, 100);
/// Lease when neither the call nor the endpoint names one.
pub const DEFAULT_LEASE_SECONDS: i32 = 300;
/// Bounds of a per-call `lease_ttl_seconds`.
pub const LEASE_SECONDS_RANGE: (i32, i32) = (1, 86_400);
/// Bounds of an endpoint's default lease.
pub const ENDPOINT_LEASE_SECONDS_RANGE: (i32, i32) = (60, 86_400);
/// Interrupt lease when the call names none.
pub const DEFAULT_INTERRUPT_SECONDS: i32 = 3_600;
/// Bounds of an interrupt's `wait_seconds`.
pub const INTERRUPT_SECONDS_RANGE: (i32, i32) = (1, 604_800);
/// First fail backoff; doubles per attempt.
pub const BACKOFF_BASE_SECONDS: u64 = 30;
/// Longest fail backoff.
pub const BACKOFF_CAP_SECONDS: u64 = 900;

/// Wait before the retry that follows failed attempt number `attempt` (1-based):
/// `min(30 s · 2^(attempt−1), 900 s)`.
pub fn fail_backoff(attempt: i32) -> Duration {
    let exponent = (attempt.max(1) - 1).min(16) as u32;
    let secs = BACKOFF_BASE_SECONDS.saturating_mul(1u64 << exponent);
    Duration::from_secs(secs.min(BACKOFF_CAP_SECONDS))
}

/// Whether a todo on attempt `attempt` of `max_attempts` has used its last attempt.
pub fn at_cap(attempt: i32, max_attempts: i32) -> bool {
    attempt >= max_attempts
}

/// What a failed attempt leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Below the cap: retry after this long.
    RetryAfter(Duration),
    /// At the cap: a dead letter for this reason.
    DeadLetter(DeadReason),
}

/// The consequence of a fail (agent or operator) on attempt `attempt` of `max_attempts`.
pub fn after_fail(attempt: i32, max_attempts: i32) -> AfterFailure {
    if at_cap(attempt, max_attempts) {
        AfterFailure::DeadLetter(DeadReason::AttemptsExhausted)
    } else {
        AfterFailure::RetryAfter(fail_backoff(attempt))
    }
}

/// What a lapsed lease (or lapsed interrupt lease) leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterLapse {
    /// Below the cap: back to pending, rings `todo.ready` (`requeued`).
    Requeue,
    /// At the cap: a dead letter for this reason.
    DeadLetter(DeadReason),
}

/// The consequence of a lapse on attempt `attempt` of `max_attempts`; `reason` is the
/// dead-letter reason the lapsing path names (`lease_expired` or `interrupt_expired`).
pub fn after_lapse(attempt: i32, max_attempts: i32, reason: DeadReason) -> AfterLapse {
    if at_cap(attempt, max_attempts) { AfterLapse::DeadLetter(reason) } else { AfterLapse::Requeue }
}

/// Lease length for a claim or heartbeat: the call's value beats the endpoint's
/// default, which beats 300 s. The call's value must already be within bounds.
pub fn lease_seconds(per_call: Option<i32>, endpoint_default: Option<i32>) -> i32 {
    per_call.or(endpoint_default).unwrap_or(DEFAULT_LEASE_SECONDS)
}

/// Whether `value` lies within the inclusive `range`.
pub fn within(value: i32, range: (i32, i32)) -> bool {
    value >= range.0 && value <= range.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_thirty_seconds_and_caps_at_fifteen_minutes() {
        let secs: Vec<u64> = (1..=8).map(|a| fail_backoff(a).as_secs()).collect();
        assert_eq!(secs, vec![30, 60, 120, 240, 480, 900, 900, 900]);
        assert_eq!(fail_backoff(0).as_secs(), 30);
        assert_eq!(fail_backoff(i32::MAX).as_secs(), 900);
    }

    #[test]
    fn fail_below_the_cap_schedules_a_retry_and_at_the_cap_dead_letters() {
        assert_eq!(after_fail(1, 5), AfterFailure::RetryAfter(Duration::from_secs(30)));
        assert_eq!(after_fail(4, 5), AfterFailure::RetryAfter(Duration::from_secs(240)));
        assert_eq!(after_fail(5, 5), AfterFailure::DeadLetter(DeadReason::AttemptsExhausted));
        assert_eq!(after_fail(1, 1), AfterFailure::DeadLetter(DeadReason::AttemptsExhausted));
    }

    #[test]
    fn a_lapse_names_its_own_reason_at_the_cap() {
        assert_eq!(after_lapse(2, 3, DeadReason::LeaseExpired), AfterLapse::Requeue);
        assert_eq!(
            after_lapse(3, 3, DeadReason::InterruptExpired),
            AfterLapse::DeadLetter(DeadReason::InterruptExpired)
        );
    }

    #[test]
    fn per_call_lease_beats_endpoint_default_beats_300() {
        assert_eq!(lease_seconds(Some(10), Some(600)), 10);
        assert_eq!(lease_seconds(None, Some(600)), 600);
        assert_eq!(lease_seconds(None, None), 300);
    }
}
