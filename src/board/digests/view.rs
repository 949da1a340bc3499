//! The Digests page's body: every digest of the human's scopes (its schedule, the next
//! send time in the schedule's zone and in UTC, what it covers, where it goes, and what
//! became of its last send time), each linking to its own page and its preview, with
//! the add form and delete buttons an admin of the scope gets. Pure functions from rows
//! to [`Markup`]; every value is escaped by maud, and a sink is named, never its URL.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::editor::{Editor, editor};
use super::form::DigestForm;
use super::format::{cairn, queues, quiet_rule, send_time, sink_names, threshold};
use super::paths;
use super::runs::last_run;
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::digests::statements::{DigestRow, RunRow};
use crate::domain::ids::DigestId;
use crate::sinks::rules::vocabulary::ConnectionKind;
use crate::sinks::statements::{ConnectionRow, SinkRow};

/// Which form a refusal belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusedDigestForm {
    /// The add form, with what was typed.
    NewDigest(DigestForm),
    /// A digest's delete button.
    Digest(DigestId),
}

/// Everything the Digests page shows.
#[derive(Debug, Clone, Copy)]
pub struct DigestsView<'a> {
    /// Every digest of the human's scopes, by name, with its recent send times
    /// (newest first).
    pub digests: &'a [(DigestRow, Vec<RunRow>)],
    /// The sinks of the human's scopes (to name a digest's, and to offer them).
    pub sinks: &'a [SinkRow],
    /// The connections of the human's scopes (to name a digest's Cairn connection,
    /// and to offer the cairn ones).
    pub connections: &'a [ConnectionRow],
    /// The human's owner scopes and which they administer.
    pub owners: &'a Owners,
    /// A refused form and why.
    pub refused: Option<(&'a RefusedDigestForm, &'a str)>,
    /// Now, for "in 4 h".
    pub now: DateTime<Utc>,
}

/// A refusal beside its form.
pub fn refusal(why: &str) -> Markup {
    html! { p.sb-notice.sb-notice-error role="alert" { "Refused, nothing changed: " (why) } }
}

impl DigestsView<'_> {
    fn why(&self, which: &RefusedDigestForm) -> Option<&str> {
        self.refused.filter(|(r, _)| *r == which).map(|(_, why)| why)
    }
}

/// The Digests page. Every form carries `csrf`.
pub fn digests_page(v: &DigestsView<'_>, csrf: &CsrfToken) -> Markup {
    let admin_anywhere = v.owners.administered().next().is_some();
    html! {
        h1 { "Digests" }
        p.sb-lede {
            "A scheduled summary of an owner's queues, sent to their sinks: what is pending and how old, "
            "what is stalled, dead or quarantined, which doorbells went unheard. A section that could not be "
            "measured reads " code { "unavailable" } ", never 0. At most five per owner."
        }
        section #digests aria-labelledby="sb-digests-heading" {
            h2 #sb-digests-heading { "Scheduled digests" }
            @if v.digests.is_empty() {
                p.sb-empty { "No digests yet." }
            } @else {
                (digest_table(v, csrf))
            }
            @if admin_anywhere { (add_form(v, csrf)) }
        }
    }
}

fn digest_table(v: &DigestsView<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Owner" } th scope="col" { "Schedule and next send" }
                    th scope="col" { "Covers" } th scope="col" { "Sends to" } th scope="col" { "Attention" }
                    th scope="col" { "Last send" } th scope="col" { "Actions" }
                } }
                tbody {
                    @for (d, runs) in v.digests {
                        tr id=(format!("digest-{}", d.id)) {
                            td data-label="Name" { a href=(paths::digest(d.id)) { (d.name) } br; small.sb-hint { (d.id) } }
                            td data-label="Owner" { (v.owners.label(d.scope_id)) }
                            td data-label="Schedule" {
                                code { (d.schedule) } br;
                                span.sb-muted { "next " } (send_time(&d.schedule, d.next_send_at, v.now))
                            }
                            td data-label="Covers" { (queues(d)) }
                            td data-label="Sends to" {
                                (sink_names(&d.sink_ids, v.sinks)) br;
                                span.sb-muted { "Cairn: " } (cairn(d, v.connections))
                            }
                            td data-label="Attention" {
                                (quiet_rule(d.skip_when_quiet)) br;
                                span.sb-muted { "age threshold " } (threshold(d.age_threshold_seconds))
                            }
                            td data-label="Last send" { (last_run(runs.first(), &d.schedule, v.now)) }
                            td data-label="Actions" {
                                @if let Some(why) = v.why(&RefusedDigestForm::Digest(d.id)) { (refusal(why)) }
                                div.sb-actions {
                                    a.sb-btn.sb-btn-small href=(paths::digest_preview(d.id)) { "Preview" }
                                    a.sb-btn.sb-btn-small href=(paths::digest(d.id)) { "Send times" }
                                    @if v.owners.administers(d.scope_id) { (delete_button(d.id, csrf)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Delete, after a second click.
pub fn delete_button(id: DigestId, csrf: &CsrfToken) -> Markup {
    html! {
        details.sb-confirm {
            summary.sb-btn.sb-btn-small.sb-btn-danger { "Delete…" }
            div {
                p { "Delete this digest and the record of its send times? Nothing more is sent for it." }
                form.sb-inline method="post" action=(paths::digest_delete(id)) {
                    (csrf.field())
                    button.sb-btn.sb-btn-danger type="submit" { "Yes, delete the digest" }
                }
            }
        }
    }
}

/// The cairn connections among `connections`.
pub fn cairn_connections(connections: &[ConnectionRow]) -> impl Iterator<Item = &ConnectionRow> {
    connections.iter().filter(|c| c.kind == ConnectionKind::Cairn)
}

fn add_form(v: &DigestsView<'_>, csrf: &CsrfToken) -> Markup {
    let (typed, why) = match v.refused {
        Some((RefusedDigestForm::NewDigest(f), why)) => (Some(f), Some(why)),
        _ => (None, None),
    };
    let blank = DigestForm::default();
    let form = typed.unwrap_or(&blank);
    let sinks =
        v.sinks.iter().filter(|s| v.owners.administers(s.scope_id)).map(|s| (s, v.owners.label(s.scope_id))).collect();
    let cairns = cairn_connections(v.connections)
        .filter(|c| v.owners.administers(c.scope_id))
        .map(|c| (c, v.owners.label(c.scope_id)))
        .collect();
    let e = Editor {
        action: paths::DIGESTS,
        id: "sb-new-digest",
        form,
        sinks,
        cairns,
        owners: Some(v.owners),
        submit: "Schedule digest",
    };
    html! {
        details.sb-hook-add #add-digest open[why.is_some()] {
            summary.sb-btn.sb-btn-small { "Add a digest" }
            @if let Some(why) = why { (refusal(why)) }
            (editor(&e, csrf))
        }
    }
}
