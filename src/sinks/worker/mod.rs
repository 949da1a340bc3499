//! The `OutboxWorker`: drains the sink outbox on this instance. Woken at once by the
//! NOTIFY an insert into an idle outbox makes (heard by the instance's listener
//! session, [`subscription`]), and
//! by a poll every `SWITCHBOARD_OUTBOX_POLL_MS` as the fallback (retries come due, a
//! lapsed claim of a dead worker, held rows whose token returned). Several instances
//! drain one outbox: claims are `SKIP LOCKED` and committed before any call, so each
//! row is sent by one worker.
//!
//! A claim takes dead letters' records (each sink's row is written once, with its
//! answer: `tally.rs` says when a record is owed nothing more) and due rows of sinks
//! this worker is not already draining, and hands each sink its share (`drain.rs`); up
//! to [`MAX_SINKS_DRAINING`] sinks drain at once, each on its own, so a slow or hanging
//! sink holds up only its own messages. When a drain's last send ends, the sink's next
//! share starts (its last answers are still being written meanwhile) and the worker
//! claims again.

pub mod binder;
mod claim;
mod drain;
mod render;
mod tally;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::sync::oneshot;

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message as ActixMessage, WrapFuture};

use crate::db::listen::{ChannelSubscription, Follower};
use crate::domain::ids::SinkId;
use crate::metrics::Metrics;
use crate::outbound::Guard;
use crate::sinks::rules::outcome::RetryPolicy;
use crate::sinks::rules::schemes::SchemePolicy;
use crate::store::Store;
use crate::vault::Vault;

pub use claim::{OutboxClaim, claim};
use drain::drain_sink_telling;
pub use drain::{SinkShare, drain_sink};
pub use tally::Tally;

/// The channel outbox inserts notify (migration `outbox`).
pub const OUTBOX_CHANNEL: &str = crate::db::channels::OUTBOX.name();

/// Rows one sink's drain has on the wire at once: more than one, so that a backlog
/// does not wait on one round trip per row in turn, and a slow sink's rows do not each
/// wait out the one before.
pub const MAX_SENDS_IN_FLIGHT: usize = 8;

/// Sinks one worker sends to at once. Each drain holds at most one pooled connection at
/// a time (its budget, its facts, then its recorder's writes; a drain whose sends are
/// done may still hold one for its last write while the sink's next share starts), so
/// this leaves most of the default pool of 16 to requests; and a hanging sink takes one
/// of these, not the worker.
pub const MAX_SINKS_DRAINING: usize = 4;

/// What a worker needs.
#[derive(Clone)]
pub struct OutboxDeps {
    /// The store.
    pub store: Store,
    /// Opens connection secrets.
    pub vault: Vault,
    /// Builds the guarded client.
    pub guard: Guard,
    /// Board links.
    pub base_url: String,
    /// The retry schedule.
    pub retry: RetryPolicy,
    /// The fallback poll.
    pub poll: Duration,
    /// Counts every attempt's outcome.
    pub metrics: Metrics,
    /// `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES`, checked before every send of stateless
    /// Apprise URLs (they may have been stored under a wider policy).
    pub schemes: SchemePolicy,
}

/// What a sink's drain did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DrainReport {
    /// Messages sent (a coalesced one counts once).
    pub sent: usize,
    /// Rows held by a budget.
    pub held: usize,
}

/// Wakes the worker for a claim.
#[derive(ActixMessage)]
#[rtype(result = "()")]
pub struct Wake;

/// Drains the outbox.
pub struct OutboxWorker {
    deps: OutboxDeps,
    client: Option<awc::Client>,
    claiming: bool,
    again: bool,
    draining: BTreeSet<SinkId>,
    /// Shares claimed for sinks that were draining, started when their drain ends.
    waiting: BTreeMap<SinkId, SinkShare>,
}

impl OutboxWorker {
    /// A worker over `deps`.
    pub fn new(deps: OutboxDeps) -> Self {
        OutboxWorker {
            deps,
            client: None,
            claiming: false,
            again: false,
            draining: BTreeSet::new(),
            waiting: BTreeMap::new(),
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.claiming || self.draining.len() >= MAX_SINKS_DRAINING {
            // Look again when the claim, or a drain, ends.
            self.again = true;
            return;
        }
        self.claiming = true;
        self.again = false;
        let deps = self.deps.clone();
        let draining: Vec<SinkId> = self.draining.iter().copied().collect();
        let waiting: Vec<SinkId> = self.waiting.keys().copied().collect();
        let room = MAX_SINKS_DRAINING - self.draining.len();
        ctx.spawn(async move { claim(&deps, &draining, &waiting, room).await }.into_actor(self).map(
            |outcome, act, ctx| {
                act.claiming = false;
                match outcome {
                    Ok(claim) => {
                        for share in claim.shares {
                            act.start_drain(share, ctx);
                        }
                        for share in claim.waiting {
                            // The sink's drain may have ended while this claim ran.
                            // Only this claim adds waiting shares, and it made none for
                            // a sink that had one.
                            if act.draining.contains(&share.sink) {
                                act.waiting.insert(share.sink, share);
                            } else {
                                act.start_drain(share, ctx);
                            }
                        }
                        // Claim after claim until one finds nothing to start: rows queued
                        // meanwhile may not have notified (migration `outbox_wake_when_idle`
                        // notifies only an idle outbox), so the worker itself looks again. A
                        // claim whose rows all wait for busy sinks stops the loop: each
                        // drain's end claims again.
                        if act.again || claim.progress > 0 {
                            act.tick(ctx);
                        }
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "outbox claim failed; will retry next tick");
                        if act.again {
                            act.tick(ctx);
                        }
                    }
                }
            },
        ));
    }

    fn start_drain(&mut self, share: SinkShare, ctx: &mut Context<Self>) {
        let sink = share.sink;
        // A share of claimed rows may leave more of its sink's rows due: claim again
        // when it ends. A share of held rows only asked the budget, which answers the
        // same until a token returns: the poll asks again, not a loop.
        let claimed_rows = !share.due.is_empty();
        // The claim skipped sinks being drained, and only this worker adds to them.
        self.draining.insert(sink);
        let client = self.client.get_or_insert_with(|| self.deps.guard.client()).clone();
        let deps = self.deps.clone();
        let (sent, sent_heard) = oneshot::channel();
        // Told when the share's last send ends, or dropped when the drain ends
        // otherwise: either way the sink is free for its next share, whose sends then
        // overlap this share's last writes.
        ctx.spawn(sent_heard.into_actor(self).map(move |_, act, ctx| {
            act.draining.remove(&sink);
            // What was claimed for the sink meanwhile goes out without waiting for a claim.
            if let Some(next) = act.waiting.remove(&sink) {
                act.start_drain(next, ctx);
            }
            if claimed_rows || act.again {
                act.tick(ctx);
            }
        }));
        let drain = async move { drain_sink_telling(&deps, &client, share, sent).await };
        ctx.spawn(drain.into_actor(self).map(move |outcome, act, ctx| {
            match outcome {
                Ok(report) if report.sent > 0 || report.held > 0 => {
                    tracing::debug!(sink = %sink, sent = report.sent, held = report.held, "outbox drain");
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(sink = %sink, error = %e, "outbox: a sink's rows were not all sent; they are retried"),
            }
            // The share's last writes (and its records' deletion) are done: a claim now
            // finds those records settled, not in flight.
            if act.again {
                act.tick(ctx);
            }
        }));
    }
}

impl Actor for OutboxWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(poll_ms = self.deps.poll.as_millis() as u64, "outbox worker started");
        ctx.run_interval(self.deps.poll, |act, ctx| act.tick(ctx));
        ctx.notify(Wake);
    }
}

impl Handler<Wake> for OutboxWorker {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Self::Context) {
        self.tick(ctx);
    }
}

/// The listener session's subscription that wakes `worker` when rows are queued.
pub fn subscription(worker: Addr<OutboxWorker>) -> ChannelSubscription {
    ChannelSubscription::new(crate::db::channels::OUTBOX, "outbox", Waker(worker))
}

/// Turns outbox notifications into wake-ups.
struct Waker(Addr<OutboxWorker>);

impl Follower for Waker {
    fn set_current(&self, current: bool) {
        // Listening again: whatever was queued meanwhile is looked at now.
        if current {
            self.0.do_send(Wake);
        }
    }

    fn changed(&self, _payload: &str) {
        self.0.do_send(Wake);
    }
}
