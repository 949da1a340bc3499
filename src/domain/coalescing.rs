//! Server-side coalescing of single requests (group commit, at the level of requests):
//! the single claim-next and complete requests of one endpoint that arrive while earlier
//! ones are at the database are answered together by one statement, each as its own
//! request would have been answered. Pure bookkeeping over opaque waiters;
//! `service::coalesce` keeps it behind a lock and runs the batches.
//!
//! The rules:
//! - **Nobody waits for company.** A request that finds a free runner slot on its lane
//!   starts a runner at once; a lone request is a batch of one, run as today. Requests
//!   gather only while a lane's runners are all at the database, so coalescing adds no
//!   delay of its own: it only puts to use the wait a busy database already imposes.
//! - **First come, first served.** A runner takes the waiting requests in arrival order,
//!   at most `max` of them (the largest batch the statement takes).
//! - **Gone callers are skipped.** A waiter whose caller stopped waiting (its client hung
//!   up) is dropped when the batch is taken, so no work is done for nobody.
//! - **Bounded runners.** At most `runners` batches of one lane are at the database at
//!   once; the rest wait for the next batch.
//! - **No lost waiter.** Joining and taking a batch happen under one lock: a runner stops
//!   only when its lane has no waiter, and a waiter that joins after that finds a free
//!   slot and starts a runner.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// The lanes of one verb: per key (an endpoint, or an endpoint's queue), the waiting
/// requests and how many runners serve them.
#[derive(Debug)]
pub struct Lanes<K, W> {
    lanes: HashMap<K, Lane<W>>,
    runners: usize,
    waiting: usize,
}

#[derive(Debug)]
struct Lane<W> {
    waiting: VecDeque<W>,
    running: usize,
}

impl<K: Hash + Eq + Clone, W> Lanes<K, W> {
    /// No lanes yet; at most `runners` (at least 1) batches per lane at once.
    pub fn new(runners: usize) -> Self {
        Lanes { lanes: HashMap::new(), runners: runners.max(1), waiting: 0 }
    }

    /// `waiter` joins lane `key`. True: a runner slot was free and is now the caller's to
    /// fill (it must start a runner, which takes batches until [`Lanes::next_batch`] says
    /// stop).
    #[must_use]
    pub fn join(&mut self, key: K, waiter: W) -> bool {
        let lane = self.lanes.entry(key).or_insert_with(|| Lane { waiting: VecDeque::new(), running: 0 });
        lane.waiting.push_back(waiter);
        self.waiting += 1;
        if lane.running < self.runners {
            lane.running += 1;
            true
        } else {
            false
        }
    }

    /// A runner of lane `key` asks for its next batch: up to `max` waiters in arrival
    /// order, leaving out those `gone` says stopped waiting. None: nobody waits, and the
    /// runner stops (its slot is freed, and an idle lane forgotten).
    pub fn next_batch(&mut self, key: &K, max: usize, gone: impl Fn(&W) -> bool) -> Option<Vec<W>> {
        let lane = self.lanes.get_mut(key)?;
        let mut batch = Vec::new();
        while batch.len() < max.max(1) {
            let Some(waiter) = lane.waiting.pop_front() else { break };
            self.waiting -= 1;
            if !gone(&waiter) {
                batch.push(waiter);
            }
        }
        if !batch.is_empty() {
            return Some(batch);
        }
        lane.running = lane.running.saturating_sub(1);
        if lane.running == 0 {
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

    /// How many lanes have a runner or a waiter.
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

    #[test]
    fn a_lone_request_starts_a_runner_and_is_a_batch_of_one() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(2);
        assert!(lanes.join("a", 1));
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![1]));
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), None);
        assert_eq!(lanes.lanes(), 0, "an idle lane is forgotten");
    }

    #[test]
    fn requests_arriving_while_every_runner_is_busy_wait_and_go_together_in_arrival_order() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(2);
        assert!(lanes.join("a", 1));
        assert!(lanes.join("a", 2));
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![1, 2]), "the first runner took both");
        assert!(!lanes.join("a", 3), "the second runner's slot is still taken");
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![3]));
        for w in 4..=7 {
            assert!(!lanes.join("a", w));
        }
        assert_eq!(lanes.waiting(&"a"), 4);
        assert_eq!(lanes.waiting_total(), 4);
        assert_eq!(lanes.next_batch(&"a", 100, never_gone), Some(vec![4, 5, 6, 7]));
    }

    #[test]
    fn a_batch_holds_at_most_max_waiters_and_the_rest_go_next() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(1);
        assert!(lanes.join("a", 1));
        for w in 2..=5 {
            assert!(!lanes.join("a", w));
        }
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), Some(vec![1, 2, 3]));
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), Some(vec![4, 5]));
        assert_eq!(lanes.next_batch(&"a", 3, never_gone), None);
    }

    #[test]
    fn lanes_are_independent() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(1);
        assert!(lanes.join("a", 1));
        assert!(lanes.join("b", 2), "another lane's busy runner does not hold this one back");
        assert!(!lanes.join("a", 3));
        assert_eq!((lanes.waiting(&"a"), lanes.waiting(&"b"), lanes.waiting_total()), (2, 1, 3));
        assert_eq!(lanes.next_batch(&"b", 10, never_gone), Some(vec![2]));
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![1, 3]));
    }

    #[test]
    fn callers_that_stopped_waiting_are_left_out_of_the_batch() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(1);
        assert!(lanes.join("a", 1));
        for w in 2..=4 {
            assert!(!lanes.join("a", w));
        }
        assert_eq!(lanes.next_batch(&"a", 10, |w| w % 2 == 0), Some(vec![1, 3]));
        assert!(!lanes.join("a", 6));
        assert_eq!(lanes.next_batch(&"a", 10, |w| w % 2 == 0), None, "only gone callers waited: the runner stops");
        assert_eq!(lanes.waiting_total(), 0, "gone callers no longer count as waiting");
        assert!(lanes.join("a", 7), "and the next caller starts one");
    }

    #[test]
    fn a_runner_stops_only_when_nobody_waits_and_then_the_next_caller_starts_one() {
        let mut lanes: Lanes<&str, u32> = Lanes::new(1);
        assert!(lanes.join("a", 1));
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![1]));
        assert!(!lanes.join("a", 2), "the runner is still at the database");
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), Some(vec![2]), "so it takes the newcomer next");
        assert_eq!(lanes.next_batch(&"a", 10, never_gone), None);
        assert!(lanes.join("a", 3));
    }
}
