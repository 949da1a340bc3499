//! Which dead letters reached no one (`switchboard_dead_letters_unreached_total`).
//!
//! A dead letter is told two ways: its hooks are rung from the memory of the instance
//! whose commit decided it (doorbells, never written down), and its sinks' messages go
//! through the outbox, sent by whichever instance claims them. Only the deciding
//! instance can know both, so it is the one that counts, once per dead letter:
//!
//! 1. The store tells the [`DeadLetterReach`] of every dead letter after its commit
//!    ([`DeadLetterWatch`]); it counts `switchboard_dead_letters_total` there.
//! 2. The hook dispatcher carries a [`DeadLetterRings`] with the dead letter's rings;
//!    when the last ring ends (or none was made: no hook matched, or its todo may ring
//!    none) and no delivery succeeded, the dead letter waits here. With hooks off it
//!    waits at once.
//! 3. The [`ReachChecker`] looks up the waiting dead letters' outbox record and rows
//!    ([`Store::sink_reach`]) as they arrive and again every few seconds while any is
//!    open: a sink told drops it; every sink's row undeliverable, or no sink subscribed,
//!    counts it.
//!
//! Nothing here is on a todo's path: the watch only counts and queues, and the one query
//! runs for dead letters no hook reached. What is lost is said in the metric's help: a
//! dead letter whose signal was dropped, one whose instance stopped before both sides
//! ended, one still open after [`HORIZON`] or pushed out by [`MAX_WAITING`] newer ones.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::domain::todo_state::DeadReason;
use crate::metrics::{Metrics, Unreached};
use crate::sinks::statements::reach::{DeadLetterKey, SinkReach};
use crate::store::Store;
use crate::store::signals::{DeadLetterWatch, DeadLettered};

/// Dead letters waiting for their sinks at most; past it the oldest is forgotten.
pub const MAX_WAITING: usize = 10_000;

/// How long a dead letter waits for its sinks at most (a row held by a budget or an
/// unbound connection may wait for days); then it is forgotten, uncounted.
pub const HORIZON: Duration = Duration::from_secs(24 * 3600);

/// Dead letters one query of a look reads at most.
const LOOK_BATCH: usize = 1_000;

/// A dead letter no hook reached, waiting for its sinks.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    key: DeadLetterKey,
    /// Whether any hook matched it (so its rings failed, rather than none was made).
    hooks_matched: bool,
    since: Instant,
}

struct Inner {
    metrics: Metrics,
    hooks_on: bool,
    waiting: Mutex<VecDeque<Waiting>>,
    arrived: Notify,
    forgotten: AtomicU64,
}

/// The instance's count of dead letters, and its list of those no hook reached. Cheap
/// to clone; every clone shares the list.
#[derive(Clone)]
pub struct DeadLetterReach {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for DeadLetterReach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeadLetterReach").field("hooks_on", &self.inner.hooks_on).finish_non_exhaustive()
    }
}

impl DeadLetterReach {
    /// Counts into `metrics`; `hooks_on`: a dispatcher rings hooks and reports what came
    /// of a dead letter's rings (else none ever rings, and each waits for its sinks at once).
    pub fn new(metrics: Metrics, hooks_on: bool) -> Self {
        DeadLetterReach {
            inner: Arc::new(Inner {
                metrics,
                hooks_on,
                waiting: Mutex::new(VecDeque::new()),
                arrived: Notify::new(),
                forgotten: AtomicU64::new(0),
            }),
        }
    }

    /// What the dispatcher carries with `dead`'s rings.
    pub fn rings(&self, dead: &DeadLettered) -> DeadLetterRings {
        DeadLetterRings(Arc::new(HookSide {
            reach: self.clone(),
            key: key_of(dead),
            matched: AtomicBool::new(false),
            delivered: AtomicBool::new(false),
        }))
    }

    fn list(&self) -> MutexGuard<'_, VecDeque<Waiting>> {
        // Nothing panics while holding the lock; a poisoned list is still a list.
        self.inner.waiting.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `key` reached no hook: it waits for its sinks.
    fn unheard_by_hooks(&self, key: DeadLetterKey, hooks_matched: bool) {
        let pushed_out = {
            let mut list = self.list();
            list.push_back(Waiting { key, hooks_matched, since: Instant::now() });
            let over = list.len().saturating_sub(MAX_WAITING);
            list.drain(..over).count() as u64
        };
        self.forget(pushed_out);
        self.inner.arrived.notify_one();
    }

    /// Counts `n` dead letters forgotten uncounted, saying so on the first and then at
    /// every power of two (a flood must not become a log flood).
    fn forget(&self, n: u64) {
        if n == 0 {
            return;
        }
        let total = self.inner.forgotten.fetch_add(n, Ordering::Relaxed) + n;
        if total.is_power_of_two() || n > 1 {
            tracing::warn!(
                forgotten_total = total,
                "dead letters no hook reached were forgotten before their sinks ended (too many waiting, or \
                 open for a day): not counted in switchboard_dead_letters_unreached_total"
            );
        }
    }

    /// Looks up every waiting dead letter's sinks once, [`LOOK_BATCH`] to a query: counts
    /// those that reached no one, forgets those a sink told, and keeps the open ones
    /// waiting (each look reads them all, so a few long-open ones hold up no other).
    /// How many are still waiting.
    pub async fn look(&self, store: &Store) -> usize {
        let all: Vec<Waiting> = self.list().drain(..).collect();
        let mut open = Vec::new();
        for (at, batch) in all.chunks(LOOK_BATCH).enumerate() {
            let keys: Vec<DeadLetterKey> = batch.iter().map(|w| w.key).collect();
            let found: HashMap<DeadLetterKey, SinkReach> = match store.sink_reach(&keys).await {
                Ok(found) => found.into_iter().collect(),
                Err(e) => {
                    tracing::warn!(error = %e, "dead letters' sinks not looked up; looking again later");
                    open.extend_from_slice(&all[at * LOOK_BATCH..]);
                    break;
                }
            };
            for w in batch {
                match (found.get(&w.key).copied().unwrap_or(SinkReach::Open), w.hooks_matched) {
                    (SinkReach::Told, _) => {}
                    (SinkReach::Open, _) => open.push(*w),
                    (SinkReach::NoSink, false) => self.inner.metrics.dead_letter_unreached(Unreached::NoSubscriber),
                    (SinkReach::NoSink, true) | (SinkReach::Failed, _) => {
                        self.inner.metrics.dead_letter_unreached(Unreached::AllFailed)
                    }
                }
            }
        }
        self.keep(open)
    }

    /// Puts `open` back at the front (they are the oldest), forgetting those past the
    /// horizon; how many wait now.
    fn keep(&self, open: Vec<Waiting>) -> usize {
        let (kept, expired): (Vec<Waiting>, Vec<Waiting>) = open.into_iter().partition(|w| w.since.elapsed() < HORIZON);
        let (waiting, pushed_out) = {
            let mut list = self.list();
            for w in kept.into_iter().rev() {
                list.push_front(w);
            }
            let over = list.len().saturating_sub(MAX_WAITING);
            let pushed_out = list.drain(..over).count() as u64;
            (list.len(), pushed_out)
        };
        self.forget(expired.len() as u64 + pushed_out);
        waiting
    }
}

impl DeadLetterWatch for DeadLetterReach {
    fn dead_lettered(&self, signal: &DeadLettered) {
        self.inner.metrics.dead_lettered(signal.reason, 1);
        if !self.inner.hooks_on {
            self.unheard_by_hooks(key_of(signal), false);
        }
    }

    fn cascaded(&self, reason: DeadReason, todos: u64) {
        self.inner.metrics.dead_lettered(reason, todos);
    }
}

fn key_of(dead: &DeadLettered) -> DeadLetterKey {
    DeadLetterKey { todo: dead.todo.id, dead_letter_count: dead.dead_letter_count }
}

struct HookSide {
    reach: DeadLetterReach,
    key: DeadLetterKey,
    matched: AtomicBool,
    delivered: AtomicBool,
}

impl Drop for HookSide {
    fn drop(&mut self) {
        if !self.delivered.load(Ordering::Relaxed) {
            self.reach.unheard_by_hooks(self.key, self.matched.load(Ordering::Relaxed));
        }
    }
}

/// What came of one dead letter's rings, carried with them: when its last copy is
/// dropped (every ring ended, or none was made) and no ring was delivered, the dead
/// letter waits for its sinks in its [`DeadLetterReach`].
#[derive(Clone)]
pub struct DeadLetterRings(Arc<HookSide>);

impl std::fmt::Debug for DeadLetterRings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeadLetterRings").field("todo", &self.0.key.todo).finish_non_exhaustive()
    }
}

impl DeadLetterRings {
    /// A hook matched the dead letter (a ring was handed to its supervisor).
    pub fn matched(&self) {
        self.0.matched.store(true, Ordering::Relaxed);
    }

    /// A ring was delivered: the dead letter reached someone.
    pub fn delivered(&self) {
        self.0.delivered.store(true, Ordering::Relaxed);
    }
}

/// Looks up the waiting dead letters' sinks as they arrive (at most every `gap`) and
/// every `recheck` while any is open; stops when dropped.
pub struct ReachChecker {
    task: actix_rt::task::JoinHandle<()>,
}

impl ReachChecker {
    /// Starts looking for `reach` through `store`. Must run inside an actix system.
    pub fn start(reach: DeadLetterReach, store: Store, recheck: Duration, gap: Duration) -> Self {
        let task = actix_rt::spawn(async move {
            loop {
                tokio::select! {
                    () = reach.inner.arrived.notified() => {}
                    () = tokio::time::sleep(recheck) => {}
                }
                reach.look(&store).await;
                // A flood of dead letters is looked up in batches, not one look each.
                tokio::time::sleep(gap).await;
            }
        });
        ReachChecker { task }
    }
}

impl Drop for ReachChecker {
    fn drop(&mut self) {
        self.task.abort();
    }
}
