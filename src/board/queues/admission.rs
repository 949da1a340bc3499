//! A queue's admission as the Queues pages show it, and the pause / resume button an
//! admin of its scope gets beside it (members see the state, not the button).

use maud::{Markup, html};

use super::paths;
use crate::queues::statements::overview::QueueStanding;

/// Which page a pause or resume returns to.
pub const BACK_TO_LIST: &str = "list";
/// The queue's own page.
pub const BACK_TO_QUEUE: &str = "queue";

/// The budget in words: `paused`, `≤ 5 at once · ≤ 100/h`, or `open`.
pub fn said(q: &QueueStanding) -> String {
    let mut parts = Vec::new();
    if q.paused {
        parts.push("paused".to_owned());
    }
    if let Some(n) = q.max_in_flight {
        parts.push(format!("≤ {n} at once"));
    }
    if let Some(n) = q.per_hour {
        parts.push(format!("≤ {n}/h"));
    }
    if parts.is_empty() { "open".to_owned() } else { parts.join(" · ") }
}

/// The state, and for an admin the button that flips it.
pub fn cell(q: &QueueStanding, may_act: bool, csrf: &Markup, back: &str) -> Markup {
    html! {
        @if q.paused {
            span.sb-chip.sb-chip-warn { (said(q)) }
        } @else {
            span { (said(q)) }
        }
        @if may_act {
            form.sb-inline method="post" action=(paths::QUEUE_ADMISSION) {
                (csrf)
                input type="hidden" name="endpoint_id" value=(q.endpoint_id.to_string());
                input type="hidden" name="queue" value=(q.queue);
                input type="hidden" name="back" value=(back);
                @if q.paused {
                    input type="hidden" name="paused" value="false";
                    button.sb-btn.sb-btn-quiet type="submit" { "Resume" }
                } @else {
                    input type="hidden" name="paused" value="true";
                    button.sb-btn.sb-btn-quiet type="submit" { "Pause" }
                }
            }
        }
    }
}
