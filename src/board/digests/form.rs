//! The digest form as posted (adding a digest, or replacing one with the edit form),
//! and how it becomes the service's [`DigestInput`]. Only the form's own shapes are
//! checked here (an id, a whole number); the schedule, the queues, the sinks' scope and
//! every bound are the service's validation, so the Board and the API refuse alike.

use crate::digests::service::{DEFAULT_AGE_THRESHOLD_SECONDS, DigestInput};
use crate::digests::statements::DigestRow;
use crate::domain::ids::{ConnectionId, SinkId};
use crate::error::{Error, Result};

/// The digest form's fields, as typed (kept to show the form again after a refusal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestForm {
    /// The digest's name.
    pub name: String,
    /// The schedule, as typed.
    pub schedule: String,
    /// Covered queues, comma-separated (empty: all).
    pub queues: String,
    /// The ticked sinks' ids (one `sink_ids` pair per ticked box).
    pub sink_ids: Vec<String>,
    /// Whether "skip when quiet" is ticked.
    pub skip_when_quiet: bool,
    /// Seconds, as typed (empty: the default).
    pub age_threshold_seconds: String,
    /// A cairn connection's id (empty: not published).
    pub cairn_connection_id: String,
    /// The Cairn artifact's time to live in seconds, as typed (empty: the default).
    pub cairn_ttl_seconds: String,
    /// The owner reference (empty: the human's own scope; ignored when replacing).
    pub owner: String,
}

impl Default for DigestForm {
    /// A blank form: quiet digests skipped, the default age threshold.
    fn default() -> Self {
        DigestForm {
            name: String::new(),
            schedule: String::new(),
            queues: String::new(),
            sink_ids: Vec::new(),
            skip_when_quiet: true,
            age_threshold_seconds: DEFAULT_AGE_THRESHOLD_SECONDS.to_string(),
            cairn_connection_id: String::new(),
            cairn_ttl_seconds: String::new(),
            owner: String::new(),
        }
    }
}

fn number(field: &str, raw: &str) -> Result<Option<i32>> {
    match raw.trim() {
        "" => Ok(None),
        raw => raw.parse().map(Some).map_err(|_| Error::invalid(field, "must be a whole number of seconds")),
    }
}

impl DigestForm {
    /// Reads the posted pairs (`sink_ids` repeats, one per ticked box; an unticked
    /// "skip when quiet" sends nothing, so it reads as off; `csrf_token` and anything
    /// unknown is ignored).
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form =
            DigestForm { skip_when_quiet: false, age_threshold_seconds: String::new(), ..DigestForm::default() };
        for (name, value) in pairs {
            match name.as_str() {
                "name" => form.name = value.clone(),
                "schedule" => form.schedule = value.clone(),
                "queues" => form.queues = value.clone(),
                "sink_ids" => form.sink_ids.push(value.trim().to_owned()),
                "skip_when_quiet" => form.skip_when_quiet = true,
                "age_threshold_seconds" => form.age_threshold_seconds = value.clone(),
                "cairn_connection_id" => form.cairn_connection_id = value.trim().to_owned(),
                "cairn_ttl_seconds" => form.cairn_ttl_seconds = value.clone(),
                "owner" => form.owner = value.trim().to_owned(),
                _ => {}
            }
        }
        form
    }

    /// The edit form, filled in with what `d` is now.
    pub fn from_row(d: &DigestRow) -> Self {
        DigestForm {
            name: d.name.clone(),
            schedule: d.schedule.clone(),
            queues: d.queues.join(", "),
            sink_ids: d.sink_ids.iter().map(ToString::to_string).collect(),
            skip_when_quiet: d.skip_when_quiet,
            age_threshold_seconds: d.age_threshold_seconds.to_string(),
            cairn_connection_id: d.cairn_connection_id.map(|c| c.to_string()).unwrap_or_default(),
            cairn_ttl_seconds: d.cairn_ttl_seconds.to_string(),
            owner: String::new(),
        }
    }

    /// Whether the box of sink `id` is ticked.
    pub fn has_sink(&self, id: SinkId) -> bool {
        let id = id.to_string();
        self.sink_ids.contains(&id)
    }

    /// The queues as a list: comma-separated, trimmed, empty entries dropped (the
    /// service refuses anything that is not a queue name).
    pub fn queue_list(&self) -> Vec<String> {
        self.queues.split(',').map(str::trim).filter(|q| !q.is_empty()).map(str::to_owned).collect()
    }

    /// The digest this form asks for.
    pub fn input(&self) -> Result<DigestInput> {
        let sink_ids = self
            .sink_ids
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<SinkId>().map_err(|_| Error::invalid("sink_ids", "choose sinks from the list")))
            .collect::<Result<Vec<_>>>()?;
        let cairn_connection_id = match self.cairn_connection_id.as_str() {
            "" => None,
            raw => Some(
                raw.parse::<ConnectionId>()
                    .map_err(|_| Error::invalid("cairn_connection_id", "choose a cairn connection from the list"))?,
            ),
        };
        Ok(DigestInput {
            name: self.name.clone(),
            schedule: self.schedule.clone(),
            queues: self.queue_list(),
            sink_ids,
            skip_when_quiet: Some(self.skip_when_quiet),
            age_threshold_seconds: number("age_threshold_seconds", &self.age_threshold_seconds)?,
            cairn_connection_id,
            cairn_ttl_seconds: number("cairn_ttl_seconds", &self.cairn_ttl_seconds)?,
            owner: Some(self.owner.as_str()).filter(|o| !o.is_empty()).map(str::to_owned),
        })
    }
}
