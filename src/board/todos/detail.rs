//! One todo's page: what it is, where it stands (lease, retry, interrupt, death), its
//! result and payload, "Retry now", and every attempt newest first with what the agent
//! said.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::format::{ago, disposition, machine, outcome, reason, state_badge, until, utc};
use super::paths::{self, CSRF_FIELD, FILTER_FIELD};
use crate::db::models::{AttemptRow, TodoRow};
use crate::domain::pills::Pill;
use crate::domain::text::QUARANTINE_QUEUE;
use crate::domain::todo_state::{DeadReason, TodoState};
use crate::sinks::statements::outbox::ToldSink;

/// Most bytes of a result or payload shown inline (the rest is cut, and says so).
const JSON_SHOWN_BYTES: usize = 64 * 1024;

/// Everything the detail page shows.
#[derive(Debug, Clone, Copy)]
pub struct TodoDetailView<'a> {
    /// The todo.
    pub todo: &'a TodoRow,
    /// Its endpoint's slug.
    pub endpoint: &'a str,
    /// Its newest attempts, newest first (the store keeps up to 20 here).
    pub attempts: &'a [AttemptRow],
    /// Now, for "in 4 min".
    pub now: DateTime<Utc>,
    /// The list to go back to (and return to after "Retry now").
    pub back_pill: Pill,
    /// The search of that list.
    pub back_search: &'a str,
    /// Which sinks were told about it, newest first.
    pub told: &'a [ToldSink],
}

/// The pill a todo is listed under (where its page goes back to when opened without
/// a list to return to): Dead for a dead letter, Failed for a retry, its state's pill
/// otherwise, All for the states only All shows (and for quarantine, on no pill).
pub fn home_pill(t: &TodoRow) -> Pill {
    if t.queue == QUARANTINE_QUEUE {
        return Pill::All;
    }
    match t.state {
        TodoState::Failed if t.is_dead_letter() => Pill::Dead,
        TodoState::Failed => Pill::Failed,
        TodoState::Pending => Pill::Pending,
        TodoState::Claimed => Pill::Claimed,
        TodoState::Done => Pill::Done,
        TodoState::InputRequired | TodoState::AuthRequired | TodoState::Canceled => Pill::All,
    }
}

/// The detail page. Its form carries `csrf_token` in [`CSRF_FIELD`].
pub fn todo_detail(v: &TodoDetailView<'_>, csrf_token: &str) -> Markup {
    let t = v.todo;
    html! {
        article.sb-todo aria-labelledby="sb-todo-title" {
            p.sb-back { a href=(paths::list(v.back_pill, v.back_search)) { "← " (v.back_pill.label()) " todos" } }
            h1 #sb-todo-title { (t.title) }
            p.sb-id { code { (t.id) } }
            (facts(v))
            (retry_now(v, csrf_token))
            @if let Some(order) = &t.work_order {
                section { h2 { "Work order" } pre.sb-text { (order) } }
            }
            @if let Some(result) = &t.result {
                section { h2 { "Result" } (json_block(result)) }
            }
            @if let Some(payload) = &t.payload {
                details.sb-payload {
                    summary { "Payload (" (t.payload_size) " bytes)" }
                    (json_block(payload))
                }
            }
            (told(v))
            (timeline(v))
        }
    }
}

/// Which sinks were told about the todo (a dead letter, a held delivery), and how
/// that went: a human sees at once whether anyone was woken.
fn told(v: &TodoDetailView<'_>) -> Markup {
    html! {
        @if !v.told.is_empty() {
            section.sb-told aria-labelledby="sb-told-heading" {
                h2 #sb-told-heading { "Who was told" }
                ul.sb-stack {
                    @for told in v.told {
                        @let n = &told.send;
                        li {
                            strong { (told.sink.as_deref().unwrap_or("a deleted sink")) }
                            " · " (n.event.as_str()) " · "
                            span class=(format!("sb-chip sb-chip-{}", n.status.as_str())) { (n.status.as_str()) }
                            @if let Some(at) = n.sent_at { " · sent " (when(v.now, at)) }
                            @else { " · queued " (when(v.now, n.created_at)) }
                            @if let Some(e) = &n.last_error { " · last error " code { (e) } }
                            @if n.attempts > 1 { " · " (n.attempts) " attempts" }
                        }
                    }
                }
            }
        }
    }
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

fn facts(v: &TodoDetailView<'_>) -> Markup {
    let t = v.todo;
    let now = v.now;
    html! {
        dl.sb-facts {
            dt { "State" }
            dd {
                (state_badge(t.state, t.next_retry_at.is_some()))
            }
            @if let (Some(r), Some(at)) = (t.dead_reason, t.dead_lettered_at) {
                dt { "Died" }
                dd {
                    (reason(r)) ", " (when(now, at))
                    @if t.dead_letter_count > 1 { " (it has died " (t.dead_letter_count) " times)" }
                }
            }
            @if let (TodoState::Failed, Some(at)) = (t.state, t.next_retry_at) {
                dt { "Retry" }
                dd { "due " (until(now, at)) " (" (utc(at)) ")" }
            }
            @if let (TodoState::Claimed, Some(at)) = (t.state, t.lease_expires_at) {
                dt { "Lease" }
                dd {
                    "held since " @if let Some(c) = t.claimed_at { (when(now, c)) } @else { "?" }
                    "; ends " (until(now, at)) " (" (utc(at)) ")"
                }
            }
            @if let (true, Some(at)) = (t.state.is_interrupted(), t.interrupt_expires_at) {
                dt { "Waiting" }
                dd {
                    @if let Some(r) = &t.interrupt_reason { (r) "; " }
                    "lapses " (until(now, at)) " (" (utc(at)) ")"
                }
            }
            dt { "Queue" } dd { code { (t.queue) } }
            dt { "Endpoint" } dd { (v.endpoint) }
            @if let Some(s) = &t.source { dt { "Source" } dd { (s) } }
            @if let Some(k) = &t.kind { dt { "Kind" } dd { (k) } }
            dt { "Attempt" }
            dd { (t.attempt) " of " (t.max_attempts) "; " (t.attempts_total) " in all" }
            dt { "Created" } dd { (when(now, t.created_at)) }
            dt { "Changed" } dd { (when(now, t.updated_at)) }
            @if let Some(at) = t.completed_at { dt { "Finished" } dd { (when(now, at)) } }
        }
    }
}

fn retry_now(v: &TodoDetailView<'_>, csrf_token: &str) -> Markup {
    let t = v.todo;
    if t.state != TodoState::Failed {
        return html! {};
    }
    if t.queue == QUARANTINE_QUEUE {
        return html! { p.sb-hint { "A quarantined delivery leaves by release or discard, on the quarantine page." } };
    }
    if t.dead_reason == Some(DeadReason::EndpointRevoked) {
        return html! { p.sb-hint { "Its endpoint was revoked, so it cannot go back to a queue." } };
    }
    html! {
        form.sb-actions method="post" action=(paths::retry(t.id)) {
            input type="hidden" name=(CSRF_FIELD) value=(csrf_token);
            input type="hidden" name=(FILTER_FIELD) value=(v.back_pill.as_str());
            input type="hidden" name="q" value=(v.back_search);
            button.sb-btn.sb-btn-primary type="submit" { "Retry now" }
            " "
            span.sb-hint {
                "Back to pending with the attempt counter at 0"
                @if t.next_retry_at.is_some() { " (instead of waiting for the scheduled retry)" }
                "; the history stays, nothing is announced."
            }
        }
    }
}

/// JSON pretty-printed in a `<pre>`, cut at [`JSON_SHOWN_BYTES`].
fn json_block(value: &serde_json::Value) -> Markup {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let (shown, cut) = crate::domain::text::truncate_bytes(&text, JSON_SHOWN_BYTES);
    html! {
        pre.sb-json { (shown) }
        @if cut { p.sb-hint { "Cut at " (JSON_SHOWN_BYTES / 1024) " KiB of " (text.len() / 1024) " KiB." } }
    }
}

fn timeline(v: &TodoDetailView<'_>) -> Markup {
    let t = v.todo;
    html! {
        section.sb-attempts aria-labelledby="sb-attempts-heading" {
            h2 #sb-attempts-heading { "Attempts" }
            @if v.attempts.is_empty() {
                p.sb-empty { "Never claimed." }
            } @else {
                @if (v.attempts.len() as i32) < t.attempts_total {
                    p.sb-hint { "The newest " (v.attempts.len()) " of " (t.attempts_total) ", newest first." }
                }
                ol.sb-timeline reversed {
                    @for a in v.attempts { (attempt(a, v.now)) }
                }
            }
        }
    }
}

fn attempt(a: &AttemptRow, now: DateTime<Utc>) -> Markup {
    html! {
        li.sb-attempt value=(a.seq) {
            p.sb-attempt-head {
                strong { "#" (a.seq) }
                " "
                @match (a.outcome, a.disposition) {
                    (Some(o), Some(d)) => { span.sb-outcome { (outcome(o)) } " → " (disposition(d)) }
                    _ => { span.sb-outcome.sb-outcome-open { "open" } }
                }
                @if a.relay { " " span.sb-badge { "relay" } }
            }
            p.sb-attempt-meta {
                @if let Some(c) = &a.claimant { (c) " · " }
                "claimed " (when(now, a.claimed_at))
                @match a.ended_at {
                    Some(end) => { " · ended " (when(now, end)) }
                    None => { " · lease ends " (until(now, a.lease_expires_at)) }
                }
                @if let Some(hb) = a.last_heartbeat_at { " · last heartbeat " (when(now, hb)) }
            }
            @if let Some(s) = &a.summary {
                pre.sb-text.sb-summary { (s) }
                @if a.summary_truncated { p.sb-hint { "(the agent wrote more; the first 2 KiB were kept)" } }
            }
            @if let Some(artifact) = &a.artifact {
                p.sb-artifact {
                    "Artifact: "
                    @if artifact.starts_with("https://") {
                        a href=(artifact) rel="noopener noreferrer nofollow" { (artifact) }
                    } @else {
                        code { (artifact) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "detail_tests.rs"]
mod tests;
