//! The `Dispatcher`: receives the store's `TodoReady` and `DeadLettered` messages after
//! commit, applies the sender gate, finds the hooks that match the todo's endpoint and
//! queue, and hands one notification per hook to that endpoint's supervisor.
//!
//! Which hooks an endpoint's queue has is cached for a second (`hook_cache`): "none" is
//! the common answer and may be served from there. A cached match is never trusted for
//! an attempt: it is re-checked in the database first (endpoint active, hook enabled,
//! filter, current secrets), like every retry. Re-checks are batched across endpoints —
//! while one query runs, arriving notifications wait and share the next — so a quiet
//! system pays one round trip per notification and a flood one per batch.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, WrapFuture};
use actix_web::web::Bytes;
use chrono::Utc;

use super::{Deliver, HookChannel, HookSupervisor, Notification};
use crate::domain::ids::{EndpointId, HookId};
use crate::metrics::NotificationOutcome;
use crate::notify::body::NotifyBody;
use crate::store::hooks::HookTarget;
use crate::store::signals::{DeadLettered, TodoFacts, TodoReady};

/// Signals waiting for the dispatcher; beyond this the store's emitter drops and counts.
pub const DISPATCH_MAILBOX: usize = 1024;

/// Notifications waiting for a re-check; beyond this they are dropped and counted.
pub const MAX_RECHECKS_WAITING: usize = 4096;

/// Notifications re-checked in one query at most.
const RECHECK_BATCH: usize = 1024;

/// Hook lookups running at once; a notification arriving beyond this is dropped and
/// counted (the database is slower than the flood, and waiting would only grow memory).
pub const MAX_LOOKUPS_IN_FLIGHT: usize = 64;

/// The dispatcher. Start it on an arbiter of its own (outbound work never shares a
/// thread with request handling) and wire its recipients into the store's emitter.
pub struct Dispatcher {
    channel: HookChannel,
    supervisors: HashMap<EndpointId, Addr<HookSupervisor>>,
    lookups_in_flight: usize,
    /// Cached entries being looked up again in the background.
    refreshing: HashSet<(EndpointId, String)>,
    /// Notifications matched from the cache, waiting for their hooks' re-check.
    waiting: Vec<(Notification, EndpointId, Arc<[HookTarget]>)>,
    /// A re-check query is running.
    rechecking: bool,
}

impl Dispatcher {
    /// A dispatcher over `channel`.
    pub fn new(channel: HookChannel) -> Self {
        Dispatcher {
            channel,
            supervisors: HashMap::new(),
            lookups_in_flight: 0,
            refreshing: HashSet::new(),
            waiting: Vec::new(),
            rechecking: false,
        }
    }

    /// Sends the body `build` makes about `todo` to every matching hook, unless the
    /// sender gate fails. The body is built only when some hook may want it: most ready
    /// todos land on endpoints without hooks, and that answer is usually cached.
    fn dispatch(&mut self, todo: &TodoFacts, build: impl FnOnce() -> NotifyBody, ctx: &mut Context<Self>) {
        // The sender gate: only a verified delivery, or a token-trust webhook's, may
        // ring anyone. An unverified sender or an agent-made todo stays silent.
        if !todo.sender_gate {
            return;
        }
        let endpoint = todo.endpoint_id;
        let cached = self.channel.cache.get_fresh(endpoint, &todo.queue);
        if let Some((_, true)) = &cached {
            self.look_up(endpoint, todo.queue.clone(), None, ctx);
        }
        if cached.as_ref().is_some_and(|(hooks, _)| hooks.is_empty()) {
            return;
        }
        let body = build();
        let kind = body.event_type();
        let encoded = match body.to_json() {
            Ok(bytes) => Bytes::from(bytes),
            Err(e) => {
                tracing::warn!(todo = %todo.id, error = %e, "notification could not be encoded");
                self.channel.metrics.notification(kind, NotificationOutcome::Failed);
                return;
            }
        };
        let notification = Notification { kind, queue: todo.queue.clone(), body: encoded };
        match cached {
            Some((hooks, _)) => self.wait_for_recheck(endpoint, hooks, notification, ctx),
            None => self.look_up(endpoint, todo.queue.clone(), Some(notification), ctx),
        }
    }

    /// Looks up the hooks of `endpoint`'s `queue`, caches the answer and, when a
    /// notification waits for it, hands that over. Lookups are bounded; a refresh of a
    /// cached entry already under way is not started twice.
    fn look_up(&mut self, endpoint: EndpointId, queue: String, waiting: Option<Notification>, ctx: &mut Context<Self>) {
        let key = (endpoint, queue.clone());
        if waiting.is_none() && !self.refreshing.insert(key.clone()) {
            return;
        }
        if self.lookups_in_flight >= MAX_LOOKUPS_IN_FLIGHT {
            self.refreshing.remove(&key);
            if let Some(n) = waiting {
                self.channel.metrics.notification(n.kind, NotificationOutcome::Dropped);
            }
            return;
        }
        self.lookups_in_flight += 1;
        let store = self.channel.store.clone();
        let lookup = async move { store.matching_hooks(endpoint, &queue).await };
        ctx.spawn(lookup.into_actor(self).map(move |found, act, _| {
            act.lookups_in_flight -= 1;
            act.refreshing.remove(&key);
            match found {
                Ok(targets) => {
                    let hooks: Arc<[HookTarget]> = targets.into();
                    act.channel.cache.put(endpoint, &key.1, hooks.clone());
                    if let Some(n) = waiting {
                        act.hand_over(endpoint, &hooks, n);
                    }
                }
                Err(e) => {
                    tracing::warn!(endpoint = %endpoint, error = %e, "hook lookup failed");
                    if let Some(n) = waiting {
                        act.channel.metrics.notification(n.kind, NotificationOutcome::Dropped);
                    }
                }
            }
        }));
    }

    /// Queues a notification matched from the cache for the next re-check.
    fn wait_for_recheck(
        &mut self,
        endpoint: EndpointId,
        hooks: Arc<[HookTarget]>,
        n: Notification,
        ctx: &mut Context<Self>,
    ) {
        if self.waiting.len() >= MAX_RECHECKS_WAITING {
            self.channel.metrics.notification(n.kind, NotificationOutcome::Dropped);
            return;
        }
        self.waiting.push((n, endpoint, hooks));
        self.recheck(ctx);
    }

    /// Re-checks the hooks of every waiting notification in one query, then hands each
    /// notification to its hooks that still match, with their current targets. A hook
    /// that no longer matches is dropped from the notification and its endpoint's cache
    /// entries forgotten. Another batch follows if more arrived meanwhile.
    fn recheck(&mut self, ctx: &mut Context<Self>) {
        if self.rechecking || self.waiting.is_empty() {
            return;
        }
        self.rechecking = true;
        let take = self.waiting.len().min(RECHECK_BATCH);
        let batch: Vec<_> = self.waiting.drain(..take).collect();
        let pairs: HashSet<(HookId, String)> =
            batch.iter().flat_map(|(n, _, hooks)| hooks.iter().map(|h| (h.hook_id, n.queue.clone()))).collect();
        let pairs: Vec<_> = pairs.into_iter().collect();
        let store = self.channel.store.clone();
        let query = async move { store.recheck_hooks(&pairs).await };
        ctx.spawn(query.into_actor(self).map(move |found, act, ctx| {
            act.rechecking = false;
            let current: HashMap<(HookId, String), HookTarget> = match found {
                Ok(rows) => rows.into_iter().map(|(hook, queue, target)| ((hook, queue), target)).collect(),
                Err(e) => {
                    tracing::warn!(error = %e, "hook re-check failed; notifications dropped");
                    HashMap::new()
                }
            };
            for (n, endpoint, hooks) in batch {
                let mut still: Vec<HookTarget> = Vec::with_capacity(hooks.len());
                for hook in hooks.iter() {
                    match current.get(&(hook.hook_id, n.queue.clone())) {
                        Some(target) => still.push(target.clone()),
                        // Deleted, disabled or re-filtered since it was cached, or its
                        // endpoint revoked or expired.
                        None => act.channel.metrics.notification(n.kind, NotificationOutcome::Dropped),
                    }
                }
                if still.len() < hooks.len() {
                    act.channel.cache.evict(endpoint);
                }
                act.hand_over(endpoint, &still, n);
            }
            act.recheck(ctx);
        }));
    }

    /// Gives each hook its copy of the notification, through the endpoint's supervisor.
    fn hand_over(&mut self, endpoint: EndpointId, hooks: &[HookTarget], n: Notification) {
        if hooks.is_empty() {
            return;
        }
        let supervisor = self.supervisor(endpoint);
        for target in hooks {
            if supervisor.try_send(Deliver { target: target.clone(), notification: n.clone() }).is_err() {
                self.channel.metrics.notification(n.kind, NotificationOutcome::Dropped);
            }
        }
    }

    /// The endpoint's supervisor, started on first use (on this arbiter) and again
    /// after it stopped for being idle; the stopped ones of other endpoints are
    /// forgotten then too, so the map holds only endpoints recently notified.
    fn supervisor(&mut self, endpoint: EndpointId) -> Addr<HookSupervisor> {
        if let Some(addr) = self.supervisors.get(&endpoint).filter(|a| a.connected()) {
            return addr.clone();
        }
        self.supervisors.retain(|_, a| a.connected());
        let addr = HookSupervisor::new(endpoint, self.channel.clone()).start();
        self.supervisors.insert(endpoint, addr.clone());
        addr
    }
}

impl Actor for Dispatcher {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.set_mailbox_capacity(DISPATCH_MAILBOX);
    }
}

impl Handler<TodoReady> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: TodoReady, ctx: &mut Self::Context) {
        self.dispatch(&msg.todo, || NotifyBody::ready(&msg, Utc::now()), ctx);
    }
}

impl Handler<DeadLettered> for Dispatcher {
    type Result = ();

    fn handle(&mut self, msg: DeadLettered, ctx: &mut Self::Context) {
        self.dispatch(&msg.todo, || NotifyBody::dead_lettered(&msg, Utc::now()), ctx);
    }
}
