//! Claim wake-ups: the instance's listener session ([`crate::db::listen`], one
//! connection outside the pool, never one per waiting request) follows
//! [`crate::store::claim_notices::CLAIMS_CHANNEL`] and wakes the waiters each notice
//! names; when its connection was lost and is back, it wakes every waiter to claim once
//! more, since notices sent meanwhile were missed.
//!
//! The bell's sender (which turns this instance's commits into notices) runs on an
//! arbiter of its own, so it never shares a thread with request handling or the sweeps.

use actix::Arbiter;

use super::bell::Bell;
use super::waiters::Waiters;
use crate::db::listen::{ChannelSubscription, Follower};
use crate::domain::wakeups::parse;
use crate::store::Store;

/// Turns notices into wake-ups.
struct Wakes(Waiters);

impl Follower for Wakes {
    fn set_current(&self, current: bool) {
        // Listening (again): whatever arrived while nobody listened is looked for now.
        // Nothing to do when the connection is lost: waiters wait on, and look when it
        // is back (or answer when their time is up).
        if current {
            self.0.wake_all();
        }
    }

    fn changed(&self, payload: &str) {
        for arrival in parse(payload) {
            self.0.arrived(&arrival);
        }
    }
}

/// The listener session's subscription that wakes `waiters`.
pub fn subscription(waiters: &Waiters) -> ChannelSubscription {
    ChannelSubscription::new(crate::db::channels::CLAIMS, "claims", Wakes(waiters.clone()))
}

/// The instance's bell sender; stops when this is dropped.
pub struct ClaimWakeups {
    arbiter: Option<Arbiter>,
}

impl ClaimWakeups {
    /// Starts sending what `bell` is rung with through `store`. Must run inside an actix
    /// system.
    pub fn start(bell: &Bell, store: &Store) -> Self {
        let arbiter = Arbiter::new();
        arbiter.spawn(bell.clone().send(store.clone()));
        ClaimWakeups { arbiter: Some(arbiter) }
    }
}

impl Drop for ClaimWakeups {
    fn drop(&mut self) {
        if let Some(arbiter) = self.arbiter.take() {
            arbiter.stop();
        }
    }
}
