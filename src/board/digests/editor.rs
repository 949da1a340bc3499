//! The digest form's markup, shared by "Add a digest" (with an owner to choose, every
//! sink and cairn connection of the scopes the human administers) and a digest's edit
//! form (its own scope's only; the whole digest is replaced, as the API's `PUT`).

use maud::{Markup, html};

use super::form::DigestForm;
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::digests::clients::cairn::{DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, MIN_TTL_SECONDS};
use crate::sinks::statements::{ConnectionRow, SinkRow};

/// The example the schedule field shows.
pub const SCHEDULE_EXAMPLE: &str = "TZ=Europe/Berlin Mon-Fri 09:00,17:00";

/// One digest form.
#[derive(Debug, Clone)]
pub struct Editor<'a> {
    /// Where it posts.
    pub action: &'a str,
    /// Prefix of its elements' ids (unique on the page).
    pub id: &'a str,
    /// What it shows.
    pub form: &'a DigestForm,
    /// The sinks it offers, each with its owner's label (empty: not shown, as when
    /// every sink offered is the digest's own scope's).
    pub sinks: Vec<(&'a SinkRow, &'a str)>,
    /// The cairn connections it offers, each with its owner's label.
    pub cairns: Vec<(&'a ConnectionRow, &'a str)>,
    /// The owners to choose from (creating only).
    pub owners: Option<&'a Owners>,
    /// The submit button's text.
    pub submit: &'a str,
}

fn owned(name: &str, owner: &str) -> Markup {
    html! { (name) @if !owner.is_empty() { " " span.sb-muted { "(" (owner) ")" } } }
}

/// The form. Every field is labelled; the schedule and the numbers carry their hints.
pub fn editor(e: &Editor<'_>, csrf: &CsrfToken) -> Markup {
    let id = |field: &str| format!("{}-{field}", e.id);
    let f = e.form;
    html! {
        form.sb-form method="post" action=(e.action) {
            (csrf.field())
            label for=(id("name")) { "Name" }
            input id=(id("name")) type="text" name="name" required maxlength="100" value=(f.name);
            label for=(id("schedule")) { "Schedule" }
            input id=(id("schedule")) type="text" name="schedule" required maxlength="200" spellcheck="false"
                autocomplete="off" placeholder=(SCHEDULE_EXAMPLE) value=(f.schedule)
                aria-describedby=(id("schedule-hint"));
            p id=(id("schedule-hint")) .sb-hint {
                "For example " code { (SCHEDULE_EXAMPLE) } ": an optional " code { "TZ=" } " with an IANA zone "
                "(default UTC), the days (" code { "Mon" } "–" code { "Sun" } ", ranges that may wrap like "
                code { "Fri-Mon" } ", comma lists, or " code { "daily" } ") and one or more " code { "HH:MM" } "."
            }
            label for=(id("queues")) { "Queues (comma-separated; empty: all)" }
            input id=(id("queues")) type="text" name="queues" spellcheck="false" autocomplete="off"
                placeholder="builds, deploys" value=(f.queues);
            fieldset.sb-grants {
                legend { "Sinks" }
                @if e.sinks.is_empty() {
                    p.sb-hint { "No sinks to send to: add one on the " a href=(crate::board::sinks::paths::SINKS) { "Sinks" } " page, or publish to Cairn." }
                }
                @for (s, owner) in &e.sinks {
                    @let box_id = format!("{}-sink-{}", e.id, s.id);
                    div.sb-check {
                        input id=(box_id) type="checkbox" name="sink_ids" value=(s.id) checked[f.has_sink(s.id)];
                        label for=(box_id) { (owned(&s.name, owner)) }
                    }
                }
                p.sb-hint { "At most 10, of the digest's owner; at least one unless it publishes to Cairn." }
            }
            div.sb-check {
                input id=(id("quiet")) type="checkbox" name="skip_when_quiet" value="on" checked[f.skip_when_quiet];
                label for=(id("quiet")) {
                    "Skip when quiet " span.sb-muted { "(every section measured, nothing needs attention)" }
                }
            }
            label for=(id("age")) { "Age threshold (seconds)" }
            input id=(id("age")) type="number" name="age_threshold_seconds" min="60" max="604800" inputmode="numeric"
                value=(f.age_threshold_seconds) aria-describedby=(id("age-hint"));
            p id=(id("age-hint")) .sb-hint { "A queue whose oldest pending todo is older needs attention. 60–604 800; default 3600." }
            label for=(id("cairn")) { "Publish to Cairn (optional)" }
            select id=(id("cairn")) name="cairn_connection_id" {
                option value="" selected[f.cairn_connection_id.is_empty()] { "Do not publish" }
                @for (c, owner) in &e.cairns {
                    @let value = c.id.to_string();
                    option value=(value) selected[f.cairn_connection_id == value] {
                        (c.name) @if !owner.is_empty() { " (" (owner) ")" }
                    }
                }
            }
            label for=(id("ttl")) { "Cairn artifact lifetime (seconds, optional)" }
            input id=(id("ttl")) type="number" name="cairn_ttl_seconds" min=(MIN_TTL_SECONDS) max=(MAX_TTL_SECONDS)
                inputmode="numeric" placeholder=(DEFAULT_TTL_SECONDS) value=(f.cairn_ttl_seconds);
            @if let Some(owners) = e.owners {
                label for=(id("owner")) { "Owner" }
                select id=(id("owner")) name="owner" {
                    @for o in owners.administered() {
                        option value=(o.reference) selected[o.reference == f.owner] {
                            @if o.personal { "you (" (o.reference) ")" } @else { (o.reference) }
                        }
                    }
                }
            }
            button.sb-btn.sb-btn-primary type="submit" { (e.submit) }
        }
    }
}
