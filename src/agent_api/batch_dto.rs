//! The JSON shapes of the agent's batch verbs: claim-next's batch answer, and the
//! bodies and per-item answers of batch complete, fail and create. Shapes that carry a
//! lease token do not implement Debug, so they cannot be logged.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::lean_claims::LeanClaimAnswer;
use super::todo_bodies::CreateTodoBody;
use super::todo_views::{ClaimAnswer, TodoDetail, TodoView};
use crate::db::models::TodoRow;
use crate::domain::admission::Deferral;
use crate::error::{ErrorBody, Result};
use crate::store::todos::{BatchClaim, CreateOutcome};

/// claim_next's answer: one claim as always (no `limit`, or a `limit` of 1), or a batch
/// (a `limit` above 1), or the lean list when asked for.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum ClaimNextAnswer {
    /// Without a `limit` above 1: `{todo, lease_token, attempt_seq, attempts_total,
    /// prior_attempts, empty: false}` or `{empty: true, deferred?}`.
    One(Box<ClaimAnswer>),
    /// With a `limit` above 1: `{claims: [...], empty, deferred?}`.
    Batch(BatchClaimAnswer),
    /// Asked for with `?answer=lean` (REST only), for any `limit`: `{todos: [...], empty,
    /// deferred?}`.
    Lean(LeanClaimAnswer),
}

/// claim_next's answer to a `limit` above 1: the todos claimed, oldest first.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchClaimAnswer {
    /// Each todo claimed, oldest first: at most `limit`, none when nothing was claimable.
    pub claims: Vec<BatchClaimView>,
    /// True when nothing was claimed (`claims` is empty).
    pub empty: bool,
    /// Present when an admission budget of a queue held back work that was there to
    /// claim and so the batch stopped short (`paused`, `in_flight_full`,
    /// `window_exhausted`): the claims before it stand. Not an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferral>,
}

/// One todo of a batch claim.
#[derive(Serialize, ToSchema)]
pub struct BatchClaimView {
    /// The claimed todo with its payload.
    pub todo: TodoDetail,
    /// This claim's lease token (16 random bytes, base64url; each claim has its own),
    /// shown only here: pass it with the item to complete or fail.
    pub lease_token: String,
    /// The number of the attempt this claim opened.
    pub attempt_seq: i32,
    /// Claims ever made of the todo, this one included.
    pub attempts_total: i32,
}

impl From<BatchClaim> for BatchClaimAnswer {
    fn from(b: BatchClaim) -> Self {
        let claims: Vec<BatchClaimView> = b
            .claims
            .into_iter()
            .map(|c| BatchClaimView {
                attempt_seq: c.attempt_seq,
                attempts_total: c.todo.attempts_total,
                todo: TodoDetail::new(&c.todo, None),
                lease_token: c.lease_token,
            })
            .collect();
        BatchClaimAnswer { empty: claims.is_empty(), claims, deferred: b.deferred }
    }
}

/// One item of a batch complete or fail: a todo and what the single verb's body says.
#[derive(Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishItemBody {
    /// The claimed todo. A string that is not a todo id makes this item answer
    /// `not_found` (as the single verb's path does); the other items go on.
    pub id: String,
    /// JSON to keep as the todo's result: `complete` sets it (absent: null), `fail`
    /// replaces the earlier result only when given.
    pub result: Option<serde_json::Value>,
    /// A note for the attempt history, cut to 2 048 bytes.
    pub summary: Option<String>,
    /// An https URL or `mcp://cairn/<id>`.
    pub artifact: Option<String>,
    /// The lease token of this todo's claim; when given it must match the current lease
    /// (else this item answers `conflict`).
    pub lease_token: Option<String>,
}

/// Batch complete or fail request.
#[derive(Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchFinishBody {
    /// 1–100 items, acted on in order in one transaction (a todo named twice: the
    /// second sees what the first did).
    #[schema(min_items = 1, max_items = 100)]
    #[schemars(length(min = 1, max = 100))]
    pub items: Vec<FinishItemBody>,
}

/// The answer for one item of a batch complete or fail.
#[derive(Serialize, ToSchema)]
pub struct FinishItemAnswer {
    /// The item's todo id, as the item gave it.
    pub id: String,
    /// Whether it was completed (failed); when false, `error` says why, with the code and
    /// message the single verb would have answered.
    pub ok: bool,
    /// The todo after it, as the single verb answers it; only when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoView>,
    /// Why not: `not_found`, `conflict` (not claimed, a lease token that does not match)
    /// or `invalid_argument`; only when not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Batch complete or fail answer: one result per item, in the items' order.
#[derive(Serialize, ToSchema)]
pub struct BatchFinishAnswer {
    /// The items' answers, in order.
    pub results: Vec<FinishItemAnswer>,
}

impl BatchFinishAnswer {
    /// The answers to the items whose ids (as given) are `ids`.
    pub fn new(ids: Vec<String>, answers: Vec<Result<TodoRow>>) -> Self {
        let results = ids
            .into_iter()
            .zip(answers)
            .map(|(id, answer)| match answer {
                Ok(row) => FinishItemAnswer { id, ok: true, todo: Some(TodoView::from(&row)), error: None },
                Err(e) => FinishItemAnswer { id, ok: false, todo: None, error: Some(e.body()) },
            })
            .collect();
        BatchFinishAnswer { results }
    }
}

/// Batch create request.
#[derive(Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchCreateBody {
    /// 1–500 create_todo bodies, created in order in one transaction.
    #[schema(min_items = 1, max_items = 500)]
    #[schemars(length(min = 1, max = 500))]
    pub items: Vec<CreateTodoBody>,
}

/// The answer for one item of a batch create.
#[derive(Serialize, ToSchema)]
pub struct CreateItemAnswer {
    /// Whether the item has its todo (a new one, or the live one that holds its
    /// idempotency key); when false, `error` says why, as the single create would.
    pub ok: bool,
    /// False when an existing live todo with the same idempotency key (possibly made by an
    /// earlier item of this batch) was returned; only when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<bool>,
    /// The todo; only when `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoDetail>,
    /// Why not (`invalid_argument`, `conflict`); only when not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
}

/// Batch create answer: one result per item, in the items' order.
#[derive(Serialize, ToSchema)]
pub struct BatchCreateAnswer {
    /// The items' answers, in order.
    pub results: Vec<CreateItemAnswer>,
}

impl From<Vec<Result<CreateOutcome>>> for BatchCreateAnswer {
    fn from(answers: Vec<Result<CreateOutcome>>) -> Self {
        let results = answers
            .into_iter()
            .map(|answer| match answer {
                Ok(o) => CreateItemAnswer {
                    ok: true,
                    created: Some(o.created),
                    todo: Some(TodoDetail::new(&o.todo, None)),
                    error: None,
                },
                Err(e) => CreateItemAnswer { ok: false, created: None, todo: None, error: Some(e.body()) },
            })
            .collect();
        BatchCreateAnswer { results }
    }
}
