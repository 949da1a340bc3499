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
    /// Primary key (`td_…` in the API).
    pub id: TodoId,
    /// The endpoint whose queue holds it: the one agent credential that can claim it.
    pub endpoint_id: EndpointId,
    /// The owner scope, copied from the endpoint so owner-wide listings (dead letters)
    /// stay on one index.
    pub scope_id: ScopeId,
    /// Queue name on the endpoint; `quarantine` holds deliveries intake would not route.
    pub queue: String,
    /// The webhook's source type (`github`, …) on a todo from intake; none on one an agent
    /// created.
    pub source: Option<String>,
    /// The delivery's event type (from intake) or the creating agent's own label.
    pub kind: Option<String>,
    /// One-line description: from intake `<source> <event type>`, or the creating agent's.
    pub title: String,
    /// Opaque JSON for the agent; from intake, the delivery body (a body that is not JSON
    /// as `{"raw_body": "…"}`).
    pub payload: Option<serde_json::Value>,
    /// Bytes of `payload` as JSON text, 0 without one.
    pub payload_size: i32,
    /// The inbound delivery that produced it; none on an agent-authored todo (which
    /// therefore never passes the sender gate).
    pub event_id: Option<EventId>,
    /// Creator's de-duplication key: unique among the endpoint's live todos, released
    /// once the todo is done, canceled or dead-lettered.
    pub idempotency_key: Option<String>,
    /// Where it is in its life.
    pub state: TodoState,
    /// Attempts counted against `max_attempts`: a claim takes one, a release gives it
    /// back, "retry now" resets it to 0.
    pub attempt: i32,
    /// Attempt cap (1–100, default 5): a fail or lapse on this attempt dead-letters it.
    pub max_attempts: i32,
    /// Claims ever made, which is the length of its attempt history ("retry now" keeps it).
    pub attempts_total: i32,
    /// The endpoint that holds, or last held, the claim (today always the todo's own);
    /// cleared when the todo goes back to pending.
    pub claimed_by: Option<EndpointId>,
    /// When the current claim's lease lapses; set exactly while `claimed`.
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// SHA-256 of the current claim's lease token (the token itself is only ever
    /// handed to the claimer).
    pub lease_token_hash: Option<Vec<u8>>,
    /// The agent's note on what it is waiting for while interrupted.
    pub interrupt_reason: Option<String>,
    /// When the interrupt lease lapses; set exactly while `input_required` or
    /// `auth_required`.
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    /// Length of the interrupt lease in seconds (1–604 800); a heartbeat renews it by
    /// this much. Set exactly while interrupted.
    pub interrupt_wait_seconds: Option<i32>,
    /// When a failed todo goes back to pending; none on a dead letter.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// JSON the agent reported with `complete` (or with a `fail`).
    pub result: Option<serde_json::Value>,
    /// Why it stopped being retried; set exactly on a dead letter.
    pub dead_reason: Option<DeadReason>,
    /// When it became a dead letter; set exactly on a dead letter.
    pub dead_lettered_at: Option<DateTime<Utc>>,
    /// How many times it has been dead-lettered (a retried-now dead letter can die again).
    pub dead_letter_count: i32,
    /// When it was created; claim order within a queue is oldest first.
    pub created_at: DateTime<Utc>,
    /// When the row last changed.
    pub updated_at: DateTime<Utc>,
    /// When the latest claim began; cleared by "retry now".
    pub claimed_at: Option<DateTime<Utc>>,
    /// When it became `done`.
    pub completed_at: Option<DateTime<Utc>>,
    /// Why intake held it; set only on the `quarantine` queue.
    pub quarantine_reason: Option<QuarantineReason>,
    /// Instructions a routing rule attached for the agent (≤4 096 bytes).
    pub work_order: Option<String>,
    /// The latest attempt's claimant label, if its claim gave one. While the attempt is
    /// open (`claimed`, `input_required`, `auth_required`) the todo row is the only
    /// record of it: its history row is written when it closes, from these fields
    /// ([`TodoRow::open_attempt`] shows it meanwhile), except by a completion, which
    /// keeps it on the row (`attempt_ended_at` and the columns after it).
    pub attempt_claimant: Option<String>,
    /// Whether the latest attempt was a relay's.
    pub attempt_relay: bool,
    /// The latest attempt's latest heartbeat or resume; none before the first.
    pub attempt_heartbeat_at: Option<DateTime<Utc>>,
    /// When the attempt a completion closed ended, on a completed todo that holds that
    /// attempt on its row instead of in a history row (migration
    /// `completed_attempt_on_the_row`; the view `todo_attempt_history` shows it).
    pub attempt_ended_at: Option<DateTime<Utc>>,
    /// That attempt's lease when it ended.
    pub attempt_lease_expires_at: Option<DateTime<Utc>>,
    /// That attempt's summary, at most 2 048 bytes.
    pub attempt_summary: Option<String>,
    /// Whether that summary was cut to fit.
    pub attempt_summary_truncated: bool,
    /// That attempt's artifact.
    pub attempt_artifact: Option<String>,
}

impl TodoRow {
    /// A dead letter: failed with no retry scheduled.
    pub fn is_dead_letter(&self) -> bool {
        self.state == TodoState::Failed && self.next_retry_at.is_none()
    }

    /// The attempt open on this todo, if one is: while claimed or interrupted the todo
    /// row holds it (its history row is written only when it closes, by the statement
    /// that closes it). Its lease is the claim's lease or, while interrupted, the
    /// interrupt lease.
    pub fn open_attempt(&self) -> Option<AttemptRow> {
        let open = matches!(self.state, TodoState::Claimed | TodoState::InputRequired | TodoState::AuthRequired);
        let lease = self.lease_expires_at.or(self.interrupt_expires_at);
        match (open, self.claimed_at, lease) {
            (true, Some(claimed_at), Some(lease_expires_at)) if self.attempts_total >= 1 => Some(AttemptRow {
                todo_id: self.id,
                seq: self.attempts_total,
                claimer_endpoint_id: Some(self.endpoint_id),
                claimant: self.attempt_claimant.clone(),
                relay: self.attempt_relay,
                claimed_at,
                last_heartbeat_at: self.attempt_heartbeat_at,
                lease_expires_at,
                ended_at: None,
                outcome: None,
                disposition: None,
                summary: None,
                summary_truncated: false,
                artifact: None,
            }),
            _ => None,
        }
    }

    /// The attempt history to show, newest first and at most `limit` long: the stored
    /// rows (`history`, newest first) with the open attempt at their head. An attempt
    /// that already has a stored row (opened by an earlier release, which wrote open
    /// attempts) is shown from that row.
    pub fn history_with_open(&self, mut history: Vec<AttemptRow>, limit: usize) -> Vec<AttemptRow> {
        if let Some(open) = self.open_attempt()
            && history.iter().all(|a| a.seq != open.seq)
        {
            history.insert(0, open);
        }
        history.truncate(limit);
        history
    }
}

/// One attempt in a todo's history.
#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = todo_attempts, check_for_backend(diesel::pg::Pg))]
pub struct AttemptRow {
    /// The todo this attempt belongs to.
    pub todo_id: TodoId,
    /// Attempt number within the todo, from 1: the todo's `attempts_total` once claimed.
    pub seq: i32,
    /// The endpoint that claimed (today always the todo's own).
    pub claimer_endpoint_id: Option<EndpointId>,
    /// The claimer's free-form label for who is working (≤128 bytes), if it gave one.
    pub claimant: Option<String>,
    /// Claimed through a relay: asked for, or the claimant label has the Harness daemon's
    /// `harness/<host>/<harness>/run-<n>` form.
    pub relay: bool,
    /// When the attempt began.
    pub claimed_at: DateTime<Utc>,
    /// The latest heartbeat or resume; none if the agent never sent one.
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// When the attempt's lease (or interrupt lease) lapses; moved on by heartbeats.
    pub lease_expires_at: DateTime<Utc>,
    /// When the attempt closed; none while it is open (at most one open per todo).
    pub ended_at: Option<DateTime<Utc>>,
    /// How the attempt ended; set together with `ended_at`.
    pub outcome: Option<AttemptOutcome>,
    /// What the end did to the todo; set together with `ended_at`.
    pub disposition: Option<AttemptDisposition>,
    /// The agent's (or an operator's) note on the attempt, at most 2 048 bytes.
    pub summary: Option<String>,
    /// Whether `summary` was cut to fit.
    pub summary_truncated: bool,
    /// Where the attempt's output is: an https URL or `mcp://cairn/<id>` (≤512 bytes).
    pub artifact: Option<String>,
}

/// An endpoint as stored (the token hash stays in the store).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = endpoints, check_for_backend(diesel::pg::Pg))]
pub struct EndpointRow {
    /// Primary key (`ep_…` in the API).
    pub id: EndpointId,
    /// The owner scope; an endpoint never changes owner.
    pub scope_id: ScopeId,
    /// Unique name (`[a-z0-9][a-z0-9_-]{0,62}`), what notifications call the endpoint.
    pub slug: String,
    /// The token's first characters (`sbk_` and 6 more), to recognise it in a listing.
    pub token_prefix: String,
    /// The verbs its token may use, as stored strings (see [`EndpointRow::verbs`]).
    pub grants: Vec<String>,
    /// Whether its token still authenticates.
    pub state: EndpointState,
    /// When it was revoked; set exactly when `state` is `revoked`.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When the token stops working on its own; none: never.
    pub expires_at: Option<DateTime<Utc>>,
    /// Lease length for claims that name none (60–86 400 s); none: the server default.
    pub default_lease_seconds: Option<i32>,
    /// Whether its agent last clocked in or out.
    pub presence: Presence,
    /// When `presence` last changed; none if it never has.
    pub presence_changed_at: Option<DateTime<Utc>>,
    /// When it was vended.
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
    /// Primary key (`hu_…` in the API).
    pub id: HumanId,
    /// Sign-in address, unique regardless of case.
    pub email: String,
    /// Name shown on the Board (1–200 characters).
    pub display_name: String,
    /// When the human was added.
    pub created_at: DateTime<Utc>,
}
