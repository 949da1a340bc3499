//! One queue's page: how it stands now, and what finished over the last 24 hours per
//! hour (and the last hour per minute), with the pause / resume button for an admin.

use chrono::{DateTime, Duration, DurationRound, Utc};
use maud::{Markup, html};

use super::admission::{self, BACK_TO_QUEUE};
use super::{paths, spark};
use crate::board::todos::format::{ago, utc};
use crate::queues::service::QueueDay;

/// The page's body.
pub fn queue_page(day: &QueueDay, may_act: bool, csrf: &Markup, now: DateTime<Utc>) -> Markup {
    let q = &day.standing;
    let total = day.total();
    let first_hour =
        now.duration_trunc(Duration::hours(1)).unwrap_or(now) - Duration::hours(day.hours.len() as i64 - 1);
    html! {
        p { a href=(paths::QUEUES) { "← Queues" } }
        h1 { (q.endpoint_slug) " / " (q.queue) }
        p.sb-muted {
            "Counted " time datetime=(q.measured_at.to_rfc3339()) title=(utc(q.measured_at)) { (ago(now, q.measured_at)) } "."
        }
        dl.sb-facts {
            dt { "Pending" } dd { (super::view::pending(q)) }
            dt { "Oldest pending" } dd {
                @match q.oldest_pending_at {
                    Some(at) => time datetime=(at.to_rfc3339()) title=(utc(at)) { (ago(q.measured_at, at)) },
                    None => "—",
                }
            }
            dt { "Claimed" } dd { (q.claimed) }
            dt { "Stalled leases" } dd { @if q.stalled > 0 { strong.sb-bad { (q.stalled) } } @else { "0" } }
            dt { "Interrupted" } dd { (q.interrupted) }
            dt { "Retry scheduled" } dd { (q.retrying) }
            dt { "Admission" } dd { (admission::cell(q, may_act, csrf, BACK_TO_QUEUE)) }
            dt { "Agent" } dd { @if q.clocked_in { "clocked in" } @else { "clocked out" } }
        }
        h2 { "Last 24 hours" }
        dl.sb-facts {
            dt { "Done" } dd { (total.done) }
            dt { "Failed attempts" } dd { (total.failed_attempts) }
            dt { "Dead letters" } dd {
                @if total.dead > 0 {
                    a.sb-bad href=(format!("/todos?filter=dead&q={}", q.queue)) { strong { (total.dead) } }
                } @else { "0" }
            }
        }
        (spark::legend())
        (spark::bars(&day.hours, 10.0, 60.0, "last 24 hours, per hour", "sb-day-chart"))
        details {
            summary { "Show as table" }
            table.sb-table {
                thead { tr { th scope="col" { "Hour (UTC)" } th.sb-num scope="col" { "Done" }
                    th.sb-num scope="col" { "Failed attempts" } th.sb-num scope="col" { "Dead letters" } } }
                tbody {
                    @for (i, h) in day.hours.iter().enumerate() {
                        tr {
                            td { ((first_hour + Duration::hours(i as i64)).format("%Y-%m-%d %H:00")) }
                            td.sb-num { (h.done) } td.sb-num { (h.failed_attempts) } td.sb-num { (h.dead) }
                        }
                    }
                }
            }
        }
        h2 { "Last hour" }
        (spark::bars(&day.minutes, 2.0, 24.0, "last hour, per minute", "sb-spark sb-spark-wide"))
        p {
            a href=(format!("/todos?q={}", q.queue)) { "This queue's todos" }
            " · "
            a href=(format!("/todos?filter=dead&q={}", q.queue)) { "its dead letters" }
        }
    }
}
