//! The agent's todo routes: the drain family, get, create, interrupt and resume. Each
//! route returns the answer of its verb's `*_answer` function in
//! [`crate::agent_api::todos`], which the MCP tool of the same verb returns too: the two
//! surfaces share every rule and every answer.

use actix_web::{HttpResponse, web};

use super::super::body::{Json, OptionalJson, Query};
use crate::agent_api::auth::Agent;
use crate::agent_api::batch_dto::ClaimNextAnswer;
use crate::agent_api::lean_claims::{AnswerForm, ClaimNextQuery};
use crate::agent_api::todo_bodies::{ClaimBody, CreateTodoBody, FinishBody, HeartbeatBody, InterruptBody, ResumeBody};
use crate::agent_api::todo_views::{ClaimAnswer, CreatedTodo, TodoDetail, TodoList, TodoView};
use crate::agent_api::todos::{
    ListTodosQuery, claim_answer, claim_next_answer, complete_answer, create_answer, fail_answer, get_answer,
    heartbeat_answer, interrupt_answer, lean_claim_next_answer, list_answer, release_answer, resume_answer,
};
use crate::domain::ids::TodoId;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;

/// This endpoint's drainable work, newest first, without payloads.
#[utoipa::path(get, path = "/api/v1/agent/todos", operation_id = "agent_list_todos", params(ListTodosQuery), tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = TodoList), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn list(s: web::Data<Services>, agent: Agent, q: Query<ListTodosQuery>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(list_answer(&s, &agent.0, q.into_inner()).await?))
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
///
/// With `?answer=lean`, whatever the `limit`, the answer is one list of only what an
/// agent needs to work and finish: `{"todos": [{id, lease_token, attempt_seq,
/// lease_expires_at, queue, kind, title, payload, work_order}], "empty": <no claims>}`
/// (with `deferred` as above). The claims are the same; only the answer is smaller.
#[utoipa::path(post, path = "/api/v1/agent/todos/claim-next", params(ClaimNextQuery),
    request_body(content = Option<ClaimBody>, example = json!({"limit": 10, "lease_ttl_seconds": 600})), tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = ClaimNextAnswer), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope),
        (status = 503, body = ErrorEnvelope, description = "the database is unreachable (also while waiting); ask again")))]
pub async fn claim_next(
    s: web::Data<Services>,
    agent: Agent,
    q: Query<ClaimNextQuery>,
    body: OptionalJson<ClaimBody>,
) -> Result<HttpResponse> {
    let answer = match q.into_inner().answer.unwrap_or_default() {
        AnswerForm::Full => claim_next_answer(&s, &agent.0, body.0).await?,
        AnswerForm::Lean => lean_claim_next_answer(&s, &agent.0, body.0).await?,
    };
    Ok(HttpResponse::Ok().json(answer))
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

/// One todo with its payload, result and attempts.
#[utoipa::path(get, path = "/api/v1/agent/todos/{id}", operation_id = "agent_get_todo", tag = "agent",
    params(("id" = TodoId, Path, description = "todo id")), security(("endpoint_token" = [])),
    responses((status = 200, body = TodoDetail), (status = 403, body = ErrorEnvelope), (status = 404, body = ErrorEnvelope)))]
pub async fn get(s: web::Data<Services>, agent: Agent, id: web::Path<TodoId>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(get_answer(&s, &agent.0, id.into_inner()).await?))
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

/// Creates a todo on one of this endpoint's queues (no delivery: never announced on hooks).
#[utoipa::path(post, path = "/api/v1/agent/todos", operation_id = "agent_create_todo", request_body = CreateTodoBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 201, body = CreatedTodo), (status = 403, body = ErrorEnvelope), (status = 200, description = "idempotency hit", body = CreatedTodo), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, agent: Agent, body: Json<CreateTodoBody>) -> Result<HttpResponse> {
    let body = create_answer(&s, &agent.0, body.0).await?;
    Ok(if body.created { HttpResponse::Created().json(body) } else { HttpResponse::Ok().json(body) })
}
