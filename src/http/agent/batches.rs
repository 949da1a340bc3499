//! The agent's batch routes: complete, fail and create many in one transaction each
//! (claim-next's `limit` is on its own route, [`super::todos::claim_next`]). Each
//! returns its verb's answer, [`crate::agent_api::batches`], as the MCP tool does.

use actix_web::{HttpResponse, web};

use super::super::body::{Json, Query};
use crate::agent_api::auth::Agent;
use crate::agent_api::batch_dto::{BatchCreateAnswer, BatchCreateBody, BatchFinishAnswer, BatchFinishBody};
use crate::agent_api::batches::{complete_answer, create_answer, fail_answer};
use crate::agent_api::lean_answers::AnswerQuery;
use crate::error::{ErrorEnvelope, Result};
use crate::service::Services;

/// Completes many claimed todos in one transaction, each exactly as
/// `POST /api/v1/agent/todos/{id}/complete` would. Answers 200 with one result per item,
/// in order: `ok` with the todo, or the error that route would give (a bad item does not
/// fail the others; an id that is not a todo id answers `not_found`). A body that is not valid as a whole (not 1–100 items, an item with an
/// unknown field or a wrong type, a NUL character anywhere) is refused with 422 and
/// changes nothing.
///
/// With `?answer=lean` an item that went through answers only `{"id", "ok": true}`.
#[utoipa::path(post, path = "/api/v1/agent/todos/complete", operation_id = "complete_batch", params(AnswerQuery), request_body = BatchFinishBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = BatchFinishAnswer), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn complete(
    s: web::Data<Services>,
    agent: Agent,
    q: Query<AnswerQuery>,
    body: Json<BatchFinishBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(complete_answer(&s, &agent.0, body.0, q.form()).await?))
}

/// Fails many claimed todos in one transaction, each exactly as
/// `POST /api/v1/agent/todos/{id}/fail` would: a retry with backoff below the cap, a dead
/// letter at it (announced after the commit, recorded for the sinks in the same
/// transaction). Answers 200 with one result per item, in order: `ok` with the todo, or the
/// error that route would give (a bad item does not fail the others; an id that is not a
/// todo id answers `not_found`). A body that is not valid as a whole (not 1–100 items, an item with an unknown field or a wrong type, a NUL
/// character anywhere) is refused with 422 and changes nothing.
///
/// With `?answer=lean` an item that went through answers only `{"id", "ok": true}`.
#[utoipa::path(post, path = "/api/v1/agent/todos/fail", operation_id = "fail_batch", params(AnswerQuery), request_body = BatchFinishBody, tag = "agent",
    security(("endpoint_token" = [])),
    responses((status = 200, body = BatchFinishAnswer), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn fail(
    s: web::Data<Services>,
    agent: Agent,
    q: Query<AnswerQuery>,
    body: Json<BatchFinishBody>,
) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(fail_answer(&s, &agent.0, body.0, q.form()).await?))
}

/// Creates many todos on this endpoint's queues in one transaction, each exactly as
/// `POST /api/v1/agent/todos` would (an idempotency key held by a live todo, or by an
/// earlier item of the batch, answers that todo with `created: false`); claim-next takes
/// them in the items' order. Answers 200 with one result per item, in order (a bad item
/// does not fail the others). A body that is not valid as a whole (not 1–500 items, an
/// item with an unknown field or a wrong type, a NUL character anywhere, over 1 MiB) is
/// refused and changes nothing.
#[utoipa::path(post, path = "/api/v1/agent/todos/batch", operation_id = "create_batch", tag = "agent",
    request_body(content = BatchCreateBody, example = json!({"items": [
        {"queue": "inbox", "title": "first of a batch", "payload": {"n": 1}},
        {"queue": "inbox", "title": "second of a batch", "idempotency_key": "batch-example-2"}]})),
    security(("endpoint_token" = [])),
    responses((status = 200, body = BatchCreateAnswer), (status = 401, body = ErrorEnvelope), (status = 403, body = ErrorEnvelope), (status = 422, body = ErrorEnvelope)))]
pub async fn create(s: web::Data<Services>, agent: Agent, body: Json<BatchCreateBody>) -> Result<HttpResponse> {
    Ok(HttpResponse::Ok().json(create_answer(&s, &agent.0, body.0).await?))
}
