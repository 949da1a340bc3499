//! Starting an actor that outlives its own panics, behind one address.
//!
//! actix's `Supervisor` restarts an actor that *stops*, but a panic in a handler (or in
//! a future the actor spawned) unwinds out of the arbiter's task: the task is dropped
//! with the actor's mailbox, every `Addr` and `Recipient` held elsewhere goes dead, and
//! nothing restarts. Here the actor's context is polled inside `catch_unwind`; after a
//! panic the context is reset (its spawned futures dropped), the actor's
//! [`Supervised::restarting`] puts its own state right, and `started` runs again, on
//! the same mailbox, so the senders held by the rest of the process keep working.
//!
//! The mailbox is created with its capacity, so no sender ever sees actix's default.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use actix::dev::ContextFut;
use actix::dev::channel::channel;
use actix::{Actor, Addr, Context, Supervised};
use actix_rt::ArbiterHandle;

/// A first panic is restarted at once; panics that follow each other closer than this
/// wait before the next restart, doubling up to [`MAX_BACKOFF`], so an actor that
/// panics on start does not spin a thread and flood the log.
const CALM: Duration = Duration::from_secs(60);

/// The longest wait before a restart.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The first wait when panics repeat.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Starts the actor `make` builds on `arbiter`, with a mailbox of `capacity`, restarted
/// after every panic (and, as under actix's `Supervisor`, after it stops while anyone
/// still holds its address). `name` only labels the log line a restart writes.
pub fn start_in_arbiter<A, F>(arbiter: &ArbiterHandle, name: &'static str, capacity: usize, make: F) -> Addr<A>
where
    A: Supervised + Actor<Context = Context<A>>,
    F: FnOnce() -> A + Send + 'static,
{
    let (tx, rx) = channel(capacity);
    arbiter.spawn_fn(move || {
        let fut = Context::with_receiver(rx).into_future(make());
        actix_rt::spawn(Restarting { fut, name, last_panic: None, backoff: Duration::ZERO, waiting: None });
    });
    Addr::new(tx)
}

/// The actor's context, polled so that a panic restarts it.
struct Restarting<A>
where
    A: Supervised + Actor<Context = Context<A>>,
{
    fut: ContextFut<A, Context<A>>,
    name: &'static str,
    /// When the last panic was caught.
    last_panic: Option<Instant>,
    /// The wait before the next restart after a panic soon after the last.
    backoff: Duration,
    /// A restart waiting out its backoff.
    waiting: Option<Pin<Box<actix_rt::time::Sleep>>>,
}

impl<A> Restarting<A>
where
    A: Supervised + Actor<Context = Context<A>>,
{
    /// How long to wait before restarting after a panic now.
    fn next_wait(&mut self) -> Duration {
        let now = Instant::now();
        let repeated = self.last_panic.is_some_and(|at| now.duration_since(at) < CALM);
        self.last_panic = Some(now);
        self.backoff = if repeated { (self.backoff * 2).clamp(FIRST_BACKOFF, MAX_BACKOFF) } else { Duration::ZERO };
        self.backoff
    }
}

impl<A> Future for Restarting<A>
where
    A: Supervised + Actor<Context = Context<A>>,
{
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            if let Some(wait) = this.waiting.as_mut() {
                if wait.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.waiting = None;
            }
            let fut = &mut this.fut;
            match catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *fut).poll(cx))) {
                Ok(Poll::Pending) => return Poll::Pending,
                // Stopped: restarted while its mailbox has senders, as actix's Supervisor does.
                Ok(Poll::Ready(())) => {
                    if !this.fut.restart() {
                        return Poll::Ready(());
                    }
                }
                Err(_) => {
                    // The panic's message went to stderr through the panic hook already;
                    // nothing of the message that caused it is logged here.
                    let wait = this.next_wait();
                    tracing::error!(
                        actor = this.name,
                        restart_in_ms = wait.as_millis() as u64,
                        "actor panicked; restarting it"
                    );
                    if !this.fut.restart() {
                        return Poll::Ready(());
                    }
                    if !wait.is_zero() {
                        this.waiting = Some(Box::pin(actix_rt::time::sleep(wait)));
                    }
                }
            }
        }
    }
}
