//! The agent's verbs on its own endpoint's queues: list, get, create, claim (next or
//! by id), heartbeat, complete, fail, release, interrupt, resume, and presence. Each
//! needs its grant (see [`super::permissions`]); a todo of any other endpoint is not
//! found. The lifecycle rules themselves live in the store and in
//! [`crate::domain::transitions`].

use super::Services;
use super::permissions::{Action, check};
use super::principal::Principal;
use crate::db::models::{EndpointRow, TodoRow};
use crate::domain::ids::TodoId;
use crate::domain::todo_state::{InterruptState, Presence};
use crate::error::{Error, Result};
use crate::store::endpoints::AgentPrincipal;
use crate::store::todos::{
    Caller, ClaimOutcome, ClaimRequest, CreateOutcome, Finish, ListFilter, NewTodo, ResumeOutcome, TodoWithAttempts,
};

/// How a claim is asked for.
#[derive(Debug, Clone, Default)]
pub struct Claim {
    /// Only this queue (claim-next only).
    pub queue: Option<String>,
    /// Lease length for this claim; none: the endpoint's default.
    pub lease_ttl_seconds: Option<i32>,
    /// Free-form label of who claimed.
    pub claimant: Option<String>,
    /// Marks the attempt as a relay attempt.
    pub relay: bool,
}

impl Claim {
    pub(super) fn request(self, me: &AgentPrincipal) -> ClaimRequest {
        ClaimRequest {
            queue: self.queue,
            lease_ttl_seconds: self.lease_ttl_seconds,
            claimant: self.claimant,
            relay: self.relay,
            endpoint_default_lease: me.default_lease_seconds,
        }
    }
}

/// A todo an agent creates on one of its queues.
#[derive(Debug, Clone)]
pub struct NewAgentTodo {
    /// The queue.
    pub queue: String,
    /// The title.
    pub title: String,
    /// A free-form kind.
    pub kind: Option<String>,
    /// The payload.
    pub payload: Option<serde_json::Value>,
    /// Unique among the endpoint's live todos.
    pub idempotency_key: Option<String>,
    /// The attempt cap.
    pub max_attempts: Option<i32>,
}

pub(super) fn may(me: &AgentPrincipal, action: Action) -> Result<()> {
    // The endpoint's own queues are the only place an agent acts: the store finds
    // todos by the endpoint's id, so the rule's grant is all there is to check here.
    check(action, Principal::Endpoint(me), None)
}

/// The endpoint's drainable todos, newest first, without payloads.
pub async fn list(s: &Services, me: &AgentPrincipal, filter: ListFilter) -> Result<Vec<TodoRow>> {
    may(me, Action::AgentListTodos)?;
    s.store.list_todos(me.endpoint_id, filter).await
}

/// One of the endpoint's todos with its attempts.
pub async fn get(s: &Services, me: &AgentPrincipal, id: TodoId) -> Result<TodoWithAttempts> {
    may(me, Action::AgentGetTodo)?;
    s.store.get_todo(&Caller::Endpoint(me.endpoint_id), id).await
}

impl NewAgentTodo {
    /// The todo the store creates for `me`: source `agent`, no delivery.
    pub(super) fn into_new(self, me: &AgentPrincipal) -> NewTodo {
        NewTodo {
            kind: self.kind,
            source: Some("agent".into()),
            payload: self.payload,
            idempotency_key: self.idempotency_key,
            max_attempts: self.max_attempts,
            ..NewTodo::new(me.endpoint_id, self.queue, self.title)
        }
    }
}

/// Creates a todo on one of the endpoint's queues (no delivery: never announced).
pub async fn create(s: &Services, me: &AgentPrincipal, t: NewAgentTodo) -> Result<CreateOutcome> {
    may(me, Action::AgentCreateTodo)?;
    s.store.create_todo(t.into_new(me)).await
}

/// Claims the oldest pending todo (of one queue, if named) within the admission
/// budgets of the endpoint's queues: a claim, nothing, or the reason a budget held back
/// work (counted in the metrics, as in `queue_deferrals`).
pub async fn claim_next(s: &Services, me: &AgentPrincipal, claim: Claim) -> Result<ClaimOutcome> {
    may(me, Action::ClaimNext)?;
    counted(s, super::group_commit::claim_next(s, me.endpoint_id, claim.request(me)).await?)
}

/// Claims one todo by id within its queue's admission budget: the claim, or the reason
/// the budget deferred it.
pub async fn claim(s: &Services, me: &AgentPrincipal, id: TodoId, claim: Claim) -> Result<ClaimOutcome> {
    may(me, Action::Claim)?;
    if claim.queue.is_some() {
        return Err(Error::invalid("queue", "not accepted when claiming by id"));
    }
    counted(s, s.store.claim(me.endpoint_id, id, claim.request(me)).await?)
}

/// Counts a deferral in the metrics (the store counted it per queue and hour).
fn counted(s: &Services, outcome: ClaimOutcome) -> Result<ClaimOutcome> {
    if let ClaimOutcome::Deferred(reason) = &outcome {
        s.metrics.claim_deferred(*reason);
    }
    Ok(outcome)
}

/// Extends the lease (or renews the interrupt lease).
pub async fn heartbeat(
    s: &Services,
    me: &AgentPrincipal,
    id: TodoId,
    lease_ttl_seconds: Option<i32>,
    lease_token: Option<&str>,
) -> Result<TodoRow> {
    may(me, Action::Heartbeat)?;
    s.store.heartbeat(me.endpoint_id, me.default_lease_seconds, id, lease_ttl_seconds, lease_token).await
}

/// Completes a claimed todo.
pub async fn complete(s: &Services, me: &AgentPrincipal, id: TodoId, finish: Finish) -> Result<TodoRow> {
    may(me, Action::Complete)?;
    super::group_commit::complete(s, me.endpoint_id, id, finish).await
}

/// Fails a claimed todo: a retry with backoff below the cap, a dead letter at it.
pub async fn fail(s: &Services, me: &AgentPrincipal, id: TodoId, finish: Finish) -> Result<TodoRow> {
    may(me, Action::Fail)?;
    s.store.fail(me.endpoint_id, id, finish).await
}

/// Hands a claimed todo back to pending.
pub async fn release(s: &Services, me: &AgentPrincipal, id: TodoId, finish: Finish) -> Result<TodoRow> {
    may(me, Action::Release)?;
    s.store.release(me.endpoint_id, id, finish).await
}

/// What an interrupt asks for.
#[derive(Debug, Clone)]
pub struct Interrupt {
    /// What the todo waits on.
    pub state: InterruptState,
    /// How long it may wait.
    pub wait_seconds: Option<i32>,
    /// Why.
    pub reason: Option<String>,
    /// The claim's lease token, if the agent holds one.
    pub lease_token: Option<String>,
}

/// Interrupts a claimed todo to wait on a human or an outside event.
pub async fn interrupt(s: &Services, me: &AgentPrincipal, id: TodoId, i: Interrupt) -> Result<TodoRow> {
    may(me, Action::Interrupt)?;
    s.store.interrupt(me.endpoint_id, id, i.state, i.wait_seconds, i.reason.as_deref(), i.lease_token.as_deref()).await
}

/// Resumes an interrupted todo under a fresh lease, within its queue's admission budget:
/// a resume puts work back in flight as a claim does. A refusal is [`Error::Deferred`]
/// (409 `conflict`, not an empty answer: the todo is still the agent's, interrupted, and
/// a caller that only checks for success must not carry on as if it held a lease),
/// counted in the metrics as in `queue_deferrals`.
pub async fn resume(
    s: &Services,
    me: &AgentPrincipal,
    id: TodoId,
    lease_ttl_seconds: Option<i32>,
    lease_token: Option<&str>,
) -> Result<TodoRow> {
    may(me, Action::Resume)?;
    match s.store.resume(me.endpoint_id, me.default_lease_seconds, id, lease_ttl_seconds, lease_token).await? {
        ResumeOutcome::Resumed(todo) => Ok(*todo),
        ResumeOutcome::Deferred(reason) => {
            s.metrics.claim_deferred(reason);
            Err(Error::Deferred(reason.as_str()))
        }
    }
}

/// Records that the agent is (`In`) or is no longer (`Out`) working its queues.
pub async fn clock(s: &Services, me: &AgentPrincipal, presence: Presence) -> Result<EndpointRow> {
    may(me, if presence == Presence::In { Action::ClockIn } else { Action::ClockOut })?;
    s.store.set_presence(me.scope_id, me.endpoint_id, presence).await
}
