//! The lean claim answer: `POST /api/v1/agent/todos/claim-next?answer=lean`. Only what
//! an agent needs to do the work and finish it, in one shape whatever the `limit`, so a
//! small agent in any language reads a list and nothing else. Asked for explicitly: the
//! full answers (`ClaimAnswer`, `BatchClaimAnswer`) stay the default, and MCP's
//! `claim_next` keeps them (the choice is a query parameter of the REST route, not a
//! field of the body the MCP tool's input schema is generated from).
//!
//! What is left out, and why an agent does not need it to work: the todo's state (it is
//! `claimed`), its timestamps, counters and dead-letter fields, `source`,
//! `payload_size`, `result` (null on a claim unless an earlier attempt left one),
//! `attempts_total` and the earlier attempts (`GET /api/v1/agent/todos/{id}` has them
//! all when an agent wants its history).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::db::models::TodoRow;
use crate::domain::admission::Deferral;
use crate::domain::ids::TodoId;
use crate::service::agent_batch::ClaimNextOutcome;
use crate::store::todos::{ClaimOutcome, Claimed};

/// Which form of claim-next's answer to send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnswerForm {
    /// The full answer (the default): `ClaimAnswer`, or `BatchClaimAnswer` with a `limit`
    /// above 1.
    #[default]
    Full,
    /// `LeanClaimAnswer`, for any `limit`.
    Lean,
}

/// Query of `POST /api/v1/agent/todos/claim-next`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ClaimNextQuery {
    /// `full` (default) or `lean`: `lean` answers `LeanClaimAnswer`, a list of only
    /// what an agent needs to work and finish, for any `limit`.
    #[param(inline)]
    pub answer: Option<AnswerForm>,
}

/// claim-next's lean answer (`?answer=lean`): the todos claimed, oldest first, each with
/// only what an agent needs to do the work and finish it.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeanClaimAnswer {
    /// Each todo claimed, oldest first: at most `limit` (one without a `limit`), none
    /// when nothing was claimable.
    pub todos: Vec<LeanClaim>,
    /// True when nothing was claimed (`todos` is empty).
    pub empty: bool,
    /// Present when an admission budget held back work that was there to claim
    /// (`paused`, `in_flight_full`, `window_exhausted`), as in the full answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferral>,
}

/// One claimed todo in the lean answer.
#[derive(Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LeanClaim {
    /// The todo's id: name it to heartbeat, complete, fail or release.
    pub id: TodoId,
    /// This claim's lease token (16 random bytes, base64url), shown only here: pass it
    /// when finishing so a holder whose lease was taken over is refused.
    pub lease_token: String,
    /// The number of the attempt this claim opened (1 on a first claim): more than 1
    /// says an earlier attempt did not finish it.
    pub attempt_seq: i32,
    /// When the lease runs out unless a heartbeat extends it; then the todo is claimable
    /// again and this agent's complete is refused.
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Its queue (an any-queue claim says which work this is).
    pub queue: String,
    /// Its kind, when it was given one: what to do, for an agent serving several.
    pub kind: Option<String>,
    /// Its title.
    pub title: String,
    /// The JSON the todo carries for the agent; null without one.
    pub payload: Option<serde_json::Value>,
    /// Instructions a routing rule attached for the agent; null without.
    pub work_order: Option<String>,
}

impl LeanClaim {
    fn new(c: Claimed) -> Self {
        let Claimed { todo, lease_token, attempt_seq, .. } = c;
        let TodoRow { id, lease_expires_at, queue, kind, title, payload, work_order, .. } = todo;
        LeanClaim { id, lease_token, attempt_seq, lease_expires_at, queue, kind, title, payload, work_order }
    }
}

impl From<ClaimNextOutcome> for LeanClaimAnswer {
    fn from(outcome: ClaimNextOutcome) -> Self {
        let (claims, deferred) = match outcome {
            ClaimNextOutcome::One(ClaimOutcome::Claimed(c)) => (vec![*c], None),
            ClaimNextOutcome::One(ClaimOutcome::Empty) => (Vec::new(), None),
            ClaimNextOutcome::One(ClaimOutcome::Deferred(why)) => (Vec::new(), Some(why)),
            ClaimNextOutcome::Batch(b) => (b.claims, b.deferred),
        };
        let todos: Vec<LeanClaim> = claims.into_iter().map(LeanClaim::new).collect();
        LeanClaimAnswer { empty: todos.is_empty(), todos, deferred }
    }
}
