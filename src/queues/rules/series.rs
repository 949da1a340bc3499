//! Per-minute (or per-hour) series for the overview's sparklines: the stored buckets
//! hold only minutes in which something happened, a chart needs every slot.

use chrono::{DateTime, Duration, DurationRound, Utc};

/// What finished in one slot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slot {
    /// Completions.
    pub done: i64,
    /// Failed attempts.
    pub failed_attempts: i64,
    /// Dead letters.
    pub dead: i64,
}

impl Slot {
    /// The slot's three counts added to `self`.
    pub fn add(&mut self, other: Slot) {
        self.done += other.done;
        self.failed_attempts += other.failed_attempts;
        self.dead += other.dead;
    }
}

/// `slots` slots of `width` each, the last one holding `now`, filled from `buckets`
/// (each at the start of its minute); buckets outside the span are left out.
pub fn fill(
    buckets: impl IntoIterator<Item = (DateTime<Utc>, Slot)>,
    now: DateTime<Utc>,
    width: Duration,
    slots: usize,
) -> Vec<Slot> {
    let mut out = vec![Slot::default(); slots];
    let Ok(last_start) = now.duration_trunc(width) else {
        return out;
    };
    let first_start = last_start - width * (slots as i32 - 1);
    for (at, slot) in buckets {
        if at < first_start || at >= last_start + width {
            continue;
        }
        let i = ((at - first_start).num_seconds() / width.num_seconds().max(1)) as usize;
        if let Some(s) = out.get_mut(i) {
            s.add(slot);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 6, h, m, 0).single().expect("time")
    }

    fn done(n: i64) -> Slot {
        Slot { done: n, ..Slot::default() }
    }

    #[test]
    fn the_last_slot_holds_now_and_empty_minutes_are_zero() {
        let now = at(12, 30) + Duration::seconds(20);
        let s = fill([(at(12, 30), done(2)), (at(12, 28), done(1))], now, Duration::minutes(1), 4);
        assert_eq!(s, vec![done(0), done(1), done(0), done(2)]);
    }

    #[test]
    fn minutes_fold_into_their_hour() {
        let now = at(12, 5);
        let s = fill([(at(11, 1), done(1)), (at(11, 59), done(2)), (at(12, 0), done(4))], now, Duration::hours(1), 2);
        assert_eq!(s, vec![done(3), done(4)]);
    }

    #[test]
    fn buckets_outside_the_span_are_left_out() {
        let now = at(12, 0);
        let s = fill([(at(10, 0), done(9)), (at(12, 1), done(9))], now, Duration::minutes(1), 60);
        assert!(s.iter().all(|x| *x == Slot::default()));
    }
}
