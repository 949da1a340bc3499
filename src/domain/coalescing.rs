//! Server-side coalescing of single requests under load (group commit, at the level of
//! requests): while many single claim-next or complete requests of one endpoint are in
//! flight at once, the ones that arrive are answered together by one statement, each as
//! its own request would have been answered. Pure bookkeeping over opaque waiters;
//! `service::coalesce` keeps it behind a lock and runs the batches.
//!
//! The rules:
//! - **A cold lane runs every request at once.** Each request runs alone, in parallel with
//!   the others, as if there were no coalescing: with few agents, making one request wait
//!   for another only adds its wait (measured: serializing the claims of 4 agents cost
//!   18 % of their cycles).
//! - **A lane turns hot under load.** A request that finds `hot_at` other requests of its
//!   lane in flight (waiting, or not yet answered) makes the lane hot for the next `hold`.
//!   In a hot lane requests wait, and at most `runners` batchers take the waiting ones, in
//!   arrival order, at most `max` at a time (the largest batch the statement takes). A
//!   batcher is started at once when one of the `runners` slots is free; requests already
//!   running alone finish alone.
//! - **A hot lane cools when the load is gone.** Once no request has found `hot_at`
//!   others in flight for `hold`, the lane is cold again. A batcher that finds nobody
//!   waiting stops; the next request of a still hot lane starts another.
//! - **Gone callers are skipped.** A waiter whose caller stopped waiting (its client hung
//!   up) is dropped when a batch is taken, so no work is done for nobody.
//! - **No lost waiter.** Joining and taking a batch happen under one lock; a request waits
//!   only in a hot lane, where either a batcher is started for it or `runners` batchers
//!   are already taking batches, and a batcher stops only when nobody waits.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;
use std::time::{Duration, Instant};

/// When a lane turns hot and how it is served then.
#[derive(Debug, Clone, Copy)]
pub struct Heat {
    /// Other requests of the lane in flight that make it hot (0: always hot).
    pub hot_at: usize,
    /// How long a lane stays hot after a request last found it under load.
    pub hold: Duration,
    /// Batchers of a hot lane (at least 1).
    pub runners: usize,
}

/// The lanes of one verb: per key (an endpoint, or an endpoint's queue), the waiting
/// requests and the runners that serve them.
#[derive(Debug)]
pub struct Lanes<K, W> {
    lanes: HashMap<K, Lane<W>>,
    heat: Heat,
    waiting: usize,
}

#[derive(Debug)]
struct Lane<W> {
    waiting: VecDeque<W>,
    /// Requests joined and not yet answered.
    in_flight: usize,
    /// Runners of this lane at work: alone or batching.
    running: usize,
    /// Of them, the batchers.
    batchers: usize,
    /// Until when the lane is hot.
    hot_until: Option<Instant>,
}

impl<W> Lane<W> {
    fn hot(&self, now: Instant) -> bool {
        self.hot_until.is_some_and(|t| now < t)
    }
}

/// A runner's place in its lane, handed out by [`Lanes::join`] and passed back to every
/// [`Lanes::next_batch`] of that runner.
#[derive(Debug, PartialEq, Eq)]
pub struct Runner {
    batcher: bool,
}

impl<K: Hash + Eq + Clone, W> Lanes<K, W> {
    /// No lanes yet.
    pub fn new(heat: Heat) -> Self {
        Lanes { lanes: HashMap::new(), heat: Heat { runners: heat.runners.max(1), ..heat }, waiting: 0 }
    }

    /// `waiter` joins lane `key` at `now`. Some: the caller must start a runner with this
    /// place, which takes batches until [`Lanes::next_batch`] says stop.
    #[must_use]
    pub fn join(&mut self, key: K, waiter: W, now: Instant) -> Option<Runner> {
        let lane = self.lanes.entry(key).or_insert_with(|| Lane {
            waiting: VecDeque::new(),
            in_flight: 0,
            running: 0,
            batchers: 0,
            hot_until: None,
        });
        if lane.in_flight >= self.heat.hot_at {
            lane.hot_until = Some(now + self.heat.hold);
        }
        lane.in_flight += 1;
        lane.waiting.push_back(waiter);
        self.waiting += 1;
        if !lane.hot(now) {
            lane.running += 1;
            return Some(Runner { batcher: false });
        }
        if lane.batchers < self.heat.runners {
            lane.batchers += 1;
            lane.running += 1;
            Some(Runner { batcher: true })
        } else {
            None
        }
    }

    /// `runner` of lane `key` asks for its next batch at `now`: a batcher up to `max`
    /// waiters in arrival order, a lone runner one, leaving out those `gone` says stopped
    /// waiting. None: the runner stops (nobody waits, or it is a lone runner of a hot
    /// lane, whose batchers serve the waiters); an idle lane is forgotten.
    pub fn next_batch(
        &mut self,
        key: &K,
        runner: &Runner,
        max: usize,
        gone: impl Fn(&W) -> bool,
        now: Instant,
    ) -> Option<Vec<W>> {
        let lane = self.lanes.get_mut(key)?;
        if !runner.batcher && lane.hot(now) && lane.batchers > 0 {
            return self.stop(key, runner);
        }
        let take = if runner.batcher { max.max(1) } else { 1 };
        let mut batch = Vec::new();
        while batch.len() < take {
            let Some(waiter) = lane.waiting.pop_front() else { break };
            self.waiting -= 1;
            if gone(&waiter) {
                lane.in_flight = lane.in_flight.saturating_sub(1);
            } else {
                batch.push(waiter);
            }
        }
        if batch.is_empty() { self.stop(key, runner) } else { Some(batch) }
    }

    /// `n` requests of lane `key` taken by a runner were answered.
    pub fn answered(&mut self, key: &K, n: usize) {
        if let Some(lane) = self.lanes.get_mut(key) {
            lane.in_flight = lane.in_flight.saturating_sub(n);
        }
    }

    /// `runner` leaves lane `key`.
    fn stop(&mut self, key: &K, runner: &Runner) -> Option<Vec<W>> {
        let lane = self.lanes.get_mut(key)?;
        lane.running = lane.running.saturating_sub(1);
        if runner.batcher {
            lane.batchers = lane.batchers.saturating_sub(1);
        }
        if lane.running == 0 && lane.waiting.is_empty() && lane.in_flight == 0 {
            self.lanes.remove(key);
        }
        None
    }

    /// How many requests wait on lane `key` (not counting those a runner has taken).
    pub fn waiting(&self, key: &K) -> usize {
        self.lanes.get(key).map_or(0, |l| l.waiting.len())
    }

    /// How many requests wait on every lane.
    pub fn waiting_total(&self) -> usize {
        self.waiting
    }

    /// How many lanes have a runner, a waiter or a request in flight.
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

    /// A lane that is always hot (`hot_at` 0): every request but a lone one waits for a
    /// batcher.
    fn always_hot(runners: usize) -> Lanes<&'static str, u32> {
        lanes(0, runners)
    }

    #[test]
    fn a_lone_request_starts_a_runner_and_is_a_batch_of_one() {
        let now = Instant::now();
        let mut lanes = always_hot(2);
        let r = lanes.join("a", 1, now).expect("a runner");
        assert_eq!(lanes.next_batch(&"a", &r, 100, never_gone, now), Some(vec![1]));
        lanes.answered(&"a", 1);
        assert_eq!(lanes.next_batch(&"a", &r, 100, never_gone, now), None);
        assert_eq!(lanes.lanes(), 0, "an idle lane is forgotten");
    }

    #[test]
    fn requests_arriving_while_every_batcher_is_busy_wait_and_go_together_in_arrival_order() {
        let now = Instant::now();
        let mut lanes = always_hot(2);
        let r1 = lanes.join("a", 1, now).expect("first batcher");
        let r2 = lanes.join("a", 2, now).expect("second batcher");
        assert_eq!(lanes.next_batch(&"a", &r1, 100, never_gone, now), Some(vec![1, 2]), "the first took both");
        assert!(lanes.join("a", 3, now).is_none(), "both batchers are still at work");
        assert_eq!(lanes.next_batch(&"a", &r2, 100, never_gone, now), Some(vec![3]));
        for w in 4..=7 {
            assert!(lanes.join("a", w, now).is_none());
        }
        assert_eq!(lanes.waiting(&"a"), 4);
        assert_eq!(lanes.waiting_total(), 4);
        assert_eq!(lanes.next_batch(&"a", &r1, 100, never_gone, now), Some(vec![4, 5, 6, 7]));
    }

    #[test]
    fn a_batch_holds_at_most_max_waiters_and_the_rest_go_next() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        let r = lanes.join("a", 1, now).expect("a runner");
        for w in 2..=5 {
            assert!(lanes.join("a", w, now).is_none());
        }
        assert_eq!(lanes.next_batch(&"a", &r, 3, never_gone, now), Some(vec![1, 2, 3]));
        assert_eq!(lanes.next_batch(&"a", &r, 3, never_gone, now), Some(vec![4, 5]));
        assert_eq!(lanes.next_batch(&"a", &r, 3, never_gone, now), None);
    }

    #[test]
    fn lanes_are_independent() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        let a = lanes.join("a", 1, now).expect("a runner");
        let b = lanes.join("b", 2, now).expect("another lane's busy runner does not hold this one back");
        assert!(lanes.join("a", 3, now).is_none());
        assert_eq!((lanes.waiting(&"a"), lanes.waiting(&"b"), lanes.waiting_total()), (2, 1, 3));
        assert_eq!(lanes.next_batch(&"b", &b, 10, never_gone, now), Some(vec![2]));
        assert_eq!(lanes.next_batch(&"a", &a, 10, never_gone, now), Some(vec![1, 3]));
    }

    #[test]
    fn callers_that_stopped_waiting_are_left_out_of_the_batch() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        let r = lanes.join("a", 1, now).expect("a runner");
        for w in 2..=4 {
            assert!(lanes.join("a", w, now).is_none());
        }
        assert_eq!(lanes.next_batch(&"a", &r, 10, |w| w % 2 == 0, now), Some(vec![1, 3]));
        lanes.answered(&"a", 2);
        assert!(lanes.join("a", 6, now).is_none());
        assert_eq!(lanes.next_batch(&"a", &r, 10, |w| w % 2 == 0, now), None, "only gone callers waited: it stops");
        assert_eq!(lanes.waiting_total(), 0, "gone callers no longer count as waiting");
        assert_eq!(lanes.lanes(), 0, "nor as in flight");
        assert!(lanes.join("a", 7, now).is_some(), "and the next caller starts one");
    }

    #[test]
    fn a_runner_stops_only_when_nobody_waits_and_then_the_next_caller_starts_one() {
        let now = Instant::now();
        let mut lanes = always_hot(1);
        let r = lanes.join("a", 1, now).expect("a runner");
        assert_eq!(lanes.next_batch(&"a", &r, 10, never_gone, now), Some(vec![1]));
        assert!(lanes.join("a", 2, now).is_none(), "the runner is still at the database");
        assert_eq!(lanes.next_batch(&"a", &r, 10, never_gone, now), Some(vec![2]), "so it takes the newcomer next");
        assert_eq!(lanes.next_batch(&"a", &r, 10, never_gone, now), None);
        assert!(lanes.join("a", 3, now).is_some());
    }

    #[test]
    fn a_cold_lane_runs_each_request_at_once_and_alone() {
        let now = Instant::now();
        let mut lanes = lanes(3, 1);
        let runners: Vec<Runner> = (1..=3).map(|w| lanes.join("a", w, now).expect("runs at once")).collect();
        assert_eq!(lanes.waiting_total(), 3, "taken by their runners next");
        for (w, r) in (1..=3).zip(&runners) {
            assert_eq!(lanes.next_batch(&"a", r, 100, never_gone, now), Some(vec![w]), "one each, in order");
        }
        for r in &runners {
            lanes.answered(&"a", 1);
            assert_eq!(lanes.next_batch(&"a", r, 100, never_gone, now), None);
        }
        assert_eq!(lanes.lanes(), 0);
    }

    #[test]
    fn a_request_that_finds_hot_at_others_in_flight_turns_the_lane_hot_and_the_batcher_takes_the_rest() {
        let now = Instant::now();
        let mut lanes = lanes(2, 1);
        let alone: Vec<Runner> = (1..=2).map(|w| lanes.join("a", w, now).expect("cold: at once")).collect();
        for r in &alone {
            assert!(lanes.next_batch(&"a", r, 100, never_gone, now).is_some());
        }
        let batcher = lanes.join("a", 3, now).expect("it found two in flight: hot, and its batcher starts at once");
        for w in 4..=6 {
            assert!(lanes.join("a", w, now).is_none(), "hot: waits for the batcher");
        }
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now), Some(vec![3, 4, 5, 6]));
        lanes.answered(&"a", 4);
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now), None, "nobody waits: the batcher stops");
        let later = now + HOLD / 2;
        let next = lanes.join("a", 7, later).expect("two still in flight: hot, and a batcher again");
        assert!(lanes.join("a", 8, later).is_none(), "which the next request waits for");
        for r in &alone {
            lanes.answered(&"a", 1);
            assert_eq!(lanes.next_batch(&"a", r, 100, never_gone, later), None, "a lone runner of a hot lane stops");
        }
        assert_eq!(lanes.next_batch(&"a", &next, 100, never_gone, later), Some(vec![7, 8]));
        lanes.answered(&"a", 2);
        assert_eq!(lanes.next_batch(&"a", &next, 100, never_gone, later), None);
        assert_eq!(lanes.lanes(), 0, "nothing in flight: the lane is forgotten, and with it its heat");
        assert!(lanes.join("a", 9, later).is_some_and(|r| r == Runner { batcher: false }));
    }

    #[test]
    fn a_hot_lane_cools_once_no_request_found_it_under_load_for_the_hold() {
        let now = Instant::now();
        let mut lanes = lanes(1, 1);
        let alone = lanes.join("a", 1, now).expect("cold");
        let batcher = lanes.join("a", 2, now).expect("hot");
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now), Some(vec![1, 2]), "oldest first");
        lanes.answered(&"a", 2);
        assert!(lanes.join("a", 3, now + HOLD / 2).is_none(), "within the hold: still hot, it waits for the batcher");
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now + HOLD / 2), Some(vec![3]));
        lanes.answered(&"a", 1);
        let r = lanes.join("a", 4, now + HOLD).expect("after the hold, with nobody else in flight: cold");
        assert_eq!(r, Runner { batcher: false });
        assert_eq!(lanes.next_batch(&"a", &alone, 100, never_gone, now + HOLD), Some(vec![4]), "any lone runner");
    }

    #[test]
    fn a_lone_runner_of_a_hot_lane_without_a_batcher_takes_its_request() {
        let now = Instant::now();
        let mut lanes = lanes(1, 1);
        let first = lanes.join("a", 1, now).expect("cold");
        let batcher = lanes.join("a", 2, now).expect("hot");
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now), Some(vec![1, 2]));
        lanes.answered(&"a", 2);
        assert_eq!(lanes.next_batch(&"a", &batcher, 100, never_gone, now), None, "the batcher stops");
        assert_eq!(lanes.next_batch(&"a", &first, 100, never_gone, now), None, "its request was taken");
        assert_eq!(lanes.lanes(), 0);
    }
}
