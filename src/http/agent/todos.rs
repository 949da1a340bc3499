//! The agent's todo routes: the drain family, get, create, interrupt and resume. Each
//! route's answer is built by a `*_answer` function, which the MCP tool of the same verb
//! ([`crate::mcp`]) calls too: the two surfaces share every rule and every answer.

use actix_web::{HttpResponse, web};
use serde::Deserialize;
use utoipa::IntoParams;

use super::super::auth::Agent;
use super::super::body::{Json, OptionalJson, Query};
use super::super::dto::*;
use super::batch_dto::{BatchClaimAnswer, ClaimNextAnswer};
use crate::domain::admission::Deferral;
use crate::domain::ids::TodoId;
use crate::domain::todo_state::TodoState;
use crate::error::{Error, ErrorEnvelope, Result};
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

/// This endpoint's drainable work, newest first, without payloads.
#[utoipa::path(get, path = "/api/v1/agent/todos", operation_id = "agent_list_todos", params(ListTodosQuery), tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = TodoList), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, agent: Agent, q: Query<ListTodosQuery>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(list_answer(&s, &agent.0, q.into_inner()).await?))
}

/// What `list` answers (the route and the MCP tool `list_todos`).
pub async fn list_answer(s: &Services, me: &AgentPrincipal, q: ListTodosQuery) -> Result<TodoList> {
    let rows = agent::list(s, me, ListFilter { queue: q.queue, state: q.state, limit: q.limit }).await?;
    Ok(TodoList { todos: rows.iter().map(TodoView::from).collect() })
}

/// Claims the oldest pending todo (optionally of one queue) under a lease, within the
/// admission budgets of the endpoint's queues. Nothing to claim answers `{"empty": true}`;
/// work a budget held back answers `{"empty": true, "deferred": <reason>}` (never an error).
///
/// With `limit` above 1 (at most 100) it claims up to that many todos, oldest first, in
/// one transaction, each under its own lease token and with its own attempt, within the
/// budgets exactly as that many single claims would be, and answers
/// `{"claims": [{todo, lease_token, attempt_seq, attempts_total}], "empty": <no claims>}`
/// (with `deferred` when a budget stopped the batch short). Without `limit`, or with
/// `limit: 1`, the answer is the single claim's, unchanged. A `limit` outside 1–100 is
/// refused with 422 and claims nothing.
///
/// With `wait_seconds` (1–30) and nothing to claim, the request is held until work
/// arrives on a queue it may claim (woken by the database's notification, on whichever
/// instance the work was made) or the time is up, and then answers the same way (a
/// batch claims what is there when it wakes, up to `limit`).
#[utoipa::path(post, path = "/api/v1/agent/todos/claim-next",
    request_body(content = Option<ClaimBody>, example = json!({"limit": 10, "lease_ttl_seconds": 600})), tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = ClaimNextAnswer), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope),
        (status = 503, body = ErrorEnvelope, description = "the database is unreachable (also while waiting); ask again")))]
pub async fn claim_next(s: web::Data<Services>, agent: Agent, body: OptionalJson<ClaimBody>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(claim_next_answer(&s, &agent.0, body.0).await?))
}

/// What `claim_next` answers (the route and the MCP tool `claim_next`).
pub async fn claim_next_answer(s: &Services, me: &AgentPrincipal, body: ClaimBody) -> Result<ClaimNextAnswer> {
    let (claim, limit, wait_seconds) = claim_of(body);
    Ok(match long_poll::claim_next(s, me, claim, limit, wait_seconds).await? {
        ClaimNextOutcome::One(outcome) => ClaimNextAnswer::One(Box::new(claim_view(outcome))),
        ClaimNextOutcome::Batch(batch) => ClaimNextAnswer::Batch(BatchClaimAnswer::from(batch)),
    })
}

/// Claims one todo by id, within its queue's admission budget: a deferred claim answers
/// `{"empty": true, "deferred": <reason>}`.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/claim", request_body = Option<ClaimBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = ClaimAnswer), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn claim(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<ClaimBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(claim_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `claim` answers (the route and the MCP tool `claim`).
pub async fn claim_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: ClaimBody) -> Result<ClaimAnswer> {
    let (claim, limit, wait_seconds) = claim_of(body);
    if limit.is_some() {
        return Err(Error::invalid("limit", "not accepted when claiming by id"));
    }
    long_poll::refuse_wait(wait_seconds)?;
    Ok(claim_view(agent::claim(s, me, id, claim).await?))
}

/// One todo with its payload, result and attempts.
#[utoipa::path(get, path = "/api/v1/agent/todos/{id}", operation_id = "agent_get_todo", tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoDetail), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn get(s: web::Data<Services>, agent: Agent, id: web::Path<TodoId>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(get_answer(&s, &agent.0, id.into_inner()).await?))
}

/// What `get` answers (the route and the MCP tool `get_todo`).
pub async fn get_answer(s: &Services, me: &AgentPrincipal, id: TodoId) -> Result<TodoDetail> {
    let t = agent::get(s, me, id).await?;
    Ok(TodoDetail::new(&t.todo, Some(&t.attempts)))
}

/// Extends the lease (or renews the interrupt lease).
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/heartbeat", request_body = Option<HeartbeatBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn heartbeat(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<HeartbeatBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(heartbeat_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `heartbeat` answers (the route and the MCP tool `heartbeat`).
pub async fn heartbeat_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: HeartbeatBody) -> Result<TodoView> {
    let row = agent::heartbeat(s, me, id, b.lease_ttl_seconds, b.lease_token.as_deref()).await?;
    Ok(TodoView::from(&row))
}

/// Completes a claimed todo.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/complete", request_body = Option<FinishBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn complete(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<FinishBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(complete_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `complete` answers (the route and the MCP tool `complete`).
pub async fn complete_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::complete(s, me, id, finish(body)).await?))
}

/// Fails a claimed todo: a retry with backoff below the cap, a dead letter at it.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/fail", operation_id = "agent_fail", request_body = Option<FinishBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn fail(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<FinishBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(fail_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `fail` answers (the route and the MCP tool `fail`).
pub async fn fail_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::fail(s, me, id, finish(body)).await?))
}

/// Hands a claimed todo back to pending.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/release", operation_id = "agent_release", request_body = Option<FinishBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope)))]
pub async fn release(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<FinishBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(release_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `release` answers (the route and the MCP tool `release`).
pub async fn release_answer(s: &Services, me: &AgentPrincipal, id: TodoId, body: FinishBody) -> Result<TodoView> {
    Ok(TodoView::from(&agent::release(s, me, id, finish(body)).await?))
}

/// Interrupts a claimed todo to wait on a human or an outside event.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/interrupt", request_body = InterruptBody, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope), (status = 409, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn interrupt(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: Json<InterruptBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(interrupt_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `interrupt` answers (the route and the MCP tool `interrupt`).
pub async fn interrupt_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: InterruptBody) -> Result<TodoView> {
    let i = Interrupt { state: b.state, wait_seconds: b.wait_seconds, reason: b.reason, lease_token: b.lease_token };
    Ok(TodoView::from(&agent::interrupt(s, me, id, i).await?))
}

/// Resumes an interrupted todo under a fresh lease (the same attempt goes on), within its
/// queue's admission budget: resuming puts work back in flight, so a paused queue, one with
/// `max_in_flight` todos claimed, or one whose `per_hour` window is spent refuses it (a
/// resume takes from the window as a claim does). The refusal answers 409 `conflict` with
/// the reason in `error.deferred` (`paused`, `in_flight_full`, `window_exhausted`); the
/// todo stays interrupted under its interrupt lease (a heartbeat renews it), so resume it
/// again later. The refusal is counted as a deferred claim is.
#[utoipa::path(post, path = "/api/v1/agent/todos/{id}/resume", request_body = Option<ResumeBody>, tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoView), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope),
        (status = 409, body = ErrorEnvelope, description = "the todo is not interrupted, the lease token does not match, or its queue's admission budget refused (`error.deferred` says why; the todo stays interrupted)")))]
pub async fn resume(
    s: web::Data<Services>,
    agent: Agent,
    id: web::Path<TodoId>,
    body: OptionalJson<ResumeBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(resume_answer(&s, &agent.0, id.into_inner(), body.0).await?))
}

/// What `resume` answers (the route and the MCP tool `resume`).
pub async fn resume_answer(s: &Services, me: &AgentPrincipal, id: TodoId, b: ResumeBody) -> Result<TodoView> {
    let row = agent::resume(s, me, id, b.lease_ttl_seconds, b.lease_token.as_deref()).await?;
    Ok(TodoView::from(&row))
}

/// Creates a todo on one of this endpoint's queues (no delivery: never announced on hooks).
#[utoipa::path(post, path = "/api/v1/agent/todos", operation_id = "agent_create_todo", request_body = CreateTodoBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 201, body = CreatedTodo), (status = 403, body = ErrorEnvelope), (status = 200, description = "idempotency hit", body = CreatedTodo), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, agent: Agent, body: Json<CreateTodoBody>) -> Result<HttpResponse> {
    let body = create_answer(&s, &agent.0, body.0).await?;
    Ok(if body.created { HttpResponse::Created().json(body) } else { HttpResponse::Ok().json(body) })
}

/// What `create` answers (the route and the MCP tool `create_todo`).
pub async fn create_answer(s: &Services, me: &AgentPrincipal, body: CreateTodoBody) -> Result<CreatedTodo> {
    let outcome = agent::create(s, me, NewAgentTodo::from(body)).await?;
    Ok(CreatedTodo { todo: TodoDetail::new(&outcome.todo, None), created: outcome.created })
}
