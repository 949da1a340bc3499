//! A digest's recent send times as the pages show them: sent, publishing, skipped as
//! quiet or skipped for being late, and why; the sections that could not be measured;
//! how many sinks were told; the Cairn artifact or why publishing failed.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::format::{artifact, outcome, outcome_chip, send_time};
use crate::digests::statements::RunRow;

/// Sections unavailable: `none`, or the count, marked (never a reassuring blank).
fn unavailable(n: i32) -> Markup {
    html! {
        @if n == 0 {
            span.sb-muted { "none" }
        } @else {
            span.sb-chip.sb-chip-dead { (n) " unavailable" }
        }
    }
}

fn cairn(r: &RunRow) -> Markup {
    html! {
        @match (&r.artifact_url, &r.cairn_error) {
            (_, Some(e)) => {
                span.sb-chip.sb-chip-failing { "Cairn failed" } " " code { (e) }
                br; span.sb-hint { "The sinks got the full text." }
            },
            (Some(url), None) => { (artifact(url)) },
            (None, None) => { span.sb-muted { "—" } },
        }
    }
}

/// The latest send time in one cell: what became of it, why, and when.
pub fn last_run(r: Option<&RunRow>, schedule: &str, now: DateTime<Utc>) -> Markup {
    html! {
        @match r {
            None => { span.sb-muted { "not sent yet" } },
            Some(r) => {
                @let o = outcome(&r.outcome);
                (outcome_chip(&o))
                @if !o.why.is_empty() { " " span.sb-hint { (o.why) } }
                br; (send_time(schedule, r.send_at, now))
                @if r.unavailable > 0 { br; (unavailable(r.unavailable)) " section(s)" }
                @if let Some(e) = &r.cairn_error { br; "Cairn failed: " code { (e) } }
            },
        }
    }
}

/// Every recent send time, newest first.
pub fn runs_table(runs: &[RunRow], schedule: &str, now: DateTime<Utc>) -> Markup {
    html! {
        @if runs.is_empty() {
            p.sb-empty { "Not sent yet: no send time has come since it was scheduled." }
        } @else {
            div.sb-table-wrap {
                table.sb-table.sb-stack {
                    thead { tr {
                        th scope="col" { "Send time" } th scope="col" { "Outcome" } th scope="col" { "Why" }
                        th scope="col" { "Sections unavailable" } th scope="col" { "Sinks told" }
                        th scope="col" { "Cairn" }
                    } }
                    tbody {
                        @for r in runs {
                            @let o = outcome(&r.outcome);
                            tr id=(format!("run-{}", r.id)) {
                                td data-label="Send time" { (send_time(schedule, r.send_at, now)) }
                                td data-label="Outcome" { (outcome_chip(&o)) }
                                td data-label="Why" {
                                    @if o.why.is_empty() { span.sb-muted { "—" } } @else { (o.why) }
                                }
                                td data-label="Sections unavailable" { (unavailable(r.unavailable)) }
                                td data-label="Sinks told" { (r.sinks_told) }
                                td data-label="Cairn" { (cairn(r)) }
                            }
                        }
                    }
                }
            }
        }
    }
}
