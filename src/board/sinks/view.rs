//! The Sinks pages' bodies: the connections (fingerprints only, never a secret) and
//! sinks of every scope the human belongs to, with the forms an admin of the scope
//! gets; and one sink's page with its subscriptions editor and send log. Pure
//! functions from rows to [`Markup`]; every value is escaped by maud, and a sink's URL
//! is always shown with its query redacted.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::form::{ConnectionForm, SinkForm};
use super::paths;
use crate::board::csrf::CsrfToken;
use crate::board::owners::Owners;
use crate::board::todos::format::{ago, machine, utc};
use crate::board::todos::paths as todo_paths;
use crate::domain::ids::{ConnectionId, SinkId};
use crate::hooks::rules::hook::redact_url;
use crate::sinks::rules::vocabulary::{AppriseMode, ConnectionKind, SinkKind};
use crate::sinks::statements::outbox::SendRow;
use crate::sinks::statements::{ConnectionRow, SinkRow};

/// Which form a refusal belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefusedSinkForm {
    /// The new-connection form, with what was typed (never the secret).
    NewConnection(ConnectionForm),
    /// A connection's rotate form or delete button.
    Connection(ConnectionId),
    /// The new-sink form, with what was typed.
    NewSink(SinkForm),
    /// A sink's buttons or budget form.
    Sink(SinkId),
}

impl PartialEq for ConnectionForm {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.kind == other.kind
            && self.base_url == other.base_url
            && self.owner == other.owner
    }
}

impl Eq for ConnectionForm {}

/// Everything the Sinks page shows.
#[derive(Debug, Clone, Copy)]
pub struct SinksView<'a> {
    /// Connections in the human's scopes, by name.
    pub connections: &'a [ConnectionRow],
    /// Sinks in the human's scopes, by name.
    pub sinks: &'a [SinkRow],
    /// How many subscriptions each sink holds (absent: none, it hears nothing).
    pub subscriptions: &'a HashMap<SinkId, i64>,
    /// The human's owner scopes and which they administer.
    pub owners: &'a Owners,
    /// A refused form and why.
    pub refused: Option<(&'a RefusedSinkForm, &'a str)>,
    /// Now, for "3 min ago".
    pub now: DateTime<Utc>,
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

fn refusal(why: &str) -> Markup {
    html! { p.sb-notice.sb-notice-error role="alert" { "Refused, nothing changed: " (why) } }
}

impl SinksView<'_> {
    fn why(&self, which: &RefusedSinkForm) -> Option<&str> {
        self.refused.filter(|(r, _)| *r == which).map(|(_, why)| why)
    }

    fn connection_name(&self, id: ConnectionId) -> &str {
        self.connections.iter().find(|c| c.id == id).map_or("(unknown)", |c| c.name.as_str())
    }
}

/// The Sinks page. Every form carries `csrf`.
pub fn sinks_page(v: &SinksView<'_>, csrf: &CsrfToken) -> Markup {
    let admin_anywhere = v.owners.administered().next().is_some();
    html! {
        h1 { "Sinks" }
        p.sb-lede {
            "Where your notifications go: a dead letter, a quarantined delivery or a rule's notice reaches the "
            "sinks of its owner, within each sink's budget. Connections hold the credentials, sealed; only their "
            "fingerprints are ever shown."
        }
        section #connections aria-labelledby="sb-connections-heading" {
            h2 #sb-connections-heading { "Connections" }
            @if v.connections.is_empty() {
                p.sb-empty { "No connections yet." }
            } @else {
                (connection_table(v, csrf))
            }
            @if admin_anywhere { (connection_form(v, csrf)) }
        }
        section #sinks aria-labelledby="sb-sinks-heading" {
            h2 #sb-sinks-heading { "Sinks" }
            @if v.sinks.is_empty() {
                p.sb-empty { "No sinks yet." }
            } @else {
                (sink_table(v, csrf))
            }
            @if admin_anywhere { (sink_form(v, csrf)) }
        }
    }
}

fn owner_select(v: &SinksView<'_>, id: &str, chosen: &str) -> Markup {
    html! {
        label for=(id) { "Owner" }
        select id=(id) name="owner" {
            @for o in v.owners.administered() {
                option value=(o.reference) selected[o.reference == chosen] {
                    @if o.personal { "you (" (o.reference) ")" } @else { (o.reference) }
                }
            }
        }
    }
}

fn connection_table(v: &SinksView<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Kind" } th scope="col" { "Owner" }
                    th scope="col" { "Destination" } th scope="col" { "Fingerprint" } th scope="col" { "Created" }
                    th scope="col" { "Rotated" } th scope="col" { "Actions" }
                } }
                tbody {
                    @for c in v.connections {
                        tr id=(format!("conn-{}", c.id)) {
                            td data-label="Name" { (c.name) br; (short_id(&c.id.to_string())) }
                            td.sb-nowrap data-label="Kind" { (c.kind.as_str()) }
                            td data-label="Owner" { (v.owners.label(c.scope_id)) }
                            td data-label="Destination" { (destination(c)) }
                            td data-label="Fingerprint" { code { (c.fingerprint) } }
                            td data-label="Created" { (when(v.now, c.created_at)) }
                            td data-label="Rotated" {
                                @match c.rotated_at { Some(at) => { (when(v.now, at)) }, None => { "never" } }
                            }
                            td data-label="Actions" {
                                @if let Some(why) = v.why(&RefusedSinkForm::Connection(c.id)) { (refusal(why)) }
                                @if v.owners.administers(c.scope_id) {
                                    (connection_actions(c, csrf))
                                } @else {
                                    span.sb-hint { "admins only" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Where a connection's secret may go, or that it goes nowhere until an admin binds it.
fn destination(c: &ConnectionRow) -> Markup {
    html! {
        @match (c.bound, &c.base_url) {
            (true, Some(url)) => { code { (redact_url(url)) } }
            _ => {
                span.sb-chip.sb-chip-warn { "unbound" }
                br;
                small.sb-hint {
                    "Its sinks' messages are held: an admin rotates it with its secret and a base URL to send them."
                }
            }
        }
    }
}

fn connection_actions(c: &ConnectionRow, csrf: &CsrfToken) -> Markup {
    let secret_id = format!("rotate-{}", c.id);
    let base_id = format!("rotate-base-{}", c.id);
    html! {
        div.sb-actions {
            // A cairn connection is the only one with a URL of its own; the others are
            // tested through a sink that posts with them.
            @if c.kind == ConnectionKind::Cairn {
                form.sb-inline method="post" action=(paths::connection_test(c.id)) {
                    (csrf.field())
                    button.sb-btn.sb-btn-small type="submit" title="Asks the Cairn who the token is; changes nothing" {
                        "Test"
                    }
                }
            }
            details {
                summary.sb-btn.sb-btn-small { "Rotate…" }
                form.sb-form method="post" action=(paths::connection_rotate(c.id)) {
                    (csrf.field())
                    label for=(secret_id) { "New secret" }
                    input id=(secret_id) type="password" name="secret" required autocomplete="off";
                    label for=(base_id) { "Base URL (empty: unchanged)" }
                    input id=(base_id) type="url" name="base_url" required[!c.bound]
                        placeholder=(c.base_url.as_deref().map(redact_url).unwrap_or_default());
                    span.sb-hint { "Where the secret may be sent; its sinks post there. It moves only with the secret." }
                    button.sb-btn.sb-btn-primary type="submit" { "Replace the secret" }
                }
            }
            details.sb-confirm {
                summary.sb-btn.sb-btn-small.sb-btn-danger { "Delete…" }
                div {
                    p { "Delete this connection? Its secret is gone for good. Refused while a sink posts with it." }
                    form.sb-inline method="post" action=(paths::connection_delete(c.id)) {
                        (csrf.field())
                        button.sb-btn.sb-btn-danger type="submit" { "Yes, delete the connection" }
                    }
                }
            }
        }
    }
}

fn connection_form(v: &SinksView<'_>, csrf: &CsrfToken) -> Markup {
    let (typed, why) = match v.refused {
        Some((RefusedSinkForm::NewConnection(f), why)) => (Some(f), Some(why)),
        _ => (None, None),
    };
    let blank = ConnectionForm::default();
    let f = typed.unwrap_or(&blank);
    html! {
        details.sb-hook-add open[why.is_some()] {
            summary.sb-btn.sb-btn-small { "Add a connection" }
            @if let Some(why) = why { (refusal(why)) }
            form.sb-form method="post" action=(paths::CONNECTIONS) {
                (csrf.field())
                label for="sb-conn-name" { "Name" }
                input #sb-conn-name type="text" name="name" required maxlength="100" value=(f.name);
                label for="sb-conn-kind" { "Kind" }
                select #sb-conn-kind name="kind" {
                    @for k in ConnectionKind::ALL {
                        option value=(k.as_str()) selected[f.kind == k.as_str()] { (k.as_str()) }
                    }
                }
                label for="sb-conn-secret" { "Secret" }
                input #sb-conn-secret type="password" name="secret" required autocomplete="off";
                span.sb-hint {
                    "The Gotify application token, the Apprise config key or URLs, or the cairn token. "
                    "Stored sealed; never shown again — only its fingerprint."
                }
                label for="sb-conn-base" { "Base URL" }
                input #sb-conn-base type="url" name="base_url" required value=(f.base_url);
                span.sb-hint {
                    "Where the secret may be sent: the Gotify server, the Apprise API server or the Cairn. "
                    "Its sinks post here and nowhere else."
                }
                (owner_select(v, "sb-conn-owner", &f.owner))
                button.sb-btn.sb-btn-primary type="submit" { "Store connection" }
            }
        }
    }
}

fn sink_table(v: &SinksView<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Kind" } th scope="col" { "Owner" }
                    th scope="col" { "Base URL" } th scope="col" { "State" } th scope="col" { "Budget" }
                    th scope="col" { "Connection" } th scope="col" { "Actions" }
                } }
                tbody {
                    @for s in v.sinks {
                        tr id=(format!("sink-{}", s.id)) {
                            td data-label="Name" { a href=(paths::sink(s.id)) { (s.name) } br; (short_id(&s.id.to_string())) }
                            td.sb-nowrap data-label="Kind" {
                                span.sb-kind {
                                    (s.kind.as_str())
                                    @if let Some(mode) = s.apprise_mode { " (" (mode.as_str()) ")" }
                                }
                            }
                            td data-label="Owner" { (v.owners.label(s.scope_id)) }
                            td data-label="Base URL" { code { (redact_url(&s.base_url)) } }
                            td data-label="State" {
                                (enabled_chip(s.enabled))
                                @if v.subscriptions.get(&s.id).copied().unwrap_or(0) == 0 { " " (hears_nothing_chip()) }
                            }
                            td data-label="Budget" { (s.budget_per_hour) " an hour, burst " (s.burst) }
                            td data-label="Connection" { (v.connection_name(s.connection_id)) }
                            td data-label="Actions" {
                                @if let Some(why) = v.why(&RefusedSinkForm::Sink(s.id)) { (refusal(why)) }
                                @if v.owners.administers(s.scope_id) {
                                    (sink_actions(s, csrf))
                                } @else {
                                    a href=(paths::sink(s.id)) { "Deliveries" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Characters of an id the lists show (`sk_` and 8 hex digits): enough to tell rows
/// apart; the whole id is in the title and on the sink's own page.
const SHORT_ID_CHARS: usize = 11;

/// An id as a list shows it: one short line that never wraps, the full id in its title.
pub fn short_id(id: &str) -> Markup {
    let short: String = id.chars().take(SHORT_ID_CHARS).collect();
    let cut = short.len() < id.len();
    html! { small.sb-hint { code.sb-id title=(id) { (short) @if cut { "…" } } } }
}

/// The mark of a sink with no subscription: its test send may pass, and still nothing
/// it is meant for reaches it.
pub fn hears_nothing_chip() -> Markup {
    html! {
        span.sb-chip.sb-chip-warn title="No subscription: no dead letter or other event reaches this sink until its subscriptions name some." {
            "hears nothing"
        }
    }
}

/// On or off.
pub fn enabled_chip(enabled: bool) -> Markup {
    if enabled {
        html! { span.sb-chip.sb-chip-healthy { "on" } }
    } else {
        html! { span.sb-chip { "off" } }
    }
}

fn sink_actions(s: &SinkRow, csrf: &CsrfToken) -> Markup {
    let (budget_id, burst_id) = (format!("budget-{}", s.id), format!("burst-{}", s.id));
    html! {
        div.sb-actions {
            form.sb-inline method="post" action=(paths::sink_test(s.id)) {
                (csrf.field())
                button.sb-btn.sb-btn-small type="submit" { "Send test" }
            }
            form.sb-inline method="post" action=(paths::sink_update(s.id)) {
                (csrf.field())
                @if s.enabled {
                    input type="hidden" name="enabled" value="false";
                    button.sb-btn.sb-btn-small type="submit" { "Disable" }
                } @else {
                    input type="hidden" name="enabled" value="true";
                    button.sb-btn.sb-btn-small type="submit" { "Enable" }
                }
            }
            a.sb-btn.sb-btn-small href=(paths::sink(s.id)) { "Subscriptions & deliveries" }
            details {
                summary.sb-btn.sb-btn-small { "Budget…" }
                form.sb-form method="post" action=(paths::sink_update(s.id)) {
                    (csrf.field())
                    label for=(budget_id) { "Messages per hour" }
                    input id=(budget_id) type="number" name="budget_per_hour" min="1" value=(s.budget_per_hour);
                    label for=(burst_id) { "Burst" }
                    input id=(burst_id) type="number" name="burst" min="1" value=(s.burst);
                    button.sb-btn.sb-btn-primary type="submit" { "Save budget" }
                }
            }
            details.sb-confirm {
                summary.sb-btn.sb-btn-small.sb-btn-danger { "Delete…" }
                div {
                    p { "Delete this sink and its subscriptions? Nothing more is sent to it." }
                    form.sb-inline method="post" action=(paths::sink_delete(s.id)) {
                        (csrf.field())
                        button.sb-btn.sb-btn-danger type="submit" { "Yes, delete the sink" }
                    }
                }
            }
        }
    }
}

fn sink_form(v: &SinksView<'_>, csrf: &CsrfToken) -> Markup {
    let (typed, why) = match v.refused {
        Some((RefusedSinkForm::NewSink(f), why)) => (Some(f), Some(why)),
        _ => (None, None),
    };
    let blank = SinkForm::default();
    let f = typed.unwrap_or(&blank);
    let usable: Vec<&ConnectionRow> = v
        .connections
        .iter()
        .filter(|c| v.owners.administers(c.scope_id) && c.kind != ConnectionKind::Cairn && c.bound)
        .collect();
    html! {
        details.sb-hook-add open[why.is_some()] {
            summary.sb-btn.sb-btn-small { "Add a sink" }
            @if let Some(why) = why { (refusal(why)) }
            @if usable.is_empty() {
                p.sb-hint { "Store a gotify or apprise connection (bound to its destination) first; a sink posts with one." }
            } @else {
                form.sb-form method="post" action=(paths::SINKS) {
                    (csrf.field())
                    label for="sb-sink-name" { "Name" }
                    input #sb-sink-name type="text" name="name" required maxlength="100" value=(f.name);
                    label for="sb-sink-kind" { "Kind" }
                    select #sb-sink-kind name="kind" {
                        @for k in SinkKind::ALL {
                            option value=(k.as_str()) selected[f.kind == k.as_str()] { (k.as_str()) }
                        }
                    }
                    label for="sb-sink-conn" { "Connection" }
                    select #sb-sink-conn name="connection_id" {
                        @for c in &usable {
                            option value=(c.id.to_string()) selected[f.connection_id == c.id.to_string()] {
                                (c.name) " (" (c.kind.as_str()) ", " (v.owners.label(c.scope_id)) ", "
                                (c.base_url.as_deref().map(redact_url).unwrap_or_default()) ")"
                            }
                        }
                    }
                    span.sb-hint { "The sink posts to its connection's destination." }
                    label for="sb-sink-mode" { "Apprise mode" }
                    select #sb-sink-mode name="apprise_mode" {
                        option value="" selected[f.apprise_mode.is_empty()] { "— (gotify, or apprise's default: key)" }
                        @for m in AppriseMode::ALL {
                            option value=(m.as_str()) selected[f.apprise_mode == m.as_str()] { (m.as_str()) }
                        }
                    }
                    (owner_select(v, "sb-sink-owner", &f.owner))
                    span.sb-hint { "The connection must be the same owner's and kind's." }
                    button.sb-btn.sb-btn-primary type="submit" { "Add sink" }
                }
            }
        }
    }
}

/// Everything one sink's page shows.
#[derive(Debug, Clone, Copy)]
pub struct SinkPage<'a> {
    /// The sink.
    pub sink: &'a SinkRow,
    /// Its owner, as [`Owners::label`] reads.
    pub owner: &'a str,
    /// Its connection's name.
    pub connection: &'a str,
    /// Whether the human administers its scope (may save subscriptions).
    pub may_admin: bool,
    /// Whether it holds no subscription (it hears nothing).
    pub hears_nothing: bool,
    /// The editor's contents (the saved subscriptions unless mid-edit).
    pub editor: &'a str,
    /// Why the last save was refused.
    pub error: Option<&'a str>,
    /// The send log, newest first.
    pub sends: &'a [SendRow],
    /// Now, for "3 min ago".
    pub now: DateTime<Utc>,
}

/// An example subscription set, shown beside the editor.
pub const EXAMPLE_SUBSCRIPTIONS: &str = r#"{"subscriptions": [
  {"events": ["todo.dead_lettered", "relay.exhausted"],
   "queues": ["builds"], "min_severity": "high"},
  {"events": ["delivery.quarantined", "rule.notify"], "include_excerpt": false}
]}"#;

/// One sink's page.
pub fn sink_page(p: &SinkPage<'_>, csrf: &CsrfToken) -> Markup {
    let s = p.sink;
    html! {
        p.sb-hint { a href=(paths::SINKS) { "← Sinks" } }
        h1 { "Sink " (s.name) }
        dl.sb-facts {
            dt { "Id" } dd { code { (s.id) } }
            dt { "Owner" } dd { (p.owner) }
            dt { "Kind" } dd { (s.kind.as_str()) @if let Some(m) = s.apprise_mode { " (" (m.as_str()) ")" } }
            dt { "Base URL" } dd { code { (redact_url(&s.base_url)) } }
            dt { "Connection" } dd { (p.connection) }
            dt { "State" } dd { (enabled_chip(s.enabled)) @if p.hears_nothing { " " (hears_nothing_chip()) } }
            dt { "Budget" } dd { (s.budget_per_hour) " an hour, burst " (s.burst) }
            dt { "Added" } dd { (when(p.now, s.created_at)) }
        }
        section #subscriptions aria-labelledby="sb-subs-heading" {
            h2 #sb-subs-heading { "Subscriptions" }
            @if let Some(why) = p.error { (refusal(why)) }
            @if p.may_admin {
                form.sb-form.sb-form-wide method="post" action=(paths::subscriptions(s.id)) {
                    (csrf.field())
                    label for="sb-subs" { "Subscriptions (JSON)" }
                    textarea #sb-subs name="subscriptions" rows="14" spellcheck="false" aria-describedby="sb-subs-hint" { (p.editor) }
                    (subscriptions_hint())
                    div.sb-actions { button.sb-btn.sb-btn-primary type="submit" { "Save subscriptions" } }
                }
            } @else {
                pre { code { (p.editor) } }
                p.sb-hint { "Only an admin of this sink's owner may change its subscriptions." }
            }
        }
        section #deliveries aria-labelledby="sb-deliveries-heading" {
            h2 #sb-deliveries-heading { "Delivery log" }
            (send_log(p.sends, p.now))
        }
    }
}

fn subscriptions_hint() -> Markup {
    html! {
        details #sb-subs-hint .sb-hint {
            summary { "The subscription format" }
            p { "Each subscription names " code { "events" } " (" code { "todo.dead_lettered" } ", " code { "relay.exhausted" } ", "
                code { "delivery.quarantined" } ", " code { "rule.notify" } ", " code { "digest" } ", " code { "agent.notify" }
                ") and may filter by " code { "queues" } ", " code { "endpoint_ids" } " and " code { "webhook_ids" }
                " (of this sink's owner), " code { "min_severity" } " (low, normal, high) and opt into "
                code { "include_excerpt" } ". An empty list subscribes to nothing." }
            pre { code { (EXAMPLE_SUBSCRIPTIONS) } }
        }
    }
}

/// The send log: newest first, each row's event, subject, status and attempts.
pub fn send_log(rows: &[SendRow], now: DateTime<Utc>) -> Markup {
    html! {
        @if rows.is_empty() {
            p.sb-empty { "Nothing has been sent to this sink yet." }
        } @else {
            div.sb-table-wrap {
                table.sb-table.sb-stack {
                    thead { tr {
                        th scope="col" { "Event" } th scope="col" { "Subject" } th scope="col" { "Status" }
                        th scope="col" { "Count" } th scope="col" { "Attempts" } th scope="col" { "Last error" }
                        th scope="col" { "Created" } th scope="col" { "Sent" }
                    } }
                    tbody {
                        @for d in rows {
                            tr {
                                td data-label="Event" { code { (d.event.as_str()) } }
                                td data-label="Subject" {
                                    @match (d.todo_id, d.endpoint_id) {
                                        (Some(todo), _) => { a href=(todo_paths::todo(todo)) { code { (todo) } } },
                                        (None, Some(ep)) => { code { (ep) } },
                                        (None, None) => { span.sb-hint { "—" } },
                                    }
                                }
                                td data-label="Status" {
                                    span class=(format!("sb-chip sb-chip-{}", d.status.as_str())) { (d.status.as_str()) }
                                }
                                td data-label="Count" { (d.count) }
                                td data-label="Attempts" { (d.attempts) }
                                td data-label="Last error" {
                                    @match &d.last_error { Some(e) => { code { (e) } }, None => { "—" } }
                                }
                                td data-label="Created" { (when(now, d.created_at)) }
                                td data-label="Sent" {
                                    @match d.sent_at { Some(at) => { (when(now, at)) }, None => { "—" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
