//! One endpoint's page (its facts, grants, webhooks and hooks) and the revoke
//! confirmation, which says plainly what revoking dead-letters.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::paths;
use super::view::{grant_chips, sensitive_note, state_chips};
use crate::board::csrf::CsrfToken;
use crate::board::todos::format::{ago, machine, utc};
use crate::board::webhooks::paths as webhook_paths;
use crate::db::models::EndpointRow;
use crate::domain::todo_state::EndpointState;
use crate::hooks::rules::hook::redact_url;
use crate::hooks::statements::HookRow;
use crate::store::held_work::HeldWork;
use crate::store::webhooks::WebhookRow;

/// Everything an endpoint's page shows.
#[derive(Debug, Clone, Copy)]
pub struct EndpointPage<'a> {
    /// The endpoint.
    pub endpoint: &'a EndpointRow,
    /// Its owner, as [`crate::board::owners::Owners::label`] reads.
    pub owner: &'a str,
    /// Whether the human may revoke it (admin of its scope).
    pub may_admin: bool,
    /// Its webhooks.
    pub webhooks: &'a [WebhookRow],
    /// Its hooks.
    pub hooks: &'a [HookRow],
    /// Now, for "3 min ago".
    pub now: DateTime<Utc>,
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

/// An endpoint's page.
pub fn endpoint_page(p: &EndpointPage<'_>) -> Markup {
    let e = p.endpoint;
    html! {
        p.sb-hint { a href=(paths::ENDPOINTS) { "← Endpoints" } }
        h1 { "Endpoint " code { (e.slug) } }
        dl.sb-facts {
            dt { "Id" } dd { code { (e.id) } }
            dt { "Owner" } dd { (p.owner) }
            dt { "State" } dd { (state_chips(e))
                @if let Some(at) = e.presence_changed_at { " " span.sb-muted { "presence since " (when(p.now, at)) } } }
            dt { "Token" } dd { code { (e.token_prefix) "…" } }
            dt { "Grants" } dd { (grant_chips(&e.grants)) }
            dt { "Default lease" } dd {
                @match e.default_lease_seconds { Some(s) => { (s) " s" }, None => span.sb-muted { "none" } }
            }
            dt { "Expires" } dd { @match e.expires_at { Some(at) => (when(p.now, at)), None => span.sb-muted { "never" } } }
            dt { "Created" } dd { (when(p.now, e.created_at)) }
            @if let Some(at) = e.revoked_at { dt { "Revoked" } dd { (when(p.now, at)) } }
        }
        (sensitive_note(&e.grants))
        (webhooks(p))
        (hooks(p))
        @if e.state == EndpointState::Active && p.may_admin {
            h2 { "Revoke" }
            p { "Revoking stops the token at once and turns the work the endpoint still holds into dead letters." }
            p { a.sb-btn.sb-btn-danger href=(paths::revoke(e.id)) { "Revoke " (e.slug) "…" } }
        }
    }
}

fn webhooks(p: &EndpointPage<'_>) -> Markup {
    html! {
        h2 { "Webhooks" }
        @if p.webhooks.is_empty() {
            p.sb-empty { "No webhook delivers to this endpoint. " a href=(webhook_paths::WEBHOOKS) { "Create one" } "." }
        } @else {
            ul.sb-links {
                @for w in p.webhooks {
                    li {
                        a href=(webhook_paths::webhook(w.id)) { (w.source_type.as_str()) " → " code { (w.queue) } }
                        " " span.sb-muted { (w.id) }
                    }
                }
            }
        }
    }
}

fn hooks(p: &EndpointPage<'_>) -> Markup {
    html! {
        h2 { "Notify hooks" }
        @if p.hooks.is_empty() {
            p.sb-empty { "No notify hook announces this endpoint's todos." }
        } @else {
            ul.sb-links {
                @for h in p.hooks {
                    li {
                        code { (redact_url(&h.url)) } " "
                        @if h.enabled { span.sb-chip.sb-chip-healthy { "enabled" } }
                        @else { span.sb-chip.sb-chip-failing { "disabled" } }
                        @if !h.queues.is_empty() { " " span.sb-muted { "queues: " (h.queues.join(", ")) } }
                    }
                }
            }
            p.sb-hint { a href="/hooks" { "Hooks and their health" } }
        }
    }
}

/// The revoke confirmation: what will happen, and one deliberate button.
pub fn revoke_page(e: &EndpointRow, held: &HeldWork, csrf: &CsrfToken) -> Markup {
    html! {
        p.sb-hint { a href=(paths::endpoint(e.id)) { "← Endpoint " (e.slug) } }
        h1 { "Revoke " code { (e.slug) } "?" }
        @if e.state == EndpointState::Revoked {
            p.sb-notice role="status" { "This endpoint is already revoked." }
        } @else {
            div.sb-notice.sb-notice-error role="alert" {
                p { strong { "Revoking silently dead-letters the endpoint's held work." } }
                p {
                    "Its token stops working at once. Every todo it still holds becomes a dead letter "
                    "(reason: endpoint revoked) with no hook rung and no agent told:"
                }
                ul {
                    li { strong { (held.pending) } " pending" }
                    li { strong { (held.claimed) } " claimed or waiting for input" }
                    li { strong { (held.retrying) } " waiting for a retry" }
                }
                p {
                    @if held.is_empty() { "It holds nothing right now." }
                    @else { strong { (held.total()) } " todos in all (counted just now; more may arrive before you confirm)." }
                }
                p { "Revocation cannot be undone, and dead letters of a revoked endpoint cannot be retried." }
            }
            form.sb-actions method="post" action=(paths::revoke(e.id)) {
                (csrf.field())
                button.sb-btn.sb-btn-danger type="submit" {
                    @if held.is_empty() { "Revoke " (e.slug) }
                    @else { "Revoke and dead-letter " (held.total()) }
                }
                a.sb-btn.sb-btn-quiet href=(paths::endpoint(e.id)) { "Cancel" }
            }
        }
    }
}
