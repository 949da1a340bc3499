//! What a committed transaction announces about a todo: it became claimable
//! ([`TodoReady`]) or stopped being retried ([`DeadLettered`]), with the facts every
//! announcement needs and nothing more. Plain values: the store builds and emits them
//! after commit (`store::signals`), the hook rules and the dispatcher read them.

use actix::Message;
use chrono::{DateTime, Utc};

use crate::domain::ids::{EndpointId, EventId, ScopeId, TodoId};
use crate::domain::todo_state::{AttemptOutcome, DeadReason, ReadyReason};

/// The facts about a todo that every announcement needs, and nothing more: never the
/// payload or the result.
#[derive(Debug, Clone, PartialEq)]
pub struct TodoFacts {
    /// The todo.
    pub id: TodoId,
    /// The endpoint that holds it.
    pub endpoint_id: EndpointId,
    /// That endpoint's slug (what receivers see as `endpoint`).
    pub endpoint_slug: String,
    /// The owner scope of the endpoint: a dead letter belongs to the todo's scope.
    pub scope_id: ScopeId,
    /// Its queue.
    pub queue: String,
    /// Sender-written kind, if any.
    pub kind: Option<String>,
    /// Sender-written source, if any.
    pub source: Option<String>,
    /// Sender-written title.
    pub title: String,
    /// Attempt counter at the time of the transition.
    pub attempt: i32,
    /// Attempt cap.
    pub max_attempts: i32,
    /// Attempts ever made (the seq of the newest attempt).
    pub attempts_total: i32,
    /// When the todo was created.
    pub created_at: DateTime<Utc>,
    /// The delivery that produced it, if any.
    pub event_id: Option<EventId>,
    /// The sender gate, answered in SQL in the same statement as the transition: the
    /// todo's event verified, or arrived on a token-trust webhook. A todo with no event
    /// never passes.
    pub sender_gate: bool,
}

/// A todo became claimable: created, or back to pending.
#[derive(Debug, Clone, PartialEq, Message)]
#[rtype(result = "()")]
pub struct TodoReady {
    /// The todo.
    pub todo: TodoFacts,
    /// `created` or `requeued`.
    pub reason: ReadyReason,
}

/// The attempt whose close made the todo a dead letter.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalAttempt {
    /// Its sequence number in the todo's history.
    pub seq: i32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The agent's summary, if any (sender-influenced text: neutralise before showing).
    pub summary: Option<String>,
    /// The artifact reference, if any.
    pub artifact: Option<String>,
    /// When it ended.
    pub at: DateTime<Utc>,
}

/// A todo stopped being retried. Never emitted for the revocation cascade.
#[derive(Debug, Clone, PartialEq, Message)]
#[rtype(result = "()")]
pub struct DeadLettered {
    /// The todo.
    pub todo: TodoFacts,
    /// Why it died.
    pub reason: DeadReason,
    /// The attempt this transition closed, or none if none was open.
    pub final_attempt: Option<FinalAttempt>,
    /// Whether its history holds relay attempts (sinks raise `relay.exhausted`).
    pub relay: bool,
    /// How many times this todo has been dead-lettered (keys sink dedup).
    pub dead_letter_count: i32,
}
