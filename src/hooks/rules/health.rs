//! What a ring (all of an announcement's attempts to one hook) leaves in the hook's
//! health: the last attempt's status and error class. The counting — success resets
//! the failure count, the tenth failure in a row disables the hook, so a receiver that
//! has gone away stops costing every announcement three attempts — happens in the
//! store's one UPDATE, where concurrent rings of the same hook cannot lose a count.
//!
//! A healthy hook's successes change nothing but the time of the last attempt, so they
//! are written only when the health changes or the last write is getting old: a busy
//! hook would otherwise cost a locked row update per ring.

use std::time::Duration;

use crate::hooks::rules::hook::LastError;
use crate::hooks::rules::retry::AttemptClass;

/// How stale `last_attempt_at` may get on a hook whose rings keep succeeding.
pub const HEALTH_REFRESH: Duration = Duration::from_secs(10);

/// Whether a ring's health must be written, given what this supervisor last wrote
/// for the hook and how long ago: always for a failure (it counts toward the disable),
/// for the first success after a failure or with another status, and when the last
/// What one ring (all its attempts) left behind, written in one UPDATE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookHealthUpdate {
    /// A 2xx arrived.
    pub succeeded: bool,
    /// The status of the last attempt, if it got one.
    pub last_status: Option<i32>,
    /// The class of the failure; none on success.
    pub last_error: Option<LastError>,
}

/// write is older than [`HEALTH_REFRESH`].
pub fn needs_write(last_written: Option<(&HookHealthUpdate, Duration)>, new: &HookHealthUpdate) -> bool {
    match last_written {
        None => true,
        Some((previous, age)) => {
            !new.succeeded || !previous.succeeded || previous.last_status != new.last_status || age >= HEALTH_REFRESH
        }
    }
}

/// The health update for a ring whose last attempt came to `last`.
pub fn health_after(last: AttemptClass) -> HookHealthUpdate {
    HookHealthUpdate {
        succeeded: last.succeeded(),
        last_status: last.status().map(i32::from),
        last_error: last.last_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::rules::hook::LastError;

    #[test]
    fn only_a_change_or_an_old_write_makes_a_success_worth_writing() {
        let ok = health_after(AttemptClass::from_status(204));
        let fail = health_after(AttemptClass::from_status(503));
        let fresh = Duration::from_secs(1);
        assert!(needs_write(None, &ok));
        assert!(!needs_write(Some((&ok, fresh)), &ok));
        assert!(needs_write(Some((&ok, HEALTH_REFRESH)), &ok));
        assert!(needs_write(Some((&fail, fresh)), &ok), "the first success after a failure resets the count");
        assert!(needs_write(Some((&ok, fresh)), &fail), "every failure counts");
        assert!(needs_write(Some((&fail, fresh)), &fail));
        assert!(needs_write(Some((&health_after(AttemptClass::from_status(200)), fresh)), &ok), "status changed");
    }

    #[test]
    fn a_ring_records_its_status_and_clears_the_error() {
        let h = health_after(AttemptClass::from_status(204));
        assert_eq!(h, HookHealthUpdate { succeeded: true, last_status: Some(204), last_error: None });
    }

    #[test]
    fn a_failure_records_the_last_attempt_status_and_class() {
        let h = health_after(AttemptClass::from_status(503));
        assert_eq!(
            h,
            HookHealthUpdate { succeeded: false, last_status: Some(503), last_error: Some(LastError::ServerError) }
        );
        let h = health_after(AttemptClass::Timeout);
        assert_eq!(h, HookHealthUpdate { succeeded: false, last_status: None, last_error: Some(LastError::Timeout) });
        let h = health_after(AttemptClass::from_status(302));
        assert_eq!(h.last_error, Some(LastError::Redirect));
        assert_eq!(health_after(AttemptClass::RejectedSsrf).last_error, Some(LastError::RejectedSsrf));
    }
}
