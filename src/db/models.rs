//! Row types: one struct per table as it is read, plus insert forms where a table is
//! written through diesel's DSL.

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::{endpoints, humans, todo_attempts, todos};
use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, EventId, HumanId, ScopeId, TodoId};
use crate::domain::todo_state::{
    AttemptDisposition, AttemptOutcome, DeadReason, EndpointState, Presence, QuarantineReason, TodoState,
};

/// A todo as stored.
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = todos, check_for_backend(diesel::pg::Pg))]
pub struct TodoRow {
    pub id: TodoId,
    pub endpoint_id: EndpointId,
    pub scope_id: ScopeId,
    pub queue: String,
    pub source: Option<String>,
    pub kind: Option<String>,
    pub title: String,
    pub payload: Option<serde_json::Value>,
    pub payload_size: i32,
    pub event_id: Option<EventId>,
    pub idempotency_key: Option<String>,
    pub state: TodoState,
    pub attempt: i32,
    pub max_attempts: i32,
    pub attempts_total: i32,
    pub claimed_by: Option<EndpointId>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub lease_token_hash: Option<Vec<u8>>,
    pub interrupt_reason: Option<String>,
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    pub interrupt_wait_seconds: Option<i32>,
    pub next_retry_at: Option<DateTime<Utc>>,
    pub result: Option<serde_json::Value>,
    pub dead_reason: Option<DeadReason>,
    pub dead_lettered_at: Option<DateTime<Utc>>,
    pub dead_letter_count: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub claimed_at: Option<DateTime<Utc>>,
    pub completed_at: Option<DateTime<Utc>>,
    pub quarantine_reason: Option<QuarantineReason>,
    pub work_order: Option<String>,
}

impl TodoRow {
    /// A dead letter: failed with no retry scheduled.
    pub fn is_dead_letter(&self) -> bool {
        self.state == TodoState::Failed && self.next_retry_at.is_none()
    }
}

/// One attempt in a todo's history.
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = todo_attempts, check_for_backend(diesel::pg::Pg))]
pub struct AttemptRow {
    pub todo_id: TodoId,
    pub seq: i32,
    pub claimer_endpoint_id: Option<EndpointId>,
    pub claimant: Option<String>,
    pub relay: bool,
    pub claimed_at: DateTime<Utc>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub lease_expires_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: Option<AttemptOutcome>,
    pub disposition: Option<AttemptDisposition>,
    pub summary: Option<String>,
    pub summary_truncated: bool,
    pub artifact: Option<String>,
}

/// An endpoint as stored (the token hash stays in the store).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = endpoints, check_for_backend(diesel::pg::Pg))]
pub struct EndpointRow {
    pub id: EndpointId,
    pub scope_id: ScopeId,
    pub slug: String,
    pub token_prefix: String,
    pub grants: Vec<String>,
    pub state: EndpointState,
    pub revoked_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub default_lease_seconds: Option<i32>,
    pub presence: Presence,
    pub presence_changed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

impl EndpointRow {
    /// The grants that name a known verb (unknown strings from a newer version are ignored).
    pub fn verbs(&self) -> Vec<Verb> {
        self.grants.iter().filter_map(|g| g.parse().ok()).collect()
    }
}

/// A human as stored.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = humans, check_for_backend(diesel::pg::Pg))]
pub struct HumanRow {
    pub id: HumanId,
    pub email: String,
    pub display_name: String,
    pub created_at: DateTime<Utc>,
}
