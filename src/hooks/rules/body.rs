//! The exact JSON bodies of the two hook events, built from the store's signals.
//!
//! A body carries exactly the fields the spec lists (section 7) and nothing else: never
//! the payload, the result, headers, credentials or a work order. Every piece of text a
//! sender or an agent wrote is neutralised ([`super::neutralise`]); names Switchboard
//! validated itself (queue, endpoint slug) are neutralised and capped too, which leaves
//! valid names untouched and keeps the size bound below honest even for a bad row.
//!
//! Decisions the spec leaves open:
//! - `created_at` is when the announcement was built, for both types (one meaning on
//!   one channel), never the todo's creation time.
//! - In `todo.ready`, `kind` and `source` are omitted when absent or empty after
//!   neutralising. In `todo.dead_lettered` they are always present, `null` when absent
//!   or empty: the spec lists them without `?`.
//! - `final_attempt` is `null` when the transition closed no open attempt.
//!
//! Size: a body is at most [`MAX_BODY_BYTES`]. With every field at its cap a
//! `todo.ready` body cannot exceed it; a `todo.dead_lettered` body can (a summary of
//! 200 four-byte characters plus two such labels and a 512-character artifact). Then the
//! free-text fields are cut, longest first (ties: summary, source, kind), until it
//! fits; the artifact (a link that a cut would break) is cut only if that is not enough,
//! which the caps make impossible.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Serialize, Serializer};

use crate::domain::ids::TodoId;
use crate::domain::neutralise::{LABEL_MAX_CHARS, SUMMARY_MAX_CHARS, neutralise_to};
use crate::domain::signals::{DeadLettered, FinalAttempt, TodoFacts, TodoReady};
use crate::domain::text::ARTIFACT_MAX_BYTES;
use crate::domain::text_enum::text_enum;
use crate::domain::todo_state::{AttemptOutcome, DeadReason, ReadyReason};

/// Largest body ever sent, in bytes.
pub const MAX_BODY_BYTES: usize = 4096;
/// Longest queue name kept (a valid name is at most 64 ASCII characters).
const QUEUE_MAX_CHARS: usize = 64;
/// Longest endpoint slug kept (a valid slug is at most 63 ASCII characters).
const ENDPOINT_MAX_CHARS: usize = 63;
/// Longest artifact kept, in characters: a stored artifact is at most this many bytes,
/// so at most this many characters, and neutralising does not add characters.
const ARTIFACT_MAX_CHARS: usize = ARTIFACT_MAX_BYTES;

text_enum!(
    /// The events a hook is rung for (the `type` field and the metrics label).
    HookEvent {
        /// A todo became claimable.
        Ready => "todo.ready",
        /// A todo stopped being retried.
        DeadLettered => "todo.dead_lettered",
    }
);

/// A body that cannot be encoded within [`MAX_BODY_BYTES`] or at all.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Still too large after cutting every free-text field (the caps make this
    /// unreachable; it is an error rather than a panic all the same).
    #[error("ring body is {0} bytes, over the {MAX_BODY_BYTES}-byte limit")]
    TooLarge(usize),
    /// JSON encoding failed.
    #[error("ring body could not be encoded: {0}")]
    Json(#[from] serde_json::Error),
}

/// A ring's body, built once per signal and shared by every matching hook.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RingBody {
    /// `todo.ready`.
    Ready(ReadyBody),
    /// `todo.dead_lettered`.
    DeadLettered(DeadLetteredBody),
}

/// The `todo.ready` body.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadyBody {
    #[serde(rename = "type")]
    event_type: HookEvent,
    reason: ReadyReason,
    todo_id: TodoId,
    queue: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
    summary: String,
    endpoint: String,
    attempt: i32,
    #[serde(serialize_with = "rfc3339_utc")]
    created_at: DateTime<Utc>,
}

/// The `todo.dead_lettered` body. Field order follows the spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeadLetteredBody {
    #[serde(rename = "type")]
    event_type: HookEvent,
    todo_id: TodoId,
    source: Option<String>,
    kind: Option<String>,
    queue: String,
    endpoint: String,
    #[serde(serialize_with = "rfc3339_utc")]
    created_at: DateTime<Utc>,
    reason: DeadReason,
    attempts_total: i32,
    final_attempt: Option<FinalAttemptBody>,
}

/// The attempt whose close made the todo a dead letter, as a receiver sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalAttemptBody {
    seq: i32,
    outcome: AttemptOutcome,
    summary: Option<String>,
    artifact: Option<String>,
    #[serde(serialize_with = "rfc3339_utc")]
    at: DateTime<Utc>,
}

impl RingBody {
    /// The `todo.ready` body for `signal`, built at `now`.
    pub fn ready(signal: &TodoReady, now: DateTime<Utc>) -> Self {
        let todo = &signal.todo;
        RingBody::Ready(ReadyBody {
            event_type: HookEvent::Ready,
            reason: signal.reason,
            todo_id: todo.id,
            queue: neutralise_to(&todo.queue, QUEUE_MAX_CHARS),
            kind: label(todo.kind.as_deref()),
            source: label(todo.source.as_deref()),
            summary: neutralise_to(&todo.title, SUMMARY_MAX_CHARS),
            endpoint: endpoint(todo),
            attempt: todo.attempt,
            created_at: now,
        })
    }

    /// The `todo.dead_lettered` body for `signal`, built at `now`.
    pub fn dead_lettered(signal: &DeadLettered, now: DateTime<Utc>) -> Self {
        let todo = &signal.todo;
        RingBody::DeadLettered(DeadLetteredBody {
            event_type: HookEvent::DeadLettered,
            todo_id: todo.id,
            source: label(todo.source.as_deref()),
            kind: label(todo.kind.as_deref()),
            queue: neutralise_to(&todo.queue, QUEUE_MAX_CHARS),
            endpoint: endpoint(todo),
            created_at: now,
            reason: signal.reason,
            attempts_total: todo.attempts_total,
            final_attempt: signal.final_attempt.as_ref().map(final_attempt),
        })
    }

    /// Which event this body announces.
    pub fn event_type(&self) -> HookEvent {
        match self {
            RingBody::Ready(_) => HookEvent::Ready,
            RingBody::DeadLettered(_) => HookEvent::DeadLettered,
        }
    }

    /// The JSON bytes to sign and send, at most [`MAX_BODY_BYTES`] (see the module docs
    /// for how an oversized body is cut; the same body always gives the same bytes).
    pub fn to_json(&self) -> Result<Vec<u8>, BodyError> {
        let mut body = self.clone();
        loop {
            let bytes = serde_json::to_vec(&body)?;
            let Some(excess) = bytes.len().checked_sub(MAX_BODY_BYTES).filter(|&e| e > 0) else {
                return Ok(bytes);
            };
            if !body.cut_free_text(excess) {
                return Err(BodyError::TooLarge(bytes.len()));
            }
        }
    }

    /// Removes at least `excess` encoded bytes from one field (longest free text first,
    /// the artifact last), or says there is nothing left to cut.
    fn cut_free_text(&mut self, excess: usize) -> bool {
        let fields: Vec<&mut String> = match self {
            RingBody::Ready(b) => {
                [Some(&mut b.summary), b.source.as_mut(), b.kind.as_mut()].into_iter().flatten().collect()
            }
            RingBody::DeadLettered(b) => {
                let (summary, artifact) = match b.final_attempt.as_mut() {
                    Some(f) => (f.summary.as_mut(), f.artifact.as_mut()),
                    None => (None, None),
                };
                let free: Vec<&mut String> =
                    [summary, b.source.as_mut(), b.kind.as_mut()].into_iter().flatten().collect();
                if free.iter().any(|s| !s.is_empty()) { free } else { artifact.into_iter().collect() }
            }
        };
        // `max_by_key` keeps the last of equal keys; reversing keeps the first, so ties
        // go to the earlier field in the order above.
        let Some(longest) = fields.into_iter().rev().filter(|s| !s.is_empty()).max_by_key(|s| encoded_len(s)) else {
            return false;
        };
        cut_encoded_bytes(longest, excess);
        true
    }
}

/// A sender-written label, neutralised and capped; empty counts as absent.
fn label(raw: Option<&str>) -> Option<String> {
    raw.map(|s| neutralise_to(s, LABEL_MAX_CHARS)).filter(|s| !s.is_empty())
}

fn endpoint(todo: &TodoFacts) -> String {
    neutralise_to(&todo.endpoint_slug, ENDPOINT_MAX_CHARS)
}

fn final_attempt(attempt: &FinalAttempt) -> FinalAttemptBody {
    let text = |raw: Option<&str>, max| raw.map(|s| neutralise_to(s, max)).filter(|s: &String| !s.is_empty());
    FinalAttemptBody {
        seq: attempt.seq,
        outcome: attempt.outcome,
        summary: text(attempt.summary.as_deref(), SUMMARY_MAX_CHARS),
        artifact: text(attempt.artifact.as_deref(), ARTIFACT_MAX_CHARS),
        at: attempt.at,
    }
}

/// RFC 3339 in UTC with a `Z`, sub-second digits only when present.
fn rfc3339_utc<S: Serializer>(at: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&at.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// How many bytes a character takes inside a JSON string (neutralised text holds no
/// control characters, so only the quote and the backslash are escaped).
fn encoded_char_len(c: char) -> usize {
    match c {
        '"' | '\\' => 2,
        c if c.is_control() => 6,
        c => c.len_utf8(),
    }
}

fn encoded_len(s: &str) -> usize {
    s.chars().map(encoded_char_len).sum()
}

/// Drops characters from the end of `s` until at least `excess` encoded bytes are gone
/// (or `s` is empty).
fn cut_encoded_bytes(s: &mut String, excess: usize) {
    let mut removed = 0;
    while removed < excess {
        let Some(c) = s.pop() else { return };
        removed += encoded_char_len(c);
    }
}

#[cfg(test)]
mod tests;
