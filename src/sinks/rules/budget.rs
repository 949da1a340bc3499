//! The per-sink budget (SPEC section 10, "Budget"): a token bucket of `burst` tokens
//! refilled at `per_hour` tokens an hour (defaults 30 and 10), kept in the database as
//! `(tokens, refilled_at)` so every instance spends the same bucket. A notification
//! takes one token; with none left, rows are **held**, and when a token returns every
//! held row of the sink goes out as **one** coalesced message, for one token.
//!
//! So a storm costs at most `burst + 1` messages until the bucket refills: `burst` sent
//! one by one, then one coalesced message that counts the rest. At 30 an hour a token
//! returns every 120 s, so within one minute of a storm less than one token refills
//! (half of one, at most): fifty dead letters in a minute are ten messages, then an
//! eleventh, about two minutes after the storm began, saying "40 more events".
//!
//! The functions are pure over the stored state: the worker reads the row (locked),
//! calls [`decide`], writes back the new state and acts on the decision.

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

mod spend;
pub use spend::{Spending, StoredBudget, spend};

/// Messages an hour by default (`SWITCHBOARD_SINK_BUDGET_PER_HOUR`).
pub const DEFAULT_PER_HOUR: u32 = 30;
/// Tokens a full bucket holds by default (`SWITCHBOARD_SINK_BURST`).
pub const DEFAULT_BURST: u32 = 10;
/// Test sends a sink accepts per minute (they bypass the budget).
pub const TEST_SENDS_PER_MINUTE: u32 = 6;

/// How far below a whole token still counts as one, so a wake-up computed by
/// [`next_token_at`] is never refused by floating-point rounding.
const EPSILON: f64 = 1e-6;

/// A sink's bucket as stored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BucketState {
    /// Tokens left (fractional between refills).
    pub tokens: f64,
    /// When `tokens` was last brought up to date.
    pub refilled_at: DateTime<Utc>,
}

impl BucketState {
    /// A full bucket of `burst` tokens (a new sink, or one whose budget was reset).
    pub fn full(burst: u32, now: DateTime<Utc>) -> Self {
        BucketState { tokens: f64::from(burst.max(1)), refilled_at: now }
    }
}

/// The bucket brought up to `now`: `per_hour / 3600` tokens a second since
/// `refilled_at`, at most `burst` (taken as at least 1) in all. A `now` before
/// `refilled_at` (another instance's clock ran ahead) adds nothing and moves nothing back.
pub fn refill(state: BucketState, now: DateTime<Utc>, per_hour: u32, burst: u32) -> BucketState {
    let cap = f64::from(burst.max(1));
    let elapsed = (now - state.refilled_at).to_std().map_or(0.0, |d| d.as_secs_f64());
    let tokens = (state.tokens.max(0.0) + elapsed * f64::from(per_hour) / 3600.0).min(cap);
    BucketState { tokens, refilled_at: state.refilled_at.max(now) }
}

/// Takes one token at `now` if there is one: the new state, and whether it was taken.
pub fn take(state: BucketState, now: DateTime<Utc>, per_hour: u32, burst: u32) -> (BucketState, bool) {
    let mut state = refill(state, now, per_hour, burst);
    if state.tokens + EPSILON >= 1.0 {
        state.tokens = (state.tokens - 1.0).max(0.0);
        (state, true)
    } else {
        (state, false)
    }
}

/// When the bucket next holds a whole token: `now` if it does already, `None` if it
/// never will (`per_hour` 0). Rounded up to the next millisecond.
pub fn next_token_at(state: BucketState, now: DateTime<Utc>, per_hour: u32) -> Option<DateTime<Utc>> {
    let elapsed = (now - state.refilled_at).to_std().map_or(0.0, |d| d.as_secs_f64());
    let tokens = state.tokens.max(0.0) + elapsed * f64::from(per_hour) / 3600.0;
    if tokens + EPSILON >= 1.0 {
        return Some(now);
    }
    if per_hour == 0 {
        return None;
    }
    let wait_ms = ((1.0 - tokens) * 3_600_000.0 / f64::from(per_hour)).ceil();
    let wait = TimeDelta::from_std(Duration::from_millis(wait_ms as u64)).ok()?;
    now.checked_add_signed(wait)
}

/// What the worker does with a sink's rows at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetDecision {
    /// Due rows to send one by one (each took a token).
    pub send_individually: u32,
    /// Rows to send as one coalesced message (every held row and every due row), when
    /// held rows met a returning token.
    pub coalesce: Option<u32>,
    /// Rows left held afterwards.
    pub hold: u32,
    /// When to look again, if rows are left held.
    pub wake_at: Option<DateTime<Utc>>,
}

/// The budget's decision at `now` for a sink with `held` rows already held and `due`
/// rows newly due (none of them held yet).
///
/// - With rows held, one token sends everything (held and due) as one coalesced
///   message; with no token, the due rows join the held ones.
/// - With nothing held, each due row takes a token and goes out alone; the rows the
///   tokens do not cover are held.
/// - A lone row (one held and nothing due) goes out as itself, not as "1 more event".
pub fn decide(
    state: BucketState,
    now: DateTime<Utc>,
    per_hour: u32,
    burst: u32,
    held: u32,
    due: u32,
) -> (BucketState, BudgetDecision) {
    let mut state = refill(state, now, per_hour, burst);
    let mut decision = BudgetDecision { send_individually: 0, coalesce: None, hold: 0, wake_at: None };
    if held > 0 {
        let (after, took) = take(state, now, per_hour, burst);
        state = after;
        let rows = held.saturating_add(due);
        match (took, rows) {
            (true, 1) => decision.send_individually = 1,
            (true, _) => decision.coalesce = Some(rows),
            (false, _) => decision.hold = rows,
        }
    } else {
        for sent in 0..due {
            let (after, took) = take(state, now, per_hour, burst);
            state = after;
            if !took {
                decision.hold = due - sent;
                break;
            }
            decision.send_individually += 1;
        }
    }
    if decision.hold > 0 {
        decision.wake_at = next_token_at(state, now, per_hour);
    }
    (state, decision)
}

#[cfg(test)]
mod tests;
