//! Agents doing claim_next → complete cycles, and the windows that count them. The
//! intake benchmark's senders and creators, and the notify-hook benchmark's feeders and
//! posters, run in the same harness (intake.rs, hooks/load.rs).
//!
//! A REST agent is what a real agent does: bearer token, JSON over HTTP/1.1 keep-alive,
//! claim on one queue, complete with the lease token. A raw agent makes the very same
//! two store calls (`Store::claim_next`, `Store::complete`, hence the same SQL) through
//! one pool with no HTTP in between: the ceiling the REST figure is compared with.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use switchboard::domain::ids::EndpointId;
use switchboard::store::Store;
use switchboard::store::todos::{ClaimRequest, Finish};

use crate::BenchResult;
use crate::database::{QUEUE, Seeded};
use crate::machine::{CpuSample, CpuSpent, Probe};

/// One simulated agent.
pub enum Agent {
    /// Over the REST API, with its own HTTP client (its own keep-alive connection).
    Rest {
        /// The agent's HTTP client.
        client: awc::Client,
        /// `…/api/v1/agent/todos/claim-next`.
        claim_url: String,
        /// `…/api/v1/agent/todos/`, to which `<id>/complete` is appended.
        todos_url: String,
        /// `Bearer sbk_…`.
        authorization: String,
    },
    /// Straight through the library's store, on a shared pool.
    Raw {
        /// The store (its pool is shared by every raw agent).
        store: Store,
        /// The endpoint whose queue it drains.
        endpoint: EndpointId,
    },
    /// Over the REST API in batches (throughput/agents.rs): one cycle claims up to
    /// `limit` todos with one claim-next and completes them with one batch complete,
    /// or creates `limit` todos with one batch create.
    Batch(Box<dyn BatchWork>),
    /// Work another measurement defines, whose "cycle" is one unit of it: a signed
    /// delivery or a plain creation (intake.rs), a delivery announced on every hook or
    /// a plain POST (hooks/load.rs).
    Work(Box<dyn Work>),
}

/// One unit of work a measurement defines, run by [`Load`] like an agent's cycle. The
/// trait keeps `load` from knowing the measurements that use it (no module cycle).
pub trait Work {
    /// Does one unit.
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>>;
}

/// Work done in batches: each call does up to [`BatchWork::units`] units and says how
/// many it did (0: there was nothing to do).
pub trait BatchWork {
    /// Most units one call does (what it takes from the load's budget).
    fn units(&self) -> u64;
    /// Does one batch.
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<u64>> + '_>>;
}

/// The part of a claim answer an agent needs.
#[derive(Deserialize)]
struct ClaimAnswer {
    todo: Option<ClaimedTodo>,
    lease_token: Option<String>,
    #[serde(default)]
    empty: bool,
}

#[derive(Deserialize)]
struct ClaimedTodo {
    id: String,
}

impl Agent {
    /// A REST agent of the seeded endpoint against the server at `base`.
    pub fn rest(base: &str, seeded: &Seeded) -> Agent {
        Agent::Rest {
            client: awc::Client::builder().timeout(Duration::from_secs(30)).finish(),
            claim_url: format!("{base}/api/v1/agent/todos/claim-next"),
            todos_url: format!("{base}/api/v1/agent/todos/"),
            authorization: format!("Bearer {}", seeded.cycles_token),
        }
    }

    /// A raw SQL agent of the seeded endpoint on `store`'s pool.
    pub fn raw(store: &Store, seeded: &Seeded) -> Agent {
        Agent::Raw { store: store.clone(), endpoint: seeded.cycles }
    }

    /// Most units one cycle does.
    fn units(&self) -> u64 {
        match self {
            Agent::Batch(work) => work.units(),
            Agent::Rest { .. } | Agent::Raw { .. } | Agent::Work(_) => 1,
        }
    }

    /// One claim_next → complete cycle (one delivery, one todo; a batch's todos): how
    /// many units it did, 0 when the queue was empty.
    async fn cycle(&self) -> BenchResult<u64> {
        match self {
            Agent::Batch(work) => work.once().await,
            Agent::Work(work) => work.once().await.map(|()| 1),
            Agent::Rest { client, claim_url, todos_url, authorization } => {
                let mut resp = client
                    .post(claim_url)
                    .insert_header(("authorization", authorization.as_str()))
                    .send_json(&serde_json::json!({ "queue": QUEUE }))
                    .await
                    .map_err(|e| format!("claim-next: {e}"))?;
                if !resp.status().is_success() {
                    return Err(format!("claim-next answered {}", resp.status()));
                }
                let answer: ClaimAnswer = resp.json().await.map_err(|e| format!("claim-next body: {e}"))?;
                let (Some(todo), Some(lease_token)) = (answer.todo, answer.lease_token) else {
                    return if answer.empty {
                        Ok(0)
                    } else {
                        Err("claim-next answered neither a todo nor empty".into())
                    };
                };
                let mut resp = client
                    .post(format!("{todos_url}{}/complete", todo.id))
                    .insert_header(("authorization", authorization.as_str()))
                    .send_json(&serde_json::json!({ "lease_token": lease_token }))
                    .await
                    .map_err(|e| format!("complete: {e}"))?;
                // Read the body to the end so the connection can be reused.
                let body = resp.body().await.map_err(|e| format!("complete body: {e}"))?;
                if !resp.status().is_success() {
                    return Err(format!("complete answered {}: {}", resp.status(), String::from_utf8_lossy(&body)));
                }
                Ok(1)
            }
            Agent::Raw { store, endpoint } => {
                let claim = ClaimRequest { queue: Some(QUEUE.into()), ..ClaimRequest::default() };
                let Some(claimed) =
                    store.claim_next(*endpoint, claim).await.map_err(|e| format!("claim_next: {e}"))?.claimed()
                else {
                    return Ok(0);
                };
                let finish = Finish { lease_token: Some(claimed.lease_token), ..Finish::default() };
                store.complete(*endpoint, claimed.todo.id, finish).await.map_err(|e| format!("complete: {e}"))?;
                Ok(1)
            }
        }
    }
}

/// Counters shared by a load's agents and whoever measures it (possibly on another
/// thread, as the sweep does), hence atomics.
#[derive(Default)]
pub struct Tally {
    cycles: AtomicU64,
    empty: AtomicU64,
    errors: AtomicU64,
    budget: AtomicU64,
    stop: AtomicBool,
    recording: AtomicBool,
    latencies_us: Mutex<Vec<u32>>,
    first_error: Mutex<Option<String>>,
}

impl Tally {
    /// Completed cycles so far.
    pub fn cycles(&self) -> u64 {
        self.cycles.load(Ordering::SeqCst)
    }

    /// Takes `n` claims from the budget; false once it cannot cover them.
    fn take_budget(&self, n: u64) -> bool {
        self.budget.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| b.checked_sub(n)).is_ok()
    }

    fn completed(&self, took: Duration, units: u64) {
        self.cycles.fetch_add(units, Ordering::SeqCst);
        if self.recording.load(Ordering::Relaxed)
            && let Ok(mut l) = self.latencies_us.lock()
        {
            l.push(took.as_micros().min(u128::from(u32::MAX)) as u32);
        }
    }

    fn failed(&self, error: String) {
        self.errors.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut first) = self.first_error.lock() {
            first.get_or_insert(error);
        }
    }
}

/// Agents running until stopped or until their claim budget is spent.
pub struct Load {
    tally: Arc<Tally>,
    workers: Vec<tokio::task::JoinHandle<()>>,
    clients: usize,
}

impl Load {
    /// Starts every agent on the current (actix) thread. `budget` bounds the claims
    /// of the whole load.
    pub fn start(agents: Vec<Agent>, budget: u64) -> Load {
        let tally = Arc::new(Tally { budget: AtomicU64::new(budget), ..Tally::default() });
        let clients = agents.len();
        let workers = agents.into_iter().map(|agent| actix_rt::spawn(work(agent, tally.clone()))).collect();
        Load { tally, workers, clients }
    }

    /// The shared counters.
    pub fn tally(&self) -> Arc<Tally> {
        self.tally.clone()
    }

    /// Starts or stops keeping cycle latencies.
    pub fn record(&self, on: bool) {
        self.tally.recording.store(on, Ordering::SeqCst);
    }

    /// Stops the agents after their current cycle and returns what they saw, measured
    /// between the two marks.
    pub async fn stop(self, from: Mark, to: Mark) -> Window {
        self.tally.stop.store(true, Ordering::SeqCst);
        for w in self.workers {
            let _ = w.await;
        }
        let mut latencies_us = std::mem::take(&mut *self.tally.latencies_us.lock().unwrap_or_else(|p| p.into_inner()));
        latencies_us.sort_unstable();
        Window {
            clients: self.clients,
            cycles: to.cycles - from.cycles,
            seconds: (to.at - from.at).as_secs_f64(),
            latencies_us,
            cpu: CpuSpent::between(from.cpu, to.cpu),
            empty: self.tally.empty.load(Ordering::SeqCst),
            errors: self.tally.errors.load(Ordering::SeqCst),
            first_error: self.tally.first_error.lock().ok().and_then(|e| e.clone()),
            budget_spent: self.tally.budget.load(Ordering::SeqCst) == 0,
        }
    }
}

/// A point in time during a load: cycles so far and CPU counters.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    /// When.
    pub at: Instant,
    /// Cycles completed by then.
    pub cycles: u64,
    /// CPU counters then.
    pub cpu: CpuSample,
}

impl Mark {
    /// Marks now.
    pub fn now(tally: &Tally, probe: &Probe) -> Mark {
        Mark { at: Instant::now(), cycles: tally.cycles(), cpu: probe.sample() }
    }
}

async fn work(agent: Agent, tally: Arc<Tally>) {
    while !tally.stop.load(Ordering::SeqCst) && tally.take_budget(agent.units()) {
        let started = Instant::now();
        match agent.cycle().await {
            Ok(n) if n > 0 => tally.completed(started.elapsed(), n),
            Ok(_) => {
                tally.empty.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => {
                tally.failed(e);
                // Back off a little so a broken server does not turn into a hot loop.
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// One measured window of cycles (or several merged: see [`Window::merge`]).
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Concurrent agents.
    pub clients: usize,
    /// Cycles completed inside the window.
    pub cycles: u64,
    /// The window's length.
    pub seconds: f64,
    /// Latency of every cycle (claim + complete) completed inside the window, µs,
    /// sorted.
    pub latencies_us: Vec<u32>,
    /// CPU spent inside the window.
    pub cpu: CpuSpent,
    /// Claims that found the queue empty (warm-up included).
    pub empty: u64,
    /// Failed cycles (warm-up included).
    pub errors: u64,
    /// The first failure's message.
    pub first_error: Option<String>,
    /// Whether the claim budget ran out (the window may have been cut short).
    pub budget_spent: bool,
}

impl Window {
    /// Cycles per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 { self.cycles as f64 / self.seconds } else { 0.0 }
    }

    /// The `q` quantile (0–1) of cycle latency, ms.
    pub fn latency_ms(&self, q: f64) -> f64 {
        let n = self.latencies_us.len();
        let i = ((n as f64 * q) as usize).min(n.saturating_sub(1));
        self.latencies_us.get(i).map_or(0.0, |us| f64::from(*us) / 1000.0)
    }

    /// CPU µs per cycle of one component's seconds.
    pub fn per_cycle_us(&self, cpu_s: f64) -> Option<f64> {
        (self.cycles > 0).then(|| cpu_s * 1e6 / self.cycles as f64)
    }

    /// Folds another window at the same concurrency into this one: cycles and time
    /// add up (so the rate is the pooled one), latencies and CPU are pooled.
    pub fn merge(&mut self, o: Window) {
        self.clients = o.clients;
        self.cycles += o.cycles;
        self.seconds += o.seconds;
        self.latencies_us.extend(o.latencies_us);
        self.latencies_us.sort_unstable();
        self.cpu.add(&o.cpu);
        self.empty += o.empty;
        self.errors += o.errors;
        self.first_error = self.first_error.take().or(o.first_error);
        self.budget_spent |= o.budget_spent;
    }

    /// Refuses a window whose figure would mislead: failures, an empty queue, or a
    /// spent budget.
    pub fn check(&self) -> BenchResult<()> {
        if self.errors > 0 {
            return Err(format!(
                "{} of the cycles at {} clients failed; first: {}",
                self.errors,
                self.clients,
                self.first_error.as_deref().unwrap_or("?")
            ));
        }
        if self.empty > 0 || self.budget_spent {
            return Err(format!("the queue ran dry at {} clients; raise --pending", self.clients));
        }
        Ok(())
    }
}

/// Runs `agents` for a warm-up, then measures one window of `length`.
pub async fn measure(agents: Vec<Agent>, budget: u64, warmup: Duration, length: Duration, probe: &Probe) -> Window {
    let load = Load::start(agents, budget);
    tokio::time::sleep(warmup).await;
    let tally = load.tally();
    let from = Mark::now(&tally, probe);
    load.record(true);
    tokio::time::sleep(length).await;
    let to = Mark::now(&tally, probe);
    load.record(false);
    load.stop(from, to).await
}
