//! One `HookSupervisor` per endpoint with hooks: it owns the per-hook `governor` rate
//! state and runs that endpoint's deliveries, so a receiver that hangs or is down ties
//! up only its own endpoint's slots, never another endpoint's hooks or any claim.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use actix::{Actor, ActorContext, ActorFutureExt, AsyncContext, Context, Handler, Message, WrapFuture};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::delivery::{deliver, record};
use super::{HookChannel, Notification};
use crate::domain::ids::{EndpointId, HookId};
use crate::hooks::rules::body::NotifyType;
use crate::hooks::rules::health::HookHealthUpdate;
use crate::hooks::rules::health::needs_write;
use crate::hooks::statements::HookTarget;
use crate::metrics::NotificationOutcome;

/// Notifications waiting for one supervisor; beyond this they are dropped and counted.
/// The dispatcher creates each supervisor's mailbox with it and sends through one
/// stored address, so the bound holds from the first send.
pub const SUPERVISOR_MAILBOX: usize = 256;

/// Deliveries one endpoint may have running at once (each may take up to three
/// attempts of 5 s plus waits); beyond this new notifications are dropped and counted.
pub const MAX_DELIVERIES_IN_FLIGHT: usize = 32;

/// A supervisor with nothing waiting or running for this long stops (the dispatcher
/// starts a new one on the endpoint's next notification). Longer than a minute, so
/// every rate bucket it forgets has refilled and stopping changes no decision.
pub const SUPERVISOR_IDLE_STOP: Duration = Duration::from_secs(120);

/// How often delivered doorbells are written down (one statement for all of them).
pub const RING_FLUSH: Duration = Duration::from_secs(1);

/// Doorbells buffered at most before a write is forced.
const RING_BUFFER: usize = 512;

/// One notification for one hook.
#[derive(Debug, Clone, Message)]
#[rtype(result = "()")]
pub struct Deliver {
    /// The hook as the dispatcher matched it (the first attempt's target).
    pub target: HookTarget,
    /// Whether that match is known current (read from the database, or from the cache
    /// while it is coherent, with no eviction racing); if not, the delivery re-checks
    /// the hook in the database before its first attempt.
    pub current: bool,
    /// What to send.
    pub notification: Notification,
}

/// The supervisor of one endpoint's hooks.
pub struct HookSupervisor {
    endpoint: EndpointId,
    channel: HookChannel,
    limiters: HashMap<HookId, DefaultDirectRateLimiter>,
    /// The health last written per hook, and when (successes on a healthy hook are
    /// not written again until it is old: see `notify::health::needs_write`).
    written: HashMap<HookId, (Instant, HookHealthUpdate)>,
    /// Deliveries running.
    in_flight: usize,
    /// When the last delivery was admitted or finished.
    last_active: Instant,
    /// Delivered `todo.ready` doorbells not written down yet (todo, queue): written in
    /// one statement a second, so a busy channel pays one insert per batch, not per
    /// delivery. A crash loses at most a second of rings (a digest then under-counts
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
    /// Runs one delivery; records its outcome and, when it changed, the hook's health.
    fn start(&mut self, target: HookTarget, current: bool, n: Notification, ctx: &mut Context<Self>) {
        let Some(client) = self.client.clone() else {
            self.finish(n.kind, NotificationOutcome::Dropped);
            return;
        };
        let (kind, hook) = (n.kind, target.hook_id);
        let rang = (kind == NotifyType::Ready).then(|| (n.todo, n.queue.clone()));
        let job = deliver(self.channel.clone(), client, target, current, n);
        ctx.spawn(job.into_actor(self).map(move |report, act, ctx| {
            act.finish(kind, report.outcome);
            if let (Some(ring), NotificationOutcome::Delivered) = (rang, report.outcome) {
                act.ring(ring, ctx);
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
    fn ring(&mut self, ring: (crate::domain::ids::TodoId, String), ctx: &mut Context<Self>) {
        if !self.rung.iter().any(|(t, _)| *t == ring.0) {
            self.rung.push(ring);
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

    /// Frees a delivery's slot and counts how it ended.
    fn finish(&mut self, kind: NotifyType, outcome: NotificationOutcome) {
        self.in_flight -= 1;
        self.last_active = Instant::now();
        self.channel.metrics.notification(kind, outcome);
    }
}

impl Handler<Deliver> for HookSupervisor {
    type Result = ();

    fn handle(&mut self, msg: Deliver, ctx: &mut Self::Context) {
        let kind = msg.notification.kind;
        let hook = msg.target.hook_id;
        if !self.admit(hook) {
            tracing::debug!(endpoint = %self.endpoint, hook = %hook, "notification over the hook's rate; dropped");
            self.channel.metrics.notification(kind, NotificationOutcome::Dropped);
            return;
        }
        if self.in_flight >= MAX_DELIVERIES_IN_FLIGHT {
            tracing::debug!(endpoint = %self.endpoint, "too many deliveries in flight; notification dropped");
            self.channel.metrics.notification(kind, NotificationOutcome::Dropped);
            return;
        }
        self.in_flight += 1;
        self.last_active = Instant::now();
        self.start(msg.target, msg.current, msg.notification, ctx);
    }
}
