//! The Queues overview page: every queue in the human's reach, trouble first, one row
//! each (a card on a phone), with the last hour per minute as a sparkline.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::admission::{self, BACK_TO_LIST};
use super::{paths, spark};
use crate::board::todos::format::{ago, utc};
use crate::domain::pills::PillCount;
use crate::queues::rules::series::Slot;
use crate::queues::statements::overview::QueueStanding;

/// What the overview page shows.
pub struct QueuesView<'a> {
    /// The queues, trouble first, each with whether the human may pause it.
    pub queues: &'a [(QueueStanding, bool)],
    /// Each queue's last hour per minute, in the same order.
    pub sparks: &'a [Vec<Slot>],
    /// The next page's cursor.
    pub next_cursor: Option<&'a str>,
    /// Now.
    pub now: DateTime<Utc>,
}

/// A count that is trouble when above zero.
fn alarm(n: i64) -> Markup {
    html! {
        @if n > 0 { strong.sb-bad { (n) } } @else { span.sb-muted { "0" } }
    }
}

/// The pending count as the pills write it: `10 000+` once the count stopped.
pub fn pending(q: &QueueStanding) -> String {
    let n = u32::try_from(q.pending).unwrap_or(u32::MAX);
    if q.pending_capped { PillCount::AtLeast(n).to_string() } else { PillCount::Exact(n).to_string() }
}

/// The page's body.
pub fn queues_page(v: &QueuesView<'_>, csrf: &Markup) -> Markup {
    let measured = v.queues.iter().map(|(q, _)| q.measured_at).max();
    html! {
        h1 { "Queues" }
        p.sb-muted {
            "Where every queue of yours stands, trouble first: dead letters in the last 24 hours, then stalled leases, then the oldest pending todo. "
            @if let Some(at) = measured {
                "Counted " time datetime=(at.to_rfc3339()) title=(utc(at)) { (ago(v.now, at)) }
                " (the counts are taken every few seconds; admission and clock-in are as they are now)."
            }
        }
        @if v.queues.is_empty() {
            p.sb-empty { "No queue of yours holds work, finished any in the last 24 hours, or has a budget. \
                A queue appears here at the first count after its first todo." }
        } @else {
            (spark::legend())
            table.sb-table.sb-stack.sb-queues {
                thead { tr {
                    th scope="col" { "Queue" }
                    th.sb-num scope="col" { "Pending" }
                    th scope="col" { "Oldest pending" }
                    th.sb-num scope="col" { "Claimed" }
                    th.sb-num scope="col" { "Stalled" }
                    th.sb-num scope="col" { "Interrupted" }
                    th.sb-num scope="col" { "Done 1 h" }
                    th.sb-num scope="col" { "Failed 1 h" }
                    th scope="col" { "Last hour" }
                    th.sb-num scope="col" { "Dead 24 h" }
                    th scope="col" { "Admission" }
                    th scope="col" { "Agent" }
                } }
                tbody {
                    @for (i, (q, may_act)) in v.queues.iter().enumerate() {
                        tr {
                            td data-label="Queue" {
                                a href=(paths::queue(q.endpoint_id, &q.queue)) {
                                    span.sb-queue-endpoint { (q.endpoint_slug) " /" } " " strong { (q.queue) }
                                }
                            }
                            td.sb-num data-label="Pending" { (pending(q)) }
                            td data-label="Oldest pending" {
                                @match q.oldest_pending_at {
                                    Some(at) => time datetime=(at.to_rfc3339()) title=(utc(at)) { (ago(q.measured_at, at)) },
                                    None => span.sb-muted { "—" },
                                }
                            }
                            td.sb-num data-label="Claimed" { (q.claimed) }
                            td.sb-num data-label="Stalled" { (alarm(q.stalled)) }
                            td.sb-num data-label="Interrupted" { (q.interrupted) }
                            td.sb-num data-label="Done 1 h" { (q.done_last_hour) }
                            td.sb-num data-label="Failed 1 h" { (q.failed_attempts_last_hour) }
                            td data-label="Last hour" {
                                @if let Some(slots) = v.sparks.get(i) {
                                    (spark::bars(slots, 2.0, 24.0, "last hour, per minute", "sb-spark"))
                                }
                            }
                            td.sb-num data-label="Dead 24 h" {
                                @if q.dead_last_24h > 0 {
                                    a.sb-bad href=(format!("/todos?filter=dead&q={}", q.queue)) { strong { (q.dead_last_24h) } }
                                } @else { span.sb-muted { "0" } }
                            }
                            td data-label="Admission" { (admission::cell(q, *may_act, csrf, BACK_TO_LIST)) }
                            td data-label="Agent" {
                                @if q.clocked_in { span.sb-chip.sb-chip-done { "clocked in" } }
                                @else { span.sb-chip { "clocked out" } }
                            }
                        }
                    }
                }
            }
            @if let Some(c) = v.next_cursor {
                p { a href=(paths::queues_after(c)) { "Next queues →" } }
            }
        }
    }
}
