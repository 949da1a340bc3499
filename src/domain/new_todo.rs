//! A todo to create, as intake's routing and agents' creates describe it, and the
//! checks every field passes before anything is written.

use crate::domain::ids::{EndpointId, EventId};
use crate::domain::text;
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::QuarantineReason;
use crate::domain::transitions::{MAX_ATTEMPTS_RANGE, within};
use crate::error::{Error, Result};

/// A todo to create.
#[derive(Debug, Clone)]
pub struct NewTodo {
    /// The endpoint whose queue receives it.
    pub endpoint_id: EndpointId,
    /// Queue name.
    pub queue: String,
    /// Title (sender- or agent-written).
    pub title: String,
    /// Kind label.
    pub kind: Option<String>,
    /// Source label (intake sets the webhook's source type).
    pub source: Option<String>,
    /// Opaque JSON payload.
    pub payload: Option<serde_json::Value>,
    /// De-duplicates creation among live todos of the endpoint.
    pub idempotency_key: Option<String>,
    /// Attempt cap (default 5).
    pub max_attempts: Option<i32>,
    /// The delivery that produced it (intake only; agent-authored todos have none and
    /// so never pass the sender gate).
    pub event_id: Option<EventId>,
    /// Why intake held it (only on the reserved `quarantine` queue).
    pub quarantine_reason: Option<QuarantineReason>,
    /// Instructions a routing rule attached for the agent.
    pub work_order: Option<String>,
}

impl NewTodo {
    /// A todo with a queue and title and every optional field unset.
    pub fn new(endpoint_id: EndpointId, queue: impl Into<String>, title: impl Into<String>) -> Self {
        NewTodo {
            endpoint_id,
            queue: queue.into(),
            title: title.into(),
            kind: None,
            source: None,
            payload: None,
            idempotency_key: None,
            max_attempts: None,
            event_id: None,
            quarantine_reason: None,
            work_order: None,
        }
    }

    /// Checks every field; nothing is written when this fails.
    pub fn validate(&self) -> Result<()> {
        if !text::valid_queue_name(&self.queue) {
            return Err(Error::invalid(
                "queue",
                "must be 1–64 of a-z, 0-9, '.', '_' or '-', starting with a letter or digit",
            ));
        }
        // The reserved queue holds intake's deliveries only, each with its reason.
        if (self.queue == QUARANTINE_QUEUE) != (self.event_id.is_some() && self.quarantine_reason.is_some()) {
            return Err(Error::invalid("queue", "quarantine is reserved for held deliveries"));
        }
        if self.title.trim().is_empty() || self.title.len() > text::TITLE_MAX_BYTES {
            return Err(Error::invalid("title", "must be 1–1024 bytes"));
        }
        for (field, value) in [("kind", &self.kind), ("source", &self.source)] {
            if value.as_ref().is_some_and(|v| v.is_empty() || v.len() > text::LABEL_MAX_BYTES) {
                return Err(Error::invalid(field, "must be 1–128 bytes"));
            }
        }
        if self.idempotency_key.as_ref().is_some_and(|k| k.is_empty() || k.len() > text::IDEMPOTENCY_KEY_MAX_BYTES) {
            return Err(Error::invalid("idempotency_key", "must be 1–256 bytes"));
        }
        let texts = [Some(&self.title), self.kind.as_ref(), self.source.as_ref(), self.idempotency_key.as_ref()];
        if texts.into_iter().flatten().any(|t| t.contains('\0'))
            || self.payload.as_ref().is_some_and(text::json_has_nul)
        {
            return Err(Error::InvalidArgument("text may not contain NUL (\\u0000) characters".into()));
        }
        if let Some(m) = self.max_attempts
            && !within(m, MAX_ATTEMPTS_RANGE)
        {
            return Err(Error::invalid("max_attempts", "must be between 1 and 100"));
        }
        Ok(())
    }
}
