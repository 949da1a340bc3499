//! What one digest found: every section measured or honestly unavailable, and the
//! quiet rule (SPEC section 11). A section that could not be computed is
//! [`Measured::Unavailable`] with its reason: it is never read as zero, and a digest
//! holding one is never quiet.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::domain::ids::TodoId;
use crate::sinks::rules::vocabulary::SinkEvent;

/// A section's value, or why it could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Measured<T> {
    /// The query answered.
    Ok(T),
    /// The query failed or timed out; the reason is shown as `unavailable: <reason>`.
    Unavailable(String),
}

impl<T> Measured<T> {
    /// The value, when measured.
    pub fn ok(&self) -> Option<&T> {
        match self {
            Measured::Ok(v) => Some(v),
            Measured::Unavailable(_) => None,
        }
    }

    /// The value changed by `f`, or the same reason.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Measured<U> {
        match self {
            Measured::Ok(v) => Measured::Ok(f(v)),
            Measured::Unavailable(why) => Measured::Unavailable(why),
        }
    }

    /// Why it is missing, when it is.
    pub fn unavailable(&self) -> Option<&str> {
        match self {
            Measured::Ok(_) => None,
            Measured::Unavailable(why) => Some(why),
        }
    }
}

/// One queue of one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct QueueKey {
    /// The endpoint's slug.
    pub endpoint: String,
    /// The queue.
    pub queue: String,
}

/// Pending work on a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PendingLine {
    /// Where.
    #[serde(flatten)]
    pub key: QueueKey,
    /// Pending todos now.
    pub pending: i64,
    /// Age of the oldest, in seconds.
    pub oldest_pending_seconds: i64,
}

/// Leased work on a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClaimedLine {
    /// Where.
    #[serde(flatten)]
    pub key: QueueKey,
    /// Claimed todos now.
    pub claimed: i64,
    /// Of those, leases that lapsed and were not reaped yet.
    pub stalled: i64,
}

/// One dead letter named in a digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadLetterLine {
    /// The todo.
    pub id: TodoId,
    /// Its title (clipped and labelled with its writer when rendered).
    pub title: String,
    /// Who wrote the title: the delivery's sender, or the agent that created the todo.
    pub title_by: crate::domain::vocabulary::Writer,
}

/// Dead letters on a queue since the previous digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadLine {
    /// Where.
    #[serde(flatten)]
    pub key: QueueKey,
    /// How many.
    pub dead_letters: i64,
    /// The most recent (at most [`FIRST_DEAD_LETTERS`]).
    pub first: Vec<DeadLetterLine>,
}

/// Dead letters named per queue.
pub const FIRST_DEAD_LETTERS: usize = 5;

/// Deliveries quarantined since the previous digest, per webhook.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QuarantineLine {
    /// The webhook's endpoint slug and queue, as the owner knows it.
    pub webhook: String,
    /// How many.
    pub quarantined: i64,
}

/// Doorbells nobody answered, per endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnheardLine {
    /// The endpoint's slug.
    pub endpoint: String,
    /// Rings whose todo was not claimed within the acknowledgement window.
    pub unheard: i64,
}

/// Claims an admission budget deferred, per queue and reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeferredLine {
    /// Where.
    #[serde(flatten)]
    pub key: QueueKey,
    /// `paused`, `in_flight_full` or `window_exhausted`.
    pub reason: String,
    /// How many claims.
    pub deferred: i64,
}

/// Notifications recorded undeliverable since the previous digest, per event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndeliverableLine {
    /// The event.
    pub event: SinkEvent,
    /// How many rows.
    pub undeliverable: i64,
}

/// A connection not bound to a destination, and the messages its sinks hold meanwhile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnboundLine {
    /// The connection's name.
    pub connection: String,
    /// Messages its sinks hold until an admin rotates it with a destination.
    pub held: i64,
}

/// Everything one digest measured, for one owner scope over `since..until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The previous digest's send time (or a day before the first).
    pub since: DateTime<Utc>,
    /// This digest's send time.
    pub until: DateTime<Utc>,
    /// Pending counts and oldest ages.
    pub pending: Measured<Vec<PendingLine>>,
    /// Claimed and stalled counts.
    pub claimed: Measured<Vec<ClaimedLine>>,
    /// Dead letters since `since`.
    pub dead: Measured<Vec<DeadLine>>,
    /// Quarantined deliveries since `since`.
    pub quarantined: Measured<Vec<QuarantineLine>>,
    /// Unheard doorbells since `since`.
    pub unheard: Measured<Vec<UnheardLine>>,
    /// Endpoints clocked out now (slugs).
    pub clocked_out: Measured<Vec<String>>,
    /// Claims deferred by admission budgets since `since`.
    pub deferred: Measured<Vec<DeferredLine>>,
    /// Notifications recorded undeliverable since `since`.
    pub undeliverable: Measured<Vec<UndeliverableLine>>,
    /// Connections not bound to a destination now (their sinks' messages held).
    pub unbound: Measured<Vec<UnboundLine>>,
}

/// The names of the sections, in the order a digest shows them.
pub const SECTIONS: [&str; 9] = [
    "pending",
    "claimed",
    "dead_letters",
    "quarantined",
    "unheard_doorbells",
    "clocked_out",
    "deferred",
    "undeliverable",
    "unbound_connections",
];

impl Report {
    /// The sections that could not be measured, with their reasons.
    pub fn unavailable(&self) -> Vec<(&'static str, &str)> {
        let reasons = [
            self.pending.unavailable(),
            self.claimed.unavailable(),
            self.dead.unavailable(),
            self.quarantined.unavailable(),
            self.unheard.unavailable(),
            self.clocked_out.unavailable(),
            self.deferred.unavailable(),
            self.undeliverable.unavailable(),
            self.unbound.unavailable(),
        ];
        SECTIONS.iter().zip(reasons).filter_map(|(name, why)| why.map(|w| (*name, w))).collect()
    }

    /// Things that need a person: dead letters, quarantined deliveries, stalled
    /// leases, unheard doorbells, undeliverable notifications, connections not bound to a
    /// destination (each one, whether or not it holds messages yet), and queues whose oldest
    /// pending todo is older than `age_threshold_seconds`. Unmeasured sections are not
    /// counted here (see [`Report::is_quiet`]).
    pub fn trouble(&self, age_threshold_seconds: i64) -> i64 {
        let sum = |m: Option<i64>| m.unwrap_or(0);
        let old = sum(self.pending.ok().map(|v| {
            v.iter().filter(|p| p.pending > 0 && p.oldest_pending_seconds > age_threshold_seconds).count() as i64
        }));
        old + sum(self.claimed.ok().map(|v| v.iter().map(|c| c.stalled).sum()))
            + sum(self.dead.ok().map(|v| v.iter().map(|d| d.dead_letters).sum()))
            + sum(self.quarantined.ok().map(|v| v.iter().map(|q| q.quarantined).sum()))
            + sum(self.unheard.ok().map(|v| v.iter().map(|u| u.unheard).sum()))
            + sum(self.undeliverable.ok().map(|v| v.iter().map(|u| u.undeliverable).sum()))
            + sum(self.unbound.ok().map(|v| v.len() as i64))
    }

    /// Quiet: every section measured, every trouble count zero, and no queue older
    /// than the threshold. Only a quiet digest may be skipped.
    pub fn is_quiet(&self, age_threshold_seconds: i64) -> bool {
        self.unavailable().is_empty() && self.trouble(age_threshold_seconds) == 0
    }
}

#[cfg(test)]
mod tests;
