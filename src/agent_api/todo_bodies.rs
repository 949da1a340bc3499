//! The JSON request bodies of the agent's todo verbs: claim and claim_next, heartbeat,
//! complete, fail and release, interrupt, resume and create_todo. Each is read by the
//! REST route and, with the route's path parameter beside it, by the MCP tool (whose
//! input schema is generated from it). Bodies that carry a lease token do not implement
//! Debug, so they cannot be logged.

use serde::Deserialize;
use utoipa::ToSchema;

use crate::domain::todo_state::InterruptState;

/// `claim_next` / `claim` request.
#[derive(Debug, Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimBody {
    /// Only this queue (claim_next).
    pub queue: Option<String>,
    /// 1–86 400.
    pub lease_ttl_seconds: Option<i32>,
    /// Who is claiming (≤128 bytes).
    pub claimant: Option<String>,
    /// Marks the attempt as a relay attempt.
    #[serde(default)]
    pub relay: bool,
    /// claim_next only: claim up to this many todos (1–100) in one transaction, oldest
    /// first. Absent or 1: one claim, answered as without it (`ClaimAnswer`); above 1: the
    /// batch answer (`BatchClaimAnswer`, `{claims, empty}`).
    #[schema(minimum = 1, maximum = 100)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i32>,
    /// Long-poll (claim_next only), 0–30 s: when nothing is claimable, hold the request
    /// until work arrives on a queue this claim may take (then claim it) or the time is
    /// up (then answer as an empty claim does, `deferred` included). Absent or 0: answer at
    /// once. Out of range: 422 `invalid_argument`, nothing claimed. The longest-waiting
    /// request is served first; past the instance's bound on waiting requests
    /// (`SWITCHBOARD_LONG_POLL_MAX_WAITERS`), past the owner's fair share of them
    /// (`SWITCHBOARD_LONG_POLL_RESERVE_PERCENT`), or while the server stops, the answer
    /// comes at once.
    #[schema(minimum = 0, maximum = 30)]
    #[schemars(range(min = 0, max = 30))]
    pub wait_seconds: Option<i32>,
}

/// Heartbeat request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatBody {
    /// New lease from now, 1–86 400 s; absent: the endpoint's default lease, else 300 s. On
    /// an interrupted todo it renews the interrupt lease instead (absent: by the
    /// interrupt's `wait_seconds`).
    pub lease_ttl_seconds: Option<i32>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Complete / fail / release request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishBody {
    /// JSON to keep as the todo's result: `complete` sets it (absent: null), `fail`
    /// replaces the earlier result only when given, `release` ignores it.
    pub result: Option<serde_json::Value>,
    /// A note for the attempt history, cut to 2 048 bytes.
    pub summary: Option<String>,
    /// An https URL or `mcp://cairn/<id>`.
    pub artifact: Option<String>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Interrupt request.
#[derive(Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterruptBody {
    /// What the todo waits on: `input_required` (a human's input) or `auth_required` (an
    /// authorisation).
    pub state: InterruptState,
    /// 1–604 800; default 3 600.
    pub wait_seconds: Option<i32>,
    /// What it is waiting for, for humans; control characters are removed and it is cut to
    /// 1 024 bytes.
    pub reason: Option<String>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Resume request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    /// Length of the fresh lease, 1–86 400 s; absent: the endpoint's default lease, else
    /// 300 s.
    pub lease_ttl_seconds: Option<i32>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// create_todo request.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTodoBody {
    /// One of this endpoint's queues: 1–64 of `a-z`, `0-9`, `.`, `_` or `-`, starting with
    /// a letter or digit; not `quarantine`.
    pub queue: String,
    /// One line for humans, 1–1 024 bytes.
    pub title: String,
    /// A free-form label, 1–128 bytes.
    pub kind: Option<String>,
    /// Any JSON, for the agent that claims it.
    pub payload: Option<serde_json::Value>,
    /// 1–256 bytes. While a live todo of this endpoint holds the key, creating again
    /// returns that todo (`created: false`) instead of a new one; done, canceled and
    /// dead-lettered todos release it.
    pub idempotency_key: Option<String>,
    /// 1–100; default 5.
    pub max_attempts: Option<i32>,
}

impl From<CreateTodoBody> for crate::service::agent::NewAgentTodo {
    fn from(b: CreateTodoBody) -> Self {
        crate::service::agent::NewAgentTodo {
            queue: b.queue,
            title: b.title,
            kind: b.kind,
            payload: b.payload,
            idempotency_key: b.idempotency_key,
            max_attempts: b.max_attempts,
        }
    }
}
