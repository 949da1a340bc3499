//! A digest's preview: measured now, sent nowhere, recorded nowhere. Each section with
//! its status (a measured 0 reads `0`; a section that could not be measured reads
//! `unavailable: <reason>` and shows no figure at all), whether it is quiet, and the
//! title and text the sinks would get, in a `<pre>`.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::format::in_utc;
use super::paths;
use crate::digests::rules::render::age;
use crate::digests::rules::report::{Measured, Report};
use crate::digests::service::compose::Composed;
use crate::digests::statements::DigestRow;

/// One section as the preview reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Measured: what was found (`0 dead letters` when nothing).
    Measured(String),
    /// Not measured, and why.
    Unavailable(String),
}

/// One row of the sections table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionRow {
    /// Its stable name (`unheard_doorbells`), as the API's preview names it.
    pub name: &'static str,
    /// How a person reads it.
    pub label: &'static str,
    /// What it says.
    pub reading: Reading,
}

fn plural(n: i64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn read<T>(m: &Measured<T>, f: impl FnOnce(&T) -> String) -> Reading {
    match m {
        Measured::Ok(v) => Reading::Measured(f(v)),
        Measured::Unavailable(why) => Reading::Unavailable(why.clone()),
    }
}

/// The report's sections, in the order a digest shows them.
pub fn section_rows(r: &Report) -> Vec<SectionRow> {
    let row = |name, label, reading| SectionRow { name, label, reading };
    vec![
        row(
            "pending",
            "Pending",
            read(&r.pending, |v| {
                let total: i64 = v.iter().map(|p| p.pending).sum();
                let queues = v.iter().filter(|p| p.pending > 0).count() as i64;
                match v.iter().map(|p| p.oldest_pending_seconds).max() {
                    Some(oldest) if total > 0 => {
                        format!("{total} pending on {}, oldest {}", plural(queues, "queue", "queues"), age(oldest))
                    }
                    _ => "0 pending".to_owned(),
                }
            }),
        ),
        row(
            "claimed",
            "Claimed and stalled",
            read(&r.claimed, |v| {
                let claimed: i64 = v.iter().map(|c| c.claimed).sum();
                let stalled: i64 = v.iter().map(|c| c.stalled).sum();
                format!("{claimed} claimed, {stalled} stalled")
            }),
        ),
        row(
            "dead_letters",
            "Dead letters",
            read(&r.dead, |v| plural(v.iter().map(|d| d.dead_letters).sum(), "dead letter", "dead letters")),
        ),
        row(
            "quarantined",
            "Quarantined deliveries",
            read(&r.quarantined, |v| format!("{} quarantined", v.iter().map(|q| q.quarantined).sum::<i64>())),
        ),
        row(
            "unheard_doorbells",
            "Unheard doorbells",
            read(&r.unheard, |v| format!("{} unheard", v.iter().map(|u| u.unheard).sum::<i64>())),
        ),
        row(
            "clocked_out",
            "Endpoints clocked out",
            read(&r.clocked_out, |v| match v.len() {
                0 => "0 clocked out".to_owned(),
                n => format!("{n} clocked out: {}", v.join(", ")),
            }),
        ),
        row(
            "deferred",
            "Deferred by admission budgets",
            read(&r.deferred, |v| plural(v.iter().map(|d| d.deferred).sum(), "claim deferred", "claims deferred")),
        ),
        row(
            "undeliverable",
            "Undeliverable notifications",
            read(&r.undeliverable, |v| format!("{} undeliverable", v.iter().map(|u| u.undeliverable).sum::<i64>())),
        ),
    ]
}

/// The sections table.
pub fn sections_table(rows: &[SectionRow]) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                thead { tr { th scope="col" { "Section" } th scope="col" { "Status" } th scope="col" { "Found" } } }
                tbody {
                    @for s in rows {
                        tr id=(format!("section-{}", s.name)) {
                            td data-label="Section" { (s.label) }
                            @match &s.reading {
                                Reading::Measured(found) => {
                                    td data-label="Status" { span.sb-chip.sb-chip-healthy { "ok" } }
                                    td data-label="Found" { (found) }
                                },
                                Reading::Unavailable(why) => {
                                    td data-label="Status" { span.sb-chip.sb-chip-dead { "unavailable" } }
                                    td data-label="Found" { strong { "unavailable: " (why) } }
                                },
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Everything the preview shows.
#[derive(Debug, Clone, Copy)]
pub struct PreviewPage<'a> {
    /// The digest.
    pub digest: &'a DigestRow,
    /// How its owner reads.
    pub owner: &'a str,
    /// What it would say now.
    pub composed: &'a Composed,
    /// When it was measured.
    pub now: DateTime<Utc>,
}

fn verdict(p: &PreviewPage<'_>) -> Markup {
    let unmeasured = p.composed.report.unavailable().len();
    html! {
        @if p.composed.quiet {
            p.sb-notice.sb-notice-done role="status" {
                "Quiet: every section was measured and nothing needs attention. "
                @if p.digest.skip_when_quiet { "It would be skipped." } @else { "It would be sent anyway (it is sent even when quiet)." }
            }
        } @else if unmeasured > 0 {
            p.sb-notice.sb-notice-warn role="status" {
                (plural(unmeasured as i64, "section", "sections")) " could not be measured, so it is not quiet: it would be sent."
            }
        } @else {
            p.sb-notice.sb-notice-warn role="status" { "Something needs attention: it would be sent." }
        }
    }
}

/// The preview page.
pub fn preview_page(p: &PreviewPage<'_>) -> Markup {
    let d = p.digest;
    let c = p.composed;
    html! {
        p.sb-hint { a href=(paths::digest(d.id)) { "← Digest " (d.name) } }
        h1 { "Preview of " (d.name) }
        p.sb-lede {
            "Measured " time datetime=(crate::board::todos::format::machine(p.now)) { (in_utc(p.now)) }
            " for " (p.owner) ", covering since " (in_utc(c.report.since))
            ". Nothing was sent and nothing was recorded."
        }
        (verdict(p))
        section #sections aria-labelledby="sb-sections-heading" {
            h2 #sb-sections-heading { "Sections" }
            (sections_table(&section_rows(&c.report)))
        }
        section #text aria-labelledby="sb-text-heading" {
            h2 #sb-text-heading { "What the sinks would get" }
            p.sb-label { "Title" }
            pre { (c.title) }
            p.sb-label { "Text" }
            pre { (c.body) }
        }
    }
}
