//! Group commit of single claim-next and complete requests under load: while many requests of
//! one endpoint (for claims, of one endpoint's queue) are in flight at once, the ones
//! that arrive are answered together, by one statement for the claims and one
//! transaction for the completions, each caller with what its own request would have
//! answered. The rules of when requests go together are [`crate::domain::group_commit`]'s;
//! with few requests at once, each caller runs its own request, exactly as it always was.
//!
//! Why: with many agents, a cycle's cost at the database is mostly per statement (the
//! plan's set-up, the indexes opened, the claim index's walk to the first pending entry,
//! the commit's WAL flush), not per row. Requests that would have queued for the
//! database anyway share those costs instead.
//!
//! A batch runs on a task of its own, never on a caller's future: actix-web drops a
//! request's future when its client hangs up, and the other callers of the batch must
//! still be answered. A caller that stopped waiting before its batch was taken is left
//! out of it.

use std::hash::Hash;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::FutureExt;

use tokio::sync::oneshot;

use super::Services;
use crate::db::models::TodoRow;
use crate::domain::group_commit::{Heat, Lanes, Turn};
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::{Error, Result};
use crate::metrics::{GroupCommitVerb, Metrics};
use crate::store::Store;
use crate::store::todos::{CLAIM_LIMIT_MAX, ClaimOutcome, ClaimRequest, EachClaim, FINISH_ITEMS_MAX, Finish};

/// When a lane of claims turns hot, and how it is served then. A claim that finds four
/// other single requests of its endpoint in flight (claims of its queue, and the
/// endpoint's completions) turns on batching for the next 100 ms; below that every claim
/// runs at once, alone. The endpoint's completions count because the lane's own claims
/// alone made two steady states at 16 agents: cold, the claims ran alone and quickly, too
/// few were in flight at once to turn it hot, and it stayed cold; hot, they waited for the
/// batcher, and that kept it hot. The agents' whole load decides instead. Measured on 2
/// cores (Dec 5, alternating claim-cost windows against hot from four of the lane's own
/// claims): both lanes always hot +9 % cycles at 16 agents (with completions alone always
/// hot 9 % below that: the gain is the claims'); claims always hot +1 % at 8 agents and
/// -11 % at 4 (serialized claims of few agents wait for each other); this rule +2 % at 16,
/// within 1.4 % of claims always hot. Four keeps up to four agents of an endpoint exactly
/// as without group commit. The hold is long enough that a busy lane does not fall
/// back to running claims alone between two batches (at 16 agents a cycle takes about
/// 6 ms), short enough that a lane whose load is gone runs them alone again at once.
///
/// One batcher: a claim never waits on a lock (`SKIP LOCKED`), so a lane's next batch
/// only waits for the statement before it, and the requests that gather meanwhile make
/// the next batch larger (measured with 16 agents on 2 cores: one runner, batches of 4.8
/// on average and +25 % cycles against no group commit; two runners, 3.1 and +11 %; on Dec 5
/// two runners made 5 % fewer cycles than one in each of 4 alternating rounds).
pub const CLAIM_HEAT: Heat = Heat { hot_at: 4, hold: Duration::from_millis(100), runners: 1 };

/// When a lane of completions turns hot, and how it is served then: from two other
/// completions of the endpoint in flight, with two batchers. A completion waits for the row lock of a todo
/// another transaction holds (briefly: no transaction holds one across a network call),
/// and the endpoint's other completions need not wait behind it; two batchers never
/// serialize what four agents send at once.
pub const COMPLETION_HEAT: Heat = Heat { hot_at: 2, hold: Duration::from_millis(100), runners: 2 };

/// The instance's group commits, one per verb. Cheap to clone; clones share them.
#[derive(Clone)]
pub struct GroupCommits {
    claims: GroupCommit<(EndpointId, Option<String>), ClaimRequest, Result<ClaimOutcome>>,
    completions: GroupCommit<EndpointId, (TodoId, Finish), Result<TodoRow>>,
}

impl GroupCommits {
    /// No lanes yet; runs and waiting requests are counted in `metrics`.
    pub fn new(metrics: &Metrics) -> Self {
        GroupCommits {
            claims: GroupCommit::new(GroupCommitVerb::ClaimNext, CLAIM_HEAT, CLAIM_LIMIT_MAX as usize, metrics),
            completions: GroupCommit::new(GroupCommitVerb::Complete, COMPLETION_HEAT, FINISH_ITEMS_MAX, metrics),
        }
    }
}

/// Claim-next of one todo for one caller, committed as a group with the other callers' claims on the
/// same endpoint and queue: what [`Store::claim_next`] would answer.
pub(super) async fn claim_next(s: &Services, endpoint: EndpointId, req: ClaimRequest) -> Result<ClaimOutcome> {
    let key = (endpoint, req.queue.clone());
    let store = s.store.clone();
    let run = move |(endpoint, _): (EndpointId, Option<String>), reqs| claims(store.clone(), endpoint, reqs);
    // The endpoint's completions in flight are its agents' load as much as its claims.
    let completing = s.group_commits.completions.in_flight(&endpoint);
    s.group_commits.claims.submit(key, req, completing, run, |req| s.store.claim_next(endpoint, req)).await?
}

/// Completion of one claimed todo, committed as a group with the endpoint's other completions: what
/// [`Store::complete`] would answer.
pub(super) async fn complete(s: &Services, endpoint: EndpointId, id: TodoId, finish: Finish) -> Result<TodoRow> {
    let store = s.store.clone();
    let run = move |endpoint, items| completions(store.clone(), endpoint, items);
    let alone = |(id, finish)| s.store.complete(endpoint, id, finish);
    s.group_commits.completions.submit(endpoint, (id, finish), 0, run, alone).await?
}

/// Runs one batch of claims: a lone claim as always, several in one statement; a
/// budgeted queue sends each caller to claim alone.
async fn claims(
    store: Store,
    endpoint: EndpointId,
    mut reqs: Vec<ClaimRequest>,
) -> Ran<ClaimRequest, Result<ClaimOutcome>> {
    if reqs.len() == 1
        && let Some(req) = reqs.pop()
    {
        return Ran::Answered(vec![store.claim_next(endpoint, req).await]);
    }
    match store.claim_next_each(endpoint, &reqs).await {
        Ok(EachClaim::Answered(answers)) => Ran::Answered(answers),
        Ok(EachClaim::Budgeted) => Ran::Alone(reqs),
        Err(e) => failed(e, reqs),
    }
}

/// Runs one batch of completions: a lone one as always, several in one statement; an
/// item that statement did not complete is completed (or explained) alone.
async fn completions(
    store: Store,
    endpoint: EndpointId,
    mut items: Vec<(TodoId, Finish)>,
) -> Ran<(TodoId, Finish), Result<TodoRow>> {
    if items.len() == 1
        && let Some((id, finish)) = items.pop()
    {
        return Ran::Answered(vec![store.complete(endpoint, id, finish).await]);
    }
    match store.complete_each(endpoint, items.iter().map(|(id, finish)| (*id, finish))).await {
        Ok(done) => Ran::Mixed(
            done.into_iter()
                .zip(items)
                .map(|(row, item)| row.map_or(Answer::Alone(item), |r| Answer::Done(Ok(r))))
                .collect(),
        ),
        Err(e) => failed(e, items),
    }
}

/// A batch whose one statement failed changed nothing. The database out of reach is
/// every caller's answer (503; their own statements would fail alike); anything else (a
/// deadlock, a fault) is the batch's own, and each caller runs its request alone.
fn failed<I, O>(e: Error, items: Vec<I>) -> Ran<I, O> {
    match e {
        Error::Unavailable(cause) => Ran::Unavailable(cause),
        other => {
            if let Error::Internal(internal) = &other {
                internal.log("group commit batch (its requests run alone)");
            }
            Ran::Alone(items)
        }
    }
}

/// What a batch came to.
enum Ran<I, O> {
    /// One answer per item, in order.
    Answered(Vec<O>),
    /// Per item, in order: its answer, or the item given back to run alone.
    Mixed(Vec<Answer<I, O>>),
    /// Nothing was done: each caller runs its own request (given back).
    Alone(Vec<I>),
    /// The database is out of reach: every caller answers 503 with this cause.
    Unavailable(String),
    /// The batch panicked: every caller answers 500 (each answer logs it).
    Panicked,
}

/// What a caller gets back from its batch.
enum Answer<I, O> {
    /// Its request's answer.
    Done(O),
    /// Its request, to run alone.
    Alone(I),
}

/// One caller's place in a lane.
struct Waiter<I, O> {
    item: I,
    answer: oneshot::Sender<Result<Answer<I, O>>>,
}

/// The lanes of one verb, shared by every worker, and the largest batch its statement
/// takes.
struct GroupCommit<K, I, O> {
    lanes: Arc<Mutex<Lanes<K, Waiter<I, O>>>>,
    max: usize,
    verb: GroupCommitVerb,
    metrics: Metrics,
}

impl<K, I, O> Clone for GroupCommit<K, I, O> {
    fn clone(&self) -> Self {
        GroupCommit { lanes: self.lanes.clone(), max: self.max, verb: self.verb, metrics: self.metrics.clone() }
    }
}

impl<K, I, O> GroupCommit<K, I, O> {
    fn lock(&self) -> MutexGuard<'_, Lanes<K, Waiter<I, O>>> {
        // Every change to the lanes is a whole step under the lock: a panicking holder
        // cannot have left one half-made.
        self.lanes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many requests of lane `key` are in flight.
    fn in_flight(&self, key: &K) -> usize
    where
        K: Hash + Eq + Clone,
    {
        self.lock().in_flight(key)
    }
}

impl<K, I, O> GroupCommit<K, I, O>
where
    K: Hash + Eq + Clone + Send + 'static,
    I: Send + 'static,
    O: Send + 'static,
{
    fn new(verb: GroupCommitVerb, heat: Heat, max: usize, metrics: &Metrics) -> Self {
        GroupCommit { lanes: Arc::new(Mutex::new(Lanes::new(heat))), max, verb, metrics: metrics.clone() }
    }

    /// Answers `item` on lane `key` (loaded also by `elsewhere` requests in flight that
    /// are not the lane's): in a cold lane with `alone` at once, in a hot one by the batch
    /// that takes it (a batch run with `run`, on a batcher started here when a slot is
    /// free), or with `alone` if its batch gives it back.
    async fn submit<F, Fut, A, AFut>(&self, key: K, item: I, elsewhere: usize, run: F, alone: A) -> Result<O>
    where
        F: Fn(K, Vec<I>) -> Fut + Send + 'static,
        Fut: Future<Output = Ran<I, O>> + Send,
        A: FnOnce(I) -> AFut,
        AFut: Future<Output = O>,
    {
        let (tx, rx) = oneshot::channel();
        let turn = {
            let mut lanes = self.lock();
            let turn = lanes.join(key.clone(), Waiter { item, answer: tx }, Instant::now(), elsewhere);
            if !matches!(turn, Turn::Alone(_)) {
                self.metrics.group_commit_waiting(self.verb, lanes.waiting_total());
            }
            turn
        };
        match turn {
            Turn::Alone(waiter) => {
                self.metrics.group_commit_run(self.verb, 1);
                // Answered (or given up, its client gone) when this guard goes.
                let _in_flight = InFlight { group: self, key };
                return Ok(alone(waiter.item).await);
            }
            Turn::Batcher => {
                let this = self.clone();
                tokio::spawn(async move { this.run_lane(key, run).await });
            }
            Turn::Wait => {}
        }
        // The batcher answers every waiter it takes; its sender is dropped unanswered
        // only if its task is torn down (the runtime stopping).
        match rx.await.map_err(|_| Error::Unavailable("the server is stopping".into()))?? {
            Answer::Done(out) => Ok(out),
            Answer::Alone(item) => Ok(alone(item).await),
        }
    }

    /// Takes the lane's batches one after the other until nobody waits.
    async fn run_lane<F, Fut>(&self, key: K, run: F)
    where
        F: Fn(K, Vec<I>) -> Fut,
        Fut: Future<Output = Ran<I, O>>,
    {
        loop {
            let batch = {
                let mut lanes = self.lock();
                let batch = lanes.next_batch(&key, self.max, |w| w.answer.is_closed());
                self.metrics.group_commit_waiting(self.verb, lanes.waiting_total());
                batch
            };
            let Some(batch) = batch else { return };
            self.metrics.group_commit_run(self.verb, batch.len());
            let taken = batch.len();
            let (items, answers): (Vec<I>, Vec<_>) = batch.into_iter().map(|w| (w.item, w.answer)).unzip();
            // A panic in a batch must not stop its runner: the lane's other waiters count
            // on it. The batch's own callers get an internal error.
            let ran = AssertUnwindSafe(run(key.clone(), items)).catch_unwind().await.unwrap_or(Ran::Panicked);
            match ran {
                Ran::Answered(outs) => {
                    for (tx, out) in answers.into_iter().zip(outs) {
                        let _ = tx.send(Ok(Answer::Done(out)));
                    }
                }
                Ran::Alone(items) => {
                    self.metrics.group_commit_alone(self.verb, items.len());
                    for (tx, item) in answers.into_iter().zip(items) {
                        let _ = tx.send(Ok(Answer::Alone(item)));
                    }
                }
                Ran::Mixed(outs) => {
                    let alone = outs.iter().filter(|o| matches!(o, Answer::Alone(_))).count();
                    self.metrics.group_commit_alone(self.verb, alone);
                    for (tx, out) in answers.into_iter().zip(outs) {
                        let _ = tx.send(Ok(out));
                    }
                }
                Ran::Unavailable(cause) => {
                    for tx in answers {
                        let _ = tx.send(Err(Error::Unavailable(cause.clone())));
                    }
                }
                Ran::Panicked => {
                    for tx in answers {
                        let _ = tx.send(Err(Error::internal("a group commit batch panicked")));
                    }
                }
            }
            self.lock().answered(&key, taken);
        }
    }
}

/// A request of a cold lane, run by its own caller: counted in flight until dropped.
struct InFlight<'c, K: Hash + Eq + Clone, I, O> {
    group: &'c GroupCommit<K, I, O>,
    key: K,
}

impl<K: Hash + Eq + Clone, I, O> Drop for InFlight<'_, K, I, O> {
    fn drop(&mut self) {
        self.group.lock().answered(&self.key, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::signals::Emitter;

    /// Always hot: every request waits for a batch.
    const ALWAYS_HOT: Heat = Heat { hot_at: 0, hold: Duration::from_secs(60), runners: 1 };

    /// Doubles each item; a batch holding a 0 panics.
    async fn doubled(_lane: u8, items: Vec<u32>) -> Ran<u32, Result<u32>> {
        assert!(!items.contains(&0), "a batch that cannot be run");
        Ran::Answered(items.into_iter().map(|i| Ok(i * 2)).collect())
    }

    async fn unbatched(item: u32) -> Result<u32> {
        Ok(item)
    }

    #[actix_rt::test]
    async fn a_panicking_batch_answers_its_callers_with_an_internal_error_and_the_lane_runs_the_next_batch() {
        let metrics = Metrics::new(&Emitter::none());
        let lanes: GroupCommit<u8, u32, Result<u32>> =
            GroupCommit::new(GroupCommitVerb::ClaimNext, ALWAYS_HOT, 10, &metrics);

        let panicked = lanes.submit(1, 0, 0, doubled, unbatched).await;
        assert!(matches!(panicked, Err(Error::Internal(_))), "{panicked:?}");

        let next = lanes.submit(1, 21, 0, doubled, unbatched).await;
        assert_eq!(next.ok().and_then(Result::ok), Some(42), "the lane's next batch is run, not run alone");
        assert_eq!(lanes.lock().waiting_total(), 0);
    }
}
