//! How long a worker may keep starting attempts on rows it claimed.
//!
//! A claim keeps other workers off a row for a fixed time; once it lapses, another
//! worker may take the row and send it again. So a pass starts an attempt only while
//! the claim has time left for the whole attempt (its hard timeout) and for recording
//! the answer; rows it cannot start in time are given back, uncounted. A pass against a
//! hanging sink therefore never sends a row another worker may already be sending.

use std::time::{Duration, Instant};

/// Time kept, after an attempt's longest run, to record its answer before the claim
/// lapses.
pub const RECORD_MARGIN: Duration = Duration::from_secs(5);

/// The span of one claim in which attempts may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimWindow {
    last_start: Option<Instant>,
}

impl ClaimWindow {
    /// The window of a claim of length `claim` taken no earlier than `claimed_at`,
    /// for attempts that take at most `attempt`.
    pub fn new(claimed_at: Instant, claim: Duration, attempt: Duration) -> Self {
        let room = claim.checked_sub(attempt).and_then(|left| left.checked_sub(RECORD_MARGIN));
        ClaimWindow { last_start: room.and_then(|room| claimed_at.checked_add(room)) }
    }

    /// Whether an attempt starting at `now` ends, and is recorded, inside the claim.
    pub fn may_start(&self, now: Instant) -> bool {
        self.last_start.is_some_and(|last| now <= last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);
    const ATTEMPT: Duration = Duration::from_secs(10);

    #[test]
    fn attempts_start_while_the_claim_has_room_for_a_whole_attempt_and_its_record() {
        let t0 = Instant::now();
        let window = ClaimWindow::new(t0, MINUTE, ATTEMPT);
        assert!(window.may_start(t0));
        assert!(window.may_start(t0 + Duration::from_secs(45)));
        assert!(!window.may_start(t0 + Duration::from_secs(45) + Duration::from_millis(1)));
        assert!(!window.may_start(t0 + MINUTE));
    }

    #[test]
    fn a_claim_shorter_than_one_attempt_starts_nothing() {
        let t0 = Instant::now();
        assert!(!ClaimWindow::new(t0, Duration::from_secs(12), ATTEMPT).may_start(t0));
        assert!(!ClaimWindow::new(t0, Duration::from_secs(5), ATTEMPT).may_start(t0));
    }

    #[test]
    fn a_hanging_sink_is_given_no_more_attempts_than_fit_in_the_claim() {
        // Eight at a time, each hanging for its whole timeout: the rounds that start
        // inside the window are the only ones sent.
        let t0 = Instant::now();
        let window = ClaimWindow::new(t0, MINUTE, ATTEMPT);
        let rounds = (0..8u32).take_while(|n| window.may_start(t0 + ATTEMPT * *n)).count();
        assert_eq!(rounds, 5, "rounds starting at 0, 10, 20, 30 and 40 s end by 50 s, recorded by 55 s");
    }
}
