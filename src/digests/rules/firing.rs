//! Which send times to send and which to skip: a send time is sent if it is less than
//! an hour late (an instance was busy, or every instance was down briefly), else
//! recorded as skipped; of several missed times only the latest can be sent, so an
//! owner never gets a burst of stale digests after an outage.

use chrono::{DateTime, Duration, Utc};

/// How late a send time may be and still be sent.
pub const LATE_LIMIT: Duration = Duration::hours(1);

/// What to do with the send times that have come.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The send time to evaluate now (send, or skip as quiet), if any is recent enough.
    pub evaluate: Option<DateTime<Utc>>,
    /// Send times to record as skipped for being an hour or more late.
    pub skipped_late: Vec<DateTime<Utc>>,
}

/// The plan for `due` (the stored send time, at or before `now`) and `later`: the send
/// times after it up to `now`, in order (the schedule's `between(due, now)`).
pub fn plan(due: DateTime<Utc>, later: &[DateTime<Utc>], now: DateTime<Utc>) -> Plan {
    let mut times: Vec<DateTime<Utc>> =
        std::iter::once(due).chain(later.iter().copied()).filter(|t| *t <= now).collect();
    times.dedup();
    let evaluate = times.last().copied().filter(|t| now - *t < LATE_LIMIT);
    let skipped_late = times.into_iter().filter(|t| Some(*t) != evaluate).collect();
    Plan { evaluate, skipped_late }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, h, m, 0).unwrap()
    }

    #[test]
    fn a_send_time_that_just_came_is_evaluated() {
        assert_eq!(plan(at(9, 0), &[], at(9, 0)), Plan { evaluate: Some(at(9, 0)), skipped_late: vec![] });
    }

    #[test]
    fn a_send_time_missed_by_thirty_minutes_is_still_sent_once() {
        assert_eq!(plan(at(9, 0), &[], at(9, 30)), Plan { evaluate: Some(at(9, 0)), skipped_late: vec![] });
    }

    #[test]
    fn a_send_time_missed_by_two_hours_is_skipped_and_recorded() {
        assert_eq!(plan(at(9, 0), &[], at(11, 0)), Plan { evaluate: None, skipped_late: vec![at(9, 0)] });
    }

    #[test]
    fn exactly_an_hour_late_is_too_late() {
        assert_eq!(plan(at(9, 0), &[], at(10, 0)).evaluate, None);
    }

    #[test]
    fn after_a_long_outage_only_the_latest_recent_time_is_sent_and_the_rest_recorded_skipped() {
        let p = plan(at(6, 0), &[at(8, 0), at(10, 0)], at(10, 20));
        assert_eq!(p, Plan { evaluate: Some(at(10, 0)), skipped_late: vec![at(6, 0), at(8, 0)] });
    }
}
