//! Which stretch of time one census counts completions and dead letters over, so that
//! each is counted exactly once without an index on when it happened.
//!
//! A completion or a dead letter sets `updated_at = now()`, the start time of the
//! transaction that writes it, and the row then sits in `todos_retention_idx` (terminal
//! rows by `updated_at`). A census counts the events whose time lies in
//! `[from, to)`, reading the index from `from` onward. The danger is a transaction that
//! started before `to` and commits after the census has looked: its rows carry a time
//! below `to`, and the next census starts at `to`, so they would never be counted.
//!
//! So `to` is not the census's own clock but the start of the oldest transaction still
//! open in the database when the census began (or the census's clock when none is
//! open). Any transaction that started before `to` had ended before the census read
//! anything, so all of its rows are visible to it; a transaction still open started at
//! or after `to` and is counted by a later census. A long transaction holds `to` back:
//! the next window is then longer, never lossy. (Which transactions are looked at, and
//! the one assumption that makes: `CLOCKS` in `queues/statements/census.rs`.)

use chrono::{DateTime, Duration, Utc};

/// How far back the first census counts (and the furthest any census reaches back: a
/// queue's figures cover at most the last 24 hours).
pub const LOOKBACK: Duration = Duration::hours(24);

/// The stretch one census counts: events at or after `from` and before `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Inclusive start: the previous census's `to`.
    pub from: DateTime<Utc>,
    /// Exclusive end: where the next census starts.
    pub to: DateTime<Utc>,
}

/// The window of a census taken at `now`, after one that ended at `previous` (none: the
/// first census), with `oldest_open` the start of the oldest other transaction open in
/// the database (none: no other transaction is open).
pub fn window(previous: Option<DateTime<Utc>>, now: DateTime<Utc>, oldest_open: Option<DateTime<Utc>>) -> Window {
    let to = match oldest_open {
        Some(open) if open < now => open,
        _ => now,
    };
    let earliest = now - LOOKBACK;
    let from = match previous {
        // A census after a long pause counts no further back than the lookback: older
        // minutes are no longer shown.
        Some(p) if p > earliest => p,
        _ => earliest,
    };
    // A transaction open since before the previous census ended can hold `to` below
    // `from`: count nothing now and keep `from` where it was.
    Window { from, to: to.max(from) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(s: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + s, 0).single().expect("valid time")
    }

    #[test]
    fn the_first_census_counts_the_last_24_hours_up_to_now() {
        let w = window(None, at(0), None);
        assert_eq!(w, Window { from: at(0) - LOOKBACK, to: at(0) });
    }

    #[test]
    fn a_census_starts_where_the_previous_one_ended() {
        let w = window(Some(at(-10)), at(0), None);
        assert_eq!(w, Window { from: at(-10), to: at(0) });
    }

    #[test]
    fn an_open_transaction_holds_the_end_back_to_its_start() {
        let w = window(Some(at(-10)), at(0), Some(at(-3)));
        assert_eq!(w, Window { from: at(-10), to: at(-3) });
    }

    #[test]
    fn a_transaction_open_since_before_the_previous_census_counts_nothing_yet() {
        let w = window(Some(at(-10)), at(0), Some(at(-20)));
        assert_eq!(w, Window { from: at(-10), to: at(-10) });
    }

    #[test]
    fn a_clock_read_after_ours_does_not_move_the_end_past_now() {
        let w = window(Some(at(-10)), at(0), Some(at(5)));
        assert_eq!(w.to, at(0));
    }

    #[test]
    fn after_a_long_pause_the_census_reaches_back_no_further_than_the_lookback() {
        let w = window(Some(at(-3 * 86_400)), at(0), None);
        assert_eq!(w.from, at(0) - LOOKBACK);
    }
}
