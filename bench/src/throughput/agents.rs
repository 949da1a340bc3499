//! The product's side of the throughput benchmark, over REST as an agent uses it: batched
//! drains (claim-next with `limit` → batch complete), single-row cycles with the lean
//! answer (`claim-next?answer=lean`), batched creation, and the long-poll wake-up (a
//! claim-next waiting with `wait_seconds` until a todo is created).

use std::pin::Pin;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use crate::BenchResult;
use crate::database::Seeded;
use crate::load::BatchWork;

/// An agent of the seeded endpoint over REST, with its own keep-alive connection.
pub struct RestAgent {
    client: awc::Client,
    base: String,
    authorization: String,
}

impl RestAgent {
    /// An agent against the server at `base`.
    pub fn new(base: &str, seeded: &Seeded) -> RestAgent {
        RestAgent {
            client: awc::Client::builder().timeout(Duration::from_secs(60)).finish(),
            base: base.to_owned(),
            authorization: format!("Bearer {}", seeded.cycles_token),
        }
    }

    /// POSTs `body` to `path` and reads the JSON answer (any 2xx), or says what came.
    async fn post<T: for<'de> Deserialize<'de>>(&self, path: &str, body: &serde_json::Value) -> BenchResult<T> {
        let mut resp = self
            .client
            .post(format!("{}{path}", self.base))
            .insert_header(("authorization", self.authorization.as_str()))
            .send_json(body)
            .await
            .map_err(|e| format!("{path}: {e}"))?;
        let bytes = resp.body().limit(64 << 20).await.map_err(|e| format!("{path} body: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("{path} answered {}: {}", resp.status(), String::from_utf8_lossy(&bytes)));
        }
        serde_json::from_slice(&bytes).map_err(|e| format!("{path} answer: {e}"))
    }
}

#[derive(Deserialize)]
struct BatchClaimAnswer {
    #[serde(default)]
    claims: Vec<BatchClaim>,
}

/// The lean claim answer, for any `limit`: `{"todos": [...], "empty": …}`.
#[derive(Deserialize)]
struct LeanAnswer {
    todos: Option<Vec<LeanTodo>>,
}

#[derive(Deserialize)]
struct LeanTodo {
    id: String,
    lease_token: String,
}

/// The claim path, asking for the lean answer or not.
fn claim_path(lean: bool) -> &'static str {
    if lean { "/api/v1/agent/todos/claim-next?answer=lean" } else { "/api/v1/agent/todos/claim-next" }
}

impl LeanAnswer {
    /// (id, lease token) of each todo, or an error when the server answered another
    /// shape (a server without the lean answer ignores `?answer=lean`).
    fn claimed(self) -> BenchResult<Vec<(String, String)>> {
        let todos = self.todos.ok_or("claim-next?answer=lean answered without `todos`: no lean answer")?;
        Ok(todos.into_iter().map(|t| (t.id, t.lease_token)).collect())
    }
}

/// Whether the server answers `claim-next?answer=lean` with the lean shape: asked on a
/// queue nothing is ever created on, so nothing is claimed.
pub async fn lean_answer_served(agent: &RestAgent) -> BenchResult<bool> {
    let answer: serde_json::Value = agent.post(claim_path(true), &json!({ "queue": "lean-probe", "limit": 1 })).await?;
    Ok(answer.get("todos").is_some_and(serde_json::Value::is_array))
}

/// claim-next with the lean answer on the drained queue, then complete that todo.
pub struct LeanCycle {
    /// The agent.
    pub agent: RestAgent,
    /// The queue.
    pub queue: String,
}

impl BatchWork for LeanCycle {
    fn units(&self) -> u64 {
        1
    }

    fn once(&self) -> Pin<Box<dyn std::future::Future<Output = BenchResult<u64>> + '_>> {
        Box::pin(async move {
            let answer: LeanAnswer = self.agent.post(claim_path(true), &json!({ "queue": self.queue })).await?;
            let Some((id, lease_token)) = answer.claimed()?.into_iter().next() else {
                return Ok(0);
            };
            let _: serde_json::Value = self
                .agent
                .post(&format!("/api/v1/agent/todos/{id}/complete"), &json!({ "lease_token": lease_token }))
                .await?;
            Ok(1)
        })
    }
}

#[derive(Deserialize)]
struct BatchClaim {
    todo: TodoId,
    lease_token: String,
}

#[derive(Deserialize)]
struct TodoId {
    id: String,
}

#[derive(Deserialize)]
struct ItemResults {
    results: Vec<ItemResult>,
}

#[derive(Deserialize)]
struct ItemResult {
    ok: bool,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

impl ItemResults {
    /// Refuses an answer with a failed item, or with another number of items.
    fn all_ok(self, expected: usize, what: &str) -> BenchResult<u64> {
        if self.results.len() != expected {
            return Err(format!("{what} answered {} items for {expected}", self.results.len()));
        }
        if let Some(bad) = self.results.iter().find(|r| !r.ok) {
            return Err(format!("{what}: an item failed: {:?}", bad.error));
        }
        Ok(expected as u64)
    }
}

/// claim-next with `limit` on the drained queue, then one batch complete of what came.
pub struct BatchDrain {
    /// The agent.
    pub agent: RestAgent,
    /// The queue.
    pub queue: String,
    /// Todos per claim.
    pub limit: u64,
    /// Whether the claim asks for the lean answer.
    pub lean: bool,
}

impl BatchWork for BatchDrain {
    fn units(&self) -> u64 {
        self.limit
    }

    fn once(&self) -> Pin<Box<dyn std::future::Future<Output = BenchResult<u64>> + '_>> {
        Box::pin(async move {
            let body = json!({ "queue": self.queue, "limit": self.limit });
            let claimed: Vec<(String, String)> = if self.lean {
                self.agent.post::<LeanAnswer>(claim_path(true), &body).await?.claimed()?
            } else {
                let full: BatchClaimAnswer = self.agent.post(claim_path(false), &body).await?;
                full.claims.into_iter().map(|c| (c.todo.id, c.lease_token)).collect()
            };
            if claimed.is_empty() {
                return Ok(0);
            }
            let items: Vec<serde_json::Value> =
                claimed.iter().map(|(id, lease_token)| json!({ "id": id, "lease_token": lease_token })).collect();
            // The lean drain asks for the lean answers both ways (`?answer=lean` on the
            // batch complete leaves each item's todo out).
            let complete =
                if self.lean { "/api/v1/agent/todos/complete?answer=lean" } else { "/api/v1/agent/todos/complete" };
            let done: ItemResults = self.agent.post(complete, &json!({ "items": items })).await?;
            done.all_ok(claimed.len(), "batch complete")
        })
    }
}

/// One batch create of `size` todos on `queue`, each with a payload `{"body": "xx…"}` of
/// `payload_bytes` x's.
pub struct BatchCreate {
    /// The agent.
    pub agent: RestAgent,
    /// The queue.
    pub queue: String,
    /// Todos per call.
    pub size: u64,
    /// Bytes of each payload's body.
    pub payload_bytes: usize,
}

impl BatchCreate {
    /// Creates `min(size, up_to)` todos with one call; how many.
    pub async fn create(&self, up_to: u64) -> BenchResult<u64> {
        let n = self.size.min(up_to);
        let body = "x".repeat(self.payload_bytes);
        let items: Vec<serde_json::Value> = (0..n)
            .map(|i| json!({ "queue": self.queue, "title": format!("bench batch {i}"), "payload": {"body": body} }))
            .collect();
        let made: ItemResults = self.agent.post("/api/v1/agent/todos/batch", &json!({ "items": items })).await?;
        made.all_ok(n as usize, "batch create")
    }
}

impl BatchWork for BatchCreate {
    fn units(&self) -> u64 {
        self.size
    }

    fn once(&self) -> Pin<Box<dyn std::future::Future<Output = BenchResult<u64>> + '_>> {
        Box::pin(self.create(self.size))
    }
}

/// Wake-up latencies of a long-poll claim, ms.
#[derive(Debug, Clone, Default)]
pub struct WakeUps {
    /// Create answered → the waiting claim answered with the todo, ms, sorted (0 when
    /// the claim answered first).
    pub after_create_ms: Vec<f64>,
    /// Create sent → the waiting claim answered, ms, sorted.
    pub after_send_ms: Vec<f64>,
    /// Claims that answered before the create's own answer was read.
    pub before_create_answer: usize,
}

/// The `q` quantile of sorted `v`.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let i = ((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1));
    v.get(i).copied().unwrap_or(0.0)
}

#[derive(Deserialize)]
struct OneClaim {
    todo: Option<TodoId>,
    lease_token: Option<String>,
}

/// A single create's answer: the todo's fields at the top level.
#[derive(Deserialize)]
struct Created {
    id: String,
}

/// `samples` times at idle: one agent waits on `queue` with `wait_seconds`, and
/// `spacing` later another creates a todo there; the waiting claim's answer is timed
/// against the create's, and the todo completed. `queue` must be empty at the start.
pub async fn wake_ups(
    waiter: &RestAgent,
    creator: &RestAgent,
    queue: &str,
    samples: usize,
    spacing: Duration,
) -> BenchResult<WakeUps> {
    let mut w = WakeUps::default();
    for i in 0..samples {
        let waiting = async {
            let answer: OneClaim =
                waiter.post("/api/v1/agent/todos/claim-next", &json!({ "queue": queue, "wait_seconds": 30 })).await?;
            Ok::<_, String>((answer, Instant::now()))
        };
        let create = async {
            // The waiting claim is on the server and waiting by now: nothing is pending.
            tokio::time::sleep(spacing).await;
            let sent = Instant::now();
            let made: Created = creator
                .post("/api/v1/agent/todos", &json!({ "queue": queue, "title": format!("wake-up {i}") }))
                .await?;
            Ok::<_, String>((made, sent, Instant::now()))
        };
        let (claimed, created) = tokio::join!(waiting, create);
        let ((answer, woken), (made, sent, answered)) = (claimed?, created?);
        let (Some(todo), Some(lease_token)) = (answer.todo, answer.lease_token) else {
            return Err(format!("wake-up {i}: the waiting claim ended empty after the todo was created"));
        };
        if todo.id != made.id {
            return Err(format!("wake-up {i}: the waiting claim took another todo ({})", todo.id));
        }
        if woken < answered {
            w.before_create_answer += 1;
        }
        w.after_create_ms.push(woken.saturating_duration_since(answered).as_secs_f64() * 1e3);
        w.after_send_ms.push(woken.saturating_duration_since(sent).as_secs_f64() * 1e3);
        let _: serde_json::Value = waiter
            .post(&format!("/api/v1/agent/todos/{}/complete", todo.id), &json!({ "lease_token": lease_token }))
            .await?;
    }
    w.after_create_ms.sort_by(f64::total_cmp);
    w.after_send_ms.sort_by(f64::total_cmp);
    Ok(w)
}
