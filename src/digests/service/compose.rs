//! One digest, measured and written: what the preview shows and what a send time
//! sends. The store measures the sections; [`super::render`] writes them.

use chrono::{DateTime, Duration, Utc};

use crate::digests::rules::render::{self, Heading};
use crate::digests::rules::report::Report;
use crate::digests::rules::schedule::Schedule;
use crate::digests::statements::{Coverage, DigestRow};
use crate::error::Result;
use crate::sinks::rules::content::Message;
use crate::store::Store;

/// What the first digest covers: the day before its send time.
pub const FIRST_DIGEST_COVERS: Duration = Duration::hours(24);

/// The instance settings a digest is measured with.
#[derive(Debug, Clone)]
pub struct DigestSettings {
    /// The instance's base URL, for links.
    pub base_url: String,
    /// `SWITCHBOARD_DOORBELL_ACK_SECONDS`.
    pub doorbell_ack_seconds: i64,
    /// `SWITCHBOARD_DIGEST_SECTION_TIMEOUT_MS`.
    pub section_timeout_ms: u64,
}

/// A measured and written digest.
#[derive(Debug, Clone)]
pub struct Composed {
    /// What was measured.
    pub report: Report,
    /// Whether it is quiet (every section measured, nothing needs attention).
    pub quiet: bool,
    /// Its title.
    pub title: String,
    /// Its full text.
    pub body: String,
    /// The send time as the schedule's zone shows it.
    pub when: String,
}

/// The sinks' message for a digest titled `title` with `body`: the full text, or
/// (when published) a short one linking the artifact.
pub fn message(title: &str, body: String, base_url: &str) -> Message {
    Message {
        title: title.to_owned(),
        body,
        severity: crate::sinks::rules::vocabulary::SinkEvent::Digest.default_severity(),
        link: format!("{base_url}/digests"),
    }
}

fn heading<'a>(d: &'a DigestRow, s: &'a DigestSettings, when: &'a str) -> Heading<'a> {
    Heading {
        name: &d.name,
        when,
        zone: zone_of(&d.schedule),
        base_url: &s.base_url,
        age_threshold_seconds: i64::from(d.age_threshold_seconds),
    }
}

/// The zone of a stored schedule (UTC when it no longer parses): the title and the
/// body of its digest both show times in it.
pub fn zone_of(schedule: &str) -> chrono_tz::Tz {
    Schedule::parse(schedule).map_or(chrono_tz::Tz::UTC, |s| s.zone())
}

/// `at` as `Tue 09:00 Europe/Berlin` in the schedule's zone (UTC when the stored
/// schedule no longer parses).
pub fn local_label(schedule: &str, at: DateTime<Utc>) -> String {
    match Schedule::parse(schedule) {
        Ok(s) => format!("{} {}", at.with_timezone(&s.zone()).format("%a %H:%M"), s.zone_name()),
        Err(_) => format!("{} UTC", at.format("%a %H:%M")),
    }
}

/// Measures and writes digest `d` for the send time `until`, covering everything since
/// the last send time it evaluated (or the day before, for its first).
pub async fn compose(store: &Store, d: &DigestRow, s: &DigestSettings, until: DateTime<Utc>) -> Result<Composed> {
    let since = d.covered_until.unwrap_or(until - FIRST_DIGEST_COVERS).min(until);
    let coverage = Coverage {
        scope: d.scope_id,
        queues: d.queues.clone(),
        since,
        until,
        doorbell_ack_seconds: s.doorbell_ack_seconds,
        section_timeout_ms: s.section_timeout_ms,
    };
    let report = store.digest_report(&coverage).await?;
    let when = local_label(&d.schedule, until);
    let heading = heading(d, s, &when);
    let title = render::title(&report, &heading);
    let body = render::body(&report, &heading);
    let quiet = report.is_quiet(i64::from(d.age_threshold_seconds));
    Ok(Composed { report, quiet, title, body, when })
}
