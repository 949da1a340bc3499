//! The Todos view's pills (All, Pending, Claimed, Done, Failed, Dead) and how their
//! counts read. A count is exact up to [`COUNT_CAP`] and shown as `10 000+` beyond:
//! counting a bucket reads at most `COUNT_CAP + 1` index entries, so the pills cost the
//! same on a thousand todos as on millions, and a capped count is never wrong.

use super::text_enum::text_enum;
use super::todo_state::TodoState;
use super::vocabulary::Phase;

text_enum!(
    /// One pill of the Todos view. Quarantine is in none of them (it has its own page);
    /// the interrupt states and `canceled` count only under All.
    Pill {
        /// Every todo.
        All => "all",
        /// Waiting to be claimed.
        Pending => "pending",
        /// Held by an agent under a lease.
        Claimed => "claimed",
        /// Completed.
        Done => "done",
        /// Failed with a retry scheduled.
        Failed => "failed",
        /// Failed with no retry scheduled: the dead letters.
        Dead => "dead",
    }
);

impl Pill {
    /// What the pill says on the Board: its phase's word (the same word the API's
    /// `phase` field and the docs use), or `All`.
    pub fn label(self) -> &'static str {
        self.phase().map_or("All", Phase::label)
    }

    /// The phase whose todos the pill holds; none for All.
    pub fn phase(self) -> Option<Phase> {
        match self {
            Pill::All => None,
            Pill::Pending => Some(Phase::Pending),
            Pill::Claimed => Some(Phase::Claimed),
            Pill::Done => Some(Phase::Done),
            Pill::Failed => Some(Phase::Failed),
            Pill::Dead => Some(Phase::Dead),
        }
    }

    /// The states a pill's todos are in (Failed and Dead split `failed` by whether a
    /// retry is scheduled).
    pub fn states(self) -> &'static [TodoState] {
        match self {
            Pill::All => TodoState::ALL,
            Pill::Pending => &[TodoState::Pending],
            Pill::Claimed => &[TodoState::Claimed],
            Pill::Done => &[TodoState::Done],
            Pill::Failed | Pill::Dead => &[TodoState::Failed],
        }
    }
}

/// Counts above this are shown as `10 000+`.
pub const COUNT_CAP: u32 = 10_000;

/// A pill's count: exact, or at least [`COUNT_CAP`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PillCount {
    /// Exactly this many.
    Exact(u32),
    /// More than the cap (at least `COUNT_CAP + 1`).
    AtLeast(u32),
}

impl PillCount {
    /// Reads a count taken with `LIMIT COUNT_CAP + 1`: anything above the cap means
    /// "more than the cap".
    pub fn from_capped(n: i64) -> PillCount {
        let n = u32::try_from(n.max(0)).unwrap_or(u32::MAX);
        if n > COUNT_CAP { PillCount::AtLeast(COUNT_CAP) } else { PillCount::Exact(n) }
    }

    /// Whether nothing is in the bucket.
    pub fn is_zero(self) -> bool {
        self == PillCount::Exact(0)
    }
}

impl std::fmt::Display for PillCount {
    /// Thousands grouped with a space (`12 345`), `+` when capped (`10 000+`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, plus) = match *self {
            PillCount::Exact(n) => (n, ""),
            PillCount::AtLeast(n) => (n, "+"),
        };
        let digits = n.to_string();
        let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(' ');
            }
            grouped.push(c);
        }
        write!(f, "{grouped}{plus}")
    }
}

/// Every pill's count for one human's scopes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PillCounts {
    /// All (quarantine excluded).
    pub all: PillCount,
    /// Pending.
    pub pending: PillCount,
    /// Claimed.
    pub claimed: PillCount,
    /// Done.
    pub done: PillCount,
    /// Failed with a retry scheduled.
    pub failed: PillCount,
    /// Dead letters.
    pub dead: PillCount,
}

impl PillCounts {
    /// The count shown on `pill`.
    pub fn get(&self, pill: Pill) -> PillCount {
        match pill {
            Pill::All => self.all,
            Pill::Pending => self.pending,
            Pill::Claimed => self.claimed,
            Pill::Done => self.done,
            Pill::Failed => self.failed,
            Pill::Dead => self.dead,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_up_to_the_cap_are_exact_and_beyond_it_read_as_the_cap_plus() {
        assert_eq!(PillCount::from_capped(0), PillCount::Exact(0));
        assert_eq!(PillCount::from_capped(10_000), PillCount::Exact(10_000));
        assert_eq!(PillCount::from_capped(10_001), PillCount::AtLeast(10_000));
        assert_eq!(PillCount::from_capped(-1), PillCount::Exact(0));
    }

    #[test]
    fn counts_group_thousands_and_mark_a_capped_count() {
        assert_eq!(PillCount::Exact(7).to_string(), "7");
        assert_eq!(PillCount::Exact(999).to_string(), "999");
        assert_eq!(PillCount::Exact(1_000).to_string(), "1 000");
        assert_eq!(PillCount::Exact(12_345).to_string(), "12 345");
        assert_eq!(PillCount::Exact(1_234_567).to_string(), "1 234 567");
        assert_eq!(PillCount::AtLeast(COUNT_CAP).to_string(), "10 000+");
    }

    #[test]
    fn pills_parse_from_their_wire_names_and_failed_and_dead_share_the_failed_state() {
        assert_eq!("dead".parse::<Pill>().unwrap(), Pill::Dead);
        assert!("Dead".parse::<Pill>().is_err());
        assert_eq!(Pill::Dead.states(), Pill::Failed.states());
        assert_eq!(Pill::All.states().len(), TodoState::ALL.len());
    }
}
