//! One digest's page: everything it is set to, the next send time in the schedule's
//! zone and in UTC, its recent send times (sent or skipped, and why), a link to its
//! preview, and for an admin of its scope the edit form (the whole digest is replaced)
//! and the delete button.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::editor::{Editor, editor};
use super::form::DigestForm;
use super::format::{cairn, queues, quiet_rule, send_time, sink_names, threshold};
use super::paths;
use super::runs::runs_table;
use super::view::{cairn_connections, delete_button, refusal};
use crate::board::csrf::CsrfToken;
use crate::digests::statements::{DigestRow, RunRow};
use crate::sinks::statements::{ConnectionRow, SinkRow};

/// Everything a digest's page shows.
#[derive(Debug, Clone, Copy)]
pub struct DigestPage<'a> {
    /// The digest.
    pub digest: &'a DigestRow,
    /// Its recent send times, newest first.
    pub runs: &'a [RunRow],
    /// How its owner reads (`you`, `team:ops`).
    pub owner: &'a str,
    /// The sinks of the human's scopes.
    pub sinks: &'a [SinkRow],
    /// The connections of the human's scopes.
    pub connections: &'a [ConnectionRow],
    /// Whether the human administers its scope (and gets the edit form and delete).
    pub may_admin: bool,
    /// The edit form: the digest as it is, or as typed before a refusal.
    pub form: &'a DigestForm,
    /// Why the edit (or delete) was refused, if it was.
    pub error: Option<&'a str>,
    /// Now.
    pub now: DateTime<Utc>,
}

/// A digest's page. Every form carries `csrf`.
pub fn digest_page(p: &DigestPage<'_>, csrf: &CsrfToken) -> Markup {
    let d = p.digest;
    html! {
        p.sb-hint { a href=(paths::DIGESTS) { "← Digests" } }
        h1 { "Digest " (d.name) }
        dl.sb-facts {
            dt { "Id" } dd { code { (d.id) } }
            dt { "Owner" } dd { (p.owner) }
            dt { "Schedule" } dd { code { (d.schedule) } }
            dt { "Next send" } dd { (send_time(&d.schedule, d.next_send_at, p.now)) }
            dt { "Covers" } dd { (queues(d)) }
            dt { "Sinks" } dd { (sink_names(&d.sink_ids, p.sinks)) }
            dt { "When quiet" } dd { (quiet_rule(d.skip_when_quiet)) }
            dt { "Age threshold" } dd { (threshold(d.age_threshold_seconds)) }
            dt { "Cairn" } dd { (cairn(d, p.connections)) }
            dt { "Covered until" } dd {
                @match d.covered_until {
                    Some(at) => { (send_time(&d.schedule, at, p.now)) },
                    None => { span.sb-muted { "nothing yet: the first digest covers the day before it" } },
                }
            }
        }
        div.sb-actions {
            a.sb-btn.sb-btn-primary href=(paths::digest_preview(d.id)) { "Preview" }
            span.sb-hint { "What it would say now; sends nothing, records nothing." }
        }
        section #runs aria-labelledby="sb-runs-heading" {
            h2 #sb-runs-heading { "Recent send times" }
            (runs_table(p.runs, &d.schedule, p.now))
        }
        @if p.may_admin {
            section #edit aria-labelledby="sb-edit-heading" {
                h2 #sb-edit-heading { "Change" }
                @if let Some(why) = p.error { (refusal(why)) }
                (edit_form(p, csrf))
                (delete_button(d.id, csrf))
            }
        } @else {
            @if let Some(why) = p.error { (refusal(why)) }
            p.sb-hint { "Only an admin of this digest's owner may change or delete it." }
        }
    }
}

fn edit_form(p: &DigestPage<'_>, csrf: &CsrfToken) -> Markup {
    let scope = p.digest.scope_id;
    let action = paths::digest_update(p.digest.id);
    let e = Editor {
        action: &action,
        id: "sb-edit-digest",
        form: p.form,
        sinks: p.sinks.iter().filter(|s| s.scope_id == scope).map(|s| (s, "")).collect(),
        cairns: cairn_connections(p.connections).filter(|c| c.scope_id == scope).map(|c| (c, "")).collect(),
        owners: None,
        submit: "Save digest",
    };
    html! {
        details.sb-hook-add open[p.error.is_some()] {
            summary.sb-btn.sb-btn-small { "Edit…" }
            p.sb-hint { "Saving replaces the whole digest; its next send time follows the new schedule." }
            (editor(&e, csrf))
        }
    }
}
