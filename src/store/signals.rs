//! What the store tells the rest of the service **after** a transaction commits:
//! a todo became ready, or a todo became a dead letter. The hook dispatcher
//! receives these; sinks (which must survive a crash) are written to the outbox inside
//! the transaction instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix::{Message, Recipient};

use crate::db::models::TodoRow;
use crate::domain::ids::EndpointId;
use crate::domain::todo_state::DeadReason;
use crate::domain::wakeups::Arrived;

pub use crate::domain::signals::{DeadLettered, FinalAttempt, TodoFacts, TodoReady};

impl TodoFacts {
    /// Facts from a row plus what the row alone cannot say.
    pub fn from_row(row: &TodoRow, endpoint_slug: String, sender_gate: bool) -> Self {
        TodoFacts {
            id: row.id,
            endpoint_id: row.endpoint_id,
            endpoint_slug,
            scope_id: row.scope_id,
            queue: row.queue.clone(),
            kind: row.kind.clone(),
            source: row.source.clone(),
            title: row.title.clone(),
            attempt: row.attempt,
            max_attempts: row.max_attempts,
            attempts_total: row.attempts_total,
            created_at: row.created_at,
            event_id: row.event_id,
            sender_gate,
        }
    }
}

/// A signal produced by a committed transaction, waiting to be sent.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// See [`TodoReady`].
    Ready(TodoReady),
    /// See [`DeadLettered`].
    DeadLettered(DeadLettered),
}

/// Hears that work may have become claimable on an endpoint's queue, after the commit
/// that made it so: every `todo.ready`, and the changes that ring no doorbell (a retry
/// now, a bulk retry, a loosened admission budget). The long-poll wake-ups
/// (`service::long_poll`) are the one bell. Must not block: it runs on the committing
/// task.
pub trait ClaimBell: Send + Sync {
    /// `todos` became claimable on `endpoint`'s `queue`.
    fn ring(&self, endpoint: EndpointId, queue: &str, todos: Arrived);
}

/// Hears of every dead letter after the commit that decided it, on the instance that
/// committed it and nowhere else: counting here counts each dead letter once fleet-wide.
/// Must not block: it runs on the committing task.
pub trait DeadLetterWatch: Send + Sync {
    /// `signal`'s todo became a dead letter (an agent's or operator's fail, a reaper).
    fn dead_lettered(&self, signal: &DeadLettered);

    /// A revocation or expiry cascade dead-lettered `todos` todos (`reason`), silently:
    /// no signal, one sink notice per cascade.
    fn cascaded(&self, reason: DeadReason, todos: u64);
}

/// Where signals go. Cheap to clone; sends never block: a full mailbox drops the
/// signal and counts it (a doorbell is a hint, the queue still holds the work).
///
/// Clones share the recipients themselves, not copies: in actix 0.13 every copy of a
/// `Recipient` is a new sender that may enqueue one message past the mailbox's
/// capacity, so a copy per store clone (per worker, per sweep run) would loosen the
/// bound by one each.
#[derive(Clone, Default)]
pub struct Emitter {
    ready: Arc<[Recipient<TodoReady>]>,
    /// Recipients of a `todo.ready` only when its todo passes the sender gate: the hook
    /// dispatcher, which rings nothing for any other (an agent's bulk create would only
    /// fill its mailbox, and what it then refused would be counted as dropped).
    ready_gated: Arc<[Recipient<TodoReady>]>,
    dead: Arc<[Recipient<DeadLettered>]>,
    bells: Arc<[Arc<dyn ClaimBell>]>,
    watch: Option<Arc<dyn DeadLetterWatch>>,
    dropped: Arc<AtomicU64>,
}

impl Emitter {
    /// An emitter that sends nowhere (no dispatcher wired).
    pub fn none() -> Self {
        Self::default()
    }

    /// An emitter that sends both kinds of signal to the given recipients.
    pub fn to(ready: Recipient<TodoReady>, dead: Recipient<DeadLettered>) -> Self {
        Emitter {
            ready: Arc::new([ready]),
            ready_gated: Arc::new([]),
            dead: Arc::new([dead]),
            bells: Arc::new([]),
            watch: None,
            dropped: Arc::default(),
        }
    }

    /// An emitter for the hook dispatcher: a `todo.ready` only when its todo passes the
    /// sender gate (no other todo may ring a hook), and every dead letter (the dispatcher
    /// also reports which dead letters reached no hook, gated ones included).
    pub fn to_hooks(ready: Recipient<TodoReady>, dead: Recipient<DeadLettered>) -> Self {
        Emitter { ready_gated: Arc::new([ready]), dead: Arc::new([dead]), ..Emitter::default() }
    }

    /// This emitter also ringing `bell` whenever work may have become claimable. Built
    /// once at start-up, like [`Emitter::and`].
    pub fn ringing(self, bell: Arc<dyn ClaimBell>) -> Self {
        Emitter { bells: self.bells.iter().cloned().chain([bell]).collect(), ..self }
    }

    /// This emitter also telling `watch` of every dead letter. Built once at start-up,
    /// like [`Emitter::and`].
    pub fn watching(self, watch: Arc<dyn DeadLetterWatch>) -> Self {
        Emitter { watch: Some(watch), ..self }
    }

    /// Tells the watch that a cascade (`reason`) dead-lettered `todos` todos. Call after
    /// the commit.
    pub fn cascaded(&self, reason: DeadReason, todos: u64) {
        if let Some(watch) = self.watch.as_ref().filter(|_| todos > 0) {
            watch.cascaded(reason, todos);
        }
    }

    /// Rings every bell: `todos` became claimable on `endpoint`'s `queue` without a
    /// `todo.ready` (which rings by itself). Call after the commit.
    pub fn claimable(&self, endpoint: EndpointId, queue: &str, todos: Arrived) {
        for bell in self.bells.iter() {
            bell.ring(endpoint, queue, todos);
        }
    }

    /// This emitter also sending to `other`'s recipients (one drop count for all).
    /// Built once at start-up, before any send: the copies made here are the senders
    /// every clone then shares.
    pub fn and(self, other: Emitter) -> Self {
        Emitter {
            ready: self.ready.iter().chain(other.ready.iter()).cloned().collect(),
            ready_gated: self.ready_gated.iter().chain(other.ready_gated.iter()).cloned().collect(),
            dead: self.dead.iter().chain(other.dead.iter()).cloned().collect(),
            bells: self.bells.iter().chain(other.bells.iter()).cloned().collect(),
            watch: self.watch.or(other.watch),
            dropped: self.dropped,
        }
    }

    /// How many signals were dropped because a recipient was full or gone.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Sends signals produced by a transaction that has committed.
    pub fn emit(&self, signals: Vec<Signal>) {
        for signal in signals {
            let refused = match signal {
                Signal::Ready(m) => {
                    self.claimable(m.todo.endpoint_id, &m.todo.queue, Arrived::Todos(1));
                    let gated: &[Recipient<TodoReady>] = if m.todo.sender_gate { &self.ready_gated } else { &[] };
                    send_to_all(self.ready.iter().chain(gated), m)
                }
                Signal::DeadLettered(m) => {
                    if let Some(watch) = &self.watch {
                        watch.dead_lettered(&m);
                    }
                    send_to_all(self.dead.iter(), m)
                }
            };
            if refused > 0 {
                let total = self.dropped.fetch_add(refused, Ordering::Relaxed) + refused;
                // A flood must not become a log flood: say so on the first drop and
                // then at every power of two.
                if total.is_power_of_two() || refused > 1 {
                    tracing::warn!(dropped_total = total, "signal dropped: recipient mailbox full or stopped");
                }
            }
        }
    }
}

/// The metrics read the drop count at each scrape (`switchboard_signals_dropped_total`).
impl crate::metrics::DroppedSignals for Emitter {
    fn signals_dropped(&self) -> u64 {
        self.dropped()
    }
}

/// Offers `message` to every recipient without waiting (a copy to each but the last);
/// returns how many refused it.
fn send_to_all<'a, M>(recipients: impl Iterator<Item = &'a Recipient<M>>, message: M) -> u64
where
    M: Message<Result = ()> + Clone + Send + 'static,
{
    let mut recipients = recipients.peekable();
    let mut refused = 0;
    while let Some(r) = recipients.next() {
        if recipients.peek().is_none() {
            return refused + u64::from(r.try_send(message).is_err());
        }
        refused += u64::from(r.try_send(message.clone()).is_err());
    }
    refused
}
