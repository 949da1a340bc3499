//! Admission budgets per (endpoint, queue) (SPEC section 11): a queue may be paused,
//! capped in how many of its todos are claimed at once, and capped in how many claims it
//! admits per clock hour. A claim a budget refuses is *deferred*, never an error: the
//! agent hears `{empty: true, deferred: <reason>}`.
//!
//! What a change asks for is validated here; where the budget is enforced (atomically
//! with the claim) is `store/todos/admitted.rs`.

use super::text::{QUARANTINE_QUEUE, valid_queue_name};
use super::text_enum::text_enum;
use super::transitions::within;
use crate::error::{Error, Result};

text_enum!(
    /// Why a budget refused a claim.
    Deferral {
        /// The queue is paused.
        Paused => "paused",
        /// As many of the queue's todos as `max_in_flight` allows are claimed.
        InFlightFull => "in_flight_full",
        /// The queue admitted `per_hour` claims in this clock hour already.
        WindowExhausted => "window_exhausted",
    }
);

/// `max_in_flight` bounds, inclusive.
pub const MAX_IN_FLIGHT_RANGE: (i32, i32) = (1, 10_000);
/// `per_hour` bounds, inclusive.
pub const PER_HOUR_RANGE: (i32, i32) = (1, 1_000_000);

/// A field of a change: left as it is, or set (a limit set to `None` is lifted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Change<T> {
    /// Not mentioned: unchanged.
    #[default]
    Keep,
    /// Set to this value.
    Set(T),
}

impl<T: Copy> Change<T> {
    /// The value after the change, given the value before it.
    pub fn apply(self, before: T) -> T {
        match self {
            Change::Keep => before,
            Change::Set(v) => v,
        }
    }
}

/// What a change of a queue's budget asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AdmissionChange {
    /// Pause (`true`) or resume (`false`) the queue.
    pub paused: Change<bool>,
    /// Most todos of the queue claimed at once (`None`: no cap).
    pub max_in_flight: Change<Option<i32>>,
    /// Most claims the queue admits per clock hour (`None`: no cap).
    pub per_hour: Change<Option<i32>>,
}

/// A queue's budget. The default (not paused, no caps) is no budget at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Budget {
    /// Whether the queue is paused.
    pub paused: bool,
    /// Most todos of the queue claimed at once.
    pub max_in_flight: Option<i32>,
    /// Most claims per clock hour.
    pub per_hour: Option<i32>,
}

impl Budget {
    /// Whether it restricts anything (else it is not stored).
    pub fn restricts(&self) -> bool {
        self.paused || self.max_in_flight.is_some() || self.per_hour.is_some()
    }

    /// This budget after `change`.
    pub fn changed(self, change: AdmissionChange) -> Budget {
        Budget {
            paused: change.paused.apply(self.paused),
            max_in_flight: change.max_in_flight.apply(self.max_in_flight),
            per_hour: change.per_hour.apply(self.per_hour),
        }
    }
}

/// Refuses a queue name an agent could not drain (`queue`, 422).
pub fn check_queue(queue: &str) -> Result<()> {
    if !valid_queue_name(queue) || queue == QUARANTINE_QUEUE {
        return Err(Error::invalid("queue", "not a drainable queue name (1–64 of a-z 0-9 . _ -, not quarantine)"));
    }
    Ok(())
}

impl AdmissionChange {
    /// Refuses a limit out of its bounds, naming the field (422); nothing is changed.
    pub fn validate(&self) -> Result<()> {
        if let Change::Set(Some(n)) = self.max_in_flight
            && !within(n, MAX_IN_FLIGHT_RANGE)
        {
            return Err(Error::invalid("max_in_flight", "must be between 1 and 10000, or null for no cap"));
        }
        if let Change::Set(Some(n)) = self.per_hour
            && !within(n, PER_HOUR_RANGE)
        {
            return Err(Error::invalid("per_hour", "must be between 1 and 1000000, or null for no cap"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(e: Error) -> String {
        e.to_string()
    }

    #[test]
    fn limits_out_of_bounds_are_refused_naming_the_field() {
        for (change, name) in [
            (AdmissionChange { max_in_flight: Change::Set(Some(0)), ..Default::default() }, "max_in_flight"),
            (AdmissionChange { max_in_flight: Change::Set(Some(10_001)), ..Default::default() }, "max_in_flight"),
            (AdmissionChange { max_in_flight: Change::Set(Some(-3)), ..Default::default() }, "max_in_flight"),
            (AdmissionChange { per_hour: Change::Set(Some(0)), ..Default::default() }, "per_hour"),
            (AdmissionChange { per_hour: Change::Set(Some(1_000_001)), ..Default::default() }, "per_hour"),
        ] {
            let why = field(change.validate().unwrap_err());
            assert!(why.starts_with(name), "{why}");
        }
        let fine = AdmissionChange {
            paused: Change::Set(true),
            max_in_flight: Change::Set(Some(10_000)),
            per_hour: Change::Set(None),
        };
        assert!(fine.validate().is_ok());
    }

    #[test]
    fn only_drainable_queue_names_take_a_budget() {
        for bad in ["", "Inbox", "quarantine", "-x", "a b", &"q".repeat(65)] {
            assert!(check_queue(bad).is_err(), "{bad:?}");
        }
        for good in ["inbox", "a", "builds.v2", "x_y-z", &"q".repeat(64)] {
            assert!(check_queue(good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn a_change_keeps_what_it_does_not_mention_and_a_budget_of_defaults_restricts_nothing() {
        let before = Budget { paused: true, max_in_flight: Some(3), per_hour: None };
        let resumed = before.changed(AdmissionChange { paused: Change::Set(false), ..Default::default() });
        assert_eq!(resumed, Budget { paused: false, max_in_flight: Some(3), per_hour: None });
        assert!(resumed.restricts());
        let lifted = resumed.changed(AdmissionChange { max_in_flight: Change::Set(None), ..Default::default() });
        assert!(!lifted.restricts());
        assert_eq!(
            Deferral::ALL.iter().map(|d| d.as_str()).collect::<Vec<_>>(),
            ["paused", "in_flight_full", "window_exhausted"]
        );
    }
}
