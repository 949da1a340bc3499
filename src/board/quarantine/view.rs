//! The quarantine pages' bodies: the list of held deliveries and one delivery's
//! detail with its payload shown as text (escaped, pretty-printed when it is JSON, cut
//! at [`PAYLOAD_SHOW_BYTES`]). Pure functions from rows to [`Markup`].

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use maud::{Markup, html};

use super::paths;
use crate::board::todos::format::{ago, machine, shorten, until, utc};
use crate::domain::ids::{EndpointId, WebhookId};
use crate::domain::todo_state::{QuarantineReason, TodoState};
use crate::intake::trusted_senders::sender_login;
use crate::store::quarantine::{HeldDelivery, QUARANTINE_DAYS};

/// Most bytes of a held payload the detail page shows.
pub const PAYLOAD_SHOW_BYTES: usize = 64 * 1024;

/// Longest title shown in a list row.
const TITLE_CHARS: usize = 100;

/// Names to show for the ids a held delivery carries.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Endpoint slugs.
    pub endpoints: HashMap<EndpointId, String>,
    /// Webhooks, as "source → default queue".
    pub webhooks: HashMap<WebhookId, String>,
}

impl Names {
    fn endpoint(&self, id: EndpointId) -> String {
        self.endpoints.get(&id).cloned().unwrap_or_else(|| id.to_string())
    }

    fn webhook(&self, id: Option<WebhookId>) -> Markup {
        match id {
            Some(id) => match self.webhooks.get(&id) {
                Some(label) => html! { (label) br; small.sb-hint { (id) } },
                None => html! { small.sb-hint { (id) } " (deleted)" },
            },
            None => html! { em { "none" } },
        }
    }
}

/// Why a delivery is held, in words.
pub fn why(r: Option<QuarantineReason>) -> &'static str {
    match r {
        Some(QuarantineReason::UntrustedActor) => "sender not trusted",
        Some(QuarantineReason::RuleAction) => "a routing rule holds it",
        Some(QuarantineReason::RuleFault) => "a routing rule failed",
        None => "held",
    }
}

/// When a held delivery expires (closed unreleased).
pub fn expires_at(h: &HeldDelivery) -> DateTime<Utc> {
    h.todo.created_at + Duration::days(QUARANTINE_DAYS)
}

fn when(at: DateTime<Utc>, text: String) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (text) } }
}

/// The list of held deliveries, newest first.
pub fn quarantine_page(rows: &[HeldDelivery], names: &Names, now: DateTime<Utc>) -> Markup {
    html! {
        h1 { "Quarantine" }
        p.sb-lede {
            "Deliveries held instead of queued: their sender is not trusted, or a routing rule held them. "
            "Agents never see them. Release one to route it, or discard it; unreleased ones expire after "
            (QUARANTINE_DAYS) " days."
        }
        @if rows.is_empty() {
            p.sb-empty { "Nothing is held." }
        } @else {
            div.sb-table-wrap {
                table.sb-table.sb-stack {
                    thead {
                        tr {
                            th scope="col" { "Arrived" }
                            th scope="col" { "Delivery" }
                            th scope="col" { "Webhook" }
                            th scope="col" { "Endpoint" }
                            th scope="col" { "Source" }
                            th scope="col" { "Sender" }
                            th scope="col" { "Why held" }
                            th scope="col" { "Expires" }
                        }
                    }
                    tbody {
                        @for h in rows {
                            @let arrived = h.received_at.unwrap_or(h.todo.created_at);
                            @let expires = expires_at(h);
                            tr {
                                td data-label="Arrived" { (when(arrived, ago(now, arrived))) }
                                td data-label="Delivery" {
                                    a href=(paths::held(h.todo.id)) { (shorten(&h.todo.title, TITLE_CHARS)) }
                                    br; small.sb-hint { (h.todo.id) }
                                }
                                td data-label="Webhook" { (names.webhook(h.webhook_id)) }
                                td data-label="Endpoint" { (names.endpoint(h.todo.endpoint_id)) }
                                td data-label="Source" {
                                    (h.todo.source.as_deref().unwrap_or("—"))
                                    @if let Some(k) = &h.todo.kind { " · " (k) }
                                }
                                td data-label="Sender" { (sender(h)) }
                                td data-label="Why held" { span.sb-chip.sb-chip-failed { (why(h.todo.quarantine_reason)) } }
                                td data-label="Expires" { (when(expires, until(now, expires))) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn sender(h: &HeldDelivery) -> Markup {
    match sender_login(h.todo.payload.as_ref()) {
        Some(login) => html! { code { (login) } },
        None => html! { span.sb-hint { "—" } },
    }
}

/// A payload as the detail page shows it: pretty JSON when it parses, else the bytes
/// as text (invalid UTF-8 replaced), cut at `cap` bytes on a character boundary.
/// Returns the text and how many bytes of it were left out.
pub fn payload_text(raw: &[u8], cap: usize) -> (String, usize) {
    let text = match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| String::from_utf8_lossy(raw).into_owned()),
        Err(_) => String::from_utf8_lossy(raw).into_owned(),
    };
    if text.len() <= cap {
        return (text, 0);
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let left_out = text.len() - end;
    (text[..end].to_owned(), left_out)
}

/// One held delivery: what it is, why it is held, its headers and payload as text,
/// and (while it is still held) release and discard, each form carrying `csrf`; with
/// no `csrf` (the human is a plain member of the delivery's team) a hint says that
/// only an admin may.
pub fn held_page(h: &HeldDelivery, payload: &[u8], names: &Names, now: DateTime<Utc>, csrf: Option<&Markup>) -> Markup {
    let (text, left_out) = payload_text(payload, PAYLOAD_SHOW_BYTES);
    let arrived = h.received_at.unwrap_or(h.todo.created_at);
    let still_held = h.todo.state == TodoState::Pending;
    html! {
        p { a href=(paths::QUARANTINE) { "← Quarantine" } }
        h1 { (shorten(&h.todo.title, 200)) }
        dl.sb-facts {
            dt { "Delivery" } dd { code { (h.todo.id) } }
            dt { "Why held" } dd { (why(h.todo.quarantine_reason)) }
            dt { "Webhook" } dd { (names.webhook(h.webhook_id)) }
            dt { "Endpoint" } dd { (names.endpoint(h.todo.endpoint_id)) }
            dt { "Source" } dd { (h.todo.source.as_deref().unwrap_or("—")) }
            dt { "Event type" } dd { (h.todo.kind.as_deref().unwrap_or("—")) }
            dt { "Sender" } dd { (sender(h)) }
            dt { "Arrived" } dd { (utc(arrived)) " (" (ago(now, arrived)) ")" }
            @if still_held {
                dt { "Expires" } dd { (utc(expires_at(h))) " (" (until(now, expires_at(h))) ")" }
            }
        }
        @if still_held {
            @if let Some(csrf) = csrf {
                (actions(h, csrf))
            } @else {
                p.sb-hint { "Only an admin of this delivery's team may release or discard it." }
            }
        } @else {
            div.sb-notice.sb-notice-warn role="status" {
                "This delivery has left quarantine"
                @if let Some(result) = &h.todo.result { ": " code { (result.to_string()) } }
                "."
            }
        }
        @if let Some(headers) = h.headers.as_ref().and_then(|v| v.as_object()).filter(|o| !o.is_empty()) {
            h2 { "Headers" }
            dl.sb-facts.sb-held-headers {
                @for (name, value) in headers {
                    dt { code { (name) } }
                    dd { code { (value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string())) } }
                }
            }
        }
        h2 { "Payload" }
        @if payload.is_empty() {
            p.sb-empty { "No payload." }
        } @else {
            pre.sb-payload { code { (text) } }
            @if left_out > 0 {
                p.sb-hint { (left_out) " more bytes are not shown (" (payload.len()) " bytes in all)." }
            }
        }
    }
}

fn actions(h: &HeldDelivery, csrf: &Markup) -> Markup {
    let queue_id = format!("queue-{}", h.todo.id);
    html! {
        div.sb-cards {
            form.sb-card.sb-form method="post" action=(paths::release(h.todo.id)) {
                h2 { "Release" }
                (csrf)
                p.sb-hint { "The sender is trusted for this delivery: it becomes todos as the webhook's rules say, or goes to the queue you name." }
                label for=(queue_id) { "Queue (optional)" }
                input id=(queue_id) type="text" name="queue" placeholder="leave empty: the webhook's rules decide";
                button.sb-btn.sb-btn-primary type="submit" { "Release" }
            }
            div.sb-card {
                h2 { "Discard" }
                p.sb-hint { "The delivery is closed without becoming work. It cannot be released afterwards." }
                details.sb-confirm {
                    summary.sb-btn.sb-btn-danger { "Discard…" }
                    div {
                        p { "Discard this delivery for good?" }
                        form.sb-inline method="post" action=(paths::discard(h.todo.id)) {
                            (csrf)
                            button.sb-btn.sb-btn-danger type="submit" { "Yes, discard it" }
                        }
                    }
                }
            }
        }
    }
}
