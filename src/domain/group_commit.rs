//! Group commit of single requests under load (at the level of requests, not of the
//! WAL): while many single claim-next or complete requests of one endpoint are in
//! flight at once, the ones that arrive are answered together by one statement, each as
//! its own request would have been answered. Pure bookkeeping over opaque waiters;
//! `service::group_commit` keeps it behind a lock and runs the batches.
//!
//! The rules:
//! - **A cold lane leaves every request alone.** Its caller runs it at once, in parallel
//!   with the others, as if there were no group commit: with few agents, making one request
//!   wait for another only adds its wait (measured: serializing the claims of 4 agents
//!   cost 18 % of their cycles).
//! - **A lane turns hot under load.** A request that finds `hot_at` other requests in
//!   flight (of its lane: running alone, waiting, or in a batch not yet answered; and
//!   those its caller counts as the same load from elsewhere, such as the endpoint's
//!   completions for a lane of claims) makes the lane hot for the next `hold`. In a hot lane requests wait, and at most `runners`
//!   batchers take the waiting ones, in arrival order, at most `max` at a time (the
//!   largest batch the statement takes). A batcher is started at once when one of the
//!   `runners` slots is free.
//! - **A hot lane cools when the load is gone.** Once no request has found `hot_at`
//!   others in flight for `hold`, or none is in flight, the lane is cold again. A batcher
//!   that finds nobody waiting stops; the next request of a still hot lane starts another.
//! - **Gone callers are skipped.** A waiter whose caller stopped waiting (its client hung
//!   up) is dropped when a batch is taken, so no work is done for nobody.
//! - **No lost waiter.** Joining and taking a batch happen under one lock; a request
//!   waits only where either a batcher is started for it or `runners` batchers are
//!   already taking batches, and a batcher stops only when nobody waits.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// When a lane turns hot and how it is served then.
#[derive(Debug, Clone, Copy)]
pub struct Heat {
    /// Other requests in flight (of the lane, and counted from elsewhere) that make it
    /// hot (0: always hot).
    pub hot_at: usize,
    /// How long a lane stays hot after a request last found it under load.
    pub hold: Duration,
    /// Batchers of a hot lane (at least 1).
    pub runners: usize,
}

/// What a request that joined a lane does next.
#[derive(Debug, PartialEq, Eq)]
pub enum Turn<W> {
    /// The lane is cold: the caller runs its request itself (here it is back), and says
    /// so with [`Lanes::answered`] once it is answered.
    Alone(W),
    /// The request waits, and a batcher slot was free: the caller starts a batcher, which
    /// takes batches until [`Lanes::next_batch`] says stop.
    Batcher,
    /// The request waits for the lane's batchers.
    Wait,
}

/// The lanes of one verb: per key (an endpoint, or an endpoint's queue), the waiting
/// requests and the batchers that serve them.
#[derive(Debug)]
pub struct Lanes<K, W> {
    lanes: HashMap<K, Lane<W>>,
    heat: Heat,
    waiting: usize,
}

#[derive(Debug)]
struct Lane<W> {
    waiting: VecDeque<W>,
    /// Requests joined and not yet answered (alone, waiting, or taken in a batch).
    in_flight: usize,
    batchers: usize,
    /// Until when the lane is hot.
    hot_until: Option<Instant>,
}

impl<K: Hash + Eq + Clone, W> Lanes<K, W> {
    /// No lanes yet.
    pub fn new(heat: Heat) -> Self {
        Lanes { lanes: HashMap::new(), heat: Heat { runners: heat.runners.max(1), ..heat }, waiting: 0 }
    }

    /// `waiter` joins lane `key` at `now`, with `elsewhere` requests in flight that are
    /// not the lane's but load it as its own do (0: only the lane's own count).
    #[must_use]
    pub fn join(&mut self, key: K, waiter: W, now: Instant, elsewhere: usize) -> Turn<W> {
        let lane = self.lanes.entry(key).or_insert_with(|| Lane {
            waiting: VecDeque::new(),
            in_flight: 0,
            batchers: 0,
            hot_until: None,
        });
        if lane.in_flight + elsewhere >= self.heat.hot_at {
            lane.hot_until = Some(now + self.heat.hold);
        }
        lane.in_flight += 1;
        if lane.hot_until.is_none_or(|t| now >= t) {
            return Turn::Alone(waiter);
        }
        lane.waiting.push_back(waiter);
        self.waiting += 1;
        if lane.batchers < self.heat.runners {
            lane.batchers += 1;
            Turn::Batcher
        } else {
            Turn::Wait
        }
    }

    /// A batcher of lane `key` asks for its next batch: up to `max` waiters in arrival
    /// order, leaving out those `gone` says stopped waiting. None: nobody waits, and the
    /// batcher stops.
    pub fn next_batch(&mut self, key: &K, max: usize, gone: impl Fn(&W) -> bool) -> Option<Vec<W>> {
        let lane = self.lanes.get_mut(key)?;
        let mut batch = Vec::new();
        while batch.len() < max.max(1) {
            let Some(waiter) = lane.waiting.pop_front() else { break };
            self.waiting -= 1;
            if gone(&waiter) {
                lane.in_flight = lane.in_flight.saturating_sub(1);
            } else {
                batch.push(waiter);
            }
        }
        if !batch.is_empty() {
            return Some(batch);
        }
        lane.batchers = lane.batchers.saturating_sub(1);
        self.forget_if_idle(key);
        None
    }

    /// `n` requests of lane `key` (run alone, or taken in a batch) were answered.
    pub fn answered(&mut self, key: &K, n: usize) {
        if let Some(lane) = self.lanes.get_mut(key) {
            lane.in_flight = lane.in_flight.saturating_sub(n);
            self.forget_if_idle(key);
        }
    }

    /// A lane with nothing in flight and no batcher is forgotten, and with it its heat.
    fn forget_if_idle(&mut self, key: &K) {
        if self.lanes.get(key).is_some_and(|l| l.in_flight == 0 && l.batchers == 0) {
            self.lanes.remove(key);
        }
    }

    /// How many requests wait on lane `key` (not counting those a batcher has taken).
    pub fn waiting(&self, key: &K) -> usize {
        self.lanes.get(key).map_or(0, |l| l.waiting.len())
    }

    /// How many requests of lane `key` are in flight (alone, waiting, or in a batch).
    pub fn in_flight(&self, key: &K) -> usize {
        self.lanes.get(key).map_or(0, |l| l.in_flight)
    }

    /// How many requests wait on every lane.
    pub fn waiting_total(&self) -> usize {
        self.waiting
    }

    /// How many lanes have a request in flight or a batcher.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never_gone(_: &u32) -> bool {
        false
    }

    const HOLD: Duration = Duration::from_millis(100);

    fn lanes(hot_at: usize, runners: usize) -> Lanes<&'static str, u32> {
        Lanes::new(Heat { hot_at, hold: HOLD, runners })
    }

    /// A lane that is always hot (`hot_at` 0): every request waits for a batcher.
    fn always_hot(runners: usize) -> Lanes<&'static str, u32> {
        lanes(0, runners)
    }

    #[test]
    fn a_lone_request_of_a_hot_lane_starts_a_batcher_and_is_a_batch_of_one() {
        let now = Instant::now();
        let mut lanes = always_hot(2);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![1]));
        lanes.answered(&"a", 1);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), None);
        assert_eq!(lanes.lanes(), 0, "an idle lane is forgotten");
    }

    #[test]
    fn requests_arriving_while_every_batcher_is_busy_wait_and_go_together_in_arrival_order() {
        let now = Instant::now();
        let mut lanes = always_hot(2);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        assert_eq!(lanes.join("a", 2, now, 0), Turn::Batcher);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![1, 2]), "the first took both");
        assert_eq!(lanes.join("a", 3, now, 0), Turn::Wait, "both batchers are still at work");
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![3]));
        for w in 4..=7 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Wait);
        }
        assert_eq!(lanes.waiting(&"a"), 4);
        assert_eq!(lanes.waiting_total(), 4);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![4, 5, 6, 7]));
    }

    #[test]
    fn a_batch_holds_at_most_max_waiters_and_the_rest_go_next() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        for w in 2..=5 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Wait);
        }
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), Some(vec![1, 2, 3]));
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), Some(vec![4, 5]));
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), None);
    }

    #[test]
    fn lanes_are_independent() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        assert_eq!(
            lanes.join("b", 2, now, 0),
            Turn::Batcher,
            "another lane's busy batcher does not hold this one back"
        );
        assert_eq!(lanes.join("a", 3, now, 0), Turn::Wait);
        assert_eq!((lanes.waiting(&"a"), lanes.waiting(&"b"), lanes.waiting_total()), (2, 1, 3));
        assert_eq!(lanes.next_batch(&"b", 10, never_gone), Some(vec![2]));
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![1, 3]));
    }

    #[test]
    fn callers_that_stopped_waiting_are_left_out_of_the_batch() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        for w in 2..=4 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Wait);
        }
        assert_eq!(lanes.next_batch(&"a", 10, |w| w % 2 == 0), Some(vec![1, 3]));
        lanes.answered(&"a", 2);
        assert_eq!(lanes.join("a", 6, now, 0), Turn::Wait);
        assert_eq!(lanes.next_batch(&"a", 10, |w| w % 2 == 0), None, "only gone callers waited: it stops");
        assert_eq!(lanes.waiting_total(), 0, "gone callers no longer count as waiting");
        assert_eq!(lanes.lanes(), 0, "nor as in flight");
        assert_eq!(lanes.join("a", 7, now, 0), Turn::Batcher, "and the next caller starts one");
    }

    #[test]
    fn a_batcher_stops_only_when_nobody_waits_and_then_the_next_caller_starts_one() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Batcher);
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![1]));
        assert_eq!(lanes.join("a", 2, now, 0), Turn::Wait, "the batcher is still at the database");
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![2]), "so it takes the newcomer next");
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), None);
        assert_eq!(lanes.join("a", 3, now, 0), Turn::Batcher);
    }

    #[test]
    fn a_cold_lane_leaves_each_request_to_its_caller_and_queues_none() {
        let now = Instant::now();
        let mut lanes = lanes(3, 1);
        for w in 1..=3 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Alone(w), "runs at once, alone");
        }
        assert_eq!(lanes.waiting_total(), 0);
        lanes.answered(&"a", 3);
        assert_eq!(lanes.lanes(), 0);
    }

    #[test]
    fn a_request_that_finds_hot_at_others_in_flight_turns_the_lane_hot_and_the_batcher_takes_the_rest() {
        let now = Instant::now();
        let mut lanes = lanes(2, 1);
        for w in 1..=2 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Alone(w), "cold");
        }
        assert_eq!(lanes.join("a", 3, now, 0), Turn::Batcher, "it found two in flight: hot, and its batcher starts");
        for w in 4..=6 {
            assert_eq!(lanes.join("a", w, now, 0), Turn::Wait, "hot: waits for the batcher");
        }
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![3, 4, 5, 6]), "never the lone ones");
        lanes.answered(&"a", 4);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), None, "nobody waits: the batcher stops");
        let later = now + HOLD / 2;
        assert_eq!(lanes.join("a", 7, later, 0), Turn::Batcher, "the two alone still in flight: hot, a batcher again");
        assert_eq!(lanes.join("a", 8, later, 0), Turn::Wait, "which the next request waits for");
        lanes.answered(&"a", 2);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![7, 8]));
        lanes.answered(&"a", 2);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), None);
        assert_eq!(lanes.lanes(), 0, "nothing in flight: the lane is forgotten, and with it its heat");
        assert_eq!(lanes.join("a", 9, later, 0), Turn::Alone(9));
    }

    #[test]
    fn a_hot_lane_cools_once_no_request_found_it_under_load_for_the_hold() {
        let now = Instant::now();
        let mut lanes = lanes(1, 1);
        assert_eq!(lanes.join("a", 1, now, 0), Turn::Alone(1));
        assert_eq!(lanes.join("a", 2, now, 0), Turn::Batcher, "hot");
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![2]));
        lanes.answered(&"a", 2);
        assert_eq!(lanes.join("a", 3, now + HOLD / 2, 0), Turn::Wait, "within the hold: still hot, it waits");
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![3]));
        lanes.answered(&"a", 1);
        assert_eq!(
            lanes.join("a", 4, now + HOLD, 0),
            Turn::Alone(4),
            "after the hold, with nobody else in flight: cold"
        );
    }

    #[test]
    fn load_counted_elsewhere_turns_a_lane_hot_as_its_own_requests_do() {
        let now = Instant::now();
        let mut lanes = lanes(8, 1);
        assert_eq!(lanes.join("a", 1, now, 7), Turn::Alone(1), "seven others in flight elsewhere: cold");
        assert_eq!(lanes.in_flight(&"a"), 1);
        assert_eq!(lanes.join("a", 2, now, 7), Turn::Batcher, "one of the lane's own and seven elsewhere: hot");
        assert_eq!(lanes.join("a", 3, now + HOLD / 2, 0), Turn::Wait, "and it stays hot for the hold");
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![2, 3]));
        lanes.answered(&"a", 3);
        assert_eq!(lanes.join("a", 4, now + HOLD, 0), Turn::Alone(4), "the load gone and the hold over: cold");
    }
}
