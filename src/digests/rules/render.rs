//! How a digest reads: a title, one line per queue, the scope-wide sections, and every
//! unmeasured section as `unavailable: <reason>` (never a zero). The same text goes to
//! the sinks, to the preview and (as Markdown) to Cairn. Only counts, ages, endpoint
//! and queue names, clipped and labelled todo titles, and Board links: no payload.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::{Value, json};

use super::report::{Measured, QueueKey, Report};
use crate::sinks::rules::content::clip;

/// Longest todo title quoted in a digest, in characters.
const TITLE_CHARS: usize = 80;

/// What a digest is called and where its links point.
#[derive(Debug, Clone)]
pub struct Heading<'a> {
    /// The digest's name (owner-written: clipped).
    pub name: &'a str,
    /// The send time as the schedule's zone shows it, e.g. `Mon 09:00 America/Los_Angeles`.
    pub when: &'a str,
    /// The schedule's zone: every time in the body is shown in it, as in the title.
    pub zone: Tz,
    /// The instance's base URL, no trailing slash.
    pub base_url: &'a str,
    /// Pending older than this (seconds) needs attention.
    pub age_threshold_seconds: i64,
}

/// The digest's title: `Switchboard digest · <name> · <when> · <n> need attention`
/// (or `all quiet`).
pub fn title(report: &Report, h: &Heading<'_>) -> String {
    let n = report.trouble(h.age_threshold_seconds);
    let state = match (n, report.unavailable().len()) {
        (0, 0) => "all quiet".to_owned(),
        (0, u) => format!("{u} not measured"),
        (n, _) => format!("{n} need attention"),
    };
    clip(&format!("Switchboard digest · {} · {} · {state}", clip(h.name, 40), h.when), 120)
}

/// `at` in `zone`, with the zone's name, abbreviation and offset, as the body shows a
/// time: `Tue 01 Dec 09:00 Europe/Berlin (CET, +01:00)` (`UTC` alone for UTC).
pub fn zoned(at: DateTime<Utc>, zone: Tz) -> String {
    let local = at.with_timezone(&zone);
    if zone == Tz::UTC {
        return format!("{} UTC", local.format("%a %d %b %H:%M"));
    }
    format!("{} {} ({}, {})", local.format("%a %d %b %H:%M"), zone.name(), local.format("%Z"), local.format("%:z"))
}

/// An age in seconds as a person reads it.
pub fn age(seconds: i64) -> String {
    match seconds.max(0) {
        s if s < 90 => format!("{s} s"),
        s if s < 90 * 60 => format!("{} min", (s + 30) / 60),
        s if s < 48 * 3600 => format!("{} h", (s + 1800) / 3600),
        s => format!("{} d", (s + 43_200) / 86_400),
    }
}

fn queue_label(k: &QueueKey) -> String {
    format!("{}/{}", k.endpoint, k.queue)
}

/// The full text: one fact a line, Markdown-flavoured so that Cairn renders it and a
/// phone shows it plainly.
pub fn body(report: &Report, h: &Heading<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Since {} · {}",
        zoned(report.since, h.zone),
        match report.trouble(h.age_threshold_seconds) {
            0 => "nothing needs attention".to_owned(),
            n => format!("{n} need attention"),
        }
    );
    let _ = writeln!(out);
    queue_lines(report, h, &mut out);
    scope_lines(report, &mut out);
    for (name, why) in report.unavailable() {
        let _ = writeln!(out, "- {}: unavailable: {}", section_title(name), clip(why, 120));
    }
    let _ = writeln!(out);
    let _ = write!(out, "Dead letters: {}/todos?filter=dead", h.base_url);
    out
}

/// The short message a sink gets when the full digest was published to Cairn (the
/// title already counts what needs attention).
pub fn short(artifact_url: &str) -> String {
    format!("The full digest: {artifact_url}")
}

/// The full text, after a note that publishing to Cairn failed (the sinks then get
/// everything, so nothing is lost with the artifact).
pub fn after_failed_publication(body: &str, why: &str) -> String {
    format!("Publishing this digest to Cairn failed ({}); here it is in full.\n\n{body}", clip(why, 80))
}

fn section_title(name: &str) -> &'static str {
    match name {
        "pending" => "Pending",
        "claimed" => "Claimed and stalled",
        "dead_letters" => "Dead letters",
        "quarantined" => "Quarantined deliveries",
        "unheard_doorbells" => "Unheard doorbells",
        "clocked_out" => "Endpoints clocked out",
        "deferred" => "Deferred by admission budgets",
        "unbound_connections" => "Connections not bound to a destination",
        _ => "Undeliverable notifications",
    }
}

/// Per queue: counts joined on one line; a queue where everything measured is zero
/// reads `quiet`.
fn queue_lines(report: &Report, h: &Heading<'_>, out: &mut String) {
    #[derive(Default)]
    struct Line {
        parts: Vec<String>,
        dead: Vec<String>,
    }
    let mut lines: BTreeMap<QueueKey, Line> = BTreeMap::new();
    if let Measured::Ok(v) = &report.pending {
        for p in v {
            let old = if p.oldest_pending_seconds > h.age_threshold_seconds { " ⚠" } else { "" };
            lines.entry(p.key.clone()).or_default().parts.push(format!(
                "{} pending (oldest {}{old})",
                p.pending,
                age(p.oldest_pending_seconds)
            ));
        }
    }
    if let Measured::Ok(v) = &report.claimed {
        for c in v {
            let l = lines.entry(c.key.clone()).or_default();
            l.parts.push(format!("{} claimed", c.claimed));
            if c.stalled > 0 {
                l.parts.push(format!("{} stalled", c.stalled));
            }
        }
    }
    if let Measured::Ok(v) = &report.dead {
        for d in v {
            let l = lines.entry(d.key.clone()).or_default();
            l.parts.push(format!("{} dead letter{}", d.dead_letters, if d.dead_letters == 1 { "" } else { "s" }));
            for t in &d.first {
                l.dead.push(format!(
                    "  - Todo title ({}): \"{}\" {}/todos/{}",
                    t.title_by.label(),
                    clip(&t.title, TITLE_CHARS),
                    h.base_url,
                    t.id
                ));
            }
        }
    }
    if let Measured::Ok(v) = &report.deferred {
        for d in v {
            lines.entry(d.key.clone()).or_default().parts.push(format!("{} deferred ({})", d.deferred, d.reason));
        }
    }
    if lines.is_empty() {
        let _ = writeln!(out, "- No queue holds work or lost any since then.");
    }
    for (k, l) in lines {
        let _ = writeln!(out, "- {}: {}", queue_label(&k), l.parts.join(" · "));
        for d in l.dead {
            let _ = writeln!(out, "{d}");
        }
    }
}

fn scope_lines(report: &Report, out: &mut String) {
    if let Measured::Ok(v) = &report.quarantined {
        let total: i64 = v.iter().map(|q| q.quarantined).sum();
        if total > 0 {
            let each: Vec<String> = v.iter().map(|q| format!("{} {}", q.webhook, q.quarantined)).collect();
            let _ = writeln!(out, "- Quarantined deliveries: {total} ({})", each.join(", "));
        }
    }
    if let Measured::Ok(v) = &report.unheard {
        let total: i64 = v.iter().map(|u| u.unheard).sum();
        if total > 0 {
            let each: Vec<String> = v.iter().map(|u| format!("{} {}", u.endpoint, u.unheard)).collect();
            let _ = writeln!(out, "- Unheard doorbells: {total} ({})", each.join(", "));
        }
    }
    if let Measured::Ok(v) = &report.clocked_out
        && !v.is_empty()
    {
        let _ = writeln!(out, "- Endpoints clocked out: {}", v.join(", "));
    }
    if let Measured::Ok(v) = &report.undeliverable {
        let total: i64 = v.iter().map(|u| u.undeliverable).sum();
        if total > 0 {
            let each: Vec<String> = v.iter().map(|u| format!("{} {}", u.event, u.undeliverable)).collect();
            let _ = writeln!(out, "- Notifications that could not be delivered: {total} ({})", each.join(", "));
        }
    }
    if let Measured::Ok(v) = &report.unbound
        && !v.is_empty()
    {
        let each: Vec<String> = v.iter().map(|u| format!("{} ({} held)", clip(&u.connection, 60), u.held)).collect();
        let _ = writeln!(
            out,
            "- Connections not bound to a destination, their sinks' messages held until an admin rotates them with \
             a base URL: {}",
            each.join(", ")
        );
    }
}

/// The sections as the preview answers them: one object per section and queue (or
/// per section, for scope-wide ones), `status: "ok"` with its figures or
/// `status: "unavailable"` with the reason and no figure at all.
pub fn sections(report: &Report) -> Vec<Value> {
    fn each<T: serde::Serialize>(out: &mut Vec<Value>, name: &str, m: &Measured<Vec<T>>) {
        match m {
            Measured::Unavailable(why) => out.push(json!({"name": name, "status": "unavailable", "reason": why})),
            Measured::Ok(rows) if rows.is_empty() => out.push(json!({"name": name, "status": "ok", "count": 0})),
            Measured::Ok(rows) => {
                for r in rows {
                    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
                    if let Value::Object(map) = &mut v {
                        map.insert("name".into(), json!(name));
                        map.insert("status".into(), json!("ok"));
                    }
                    out.push(v);
                }
            }
        }
    }
    let mut out = Vec::new();
    each(&mut out, "pending", &report.pending);
    each(&mut out, "claimed", &report.claimed);
    each(&mut out, "dead_letters", &report.dead);
    each(&mut out, "quarantined", &report.quarantined);
    each(&mut out, "unheard_doorbells", &report.unheard);
    match &report.clocked_out {
        Measured::Unavailable(why) => out.push(json!({"name": "clocked_out", "status": "unavailable", "reason": why})),
        Measured::Ok(slugs) => out.push(json!({"name": "clocked_out", "status": "ok", "endpoints": slugs})),
    }
    each(&mut out, "deferred", &report.deferred);
    each(&mut out, "undeliverable", &report.undeliverable);
    each(&mut out, "unbound_connections", &report.unbound);
    out
}

#[cfg(test)]
mod tests;
