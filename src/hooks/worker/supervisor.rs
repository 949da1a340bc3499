//! One `HookSupervisor` per endpoint with hooks: it owns the per-hook `governor` rate
//! state and runs that endpoint's rings, so a receiver that hangs or is down ties
//! up only its own endpoint's slots, never another endpoint's hooks or any claim.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::{Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::ring::{record, ring};
use super::{Announcement, HookChannel};
use crate::domain::ids::{EndpointId, HookId};
use crate::hooks::rules::body::HookEvent;
use crate::hooks::rules::health::HookHealthUpdate;
use crate::hooks::rules::health::needs_write;
use crate::hooks::statements::HookTarget;
use crate::metrics::RingOutcome;

/// Rings waiting for one supervisor; beyond this they are dropped and counted.
/// The dispatcher creates each supervisor's mailbox with it and sends through one
/// stored address, so the bound holds from the first send.
pub const SUPERVISOR_MAILBOX: usize = 256;

/// Rings one endpoint may have running at once (each may take up to three attempts
/// of 5 s plus waits); beyond this new rings are dropped and counted.
pub const MAX_RINGS_IN_FLIGHT: usize = 32;

/// A supervisor with nothing waiting or running for this long stops (the dispatcher
/// starts a new one on the endpoint's next announcement). Longer than a minute, so
/// every rate bucket it forgets has refilled and stopping changes no decision.
pub const SUPERVISOR_IDLE_STOP: Duration = Duration::from_secs(120);

/// How often delivered doorbells are written down (one statement for all of them).
pub const RING_FLUSH: Duration = Duration::from_secs(1);

/// Doorbells buffered at most before a write is forced.
const RING_BUFFER: usize = 512;

/// One announcement for one hook: a ring.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Ring {
    /// The hook as the dispatcher matched it (the first attempt's target).
    pub target: HookTarget,
    /// Whether that match is known current (read from the database, or from the cache
    /// while it is coherent, with no eviction racing); if not, the ring re-checks
    /// the hook in the database before its first attempt.
    pub current: bool,
    /// What to send.
    pub announcement: Announcement,
}

/// The supervisor of one endpoint's hooks.
pub struct HookSupervisor {
    endpoint: EndpointId,
    channel: HookChannel,
    limiters: HashMap<HookId, DefaultDirectRateLimiter>,
    /// The health last written per hook, and when (successes on a healthy hook are
    /// not written again until it is old: see `hooks::rules::health::needs_write`).
    written: HashMap<HookId, (Instant, HookHealthUpdate)>,
    /// Rings running.
    in_flight: usize,
    /// When the last ring was admitted or finished.
    last_active: Instant,
    /// Delivered `todo.ready` doorbells not written down yet (todo, queue): written in
    /// one statement a second, so a busy channel pays one insert per batch, not per
    /// ring. A crash loses at most a second of rings (a digest then under-counts
    /// unheard doorbells; the todos themselves are untouched).
    rung: Vec<(crate::domain::ids::TodoId, String)>,
    /// Built on start: the client is bound to this actor's thread.
    client: Option<awc::Client>,
}

impl HookSupervisor {
    /// A supervisor for `endpoint`'s hooks.
    pub fn new(endpoint: EndpointId, channel: HookChannel) -> Self {
        HookSupervisor {
            endpoint,
            channel,
            limiters: HashMap::new(),
            written: HashMap::new(),
            in_flight: 0,
            last_active: Instant::now(),
            rung: Vec::new(),
            client: None,
        }
    }

    /// Takes one token from `hook`'s bucket (created full on first use: the quota's
    /// burst equals its per-minute rate).
    fn admit(&mut self, hook: HookId) -> bool {
        let quota = Quota::per_minute(self.channel.rate_per_minute);
        self.limiters.entry(hook).or_insert_with(|| RateLimiter::direct(quota)).check().is_ok()
    }
}

impl Actor for HookSupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.client = Some(self.channel.guard.client());
        ctx.run_interval(SUPERVISOR_IDLE_STOP / 4, |act, ctx| {
            if act.in_flight == 0 && act.rung.is_empty() && act.last_active.elapsed() >= SUPERVISOR_IDLE_STOP {
                ctx.stop();
            }
        });
        ctx.run_interval(RING_FLUSH, |act, ctx| act.flush_rings(ctx));
    }
}

impl HookSupervisor {
    /// Runs one ring; records its outcome and, when it changed, the hook's health.
    fn start(&mut self, target: HookTarget, current: bool, n: Announcement, ctx: &mut Context<Self>) {
        let Some(client) = self.client.clone() else {
            self.finish(n.kind, RingOutcome::Dropped);
            return;
        };
        let (kind, hook) = (n.kind, target.hook_id);
        let rang = (kind == HookEvent::Ready).then(|| (n.todo, n.queue.clone()));
        let job = ring(self.channel.clone(), client, target, current, n);
        ctx.spawn(job.into_actor(self).map(move |report, act, ctx| {
            act.finish(kind, report.outcome);
            if let (Some(rung), RingOutcome::Delivered) = (rang, report.outcome) {
                act.note_doorbell(rung, ctx);
            }
            let Some(health) = report.health else { return };
            let last = act.written.get(&hook).map(|(at, h)| (h, at.elapsed()));
            if needs_write(last, &health) {
                act.written.insert(hook, (Instant::now(), health.clone()));
                // Outside the in-flight slot: the receiver already has its answer.
                ctx.spawn(record(act.channel.clone(), hook, health).into_actor(act));
            }
        }));
    }

    /// Notes a delivered doorbell (once per todo while buffered; the table keeps the
    /// first ring of a todo).
    fn note_doorbell(&mut self, rung: (crate::domain::ids::TodoId, String), ctx: &mut Context<Self>) {
        if !self.rung.iter().any(|(t, _)| *t == rung.0) {
            self.rung.push(rung);
        }
        if self.rung.len() >= RING_BUFFER {
            self.flush_rings(ctx);
        }
    }

    /// Writes the buffered doorbells in one statement.
    fn flush_rings(&mut self, ctx: &mut Context<Self>) {
        if self.rung.is_empty() {
            return;
        }
        let rings = std::mem::take(&mut self.rung);
        let (store, endpoint) = (self.channel.store.clone(), self.endpoint);
        ctx.spawn(
            async move {
                if let Err(e) = store.record_doorbells(endpoint, &rings).await {
                    tracing::warn!(endpoint = %endpoint, error = %e, "doorbell rings not recorded");
                }
            }
            .into_actor(self),
        );
    }

    /// Frees a ring's slot and counts how it ended.
    fn finish(&mut self, kind: HookEvent, outcome: RingOutcome) {
        self.in_flight -= 1;
        self.last_active = Instant::now();
        self.channel.metrics.ring(kind, outcome);
    }
}

impl Handler<Ring> for HookSupervisor {
    type Result = ();

    fn handle(&mut self, msg: Ring, ctx: &mut Self::Context) {
        let kind = msg.announcement.kind;
        let hook = msg.target.hook_id;
        if !self.admit(hook) {
            tracing::debug!(endpoint = %self.endpoint, hook = %hook, "ring over the hook's rate; dropped");
            self.channel.metrics.ring(kind, RingOutcome::Dropped);
            return;
        }
        if self.in_flight >= MAX_RINGS_IN_FLIGHT {
            tracing::debug!(endpoint = %self.endpoint, "too many rings in flight; ring dropped");
            self.channel.metrics.ring(kind, RingOutcome::Dropped);
            return;
        }
        self.in_flight += 1;
        self.last_active = Instant::now();
        self.start(msg.target, msg.current, msg.announcement, ctx);
    }
}
