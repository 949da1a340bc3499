//! What the agent's batch verbs answer: complete, fail and create many in one
//! transaction each (claim-next's `limit` is [`super::todos::claim_next_answer`]'s).

use super::batch_dto::{BatchCreateAnswer, BatchCreateBody, BatchFinishAnswer, BatchFinishBody, FinishItemBody};
use super::lean_answers::AnswerForm;
use crate::domain::ids::TodoId;
use crate::error::Result;
use crate::service::Services;
use crate::service::agent::NewAgentTodo;
use crate::service::agent_batch;
use crate::store::endpoints::AgentPrincipal;
use crate::store::todos::Finish;

/// The items' ids as given, in order, and each item as the single verb's body would be,
/// with its todo id if it is one.
fn items_of(body: BatchFinishBody) -> (Vec<String>, Vec<(Option<TodoId>, Finish)>) {
    body.items
        .into_iter()
        .map(|FinishItemBody { id, result, summary, artifact, lease_token }| {
            let todo = id.parse().ok();
            (id, (todo, Finish { result, summary, artifact, lease_token }))
        })
        .unzip()
}

/// What `POST /api/v1/agent/todos/complete` and the MCP tool `complete_many` answer (in
/// `form`: MCP's is always the full one).
pub async fn complete_answer(
    s: &Services,
    me: &AgentPrincipal,
    body: BatchFinishBody,
    form: AnswerForm,
) -> Result<BatchFinishAnswer> {
    let (ids, items) = items_of(body);
    let answers = agent_batch::complete(s, me, items).await?;
    Ok(BatchFinishAnswer::new(ids, answers, form))
}

/// What `POST /api/v1/agent/todos/fail` and the MCP tool `fail_many` answer (in `form`).
pub async fn fail_answer(
    s: &Services,
    me: &AgentPrincipal,
    body: BatchFinishBody,
    form: AnswerForm,
) -> Result<BatchFinishAnswer> {
    let (ids, items) = items_of(body);
    let answers = agent_batch::fail(s, me, items).await?;
    Ok(BatchFinishAnswer::new(ids, answers, form))
}

/// What `POST /api/v1/agent/todos/batch` and the MCP tool `create_todos` answer.
pub async fn create_answer(s: &Services, me: &AgentPrincipal, body: BatchCreateBody) -> Result<BatchCreateAnswer> {
    let items = body.items.into_iter().map(NewAgentTodo::from).collect();
    Ok(BatchCreateAnswer::from(agent_batch::create(s, me, items).await?))
}
