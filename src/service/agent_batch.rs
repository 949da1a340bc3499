//! The agent's verbs in batches: claim-next with a `limit`, complete and fail of many
//! claimed todos, create of many todos. Each needs the single verb's grant, checked once
//! per request; each is one transaction in the store, where every rule of the single
//! verb holds per todo. The REST API and (later) the MCP tools call these, so the shape
//! rules below (a `limit` of 1 is today's claim-next; sizes) live in one place.

use super::Services;
use super::agent::{Claim, NewAgentTodo, may};
use super::permissions::Action;
use crate::db::models::TodoRow;
use crate::domain::ids::TodoId;
use crate::error::{Error, Result};
use crate::metrics::{BatchCallOutcome, BatchItemOutcome, BatchVerb};
use crate::store::endpoints::AgentPrincipal;
use crate::store::todos::{
    BatchClaim, CLAIM_LIMIT_MAX, CREATE_ITEMS_MAX, ClaimOutcome, CreateOutcome, FINISH_ITEMS_MAX, Finish, ItemResult,
};

/// What claim-next answered: one claim in today's shape (no `limit`, or a `limit` of 1),
/// or a batch (a `limit` above 1).
#[derive(Debug)]
pub enum ClaimNextOutcome {
    /// Today's answer: a claim, nothing, or a deferral.
    One(ClaimOutcome),
    /// Up to `limit` claims, oldest first.
    Batch(BatchClaim),
}

/// Claims the oldest pending todo, or with a `limit` above 1 up to that many in one
/// transaction, within the admission budgets of the endpoint's queues. A `limit` outside
/// 1–100 is refused (422) before anything changes.
pub async fn claim_next(
    s: &Services,
    me: &AgentPrincipal,
    claim: Claim,
    limit: Option<i32>,
) -> Result<ClaimNextOutcome> {
    let limit = match limit {
        None | Some(1) => return super::agent::claim_next(s, me, claim).await.map(ClaimNextOutcome::One),
        Some(n) => n,
    };
    let verb = BatchVerb::ClaimNext;
    let batch = async {
        may(me, Action::ClaimNext)?;
        if !(1..=CLAIM_LIMIT_MAX).contains(&limit) {
            return Err(Error::invalid("limit", format!("must be between 1 and {CLAIM_LIMIT_MAX}")));
        }
        s.store.claim_next_batch(me.endpoint_id, claim.request(me), limit).await
    }
    .await;
    let batch = call_counted(s, verb, batch)?;
    s.metrics.batch_items(verb, BatchItemOutcome::Ok, batch.claims.len() as u64);
    if let Some(reason) = batch.deferred {
        s.metrics.claim_deferred(reason);
    }
    Ok(ClaimNextOutcome::Batch(batch))
}

/// Completes each item as the single complete would, in one transaction; answers per
/// item, in order (1–100 items). An item whose id is not a todo id at all (`None`)
/// answers `not_found`, as the single verb's path does.
pub async fn complete(
    s: &Services,
    me: &AgentPrincipal,
    items: Vec<(Option<TodoId>, Finish)>,
) -> Result<Vec<ItemResult<TodoRow>>> {
    let verb = BatchVerb::Complete;
    let answers = async {
        may(me, Action::CompleteMany)?;
        sized(items.len(), FINISH_ITEMS_MAX)?;
        s.store.complete_batch(me.endpoint_id, items).await
    }
    .await;
    Ok(items_counted(s, verb, call_counted(s, verb, answers)?))
}

/// Fails each item as the single fail would (a retry with backoff below the cap, a dead
/// letter at it), in one transaction; answers per item, in order (1–100 items). An item
/// whose id is not a todo id at all (`None`) answers `not_found`.
pub async fn fail(
    s: &Services,
    me: &AgentPrincipal,
    items: Vec<(Option<TodoId>, Finish)>,
) -> Result<Vec<ItemResult<TodoRow>>> {
    let verb = BatchVerb::Fail;
    let answers = async {
        may(me, Action::FailMany)?;
        sized(items.len(), FINISH_ITEMS_MAX)?;
        s.store.fail_batch(me.endpoint_id, items).await
    }
    .await;
    Ok(items_counted(s, verb, call_counted(s, verb, answers)?))
}

/// Creates each todo as the single create would (idempotency keys included), in one
/// transaction; answers per item, in order (1–500 items).
pub async fn create(
    s: &Services,
    me: &AgentPrincipal,
    items: Vec<NewAgentTodo>,
) -> Result<Vec<ItemResult<CreateOutcome>>> {
    let verb = BatchVerb::CreateTodo;
    let answers = async {
        may(me, Action::AgentCreateTodos)?;
        sized(items.len(), CREATE_ITEMS_MAX)?;
        s.store.create_todos(me.endpoint_id, items.into_iter().map(|t| t.into_new(me)).collect()).await
    }
    .await;
    Ok(items_counted(s, verb, call_counted(s, verb, answers)?))
}

/// Refuses a batch of no items or of more than `max`.
fn sized(n: usize, max: usize) -> Result<()> {
    if n == 0 || n > max {
        return Err(Error::invalid("items", format!("must hold 1 to {max} items, not {n}")));
    }
    Ok(())
}

/// Counts a batch request as answered or refused as a whole.
fn call_counted<T>(s: &Services, verb: BatchVerb, answer: Result<T>) -> Result<T> {
    let outcome = if answer.is_ok() { BatchCallOutcome::Answered } else { BatchCallOutcome::Refused };
    s.metrics.batch_call(verb, outcome);
    answer
}

/// Counts each item's outcome.
fn items_counted<T>(s: &Services, verb: BatchVerb, answers: Vec<ItemResult<T>>) -> Vec<ItemResult<T>> {
    for answer in &answers {
        let outcome = match answer {
            Ok(_) => BatchItemOutcome::Ok,
            Err(e) => BatchItemOutcome::of_code(e.code()),
        };
        s.metrics.batch_items(verb, outcome, 1);
    }
    answers
}
