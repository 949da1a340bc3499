//! The claim listener: one connection per instance (outside the pool, never one per
//! waiting request) LISTENs on [`crate::store::claim_notices::CLAIMS_CHANNEL`] and wakes the waiters each notice
//! names. While it is connected and idle it pings itself every few seconds
//! ([`listen::follow`]); when its connection is lost it connects again and then wakes
//! every waiter to claim once more, since notices sent meanwhile were missed.
//!
//! It runs on an arbiter of its own with the bell's sender, so neither shares a thread
//! with request handling or the sweeps.

use actix::Arbiter;

use super::bell::Bell;
use super::waiters::Waiters;
use crate::db::listen::{self, Follower};
use crate::domain::wakeups::parse;
use crate::metrics::Metrics;
use crate::store::Store;

/// The listener's session name in `pg_stat_activity`.
pub const CLAIM_LISTENER_NAME: &str = "switchboard claim listener";

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

/// The instance's claim listener and bell sender; both stop when this is dropped.
pub struct ClaimWakeups {
    arbiter: Option<Arbiter>,
}

impl ClaimWakeups {
    /// Starts listening for `waiters` and sending what `bell` is rung with through
    /// `store`. Must run inside an actix system.
    pub fn start(database_url: &str, waiters: &Waiters, bell: &Bell, store: &Store, metrics: &Metrics) -> Self {
        let arbiter = Arbiter::new();
        let (url, wakes, metrics) = (database_url.to_owned(), Wakes(waiters.clone()), metrics.clone());
        arbiter.spawn(async move {
            listen::follow(&url, CLAIM_LISTENER_NAME, crate::db::channels::CLAIMS, &wakes, &metrics).await
        });
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
