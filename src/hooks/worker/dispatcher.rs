//! The `Dispatcher`: receives the store's `TodoReady` and `DeadLettered` messages after
//! commit, applies the sender gate, finds the hooks that match the todo's endpoint and
//! queue, and hands one ring per hook to that endpoint's supervisor.
//!
//! The match comes from the [`super::HookCache`] when it has one: the database's
//! triggers announce every change that can alter a match and `hook_changes` evicts it,
//! so while that listener is connected a cached match is current and serves as the
//! re-check before a first attempt. Otherwise it is looked up, and a match that may be
//! stale (listener away, or a change raced the lookup) is re-checked in the database
//! by the ring before its first attempt; every retry re-checks there anyway.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message, Supervised, WrapFuture};

use actix_web::web::Bytes;
use chrono::Utc;

use super::{Announcement, HookChannel, HookSupervisor, Ring, SUPERVISOR_MAILBOX};
use crate::domain::ids::EndpointId;
use crate::hooks::rules::body::RingBody;
use crate::hooks::statements::HookTarget;
use crate::metrics::RingOutcome;
use crate::store::signals::{DeadLettered, TodoFacts, TodoReady};

/// Signals waiting for the dispatcher; beyond this the store's emitter drops and counts.
pub const DISPATCH_MAILBOX: usize = 1024;

/// Hook lookups running at once; an announcement arriving beyond this is dropped and
/// counted (the database is slower than the flood, and waiting would only grow memory).
pub const MAX_LOOKUPS_IN_FLIGHT: usize = 64;

/// The dispatcher. Start it on an arbiter of its own (outbound work never shares a
/// thread with request handling), with a mailbox of [`DISPATCH_MAILBOX`] from the start
/// and restarted after a panic (`crate::actors::restarting`), and wire its recipients
/// into the store's emitter.
///
/// A restart keeps what must outlive it: the supervisors (and so every hook's rate
/// state), the cache (kept coherent by the instance's listener session, which the
/// dispatcher does not own), the metrics. It forgets the lookups under
/// way, whose futures died with the panic (their announcements are lost, not counted).
pub struct Dispatcher {
    channel: HookChannel,
    /// One address per endpoint, kept: every send goes through the same sender, whose
    /// mailbox bound holds (in actix 0.13 each fresh clone of an `Addr` may enqueue one
    /// message past the capacity).
    supervisors: HashMap<EndpointId, Addr<HookSupervisor>>,
    lookups_in_flight: usize,
    /// Cached entries being looked up again in the background.
    refreshing: HashSet<(EndpointId, String)>,
}

impl Dispatcher {
    /// A dispatcher over `channel`.
    pub fn new(channel: HookChannel) -> Self {
        Dispatcher { channel, supervisors: HashMap::new(), lookups_in_flight: 0, refreshing: HashSet::new() }
    }

    /// Sends the body `build` makes about `todo` to every matching hook, unless the
    /// sender gate fails. The body is built only when some hook may want it: most ready
    /// todos land on endpoints without hooks, and that answer is usually cached.
    fn dispatch(&mut self, todo: &TodoFacts, build: impl FnOnce() -> RingBody, ctx: &mut Context<Self>) {
        // The sender gate: only a verified delivery, or a token-trust webhook's, may
        // ring anyone. An unverified sender or an agent-made todo stays silent.
        if !todo.sender_gate {
            return;
        }
        let endpoint = todo.endpoint_id;
        let cached = self.channel.cache.get_fresh(endpoint, &todo.queue);
        if cached.as_ref().is_some_and(|c| c.refresh) {
            self.look_up(endpoint, todo.queue.clone(), None, ctx);
        }
        if cached.as_ref().is_some_and(|c| c.hooks.is_empty()) {
            return;
        }
        let body = build();
        let kind = body.event_type();
        let encoded = match body.to_json() {
            Ok(bytes) => Bytes::from(bytes),
            Err(e) => {
                tracing::warn!(todo = %todo.id, error = %e, "announcement could not be encoded");
                self.channel.metrics.ring(kind, RingOutcome::Failed);
                return;
            }
        };
        let in_flight = self.channel.metrics.ring_in_flight();
        let announcement = Announcement { kind, todo: todo.id, queue: todo.queue.clone(), body: encoded, in_flight };
        match cached {
            Some(c) => self.hand_over(endpoint, &c.hooks, c.current, announcement),
            None => self.look_up(endpoint, todo.queue.clone(), Some(announcement), ctx),
        }
    }

    /// Looks up the hooks of `endpoint`'s `queue`, caches the answer and, when a
    /// announcement waits for it, hands that over. Lookups are bounded; a refresh of a
    /// cached entry already under way is not started twice.
    fn look_up(&mut self, endpoint: EndpointId, queue: String, waiting: Option<Announcement>, ctx: &mut Context<Self>) {
        let key = (endpoint, queue.clone());
        if waiting.is_none() && !self.refreshing.insert(key.clone()) {
            return;
        }
        if self.lookups_in_flight >= MAX_LOOKUPS_IN_FLIGHT {
            self.refreshing.remove(&key);
            if let Some(n) = waiting {
                self.channel.metrics.ring(n.kind, RingOutcome::Dropped);
            }
            return;
        }
        self.lookups_in_flight += 1;
        // Taken before the query: an eviction meanwhile means the answer may be stale.
        let generation = self.channel.cache.generation();
        let store = self.channel.store.clone();
        let lookup = async move { store.matching_hooks(endpoint, &queue).await };
        ctx.spawn(lookup.into_actor(self).map(move |found, act, _| {
            act.lookups_in_flight -= 1;
            act.refreshing.remove(&key);
            match found {
                Ok(targets) => {
                    let hooks: Arc<[HookTarget]> = targets.into();
                    act.channel.cache.put(generation, endpoint, &key.1, hooks.clone());
                    if let Some(n) = waiting {
                        // Read after the todo's commit; current unless a change raced it.
                        let current = act.channel.cache.generation() == generation;
                        act.hand_over(endpoint, &hooks, current, n);
                    }
                }
                Err(e) => {
                    tracing::warn!(endpoint = %endpoint, error = %e, "hook lookup failed");
                    if let Some(n) = waiting {
                        act.channel.metrics.ring(n.kind, RingOutcome::Dropped);
                    }
                }
            }
        }));
    }

    /// Gives each hook its copy of the announcement, through the endpoint's supervisor;
    /// `current` says whether the match may stand as the first attempt's re-check.
    fn hand_over(&mut self, endpoint: EndpointId, hooks: &[HookTarget], current: bool, n: Announcement) {
        if hooks.is_empty() {
            return;
        }
        let supervisor = supervisor(&mut self.supervisors, &self.channel, endpoint);
        let now = Utc::now();
        // A cached match may outlive its endpoint's expiry by up to the cache's TTL.
        for target in hooks.iter().filter(|t| t.endpoint_expires_at.is_none_or(|at| at > now)) {
            let ring = Ring { target: target.clone(), current, announcement: n.clone() };
            if supervisor.try_send(ring).is_err() {
                self.channel.metrics.ring(n.kind, RingOutcome::Dropped);
            }
        }
    }
}

/// `endpoint`'s supervisor, started on first use (on this arbiter) and again after it
/// stopped for being idle; the stopped ones of other endpoints are forgotten then too,
/// so the map holds only endpoints recently announced to.
fn supervisor<'a>(
    supervisors: &'a mut HashMap<EndpointId, Addr<HookSupervisor>>,
    channel: &HookChannel,
    endpoint: EndpointId,
) -> &'a Addr<HookSupervisor> {
    if !supervisors.get(&endpoint).is_some_and(Addr::connected) {
        supervisors.retain(|_, a| a.connected());
    }
    supervisors.entry(endpoint).or_insert_with(|| {
        // The capacity is set before the address exists: the first sends meet the bound
        // (set in `started`, it would come after this handler's sends).
        let mut ctx = Context::new();
        ctx.set_mailbox_capacity(SUPERVISOR_MAILBOX);
        ctx.run(HookSupervisor::new(endpoint, channel.clone()))
    })
}

impl Actor for Dispatcher {
    type Context = Context<Self>;
}

impl Supervised for Dispatcher {
    /// After a panic (or a stop): the futures of the lookups under way were dropped
    /// with the old context, so nothing is in flight or being refreshed any more.
    fn restarting(&mut self, _: &mut Self::Context) {
        self.lookups_in_flight = 0;
        self.refreshing.clear();
    }
}

/// Makes the dispatcher panic. Only tests send it, to show the dispatcher is restarted
/// and hooks keep ringing after a panic (no product path can make it panic on
/// purpose); nothing outside the process can reach it: no route sends it.
#[doc(hidden)]
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct CrashForTest;

impl Handler<CrashForTest> for Dispatcher {
    type Result = ();

    fn handle(&mut self, _: CrashForTest, _: &mut Self::Context) {
        panic!("dispatcher crash requested by a test");
    }
}

impl Handler<TodoReady> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: TodoReady, ctx: &mut Self::Context) {
        self.dispatch(&msg.todo, || RingBody::ready(&msg, Utc::now()), ctx);
    }
}

impl Handler<DeadLettered> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: DeadLettered, ctx: &mut Self::Context) {
        self.dispatch(&msg.todo, || RingBody::dead_lettered(&msg, Utc::now()), ctx);
    }
}

#[cfg(test)]
mod tests;
