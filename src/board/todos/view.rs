//! The Todos view's body: the pills with their counts, the search, the dead-letter
//! chart and bulk retry (Dead pill), and the list. What the last action did is shown
//! by the layout, from the notice the action's redirect carried (see [`TodosNotice`]).

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::bulk::bulk_retry_button;
use super::chart::dead_letters_chart;
use super::format::{ago, machine, reason, shorten, state_badge, until, utc};
use super::paths::{self, CSRF_FIELD, FILTER_FIELD};
use crate::board::respond;
use crate::domain::ids::TodoId;
use crate::domain::pills::{COUNT_CAP, Pill, PillCount, PillCounts};
use crate::domain::todo_state::{DeadReason, TodoState};
use crate::domain::vocabulary::Phase;
use crate::store::board::{DeadLetterDays, LIST_MAX, SEARCH_WINDOW, TodoListing};
use crate::store::dead_letters::DeadLetter;
use crate::store::todos::BulkRetried;

/// Longest title shown in a list row (the detail page shows all of it).
const TITLE_CHARS: usize = 120;
/// Longest closing summary shown in a Dead row.
const SUMMARY_CHARS: usize = 160;

/// The rows of the pill on show.
#[derive(Debug, Clone, Copy)]
pub enum PillRows<'a> {
    /// The Dead pill's dead letters.
    Dead(&'a [DeadLetter]),
    /// Any other pill's todos.
    Todos(&'a [TodoListing]),
}

impl PillRows<'_> {
    fn len(&self) -> usize {
        match self {
            PillRows::Dead(r) => r.len(),
            PillRows::Todos(r) => r.len(),
        }
    }
}

/// What the last action did; carried over the action's redirect as the layout's
/// one-time notice ([`TodosNotice::flash`]).
#[derive(Debug, Clone)]
pub enum TodosNotice {
    /// One todo went back to pending.
    Retried(TodoId),
    /// A bulk retry ran.
    BulkRetried(BulkRetried),
    /// An action was refused (the store's message, e.g. "the todo's endpoint is
    /// revoked or expired").
    Refused(String),
}

impl TodosNotice {
    /// The notice as the layout shows it after the redirect: plain text (escaped when
    /// shown), "done" when something moved, "warn" when nothing did or some stayed.
    pub fn flash(&self) -> respond::Notice {
        match self {
            TodosNotice::Retried(id) => {
                respond::Notice::done(format!("Todo {id} is back in its queue with its attempt counter reset."))
            }
            TodosNotice::BulkRetried(done) => {
                let moved = match done.retried {
                    0 => "No dead letter went back.".to_owned(),
                    1 => "1 dead letter went back to its queue, its attempt counter reset.".to_owned(),
                    n => format!("{n} dead letters went back to their queues, attempt counters reset."),
                };
                if done.still_dead.is_zero() && done.retried > 0 {
                    return respond::Notice::done(moved);
                }
                if done.still_dead.is_zero() {
                    return respond::Notice::warn(moved);
                }
                respond::Notice::warn(format!(
                    "{moved} {} still match and stay dead: their endpoint is revoked or expired, a live todo holds \
                     their idempotency key, another action holds them, or they are beyond the {} one retry moves.",
                    done.still_dead,
                    PillCount::Exact(COUNT_CAP)
                ))
            }
            TodosNotice::Refused(why) => respond::Notice::warn(format!("Not done: {why}")),
        }
    }
}

/// Everything the Todos view shows.
#[derive(Debug, Clone, Copy)]
pub struct TodosView<'a> {
    /// The pill on show.
    pub pill: Pill,
    /// Every pill's count for the signed-in human.
    pub counts: &'a PillCounts,
    /// What is in the search box (empty: no search).
    pub search: &'a str,
    /// The rows, newest first.
    pub rows: PillRows<'a>,
    /// How many rows were asked for.
    pub limit: i64,
    /// Now, for "3 min ago".
    pub now: DateTime<Utc>,
    /// Dead letters per day (the Dead pill).
    pub chart: Option<&'a DeadLetterDays>,
    /// Dead letters matching the search, all of them (the Dead pill; what a bulk
    /// retry would move).
    pub matching: Option<PillCount>,
}

/// The Todos view. Every form carries `csrf_token` in [`CSRF_FIELD`].
pub fn todos_view(v: &TodosView<'_>, csrf_token: &str) -> Markup {
    html! {
        section.sb-todos aria-labelledby="sb-todos-heading" {
            h1 #sb-todos-heading { "Todos" }
            (pills(v))
            (search_form(v))
            @if v.pill == Pill::Dead {
                @if let Some(chart) = v.chart { (dead_letters_chart(chart)) }
                @if let (Some(matching), false) = (v.matching, matches!(v.rows, PillRows::Dead([]))) {
                    (bulk_retry_button(v.search, matching, csrf_token))
                }
            }
            @match v.rows {
                PillRows::Dead(rows) => (dead_table(rows, v, csrf_token)),
                PillRows::Todos(rows) => (todo_table(rows, v)),
            }
            (more(v))
        }
    }
}

fn pills(v: &TodosView<'_>) -> Markup {
    html! {
        nav.sb-pills aria-label="Filter todos" {
            ul {
                @for pill in Pill::ALL {
                    @let on = *pill == v.pill;
                    li {
                        a.sb-pill.sb-pill-on[on].sb-pill-dead[*pill == Pill::Dead]
                            href=(paths::list(*pill, v.search)) title=[pill.phase().map(Phase::meaning)]
                            aria-current=[on.then_some("page")] {
                            (pill.label()) " " span.sb-count { (v.counts.get(*pill)) }
                        }
                    }
                }
            }
        }
    }
}

fn search_form(v: &TodosView<'_>) -> Markup {
    let hint = match v.pill {
        Pill::Dead => "Searches every dead letter: its id, or text in its source, kind, queue or title.".to_owned(),
        _ => format!(
            "An id finds its todo anywhere; text searches the source, kind, queue and title of this pill's newest {}.",
            PillCount::Exact(SEARCH_WINDOW as u32)
        ),
    };
    html! {
        form.sb-search method="get" action=(paths::TODOS) role="search" {
            input type="hidden" name=(FILTER_FIELD) value=(v.pill.as_str());
            label for="sb-q" { "Search" }
            input #sb-q type="search" name="q" value=(v.search) maxlength="200" autocomplete="off"
                placeholder="td_…, source, kind, queue or title" aria-describedby="sb-q-hint";
            button.sb-btn type="submit" { "Search" }
            @if !v.search.is_empty() {
                a.sb-btn.sb-btn-quiet.sb-clear href=(paths::list(v.pill, "")) { "Clear" }
            }
            p #sb-q-hint .sb-hint { (hint) }
        }
    }
}

fn died(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

fn dead_table(rows: &[DeadLetter], v: &TodosView<'_>, csrf_token: &str) -> Markup {
    if rows.is_empty() {
        return html! {
            p.sb-empty {
                @if v.search.is_empty() { "No dead letters. Nothing is waiting on you." }
                @else { "No dead letters match “" (v.search) "”." }
            }
        };
    }
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack.sb-dead {
                caption.sb-visually-hidden { "Dead letters, newest first" }
                thead {
                    tr {
                        th scope="col" { "Died" }
                        th scope="col" { "Queue" }
                        th scope="col" { "Endpoint" }
                        th scope="col" { "Todo" }
                        th scope="col" { "Reason" }
                        th scope="col" { "Attempts" }
                        th scope="col" { "Last attempt said" }
                        th scope="col" { span.sb-visually-hidden { "Action" } }
                    }
                }
                tbody {
                    @for d in rows {
                        tr {
                            td data-label="Died" { (died(v.now, d.dead_lettered_at)) }
                            td data-label="Queue" { code { (d.queue) } }
                            td data-label="Endpoint" { (d.endpoint) }
                            td data-label="Todo" {
                                a href=(paths::todo(d.id)) { (shorten(&d.title, TITLE_CHARS)) }
                                br; small.sb-id { (d.id) }
                            }
                            td data-label="Reason" { span.sb-chip.sb-chip-dead { (reason(d.reason)) } }
                            td.sb-num data-label="Attempts"
                                title=(format!("{} attempts in all; cap {}", d.attempts_total, d.max_attempts)) {
                                (d.attempts_total)
                                @if d.dead_letter_count > 1 { " " small { "(died " (d.dead_letter_count) "×)" } }
                            }
                            td.sb-summary data-label="Last attempt said" {
                                @match &d.final_summary {
                                    Some(s) => { (shorten(s, SUMMARY_CHARS)) }
                                    None if d.final_seq.is_some() => { em { "nothing" } }
                                    None => { em { "no attempt was open" } }
                                }
                            }
                            td data-label="Action" {
                                @if d.reason == DeadReason::EndpointRevoked {
                                    span.sb-hint { "cannot retry: endpoint revoked" }
                                } @else {
                                    form.sb-inline method="post" action=(paths::retry(d.id)) {
                                        input type="hidden" name=(CSRF_FIELD) value=(csrf_token);
                                        input type="hidden" name=(FILTER_FIELD) value=(Pill::Dead.as_str());
                                        input type="hidden" name="q" value=(v.search);
                                        button.sb-btn.sb-btn-small type="submit" aria-label=(format!("Retry {}", d.id)) { "Retry" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What a listed todo is doing, in a few words.
fn status(t: &TodoListing, now: DateTime<Utc>) -> Markup {
    match (t.state, t.dead_reason, t.dead_lettered_at) {
        (TodoState::Failed, Some(r), Some(at)) if t.is_dead_letter() => {
            html! { "dead (" (reason(r)) "), " (died(now, at)) }
        }
        (TodoState::Failed, _, _) => match t.next_retry_at {
            Some(at) => html! { "retry " (until(now, at)) },
            None => html! { "failed" },
        },
        (TodoState::Claimed, _, _) => match t.lease_expires_at {
            Some(at) => html! { "lease ends " (until(now, at)) },
            None => html! { "claimed" },
        },
        (TodoState::InputRequired | TodoState::AuthRequired, _, _) => match t.interrupt_expires_at {
            Some(at) => html! { "waiting; lapses " (until(now, at)) },
            None => html! { "waiting" },
        },
        (TodoState::Pending, _, _) => html! { "waiting for an agent" },
        (TodoState::Done, _, _) => html! { "done " (ago(now, t.updated_at)) },
        (TodoState::Canceled, _, _) => html! { "canceled " (ago(now, t.updated_at)) },
    }
}

fn todo_table(rows: &[TodoListing], v: &TodosView<'_>) -> Markup {
    if rows.is_empty() {
        return html! {
            p.sb-empty {
                @if v.search.is_empty() { "No todos here." }
                @else { "No todos here match “" (v.search) "”." }
            }
        };
    }
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                caption.sb-visually-hidden { (v.pill.label()) " todos, newest first" }
                thead {
                    tr {
                        th scope="col" { "Created" }
                        th scope="col" { "State" }
                        th scope="col" { "Queue" }
                        th scope="col" { "Endpoint" }
                        th scope="col" { "Todo" }
                        th scope="col" { "Attempt" }
                        th scope="col" { "Status" }
                    }
                }
                tbody {
                    @for t in rows {
                        tr.sb-dead-row[t.is_dead_letter()] {
                            td data-label="Created" { (died(v.now, t.created_at)) }
                            td data-label="State" {
                                (state_badge(t.state, t.next_retry_at.is_some()))
                            }
                            td data-label="Queue" { code { (t.queue) } }
                            td data-label="Endpoint" { (t.endpoint) }
                            td data-label="Todo" {
                                a href=(paths::todo(t.id)) { (shorten(&t.title, TITLE_CHARS)) }
                                br; small.sb-id { (t.id) }
                            }
                            td data-label="Attempt" { (t.attempt) " of " (t.max_attempts) }
                            td data-label="Status" { (status(t, v.now)) }
                        }
                    }
                }
            }
        }
    }
}

/// The 400 page's body: why the list's query was refused, and the way back.
pub fn bad_query(why: &str) -> Markup {
    html! {
        section.sb-todos aria-labelledby="sb-todos-heading" {
            h1 #sb-todos-heading { "That list does not exist" }
            p.sb-notice.sb-notice-warn role="alert" { (why) }
            nav.sb-pills aria-label="Filter todos" {
                ul {
                    @for pill in Pill::ALL {
                        li { a.sb-pill.sb-pill-dead[*pill == Pill::Dead] href=(paths::list(*pill, "")) { (pill.label()) } }
                    }
                }
            }
        }
    }
}

/// "Showing the newest 100", with a way to see up to [`LIST_MAX`].
fn more(v: &TodosView<'_>) -> Markup {
    let shown = v.rows.len() as i64;
    html! {
        @if shown > 0 && shown >= v.limit {
            p.sb-more {
                "Showing the newest " (shown) "."
                @if v.limit < LIST_MAX {
                    " " a href=(paths::list_with_limit(v.pill, v.search, LIST_MAX)) { "Show " (LIST_MAX) }
                }
                @if v.search.is_empty() { " Search to narrow the list." }
            }
        }
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
