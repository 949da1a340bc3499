//! The Endpoints list with the vend form, and the page that shows a new endpoint's
//! token once.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::form::VendForm;
use super::paths;
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::board::todos::format::{ago, machine, utc};
use crate::db::models::EndpointRow;
use crate::domain::grants::{DRAIN_FAMILY, Verb, why_sensitive};
use crate::domain::todo_state::{EndpointState, Presence};
use crate::domain::waiters::WAIT_SECONDS_RANGE;
use crate::store::todos::{CLAIM_LIMIT_MAX, CREATE_ITEMS_MAX, FINISH_ITEMS_MAX};

/// What a grant lets an agent do, in words. A verb with a batch form names it, with the
/// store's own bounds: the grant of the single verb is the grant of its batch
/// (`claim-next` with `limit`, the batch complete, fail and create routes), so an
/// operator granting it grants both.
pub fn grant_hint(verb: Verb) -> Cow<'static, str> {
    match verb {
        Verb::ListTodos => "list the endpoint's todos".into(),
        Verb::GetTodo => "read one todo with its attempts".into(),
        Verb::Claim => "claim a todo by id".into(),
        Verb::ClaimNext => format!(
            "claim the oldest pending todo, or up to {CLAIM_LIMIT_MAX} at once, waiting up to {} s for work",
            WAIT_SECONDS_RANGE.1
        )
        .into(),
        Verb::Heartbeat => "extend a lease".into(),
        Verb::Complete => format!("complete a claimed todo, or up to {FINISH_ITEMS_MAX} in one call").into(),
        Verb::Fail => format!("fail a claimed todo, or up to {FINISH_ITEMS_MAX} in one call").into(),
        Verb::Release => "hand a claimed todo back".into(),
        Verb::Interrupt => "pause a claimed todo for input".into(),
        Verb::CreateTodo => {
            format!("create todos on the endpoint's queues, up to {CREATE_ITEMS_MAX} in one call").into()
        }
        Verb::ManageHooks => "manage the endpoint's notify hooks".into(),
        Verb::Notifications => "manage the owner's notification sinks".into(),
        Verb::PageOwner => "page the owner".into(),
    }
}

/// The grants as small chips; a sensitive one is marked (a warning sign, its colour,
/// and why in its title and for screen readers).
pub fn grant_chips(grants: &[String]) -> Markup {
    html! {
        @if grants.is_empty() { span.sb-muted { "none" } }
        @for g in grants {
            @match g.parse::<Verb>().ok().and_then(why_sensitive) {
                Some(why) => span.sb-chip.sb-chip-sensitive title=(format!("sensitive: {why}")) {
                    span aria-hidden="true" { "⚠ " } (g) span.sb-visually-hidden { " (sensitive: " (why) ")" }
                },
                None => span.sb-chip { (g) },
            }
            " "
        }
    }
}

/// The sensitive grants among `grants`, each with why, as a warning (nothing when
/// there are none): shown on an endpoint's page and with a new endpoint's token.
pub fn sensitive_note(grants: &[String]) -> Markup {
    let held: Vec<(Verb, &str)> =
        grants.iter().filter_map(|g| g.parse::<Verb>().ok()).filter_map(|v| why_sensitive(v).map(|w| (v, w))).collect();
    html! {
        @if !held.is_empty() {
            div.sb-notice.sb-notice-warn role="note" {
                p { strong { "Sensitive grants." } " Grant these only to an agent you trust with them:" }
                ul {
                    @for (verb, why) in &held { li { code { (verb.as_str()) } ": " (why) "." } }
                }
            }
        }
    }
}

/// The endpoint's state and presence as chips.
pub fn state_chips(e: &EndpointRow) -> Markup {
    html! {
        @match e.state {
            EndpointState::Active => span.sb-chip.sb-chip-done { "active" },
            EndpointState::Revoked => span.sb-chip.sb-chip-revoked { "revoked" },
        }
        " "
        @match e.presence {
            Presence::In => span.sb-chip.sb-chip-queue title="clocked in" { "in" },
            Presence::Out => span.sb-chip title="clocked out" { "out" },
        }
    }
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

/// The list of endpoints and, below it, the vend form (`error`: why the last vend was
/// refused, shown above the form as typed).
pub fn endpoints_page(
    rows: &[EndpointRow],
    owners: &Owners,
    form: &VendForm,
    error: Option<&str>,
    csrf: &CsrfToken,
    now: DateTime<Utc>,
) -> Markup {
    html! {
        h1 { "Endpoints" }
        p.sb-lede { "Each endpoint is one agent's credential: its token, its grants and the queues it drains." }
        (endpoint_table(rows, owners, now))
        (vend_form(owners, form, error, csrf))
    }
}

fn endpoint_table(rows: &[EndpointRow], owners: &Owners, now: DateTime<Utc>) -> Markup {
    html! {
        @if rows.is_empty() {
            p.sb-empty { "No endpoints yet. Vend one below." }
        } @else {
            div.sb-table-wrap {
                table.sb-table.sb-stack {
                    thead { tr { th { "Slug" } th { "Owner" } th { "Grants" } th { "State" } th { "Created" } th { "Revoked" } } }
                    tbody {
                        @for e in rows {
                            tr {
                                td data-label="Slug" { a href=(paths::endpoint(e.id)) { code { (e.slug) } } }
                                td data-label="Owner" { (owners.label(e.scope_id)) }
                                td data-label="Grants" { (grant_chips(&e.grants)) }
                                td data-label="State" { (state_chips(e)) }
                                td data-label="Created" .sb-nowrap { (when(now, e.created_at)) }
                                td data-label="Revoked" .sb-nowrap {
                                    @match e.revoked_at { Some(at) => (when(now, at)), None => span.sb-muted { "—" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn vend_form(owners: &Owners, form: &VendForm, error: Option<&str>, csrf: &CsrfToken) -> Markup {
    html! {
        section #vend aria-labelledby="sb-vend-heading" {
            h2 #sb-vend-heading { "Vend an endpoint" }
            @if let Some(why) = error {
                p.sb-notice.sb-notice-error role="alert" { "Not vended: " (why) }
            }
            form.sb-form method="post" action=(paths::ENDPOINTS) {
                (csrf.field())
                label for="sb-slug" { "Slug" }
                input #sb-slug type="text" name="slug" value=(form.slug) required maxlength="63"
                    autocomplete="off" spellcheck="false" pattern="[a-z0-9][a-z0-9_\\-]{0,62}" aria-describedby="sb-slug-hint";
                p #sb-slug-hint .sb-hint { "1–63 of a-z, 0-9, _ or -, starting with a letter or digit. Unique on this instance." }
                label for="sb-owner" { "Owner" }
                select #sb-owner name="owner" {
                    @for o in owners.administered() {
                        option value=(o.reference) selected[o.reference == form.owner] {
                            @if o.personal { "You (" (o.reference) ")" } @else { (o.reference) }
                        }
                    }
                }
                fieldset.sb-grants {
                    legend { "Grants" }
                    p.sb-hint { "None ticked: the drain family (" (drain_names()) ")." }
                    @for verb in Verb::ALL {
                        @let id = format!("sb-grant-{}", verb.as_str());
                        div.sb-check {
                            input id=(id) type="checkbox" name="grants" value=(verb.as_str()) checked[form.has(*verb)];
                            label for=(id) {
                                code { (verb.as_str()) } " " span.sb-muted { (grant_hint(*verb)) }
                                @if let Some(why) = why_sensitive(*verb) {
                                    " " span.sb-chip.sb-chip-sensitive { "⚠ sensitive" } " " span.sb-muted { (why) }
                                }
                            }
                        }
                    }
                }
                label for="sb-lease" { "Default lease (seconds, optional)" }
                input #sb-lease type="number" name="default_lease_seconds" value=(form.lease) min="60" max="86400"
                    inputmode="numeric" aria-describedby="sb-lease-hint";
                p #sb-lease-hint .sb-hint { "60–86 400. For claims that name no lease." }
                button.sb-btn.sb-btn-primary type="submit" { "Vend endpoint" }
            }
        }
    }
}

fn drain_names() -> String {
    DRAIN_FAMILY.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
}

/// The answer to a vend: the token, shown on this page only.
pub fn vended_page(e: &EndpointRow, token: &str, owners: &Owners) -> Markup {
    html! {
        h1 { "Endpoint " code { (e.slug) } " vended" }
        div.sb-notice.sb-notice-warn role="status" {
            strong { "Copy the token now." }
            " It is shown on this page only, once: Switchboard keeps only its hash, so it cannot be shown again. \
            Reloading will not bring it back. If it is lost, revoke the endpoint and vend another."
        }
        p.sb-label { "Agent token" }
        code #sb-token .sb-token { (token) }
        p.sb-hint { "Select the token to copy it. Agents send it as " code { "Authorization: Bearer …" } "." }
        dl.sb-facts {
            dt { "Owner" } dd { (owners.label(e.scope_id)) }
            dt { "Grants" } dd { (grant_chips(&e.grants)) }
            dt { "Default lease" } dd {
                @match e.default_lease_seconds { Some(s) => { (s) " s" }, None => span.sb-muted { "none" } }
            }
        }
        (sensitive_note(&e.grants))
        p.sb-actions {
            a.sb-btn href=(paths::endpoint(e.id)) { "Open the endpoint" }
            a.sb-btn.sb-btn-quiet href=(paths::ENDPOINTS) { "Back to endpoints" }
        }
    }
}
