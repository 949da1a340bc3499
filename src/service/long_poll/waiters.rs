//! The instance's waiting `claim-next` requests: [`WaiterQueue`] behind a lock, each
//! waiter parked on a [`Notify`] of its own. Shared by every HTTP worker (a request on
//! one worker is woken by a notice the listener hears on another thread).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use crate::domain::ids::{EndpointId, ScopeId};
use crate::domain::waiters::{Ticket, WaitRefused, WaiterQueue};
use crate::domain::wakeups::Arrival;
use crate::metrics::Metrics;

/// The waiting requests of one instance. Cheap to clone; clones share them.
#[derive(Clone)]
pub struct Waiters {
    inner: Arc<Inner>,
}

struct Inner {
    queue: Mutex<WaiterQueue<Arc<Notify>>>,
    metrics: Metrics,
}

impl Waiters {
    /// No waiters yet; at most `max` at once, `reserve_percent` of them kept for scopes
    /// other than any one.
    pub fn new(max: usize, reserve_percent: u8, metrics: Metrics) -> Self {
        let queue = Mutex::new(WaiterQueue::new(max, reserve_percent));
        Waiters { inner: Arc::new(Inner { queue, metrics }) }
    }

    /// Takes a place in `endpoint`'s line (of owner `scope`; for one queue, or any), or
    /// says why not. The place is given up when the returned [`Waiting`] is dropped,
    /// however the request ends (answered, failed, or its client gone).
    pub fn enter(&self, scope: ScopeId, endpoint: EndpointId, queue: Option<String>) -> Result<Waiting, WaitRefused> {
        let bell = Arc::new(Notify::new());
        let ticket = self.lock().enter(scope, endpoint, queue, bell.clone())?;
        Ok(Waiting { waiters: self.clone(), ticket, bell })
    }

    /// Work arrived: wakes whom [`WaiterQueue::arrived`] says.
    pub fn arrived(&self, arrival: &Arrival) {
        let woken = self.lock().arrived(arrival.endpoint, &arrival.queue, arrival.todos);
        for bell in woken.woken.iter().chain(&woken.nudged) {
            bell.notify_one();
        }
    }

    /// Every waiter claims once more (notices may have been missed).
    pub fn wake_all(&self) {
        let all = self.lock().wake_all();
        for bell in all {
            bell.notify_one();
        }
    }

    /// The server is stopping: every waiter answers now, and no request waits any more.
    pub fn close(&self) {
        let all = self.lock().close();
        for bell in all {
            bell.notify_one();
        }
    }

    /// Requests in line.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no request is in line.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> MutexGuard<'_, WaiterQueue<Arc<Notify>>> {
        // The queue holds no invariant a panicking holder could break half-way that
        // matters more than answering: carry on with it.
        self.inner.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `change` on the queue and shows the held count on the gauge.
    fn counted(&self, change: impl FnOnce(&mut WaiterQueue<Arc<Notify>>)) {
        let mut queue = self.lock();
        change(&mut queue);
        self.inner.metrics.set_long_poll_waiters(queue.held());
    }
}

/// One request's place in line. Leaves the line when dropped.
pub struct Waiting {
    waiters: Waiters,
    ticket: Ticket,
    bell: Arc<Notify>,
}

impl Waiting {
    /// Its claim came back empty: it waits in its place.
    pub fn settle(&self) {
        self.waiters.counted(|q| q.settle(&self.ticket));
    }

    /// It claims again by itself (its own timer).
    pub fn check(&self) {
        self.waiters.lock().check(&self.ticket);
    }

    /// Until it is woken (at once if it was woken since it last looked).
    pub async fn woken(&self) {
        self.bell.notified().await;
    }

    /// Whether the server is stopping.
    pub fn closed(&self) -> bool {
        self.waiters.lock().is_closed()
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.waiters.counted(|q| q.leave(&self.ticket));
    }
}
