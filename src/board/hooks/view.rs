//! The hook pages' bodies: the list grouped by endpoint (health, ceiling, the create
//! form), and the one-time pages that show a new signing secret. Pure functions from
//! rows to [`Markup`]; every value is escaped by maud, and a hook's URL is always shown
//! with its query redacted (it often carries a token).

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::paths;
use crate::board::todos::format::{ago, machine, until, utc};
use crate::db::models::EndpointRow;
use crate::domain::ids::EndpointId;
use crate::domain::todo_state::EndpointState;
use crate::hooks::rules::hook::{HookDisabledReason, redact_url};
use crate::hooks::statements::HookRow;

/// Failures in a row after which the dispatcher switches a hook off.
pub const DISABLE_AFTER_FAILURES: i32 = 10;

/// One endpoint's section: its hooks, oldest first.
#[derive(Debug, Clone)]
pub struct EndpointHooks {
    /// The endpoint.
    pub endpoint: EndpointRow,
    /// Its hooks.
    pub hooks: Vec<HookRow>,
    /// Whether the human administers the endpoint's scope (may add and change hooks).
    pub may_change: bool,
}

/// A create the service refused, shown again beside its form with what was typed.
#[derive(Debug, Clone)]
pub struct RefusedCreate {
    /// The endpoint whose form was posted.
    pub endpoint: EndpointId,
    /// The URL as typed.
    pub url: String,
    /// The queues as typed.
    pub queues: String,
    /// Why it was refused.
    pub message: String,
}

/// Everything the hooks page shows.
#[derive(Debug, Clone, Copy)]
pub struct HooksView<'a> {
    /// Every endpoint in reach that is live or still holds hooks, newest first.
    pub endpoints: &'a [EndpointHooks],
    /// Whether hooks may be created (kill switch off and a ceiling above 0).
    pub accepting: bool,
    /// `SWITCHBOARD_NOTIFY_HOOK_MAX`.
    pub max: u32,
    /// Now, for "3 min ago" and for which previous secrets still sign.
    pub now: DateTime<Utc>,
    /// A refused create to show again.
    pub refused: Option<&'a RefusedCreate>,
}

/// Whether an endpoint can still receive work (and so hooks).
pub fn is_live(ep: &EndpointRow, now: DateTime<Utc>) -> bool {
    ep.state == EndpointState::Active && ep.expires_at.is_none_or(|at| at > now)
}

fn at(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

/// The hooks page. Every form carries `csrf`.
pub fn hooks_page(v: &HooksView<'_>, csrf: &Markup) -> Markup {
    html! {
        h1 { "Notify hooks" }
        p.sb-lede {
            "Each hook is told when a todo becomes ready or dies on its endpoint's queues. "
            "A hook is switched off after " (DISABLE_AFTER_FAILURES) " failed deliveries in a row."
        }
        @if !v.accepting {
            div.sb-notice.sb-notice-warn role="status" {
                strong { "Notify hooks are switched off on this instance." }
                " No hook is called and none can be added "
                "(SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false or SWITCHBOARD_NOTIFY_HOOK_MAX=0). "
                "The hooks below are kept as they are."
            }
        }
        @if v.endpoints.is_empty() {
            p.sb-empty { "No endpoints in your scopes yet. Vend an endpoint first; its hooks appear here." }
        }
        @for e in v.endpoints {
            (endpoint_section(e, v, csrf))
        }
    }
}

fn endpoint_section(e: &EndpointHooks, v: &HooksView<'_>, csrf: &Markup) -> Markup {
    let used = e.hooks.len();
    let live = is_live(&e.endpoint, v.now);
    let refused = v.refused.filter(|r| r.endpoint == e.endpoint.id);
    html! {
        section.sb-hooks-endpoint id=(paths::anchor(e.endpoint.id)) aria-labelledby=(format!("h-{}", e.endpoint.id)) {
            h2 id=(format!("h-{}", e.endpoint.id)) {
                (e.endpoint.slug) " "
                @if !live { span.sb-chip.sb-chip-revoked { "revoked or expired" } " " }
                small.sb-hint { (used) " of " (v.max) " hooks used" }
            }
            @if e.hooks.is_empty() {
                p.sb-empty { "No hooks on this endpoint." }
            } @else {
                (hook_table(e, v, csrf))
            }
            @if let Some(r) = refused {
                div.sb-notice.sb-notice-error role="alert" { "Nothing was created: " (r.message) }
            }
            @if !e.may_change {
                p.sb-hint { "Only an admin of this endpoint's team may add or change its hooks." }
            } @else if !v.accepting {
            } @else if !live {
                p.sb-hint { "A revoked or expired endpoint takes no new hooks." }
            } @else if used >= v.max as usize && refused.is_none() {
                p.sb-hint {
                    "This endpoint holds the most hooks allowed (SWITCHBOARD_NOTIFY_HOOK_MAX=" (v.max)
                    "). Delete one to add another."
                }
            } @else {
                (create_form(e.endpoint.id, refused, csrf))
            }
        }
    }
}

fn create_form(endpoint: EndpointId, refused: Option<&RefusedCreate>, csrf: &Markup) -> Markup {
    let url_id = format!("url-{endpoint}");
    let queues_id = format!("queues-{endpoint}");
    html! {
        details.sb-hook-add open[refused.is_some()] {
            summary.sb-btn.sb-btn-small { "Add a hook" }
            form.sb-form method="post" action=(paths::create(endpoint)) {
                (csrf)
                label for=(url_id) { "URL" }
                input id=(url_id) type="url" name="url" required placeholder="https://example.com/hooks/switchboard"
                    value=[refused.map(|r| r.url.as_str())];
                span.sb-hint { "https only; a private, loopback or metadata address is refused." }
                label for=(queues_id) { "Queues" }
                input id=(queues_id) type="text" name="queues" placeholder="builds, deploys"
                    value=[refused.map(|r| r.queues.as_str())];
                span.sb-hint { "Comma-separated; leave empty for every queue." }
                button.sb-btn.sb-btn-primary type="submit" { "Add hook" }
            }
        }
    }
}

fn hook_table(e: &EndpointHooks, v: &HooksView<'_>, csrf: &Markup) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                thead {
                    tr {
                        th scope="col" { "URL" }
                        th scope="col" { "Queues" }
                        th scope="col" { "State" }
                        th scope="col" { "Health" }
                        th scope="col" { "Signing" }
                        @if e.may_change { th scope="col" { "Actions" } }
                    }
                }
                tbody {
                    @for h in &e.hooks {
                        tr {
                            td data-label="URL" { code { (redact_url(&h.url)) } br; small.sb-hint { (h.id) } }
                            td data-label="Queues" {
                                @if h.queues.is_empty() { "every queue" }
                                @else { @for q in &h.queues { span.sb-chip.sb-chip-queue { (q) } " " } }
                            }
                            td data-label="State" { (state(h)) }
                            td data-label="Health" { (health(h, v.now)) }
                            td data-label="Signing" { (signing(h, v.now)) }
                            @if e.may_change { td data-label="Actions" { (actions(h, csrf)) } }
                        }
                    }
                }
            }
        }
    }
}

/// On or off, and why off.
pub fn state(h: &HookRow) -> Markup {
    match (h.enabled, h.disabled_reason) {
        (true, _) => html! { span.sb-chip.sb-chip-healthy { "on" } },
        (false, Some(HookDisabledReason::ConsecutiveFailures)) => html! {
            span.sb-chip.sb-chip-failing { "off" } br;
            small { "after " (h.consecutive_failures) " failures in a row; rotate or enable to resume" }
        },
        (false, Some(HookDisabledReason::Operator)) => html! {
            span.sb-chip { "off" } br; small { "switched off by an operator" }
        },
        (false, None) => html! { span.sb-chip { "off" } },
    }
}

/// Failures in a row, the last answer and error, and when the last attempt ended.
pub fn health(h: &HookRow, now: DateTime<Utc>) -> Markup {
    html! {
        @match h.last_attempt_at {
            None => { span.sb-hint { "no delivery yet" } }
            Some(last) => {
                @if h.consecutive_failures == 0 {
                    span.sb-chip.sb-chip-healthy { "delivering" }
                } @else {
                    span.sb-chip.sb-chip-failing {
                        (h.consecutive_failures) " failure" @if h.consecutive_failures != 1 { "s" } " in a row"
                    }
                }
                dl.sb-facts.sb-hook-health {
                    dt { "Last attempt" } dd { (at(now, last)) }
                    dt { "Last status" }
                    dd { @match h.last_status { Some(s) => { (s) }, None => { "no answer" } } }
                    @if let Some(err) = &h.last_error {
                        dt { "Last error" } dd { code { (err) } }
                    }
                }
            }
        }
    }
}

/// Dual signing after a rotation, while it lasts.
pub fn signing(h: &HookRow, now: DateTime<Utc>) -> Markup {
    match h.previous_secret_valid_until(now) {
        Some(end) => html! {
            "new and previous secret, until "
            time datetime=(machine(end)) title=(utc(end)) { (utc(end)) }
            " (" (until(now, end)) ")"
        },
        None => html! { "one secret" },
    }
}

fn actions(h: &HookRow, csrf: &Markup) -> Markup {
    html! {
        div.sb-actions {
            form.sb-inline method="post" action=(paths::rotate(h.id)) {
                (csrf)
                button.sb-btn.sb-btn-small type="submit" { "Rotate secret" }
            }
            @if h.enabled {
                form.sb-inline method="post" action=(paths::disable(h.id)) {
                    (csrf)
                    button.sb-btn.sb-btn-small type="submit" { "Disable" }
                }
            } @else {
                form.sb-inline method="post" action=(paths::enable(h.id)) {
                    (csrf)
                    button.sb-btn.sb-btn-small type="submit" { "Enable" }
                }
            }
            details.sb-confirm {
                summary.sb-btn.sb-btn-small.sb-btn-danger { "Delete…" }
                div {
                    p { "Delete this hook? Nothing more is sent to it, not even an attempt already scheduled, "
                        "and its signing secrets are gone for good." }
                    form.sb-inline method="post" action=(paths::delete(h.id)) {
                        (csrf)
                        button.sb-btn.sb-btn-danger type="submit" { "Yes, delete the hook" }
                    }
                }
            }
        }
    }
}

/// The answer to a create: the hook and its signing secret, shown this once.
pub fn created_page(endpoint_slug: &str, hook: &HookRow, secret: &str) -> Markup {
    html! {
        h1 { "Hook added" }
        dl.sb-facts {
            dt { "Endpoint" } dd { (endpoint_slug) }
            dt { "URL" } dd { code { (redact_url(&hook.url)) } }
            dt { "Queues" } dd { @if hook.queues.is_empty() { "every queue" } @else { (hook.queues.join(", ")) } }
            dt { "Hook" } dd { code { (hook.id) } }
        }
        (secret_block(secret))
        p { "Give it to the receiver: it verifies each delivery's " code { "webhook-signature" }
            " header with it (Standard Webhooks)." }
        p { a.sb-btn href=(paths::endpoint_section(hook.endpoint_id)) { "Back to hooks" } }
    }
}

/// The answer to a rotation: the new secret, shown this once, and the dual-signing window.
pub fn rotated_page(hook: &HookRow, secret: &str, now: DateTime<Utc>) -> Markup {
    html! {
        h1 { "Signing secret rotated" }
        dl.sb-facts {
            dt { "URL" } dd { code { (redact_url(&hook.url)) } }
            dt { "Hook" } dd { code { (hook.id) } }
        }
        (secret_block(secret))
        @match hook.previous_secret_valid_until(now) {
            Some(end) => p {
                "For 24 hours both secrets sign: until " strong { (utc(end)) } " every delivery carries two "
                "signatures, one with the new secret and one with the previous, so the receiver can switch "
                "over. After that only the new secret signs."
            },
            None => p { "Only the new secret signs from now on." },
        }
        @if !hook.enabled {
            p.sb-notice.sb-notice-warn { "This hook is still switched off by an operator; enable it to resume deliveries." }
        }
        p { a.sb-btn href=(paths::endpoint_section(hook.endpoint_id)) { "Back to hooks" } }
    }
}

fn secret_block(secret: &str) -> Markup {
    html! {
        div.sb-notice.sb-notice-warn role="status" {
            strong { "Copy the signing secret now." }
            " It is shown only this once: Switchboard keeps it sealed and cannot show it again."
        }
        code.sb-token { (secret) }
    }
}
