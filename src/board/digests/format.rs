//! Small renderings shared by the Digests pages: a send time in the schedule's zone and
//! in UTC, what became of a send time and why, the covered queues, the sinks by name,
//! the Cairn publication, and an artifact link that can only ever be a web address.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use crate::board::todos::format::{ago, machine};
use crate::digests::rules::render::age;
use crate::digests::rules::schedule::Schedule;
use crate::digests::statements::DigestRow;
use crate::domain::ids::SinkId;
use crate::sinks::statements::{ConnectionRow, SinkRow};

/// `at` in UTC: `Tue 01 Dec 2026 08:00 UTC`.
pub fn in_utc(at: DateTime<Utc>) -> String {
    at.format("%a %d %b %Y %H:%M UTC").to_string()
}

/// `at` in the schedule's zone: `Tue 01 Dec 2026 09:00 Europe/Berlin` (in UTC when the
/// stored schedule no longer parses).
pub fn in_zone(schedule: &str, at: DateTime<Utc>) -> String {
    match Schedule::parse(schedule) {
        Ok(s) => format!("{} {}", at.with_timezone(&s.zone()).format("%a %d %b %Y %H:%M"), s.zone_name()),
        Err(_) => in_utc(at),
    }
}

/// A send time as the pages show it: in the schedule's zone, then in UTC (once, when
/// the zone is UTC), then how far from `now`.
pub fn send_time(schedule: &str, at: DateTime<Utc>, now: DateTime<Utc>) -> Markup {
    let (local, utc) = (in_zone(schedule, at), in_utc(at));
    html! {
        time datetime=(machine(at)) { (local) }
        @if local != utc { br; span.sb-muted { (utc) } }
        " " span.sb-hint { "(" (ago(now, at)) ")" }
    }
}

/// What became of one send time, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeLabel {
    /// A short label: `sent`, `skipped: quiet`, …
    pub label: String,
    /// Its chip class (templates/board.css).
    pub chip: &'static str,
    /// Why, in a sentence.
    pub why: &'static str,
}

/// A run's stored outcome in words (an unknown one is shown as stored).
pub fn outcome(raw: &str) -> OutcomeLabel {
    let (label, chip, why) = match raw {
        "sent" => ("sent", "sb-chip-sent", "queued for the digest's sinks"),
        "publishing" => ("publishing", "sb-chip-pending", "waiting for Cairn; the sinks are told once it answers"),
        "skipped_quiet" => ("skipped: quiet", "sb-chip", "every section was measured and nothing needed attention"),
        "skipped_late" => ("skipped: late", "sb-chip-held", "missed by an hour or more while no instance ran"),
        other => return OutcomeLabel { label: other.to_owned(), chip: "sb-chip", why: "" },
    };
    OutcomeLabel { label: label.to_owned(), chip, why }
}

/// An outcome's chip.
pub fn outcome_chip(o: &OutcomeLabel) -> Markup {
    html! { span class=(format!("sb-chip {}", o.chip)) { (o.label) } }
}

/// The covered queues, or `all queues`.
pub fn queues(d: &DigestRow) -> Markup {
    html! {
        @if d.queues.is_empty() {
            "all queues"
        } @else {
            @for (i, q) in d.queues.iter().enumerate() {
                @if i > 0 { ", " }
                code { (q) }
            }
        }
    }
}

/// The digest's sinks by name (never their URLs, which may carry a token); one that
/// is gone reads `(deleted sink)`.
pub fn sink_names(ids: &[SinkId], sinks: &[SinkRow]) -> Markup {
    html! {
        @if ids.is_empty() {
            span.sb-muted { "none (Cairn only)" }
        }
        @for (i, id) in ids.iter().enumerate() {
            @if i > 0 { ", " }
            @match sinks.iter().find(|s| s.id == *id) {
                Some(s) => { (s.name) },
                None => { span.sb-muted { "(deleted sink)" } },
            }
        }
    }
}

/// Whether a quiet digest is skipped.
pub fn quiet_rule(skip_when_quiet: bool) -> &'static str {
    if skip_when_quiet { "skipped when quiet" } else { "sent even when quiet" }
}

/// The age threshold: `3600 s (60 min)`.
pub fn threshold(seconds: i32) -> String {
    format!("{seconds} s ({})", age(i64::from(seconds)))
}

/// The Cairn publication: the connection's name and how long the artifact lives, or
/// `not published`.
pub fn cairn(d: &DigestRow, connections: &[ConnectionRow]) -> Markup {
    html! {
        @match d.cairn_connection_id {
            None => { span.sb-muted { "not published" } },
            Some(id) => {
                "via "
                @match connections.iter().find(|c| c.id == id) {
                    Some(c) => { (c.name) },
                    None => { span.sb-muted { "(deleted connection)" } },
                }
                ", kept " (age(i64::from(d.cairn_ttl_seconds)))
            },
        }
    }
}

/// A published artifact: a link when it is a web address, else plain text (an
/// answer from Cairn never becomes a `javascript:` link).
pub fn artifact(url: &str) -> Markup {
    let web = url.starts_with("https://") || url.starts_with("http://");
    html! {
        @if web {
            a href=(url) rel="noopener noreferrer" { "the artifact" }
        } @else {
            code { (url) }
        }
    }
}
