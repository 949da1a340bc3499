//! Fair shares of an instance's bounded places (MCP sessions, long-poll waiters) among
//! owner scopes (SPEC 13, "Fair shares").
//!
//! The rule: an instance has `capacity` places and keeps `reserve` of them,
//! `ceil(capacity × percent / 100)`, for other scopes. A scope may take a place when the
//! instance has a free one and, after taking it, the places the scope does not hold are
//! still at least `reserve`:
//!
//! ```text
//! taken < capacity  and  taken_by_scope + 1 <= capacity - reserve
//! ```
//!
//! so one scope holds at most `capacity - reserve` places (its share: three quarters at
//! the default 25 %), and a lone scope can use exactly that. Every scope may hold at least
//! one place, whatever the percent, so a tiny instance (a capacity of 1, or a percent that
//! rounds the share to nothing) still serves someone; there the reserve is not kept.
//!
//! What this guarantees, and what not: **no single scope can take the last `reserve`
//! places**, so while the places are held by one scope (however greedy), a newcomer scope
//! finds one, whenever the percent is above 0 and the instance has at least two places
//! (checked exhaustively for small instances below). Several scopes together can still fill the instance (two scopes may hold
//! half each); then everyone meets the instance's own bound, as before. The share is per
//! instance: an instance counts its own places, not the cluster's.

/// The default share of places kept for other scopes, in percent.
pub const DEFAULT_RESERVE_PERCENT: u8 = 25;

/// The largest reserve an operator may set, in percent: at 100 % nobody would take a
/// place but the one every scope may always hold.
pub const MAX_RESERVE_PERCENT: u8 = 90;

/// An instance's bounded places and the share of them kept for other scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    capacity: usize,
    reserve: usize,
}

/// Whether a scope may take a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// It may.
    Take,
    /// The instance holds its most places (whoever holds them).
    Full,
    /// The scope holds its share: the rest is kept for other scopes.
    ScopeShare,
}

impl Share {
    /// `capacity` places, of which `percent` (at most 100; more counts as 100) are kept
    /// for other scopes, rounded up.
    pub fn new(capacity: usize, percent: u8) -> Self {
        let percent = usize::from(percent.min(100));
        let reserve = capacity.saturating_mul(percent).div_ceil(100).min(capacity);
        Share { capacity, reserve }
    }

    /// The instance's places.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The places one scope may hold: all but the reserve, and at least one (when the
    /// instance has any).
    pub fn per_scope(&self) -> usize {
        (self.capacity - self.reserve).max(self.capacity.min(1))
    }

    /// Whether a scope that holds `taken_by_scope` places may take one more, while the
    /// instance holds `taken` (the scope's included). A full instance answers
    /// [`Admit::Full`] whatever the scope holds: nobody could take a place.
    pub fn admit(&self, taken: usize, taken_by_scope: usize) -> Admit {
        if taken >= self.capacity {
            Admit::Full
        } else if taken_by_scope >= self.per_scope() {
            Admit::ScopeShare
        } else {
            Admit::Take
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// How many places a scope alone on the instance takes before it is refused, and why.
    fn lone_scope_takes(share: Share) -> (usize, Admit) {
        let mut held = 0;
        loop {
            match share.admit(held, held) {
                Admit::Take => held += 1,
                refused => return (held, refused),
            }
        }
    }

    #[test]
    fn a_lone_scope_takes_all_but_the_reserve_and_is_then_refused_for_its_share() {
        assert_eq!(lone_scope_takes(Share::new(8, 25)), (6, Admit::ScopeShare));
        assert_eq!(lone_scope_takes(Share::new(1000, 25)), (750, Admit::ScopeShare));
        assert_eq!(lone_scope_takes(Share::new(100_000, 25)), (75_000, Admit::ScopeShare));
        assert_eq!(lone_scope_takes(Share::new(10, 90)), (1, Admit::ScopeShare));
        // The reserve is rounded up: 25 % of 10 keeps 3, not 2.
        assert_eq!(lone_scope_takes(Share::new(10, 25)), (7, Admit::ScopeShare));
    }

    #[test]
    fn while_one_scope_holds_its_share_another_takes_the_reserved_places() {
        let share = Share::new(8, 25);
        // The first scope holds its 6; a second scope takes the two kept places.
        assert_eq!(share.admit(6, 6), Admit::ScopeShare);
        assert_eq!(share.admit(6, 0), Admit::Take);
        assert_eq!(share.admit(7, 1), Admit::Take);
        // Then the instance is full, for both.
        assert_eq!(share.admit(8, 2), Admit::Full);
        assert_eq!(share.admit(8, 6), Admit::Full);
    }

    #[test]
    fn a_second_scope_takes_places_while_the_first_holds_three_quarters_and_up_to_its_own_share() {
        let share = Share::new(100, 25);
        assert_eq!(share.admit(75, 75), Admit::ScopeShare);
        for second in 0..25 {
            assert_eq!(share.admit(75 + second, second), Admit::Take, "the second scope's {second}th");
        }
        assert_eq!(share.admit(100, 25), Admit::Full);
        // With the first holding half, the second stops at its own share, not at full.
        for second in 0..50 {
            assert_eq!(share.admit(50 + second, second), Admit::Take);
        }
        assert_eq!(share.admit(100, 50), Admit::Full);
        let share = Share::new(200, 25);
        assert_eq!(share.admit(50 + 150, 150), Admit::Full);
        assert_eq!(share.admit(20 + 150, 150), Admit::ScopeShare);
    }

    #[test]
    fn no_reserve_at_zero_percent_and_at_least_one_place_per_scope_at_any_percent() {
        assert_eq!(lone_scope_takes(Share::new(8, 0)), (8, Admit::Full));
        assert_eq!(Share::new(8, 0).per_scope(), 8);
        for percent in [0, 25, 90, 100, 255] {
            // One place: its one scope takes it, and the reserve is not kept.
            assert_eq!(lone_scope_takes(Share::new(1, percent)), (1, Admit::Full), "{percent} %");
        }
        assert_eq!(lone_scope_takes(Share::new(2, 25)), (1, Admit::ScopeShare));
        assert_eq!(lone_scope_takes(Share::new(3, 25)), (2, Admit::ScopeShare));
        assert_eq!(lone_scope_takes(Share::new(4, 25)), (3, Admit::ScopeShare));
        // 100 % (or more) keeps everything but the one place each scope may hold.
        assert_eq!(lone_scope_takes(Share::new(8, 100)), (1, Admit::ScopeShare));
        assert_eq!(Share::new(8, 255), Share::new(8, 100));
    }

    #[test]
    fn an_instance_of_no_places_admits_nobody() {
        let share = Share::new(0, 25);
        assert_eq!((share.capacity(), share.per_scope()), (0, 0));
        assert_eq!(share.admit(0, 0), Admit::Full);
    }

    #[test]
    fn whatever_one_scope_holds_a_newcomer_finds_a_place_when_any_is_kept() {
        // Exhaustively for small instances: one scope takes all it may; a scope that
        // holds nothing may still take a place whenever the percent keeps one.
        for capacity in 0..=64 {
            for percent in 0..=100 {
                let share = Share::new(capacity, percent);
                let (held, _) = lone_scope_takes(share);
                assert!(held <= capacity, "{capacity} places at {percent} %: held {held}");
                if capacity >= 2 && percent > 0 {
                    assert_eq!(share.admit(held, 0), Admit::Take, "{capacity} places at {percent} %");
                }
                if capacity > 0 {
                    assert!(held >= 1, "{capacity} places at {percent} %: a scope takes at least one");
                }
            }
        }
    }
}
