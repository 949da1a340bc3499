//! The Webhooks list with the create form, and the page that shows a new webhook's
//! credentials once.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::form::WebhookForm;
use super::paths;
use crate::board::csrf::CsrfToken;
use crate::board::endpoints::paths as endpoint_paths;
use crate::board::todos::format::{ago, machine, utc};
use crate::db::models::EndpointRow;
use crate::domain::ids::EndpointId;
use crate::intake::trusted_senders::{TrustedActors, source_has_actors};
use crate::intake::verify::SourceType;
use crate::store::webhooks::WebhookRow;

/// How a webhook's deliveries are verified, as a chip.
pub fn verification(w: &WebhookRow) -> Markup {
    html! {
        @if !w.source_type.is_signed() { span.sb-chip.sb-chip-token title="the ingest token is the only credential" { "token only" } }
        @else if w.unverified { span.sb-chip.sb-chip-open title="a signed source that cannot sign: trust mode open" { "unverified" } }
        @else { span.sb-chip.sb-chip-signed { "signed" } }
    }
}

/// Who the webhook trusts to put work on a queue, in words.
pub fn trusted(w: &WebhookRow) -> Markup {
    let policy = w.trusted_actors.as_ref().and_then(|v| serde_json::from_value::<TrustedActors>(v.clone()).ok());
    html! {
        @if !source_has_actors(w.source_type.as_str()) { span.sb-muted { "no actors (every sender)" } }
        @else {
            @match policy {
                Some(TrustedActors::AllowAll { allow_all: true }) => { "every sender" },
                Some(TrustedActors::Logins { logins }) if !logins.is_empty() => {
                    @for (i, l) in logins.iter().enumerate() { @if i > 0 { ", " } code { (l) } }
                },
                _ => span.sb-muted { "no one (every delivery is quarantined)" },
            }
        }
    }
}

/// The endpoint a webhook delivers to: its slug linked, or its id when it is not
/// among `endpoints`.
pub fn endpoint_link(endpoints: &[EndpointRow], id: EndpointId) -> Markup {
    html! {
        @match endpoints.iter().find(|e| e.id == id) {
            Some(e) => a href=(endpoint_paths::endpoint(e.id)) { code { (e.slug) } },
            None => code { (id) },
        }
    }
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

/// The list of webhooks and, below it, the create form (`error`: why the last create
/// was refused). `endpoints` are the human's (to name them); the form offers `usable`
/// (the active ones in scopes they administer).
pub fn webhooks_page(
    rows: &[WebhookRow],
    endpoints: &[EndpointRow],
    usable: &[&EndpointRow],
    form: &WebhookForm,
    error: Option<&str>,
    csrf: &CsrfToken,
    now: DateTime<Utc>,
) -> Markup {
    html! {
        h1 { "Webhooks" }
        p.sb-lede { "Each webhook turns a provider's deliveries into todos on one endpoint's queues, routed by its rules." }
        @if rows.is_empty() {
            p.sb-empty { "No webhooks yet." }
        } @else {
            div.sb-table-wrap {
                table.sb-table.sb-stack {
                    thead { tr {
                        th { "Webhook" } th { "Endpoint" } th { "Source" } th { "Queue" } th { "Verified" }
                        th { "Trusted actors" } th.sb-num { "Refused" } th { "Created" }
                    } }
                    tbody {
                        @for w in rows {
                            tr {
                                td data-label="Webhook" { a href=(paths::webhook(w.id)) { code { (w.id) } } }
                                td data-label="Endpoint" { (endpoint_link(endpoints, w.endpoint_id)) }
                                td data-label="Source" { (w.source_type.as_str()) }
                                td data-label="Queue" { span.sb-chip.sb-chip-queue { (w.queue) } }
                                td data-label="Verified" { (verification(w)) }
                                td data-label="Trusted actors" { (trusted(w)) }
                                td data-label="Refused" .sb-num title="deliveries refused: bad or missing signature, stale timestamp" { (w.refused_deliveries) }
                                td data-label="Created" .sb-nowrap { (when(now, w.created_at)) }
                            }
                        }
                    }
                }
            }
        }
        (create_form(usable, form, error, csrf))
    }
}

fn create_form(usable: &[&EndpointRow], form: &WebhookForm, error: Option<&str>, csrf: &CsrfToken) -> Markup {
    html! {
        section #create aria-labelledby="sb-create-heading" {
            h2 #sb-create-heading { "Create a webhook" }
            @if let Some(why) = error {
                p.sb-notice.sb-notice-error role="alert" { "Not created: " (why) }
            }
            @if usable.is_empty() {
                p.sb-empty { "A webhook delivers to an active endpoint you administer. "
                    a href=(endpoint_paths::ENDPOINTS) { "Vend one first" } "." }
            } @else {
                form.sb-form method="post" action=(paths::WEBHOOKS) {
                    (csrf.field())
                    label for="sb-endpoint" { "Endpoint" }
                    select #sb-endpoint name="endpoint_id" {
                        @for e in usable {
                            @let id = e.id.to_string();
                            option value=(id) selected[id == form.endpoint_id] { (e.slug) }
                        }
                    }
                    label for="sb-source" { "Source type" }
                    select #sb-source name="source_type" aria-describedby="sb-source-hint" {
                        @for s in SourceType::ALL {
                            option value=(s.as_str()) selected[s.as_str() == form.source_type] { (s.as_str()) }
                        }
                    }
                    p #sb-source-hint .sb-hint { "generic: the ingest URL is the only credential. The others verify a signature with a secret Switchboard generates." }
                    label for="sb-queue" { "Queue" }
                    input #sb-queue type="text" name="queue" value=(form.queue) required maxlength="63" autocomplete="off" spellcheck="false";
                    p.sb-hint { "Where deliveries that match no rule go." }
                    label for="sb-attempts" { "Max attempts (optional)" }
                    input #sb-attempts type="number" name="max_attempts" value=(form.max_attempts) min="1" max="100" inputmode="numeric";
                    p.sb-hint { "1–100; default 5." }
                    label for="sb-logins" { "Trusted actors (GitHub, Gitea)" }
                    textarea #sb-logins name="logins" rows="3" spellcheck="false" aria-describedby="sb-logins-hint" { (form.logins) }
                    p #sb-logins-hint .sb-hint { "Sender logins, one per line. None: every delivery waits in quarantine for you to release it." }
                    div.sb-check {
                        input #sb-allow-all type="checkbox" name="allow_all" value="on" checked[form.allow_all.is_some()];
                        label for="sb-allow-all" { "Trust every sender" }
                    }
                    div.sb-check {
                        input #sb-unverified type="checkbox" name="unverified" value="on" checked[form.unverified.is_some()];
                        label for="sb-unverified" { "Unverified: the provider cannot sign (deliveries never ring or announce)" }
                    }
                    button.sb-btn.sb-btn-primary type="submit" { "Create webhook" }
                }
            }
        }
    }
}

/// The credentials of a webhook just created: shown on this page only.
pub struct Created<'a> {
    /// The webhook.
    pub webhook: &'a WebhookRow,
    /// Where the provider posts.
    pub ingest_url: &'a str,
    /// The ingest token (the URL's last segment).
    pub ingest_token: &'a str,
    /// The signing secret, for a signed source.
    pub signing_secret: Option<&'a str>,
}

/// The answer to a create: the ingest URL, ingest token and signing secret, once.
pub fn created_page(c: &Created<'_>) -> Markup {
    html! {
        h1 { "Webhook created" }
        div.sb-notice.sb-notice-warn role="status" {
            strong { "Copy these now." }
            " They are shown on this page only, once: Switchboard cannot show them again, and reloading will not bring them back."
        }
        p.sb-label { "Ingest URL (paste into the provider's webhook settings)" }
        code #sb-ingest-url .sb-token { (c.ingest_url) }
        p.sb-label { "Ingest token" }
        code #sb-ingest-token .sb-token { (c.ingest_token) }
        @if let Some(secret) = c.signing_secret {
            p.sb-label { "Signing secret (the provider signs deliveries with it)" }
            code #sb-secret .sb-token { (secret) }
        }
        p.sb-hint { "Select a value to copy it. Anyone holding the ingest URL can post to it; keep it private." }
        p.sb-actions {
            a.sb-btn href=(paths::webhook(c.webhook.id)) { "Set up its rules" }
            a.sb-btn.sb-btn-quiet href=(paths::WEBHOOKS) { "Back to webhooks" }
        }
    }
}
