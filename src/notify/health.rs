//! What a delivery (all of a notification's attempts to one hook) leaves in the hook's
//! health: the last attempt's status and error class. The counting — success resets
//! the failure count, the tenth failure in a row disables the hook, so a receiver that
//! has gone away stops costing every notification three attempts — happens in the
//! store's one UPDATE, where concurrent deliveries to the same hook cannot lose a count.

use super::retry::AttemptClass;
use crate::store::hooks::HookHealthUpdate;

/// The health update for a delivery whose last attempt came to `last`.
pub fn health_after(last: AttemptClass) -> HookHealthUpdate {
    HookHealthUpdate {
        delivered: last.delivered(),
        last_status: last.status().map(i32::from),
        last_error: last.last_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::hooks::LastError;

    #[test]
    fn a_delivery_records_its_status_and_clears_the_error() {
        let h = health_after(AttemptClass::from_status(204));
        assert_eq!(h, HookHealthUpdate { delivered: true, last_status: Some(204), last_error: None });
    }

    #[test]
    fn a_failure_records_the_last_attempt_status_and_class() {
        let h = health_after(AttemptClass::from_status(503));
        assert_eq!(
            h,
            HookHealthUpdate { delivered: false, last_status: Some(503), last_error: Some(LastError::ServerError) }
        );
        let h = health_after(AttemptClass::Timeout);
        assert_eq!(h, HookHealthUpdate { delivered: false, last_status: None, last_error: Some(LastError::Timeout) });
        let h = health_after(AttemptClass::from_status(302));
        assert_eq!(h.last_error, Some(LastError::Redirect));
        assert_eq!(health_after(AttemptClass::RejectedSsrf).last_error, Some(LastError::RejectedSsrf));
    }
}
