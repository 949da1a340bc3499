//! The JSON shapes of the agent's todo answers: a todo as listed and in detail, its
//! attempts, the list, a claim's answer and create_todo's. Views are built from store
//! rows here, so no route or tool decides field names on its own; the operator API
//! answers a todo with the same views. Shapes that carry a lease token do not implement
//! Debug, so they cannot be logged.

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use crate::db::models::{AttemptRow, TodoRow};
use crate::domain::ids::TodoId;
use crate::domain::todo_state::{AttemptDisposition, AttemptOutcome, DeadReason, TodoState};
use crate::domain::vocabulary::Phase;

/// A todo as listed (no payload).
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoView {
    /// The todo's id (`td_…`).
    pub id: TodoId,
    /// The queue on its endpoint that holds it.
    pub queue: String,
    /// Where it came from: the webhook's source type (`github`, `gitea`, `stripe`,
    /// `standard`, `generic`) for a delivery, `agent` for a todo an agent created.
    pub source: Option<String>,
    /// The delivery's event type, or the label the creating agent gave (≤128 bytes); null
    /// when there is none.
    pub kind: Option<String>,
    /// One line for humans: `<source> <event type>` (or `<source> delivery`) for a
    /// delivery, or the creating agent's title (≤1 024 bytes).
    pub title: String,
    /// Where it is in its life; a dead letter is `failed` with `dead_letter` true.
    pub state: TodoState,
    /// Attempts counted against `max_attempts`: a claim takes one, a release gives it back,
    /// an operator's retry-now resets it to 0.
    pub attempt: i32,
    /// The attempt cap (1–100, default 5): a fail, or a lapsed lease or interrupt lease, on
    /// this attempt makes the todo a dead letter.
    pub max_attempts: i32,
    /// When the current claim's lease lapses unless a heartbeat extends it; null unless
    /// `claimed`.
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Always present; null unless a retry is scheduled.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// Failed with no retry scheduled.
    pub dead_letter: bool,
    /// Why it stopped being retried; null unless `dead_letter`.
    pub dead_reason: Option<DeadReason>,
    /// Where it stands in the Board's words (the pill it is under): `pending`,
    /// `claimed`, `done`, `failed` (a retry is scheduled) or `dead` (no retry left, a
    /// dead letter); null while interrupted or once canceled.
    pub phase: Option<Phase>,
    /// When it became a dead letter; null unless `dead_letter`.
    pub dead_lettered_at: Option<DateTime<Utc>>,
    /// When the interrupt lease lapses unless the holder heartbeats or resumes; null unless
    /// `input_required` or `auth_required`.
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    /// The agent's note on what it is waiting for (control characters removed, at most
    /// 1 024 bytes); null unless interrupted with one.
    pub interrupt_reason: Option<String>,
    /// When it was created; claim-next takes the oldest pending todo first.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Size of the payload as JSON text, in bytes (0 without one); listings leave the
    /// payload itself out.
    pub payload_size: i32,
}

impl From<&TodoRow> for TodoView {
    fn from(t: &TodoRow) -> Self {
        TodoView {
            id: t.id,
            queue: t.queue.clone(),
            source: t.source.clone(),
            kind: t.kind.clone(),
            title: t.title.clone(),
            state: t.state,
            attempt: t.attempt,
            max_attempts: t.max_attempts,
            lease_expires_at: t.lease_expires_at,
            next_retry_at: t.next_retry_at,
            dead_letter: t.is_dead_letter(),
            dead_reason: t.dead_reason,
            phase: Phase::of(t.state, t.next_retry_at.is_some()),
            dead_lettered_at: t.dead_lettered_at,
            interrupt_expires_at: t.interrupt_expires_at,
            interrupt_reason: t.interrupt_reason.clone(),
            created_at: t.created_at,
            updated_at: t.updated_at,
            payload_size: t.payload_size,
        }
    }
}

/// A todo with its payload, result and (where asked for) attempts.
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoDetail {
    /// The todo's fields, as listed.
    #[serde(flatten)]
    pub todo: TodoView,
    /// The JSON the todo carries for the agent: a delivery's body (a body that is not JSON
    /// as `{"raw_body": "…"}`) or what the creating agent sent; null without one.
    pub payload: Option<serde_json::Value>,
    /// The JSON reported with `complete` (or with a `fail`); null if none was, and cleared
    /// by an operator's retry-now.
    pub result: Option<serde_json::Value>,
    /// Claims ever made: the length of its attempt history, which retry-now does not reset.
    pub attempts_total: i32,
    /// Instructions a routing rule attached for the agent.
    pub work_order: Option<String>,
    /// Its latest 20 attempts, newest first; only in the answer of a get by id, absent
    /// elsewhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<AttemptView>>,
}

impl TodoDetail {
    /// The detail view, with attempts when given.
    pub fn new(t: &TodoRow, attempts: Option<&[AttemptRow]>) -> Self {
        TodoDetail {
            todo: t.into(),
            payload: t.payload.clone(),
            result: t.result.clone(),
            attempts_total: t.attempts_total,
            work_order: t.work_order.clone(),
            attempts: attempts.map(|a| a.iter().map(AttemptView::from).collect()),
        }
    }
}

/// One attempt of a todo.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptView {
    /// Attempt number within the todo, from 1; never reused.
    pub seq: i32,
    /// Who claimed, as the claimer labelled itself (control characters removed, at most 128
    /// bytes); null without a label.
    pub claimant: Option<String>,
    /// A relay attempt: claimed with `relay: true`, or with a claimant label of the form
    /// `harness/<host>/<harness>/run-<n>`.
    pub relay: bool,
    /// When the attempt began.
    pub claimed_at: DateTime<Utc>,
    /// The latest heartbeat or resume; null if there was none.
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// When its lease lapses (or lapsed); while the todo is interrupted, the interrupt
    /// lease.
    pub lease_expires_at: DateTime<Utc>,
    /// When it closed; null while open (a todo has at most one open attempt).
    pub ended_at: Option<DateTime<Utc>>,
    /// How it ended; null while open.
    pub outcome: Option<AttemptOutcome>,
    /// What its end did to the todo; null while open.
    pub disposition: Option<AttemptDisposition>,
    /// The note left when it ended (by the agent, or an operator's fail), at most 2 048
    /// bytes; null without one.
    pub summary: Option<String>,
    /// Whether `summary` was cut to 2 048 bytes.
    pub summary_truncated: bool,
    /// Where the attempt's output is: an https URL or `mcp://cairn/<id>`; null if none was
    /// given.
    pub artifact: Option<String>,
}

impl From<&AttemptRow> for AttemptView {
    fn from(a: &AttemptRow) -> Self {
        AttemptView {
            seq: a.seq,
            claimant: a.claimant.clone(),
            relay: a.relay,
            claimed_at: a.claimed_at,
            last_heartbeat_at: a.last_heartbeat_at,
            lease_expires_at: a.lease_expires_at,
            ended_at: a.ended_at,
            outcome: a.outcome,
            disposition: a.disposition,
            summary: a.summary.clone(),
            summary_truncated: a.summary_truncated,
            artifact: a.artifact.clone(),
        }
    }
}

/// `GET /api/v1/agent/todos` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoList {
    /// This endpoint's drainable todos, newest first, without payloads.
    pub todos: Vec<TodoView>,
}

/// A claim's answer; `{ "empty": true }` when nothing was claimed, with `deferred` when an
/// admission budget held back work.
#[derive(Serialize, ToSchema)]
// No other field, in the document too: claim_next's answer is this or a
// `BatchClaimAnswer`, and only `claims` tells them apart.
#[serde(deny_unknown_fields)]
pub struct ClaimAnswer {
    /// The claimed todo with its payload (its history is in `prior_attempts`); absent when
    /// `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoDetail>,
    /// This claim's lease token (16 random bytes, base64url), shown only here: pass it to
    /// heartbeat, complete, fail, release, interrupt and resume so a stale holder is
    /// refused. Absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_token: Option<String>,
    /// The number of the attempt this claim opened; absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt_seq: Option<i32>,
    /// Claims ever made of the todo, this one included; absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts_total: Option<i32>,
    /// Up to five earlier attempts, newest first (empty on a first claim); absent when
    /// `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_attempts: Option<Vec<AttemptView>>,
    /// True when nothing was claimed; every field above is then absent.
    pub empty: bool,
    /// Present when `empty` because an admission budget of the queue held back work that
    /// was there to claim: `paused`, `in_flight_full` (its `max_in_flight` todos are
    /// claimed) or `window_exhausted` (its `per_hour` claims of this clock hour are
    /// spent). Try again later; this is not an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<crate::domain::admission::Deferral>,
}

/// create_todo answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedTodo {
    /// The new todo, or the live one that already holds the idempotency key.
    #[serde(flatten)]
    pub todo: TodoDetail,
    /// False when an existing live todo with the same idempotency key was returned.
    pub created: bool,
}
