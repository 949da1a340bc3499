//! What the agent's todo verbs answer: the drain family, get, create, interrupt and
//! resume. Each `*_answer` function is the one answer of its verb, which the REST route
//! and the MCP tool of that verb both return: the two surfaces share every rule and
//! every answer.

use serde::Deserialize;
use utoipa::IntoParams;

use super::batch_dto::{BatchClaimAnswer, ClaimNextAnswer};
use super::lean_claims::LeanClaimAnswer;
use super::todo_bodies::{ClaimBody, CreateTodoBody, FinishBody, HeartbeatBody, InterruptBody, ResumeBody};
use super::todo_views::{AttemptView, ClaimAnswer, CreatedTodo, TodoDetail, TodoList, TodoView};
use crate::domain::admission::Deferral;
use crate::domain::ids::TodoId;
use crate::domain::todo_state::TodoState;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::agent::{self, Claim, Interrupt, NewAgentTodo};
use crate::service::agent_batch::ClaimNextOutcome;
use crate::service::long_poll;
use crate::store::endpoints::AgentPrincipal;
use crate::store::todos::{ClaimOutcome, Finish, ListFilter};

/// Query of `list_todos`.
#[derive(Debug, Deserialize, IntoParams, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTodosQuery {
    /// Only this queue.
    pub queue: Option<String>,
    /// Only this drainable state.
    pub state: Option<TodoState>,
    /// 1–200, default 50.
    pub limit: Option<i64>,
}

fn claim_view(outcome: ClaimOutcome) -> ClaimAnswer {
    let unclaimed = |deferred: Option<Deferral>| ClaimAnswer {
        todo: None,
        lease_token: None,
        attempt_seq: None,
        attempts_total: None,
        prior_attempts: None,
        empty: true,
        deferred,
    };
    match outcome {
        ClaimOutcome::Claimed(c) => ClaimAnswer {
            attempt_seq: Some(c.attempt_seq),
            attempts_total: Some(c.todo.attempts_total),
            prior_attempts: Some(c.prior_attempts.iter().map(AttemptView::from).collect()),
            todo: Some(TodoDetail::new(&c.todo, None)),
            lease_token: Some(c.lease_token),
            empty: false,
            deferred: None,
        },
        ClaimOutcome::Empty => unclaimed(None),
        ClaimOutcome::Deferred(why) => unclaimed(Some(why)),
    }
}

/// The claim a body asks for, its `limit` and its `wait_seconds` (claim-next only): how
/// many and how long are how to claim, not what.
fn claim_of(b: ClaimBody) -> (Claim, Option<i32>, Option<i32>) {
    let claim = Claim { queue: b.queue, lease_ttl_seconds: b.lease_ttl_seconds, claimant: b.claimant, relay: b.relay };
    (claim, b.limit, b.wait_seconds)
}

fn finish(body: FinishBody) -> Finish {
    Finish { result: body.result, summary: body.summary, artifact: body.artifact, lease_token: body.lease_token }
}

/// What `GET /api/v1/agent/todos` and the MCP tool `list_todos` answer.
pub async fn list_answer(s: &Services, me: &AgentPrincipal, q: ListTodosQuery) -> Result<TodoList> {
    let rows = agent::list(s, me, ListFilter { queue: q.queue, state: q.state, limit: q.limit }).await?;
    Ok(TodoList { todos: rows.iter().map(TodoView::from).collect() })
}

/// What `POST /api/v1/agent/todos/claim-next` and the MCP tool `claim_next` answer.
pub async fn claim_next_answer(s: &Services, me: &AgentPrincipal, body: ClaimBody) -> Result<ClaimNextAnswer> {
    let (claim, limit, wait_seconds) = claim_of(body);
    Ok(match long_poll::claim_next(s, me, claim, limit, wait_seconds).await? {
        ClaimNextOutcome::One(outcome) => ClaimNextAnswer::One(Box::new(claim_view(outcome))),
        ClaimNextOutcome::Batch(batch) => ClaimNextAnswer::Batch(BatchClaimAnswer::from(batch)),
    })
}

/// What `POST /api/v1/agent/todos/claim-next?answer=lean` answers: the same claims as
/// [`claim_next_answer`], in the lean form, whatever the `limit`.
pub async fn lean_claim_next_answer(s: &Services, me: &AgentPrincipal, body: ClaimBody) -> Result<ClaimNextAnswer> {
    let (claim, limit, wait_seconds) = claim_of(body);
    let outcome = long_poll::claim_next(s, me, claim, limit, wait_seconds).await?;
    Ok(ClaimNextAnswer::Lean(LeanClaimAnswer::from(outcome)))
}

/// What `POST /api/v1/agent/todos/{id}/claim` and the MCP tool `claim` answer.
pub async fn claim_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: ClaimBody) -> Result<ClaimAnswer> {
    let (claim, limit, wait_seconds) = claim_of(body);
    if limit.is_some() {
        return Err(Error::invalid("limit", "not accepted when claiming by id"));
    }
    long_poll::refuse_wait(wait_seconds)?;
    Ok(claim_view(agent::claim(s, me, id, claim).await?))
}

/// What `GET /api/v1/agent/todos/{id}` and the MCP tool `get_todo` answer.
pub async fn get_answer(s: &Services, me: &AgentPrincipal, id: TodoId) -> Result<TodoDetail> {
    let t = agent::get(s, me, id).await?;
    Ok(TodoDetail::new(&t.todo, Some(&t.attempts)))
}

/// What `POST /api/v1/agent/todos/{id}/heartbeat` and the MCP tool `heartbeat` answer.
pub async fn heartbeat_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: HeartbeatBody) -> Result<TodoView> {
    let row = agent::heartbeat(s, me, id, b.lease_ttl_seconds, b.lease_token.as_deref()).await?;
    Ok(TodoView::from(&row))
}

/// What `POST /api/v1/agent/todos/{id}/complete` and the MCP tool `complete` answer.
pub async fn complete_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::complete(s, me, id, finish(body)).await?))
}

/// What `POST /api/v1/agent/todos/{id}/fail` and the MCP tool `fail` answer.
pub async fn fail_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::fail(s, me, id, finish(body)).await?))
}

/// What `POST /api/v1/agent/todos/{id}/release` and the MCP tool `release` answer.
pub async fn release_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::release(s, me, id, finish(body)).await?))
}

/// What `POST /api/v1/agent/todos/{id}/interrupt` and the MCP tool `interrupt` answer.
pub async fn interrupt_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: InterruptBody) -> Result<TodoView> {
    let i = Interrupt { state: b.state, wait_seconds: b.wait_seconds, reason: b.reason, lease_token: b.lease_token };
    Ok(TodoView::from(&agent::interrupt(s, me, id, i).await?))
}

/// What `POST /api/v1/agent/todos/{id}/resume` and the MCP tool `resume` answer.
pub async fn resume_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: ResumeBody) -> Result<TodoView> {
    let row = agent::resume(s, me, id, b.lease_ttl_seconds, b.lease_token.as_deref()).await?;
    Ok(TodoView::from(&row))
}

/// What `POST /api/v1/agent/todos` and the MCP tool `create_todo` answer.
pub async fn create_answer(s: &Services, me: &AgentPrincipal, body: CreateTodoBody) -> Result<CreatedTodo> {
    let outcome = agent::create(s, me, NewAgentTodo::from(body)).await?;
    Ok(CreatedTodo { todo: TodoDetail::new(&outcome.todo, None), created: outcome.created })
}
