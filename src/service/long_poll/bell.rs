//! The claim bell: rung by the store after every commit that may make work claimable
//! (see [`ClaimBell`]), it sums arrivals per (endpoint, queue) and sends them as notices
//! on [`CLAIMS_CHANNEL`], which every instance's claim listener hears (this one's too:
//! a waiter is woken the same way whichever instance made the work).
//!
//! Ringing never blocks and never waits on the database: it adds to a sum under a lock.
//! One sender task per instance sends what accumulated, one statement at a time, so a
//! burst of arrivals while a notice is on its way goes out as one more notice, not one
//! each; and at most one notice transaction starts per [`SPACING`], which bounds what a
//! flood of creates costs the database whether anyone waits or not.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep, sleep_until};

use crate::domain::ids::EndpointId;
use crate::domain::wakeups::{Arrived, PendingArrivals};
use crate::store::Store;
use crate::store::claim_notices::CLAIMS_CHANNEL;
use crate::store::signals::ClaimBell;

/// Least time between the starts of two notice transactions (an idle bell sends at once).
pub const SPACING: Duration = Duration::from_millis(5);

/// Wait before sending again after a failure (the arrivals are kept meanwhile).
const RETRY_WAIT: Duration = Duration::from_secs(1);

/// The bell. Cheap to clone; clones ring the same one.
#[derive(Clone, Default)]
pub struct Bell {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    pending: Mutex<PendingArrivals>,
    rung: Notify,
}

impl ClaimBell for Bell {
    fn ring(&self, endpoint: EndpointId, queue: &str, todos: Arrived) {
        self.pending().add(endpoint, queue, todos);
        self.inner.rung.notify_one();
    }
}

impl Bell {
    /// A bell nobody rang yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sends what is rung through `store`'s pool, for as long as the future is polled.
    pub async fn send(self, store: Store) {
        loop {
            self.inner.rung.notified().await;
            loop {
                let payloads = self.pending().take_payloads();
                if payloads.is_empty() {
                    break;
                }
                let started = Instant::now();
                if let Err(e) = store.send_claim_notices(&payloads).await {
                    // Kept and sent again: a waiter elsewhere would otherwise sleep until its
                    // time is up. (A lost database also costs every listener its
                    // connection, and a listener back makes all its waiters look.)
                    tracing::warn!(error = %e, channel = CLAIMS_CHANNEL, "claim wake-up notice not sent; retrying");
                    self.pending().restore(&payloads);
                    sleep(RETRY_WAIT).await;
                    continue;
                }
                sleep_until(started + SPACING).await;
            }
        }
    }

    fn pending(&self) -> MutexGuard<'_, PendingArrivals> {
        self.inner.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
