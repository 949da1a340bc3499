use chrono::TimeZone;
use proptest::prelude::*;

use super::*;

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 9, 22, 10, 2, 0).unwrap()
}

fn at_ms(ms: i64) -> DateTime<Utc> {
    t0() + TimeDelta::milliseconds(ms)
}

/// Fifty moments spread evenly over one minute: every 1.2 s from 0 to 58.8 s.
fn fifty_in_a_minute() -> Vec<DateTime<Utc>> {
    (0..50).map(|i| at_ms(i * 1_200)).collect()
}

#[test]
fn fifty_takes_in_a_minute_from_a_full_bucket_succeed_burst_times_plus_what_refills() {
    // At 30 an hour a token takes 120 s to return; by the last take (58.8 s) only
    // 58.8 × 30 / 3600 = 0.49 of one has: exactly `burst` = 10 succeed. At 120 an hour,
    // 1.96 refill (11 in all); at 600 an hour, 9.8 (19). The bucket is below its cap
    // after the first take, so nothing that refills is lost: successes are
    // floor(burst + refilled by the last take).
    for (per_hour, expected) in [(DEFAULT_PER_HOUR, 10), (120, 11), (600, 19)] {
        let mut state = BucketState::full(DEFAULT_BURST, t0());
        let mut successes = 0;
        for now in fifty_in_a_minute() {
            let (next, took) = take(state, now, per_hour, DEFAULT_BURST);
            state = next;
            successes += u32::from(took);
        }
        assert_eq!(successes, expected, "{per_hour} an hour");
    }
}

/// One message the simulated worker sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sent {
    at: DateTime<Utc>,
    events: u32,
    coalesced: bool,
}

/// The worker's budget logic, run over `arrivals` (each a new due row, e.g. one dead
/// letter; sorted): it acts when a row arrives and when [`decide`] asks to be woken,
/// until `until`.
fn simulate(arrivals: &[DateTime<Utc>], per_hour: u32, burst: u32, until: DateTime<Utc>) -> Vec<Sent> {
    let mut state = BucketState::full(burst, arrivals.first().copied().unwrap_or(until));
    let mut held = 0;
    let mut wake = None;
    let mut next = 0;
    let mut sent = Vec::new();
    loop {
        let now = match (arrivals.get(next).copied(), wake) {
            (Some(a), Some(w)) => a.min(w),
            (Some(a), None) => a,
            (None, Some(w)) => w,
            (None, None) => break,
        };
        if now > until {
            break;
        }
        let mut due = 0;
        while arrivals.get(next).is_some_and(|a| *a <= now) {
            due += 1;
            next += 1;
        }
        let (after, d) = decide(state, now, per_hour, burst, held, due);
        state = after;
        sent.extend((0..d.send_individually).map(|_| Sent { at: now, events: 1, coalesced: false }));
        if let Some(events) = d.coalesce {
            sent.push(Sent { at: now, events, coalesced: true });
        }
        held = d.hold;
        wake = d.wake_at;
    }
    sent
}

#[test]
fn fifty_dead_letters_in_a_minute_are_at_most_burst_plus_one_messages_the_last_counting_the_rest() {
    let sent = simulate(&fifty_in_a_minute(), DEFAULT_PER_HOUR, DEFAULT_BURST, t0() + TimeDelta::hours(2));
    assert_eq!(sent.len(), DEFAULT_BURST as usize + 1);
    let (alone, last) = sent.split_at(DEFAULT_BURST as usize);
    assert!(alone.iter().all(|s| s.events == 1 && !s.coalesced));
    assert_eq!(alone.last().map(|s| s.at), Some(at_ms(10_800)), "the first ten go out as they arrive");
    assert!(last[0].coalesced);
    assert_eq!(last[0].events, 40, "the coalesced message counts every other event exactly");
    assert_eq!(sent.iter().map(|s| s.events).sum::<u32>(), 50);
    // The 11th token: 0.09 was left after the 10th take at 10.8 s, and 0.91 more takes
    // 109.2 s at 30 an hour: 120 s after the storm began (the wake-up is rounded up to
    // the next millisecond).
    assert!((at_ms(120_000)..=at_ms(120_001)).contains(&last[0].at), "{}", last[0].at);
}

#[test]
fn a_storm_spread_over_hours_is_throttled_to_the_budget_and_loses_nothing() {
    // 400 events, one every 9 s for an hour: 10 at once, then one coalesced message
    // each time a token returns (every 120 s).
    let arrivals: Vec<_> = (0..400).map(|i| at_ms(i * 9_000)).collect();
    let sent = simulate(&arrivals, DEFAULT_PER_HOUR, DEFAULT_BURST, t0() + TimeDelta::hours(3));
    assert_eq!(sent.iter().map(|s| s.events).sum::<u32>(), 400);
    let in_first_hour = sent.iter().filter(|s| s.at < t0() + TimeDelta::hours(1)).count();
    assert!(in_first_hour <= (DEFAULT_BURST + DEFAULT_PER_HOUR) as usize, "{in_first_hour}");
    assert!(sent.iter().skip(DEFAULT_BURST as usize).all(|s| s.coalesced || s.events == 1));
}

#[test]
fn a_lone_held_row_goes_out_as_itself() {
    let empty = BucketState { tokens: 0.0, refilled_at: t0() };
    let (_, d) = decide(empty, t0() + TimeDelta::seconds(120), DEFAULT_PER_HOUR, DEFAULT_BURST, 1, 0);
    assert_eq!(d, BudgetDecision { send_individually: 1, coalesce: None, hold: 0, wake_at: None });
    let (_, d) = decide(empty, t0() + TimeDelta::seconds(120), DEFAULT_PER_HOUR, DEFAULT_BURST, 1, 1);
    assert_eq!(d.coalesce, Some(2));
}

#[test]
fn with_no_token_due_rows_join_the_held_ones_and_the_worker_is_told_when_to_wake() {
    let empty = BucketState { tokens: 0.25, refilled_at: t0() };
    let (after, d) = decide(empty, t0(), DEFAULT_PER_HOUR, DEFAULT_BURST, 3, 2);
    assert_eq!(d, BudgetDecision { send_individually: 0, coalesce: None, hold: 5, wake_at: Some(at_ms(90_000)) });
    assert_eq!(after, empty);
    let (_, d) = decide(empty, t0(), DEFAULT_PER_HOUR, DEFAULT_BURST, 0, 3);
    assert_eq!(d, BudgetDecision { send_individually: 0, coalesce: None, hold: 3, wake_at: Some(at_ms(90_000)) });
    let two = BucketState { tokens: 2.0, refilled_at: t0() };
    let (after, d) = decide(two, t0(), DEFAULT_PER_HOUR, DEFAULT_BURST, 0, 5);
    assert_eq!((d.send_individually, d.hold), (2, 3));
    assert_eq!(d.wake_at, Some(at_ms(120_000)));
    assert_eq!(after.tokens, 0.0);
}

#[test]
fn the_bucket_refills_at_the_hourly_rate_up_to_the_burst() {
    let empty = BucketState { tokens: 0.0, refilled_at: t0() };
    assert_eq!(refill(empty, t0() + TimeDelta::minutes(30), 30, 10).tokens, 10.0, "15 refilled, capped at 10");
    assert_eq!(refill(empty, t0() + TimeDelta::minutes(10), 30, 10).tokens, 5.0);
    assert_eq!(BucketState::full(10, t0()).tokens, 10.0);
    assert_eq!(BucketState::full(0, t0()).tokens, 1.0, "a burst is at least one");
}

#[test]
fn a_clock_behind_the_stored_state_neither_refills_nor_rewinds() {
    let state = BucketState { tokens: 0.5, refilled_at: t0() };
    let earlier = t0() - TimeDelta::minutes(5);
    assert_eq!(refill(state, earlier, 30, 10), state);
    let (after, took) = take(state, earlier, 30, 10);
    assert!(!took);
    assert_eq!(after.refilled_at, t0());
}

#[test]
fn a_bucket_with_no_refill_never_promises_a_token() {
    let empty = BucketState { tokens: 0.0, refilled_at: t0() };
    assert_eq!(next_token_at(empty, t0(), 0), None);
    assert_eq!(next_token_at(BucketState { tokens: 1.0, ..empty }, t0(), 0), Some(t0()));
    let (_, d) = decide(empty, t0(), 0, 10, 4, 0);
    assert_eq!(d, BudgetDecision { send_individually: 0, coalesce: None, hold: 4, wake_at: None });
}

proptest! {
    #[test]
    fn a_take_at_the_promised_time_succeeds(
        tokens in 0.0f64..1.0,
        age_ms in 0i64..600_000,
        per_hour in 1u32..10_000,
        burst in 1u32..50,
    ) {
        let state = BucketState { tokens, refilled_at: t0() };
        let now = t0() + TimeDelta::milliseconds(age_ms);
        let when = next_token_at(state, now, per_hour).unwrap();
        prop_assert!(when >= now);
        let (_, took) = take(state, when, per_hour, burst);
        prop_assert!(took, "promised {} but no token", when);
        // Ten seconds early is short of a token by at least 10 × 1 / 3600 ≈ 0.0028.
        if when > now + TimeDelta::seconds(10) {
            let (_, early) = take(state, when - TimeDelta::seconds(10), per_hour, burst);
            prop_assert!(!early, "a token was there before the promised time");
        }
    }

    #[test]
    fn tokens_stay_between_zero_and_the_burst(
        steps in proptest::collection::vec(0i64..200_000, 1..60),
        per_hour in 0u32..5_000,
        burst in 0u32..30,
    ) {
        let mut state = BucketState::full(burst, t0());
        let mut now = t0();
        for step in steps {
            now += TimeDelta::milliseconds(step);
            state = take(state, now, per_hour, burst).0;
            prop_assert!(state.tokens >= 0.0 && state.tokens <= f64::from(burst.max(1)));
        }
    }
}
