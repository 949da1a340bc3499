//! One webhook's page: its facts, its routing rules in an editor (save, or try them on
//! a sample delivery without saving), and the dry run's answer.

use chrono::{DateTime, Utc};
use maud::{Markup, html};

use super::form::RulesForm;
use super::paths;
use super::view::{endpoint_link, trusted, verification};
use crate::board::csrf::CsrfToken;
use crate::board::todos::format::{ago, machine, utc};
use crate::db::models::EndpointRow;
use crate::service::webhooks::RuleTestAnswer;
use crate::store::webhooks::WebhookRow;

/// An example rule set in the SPEC's format, shown beside the editor.
pub const EXAMPLE_RULES: &str = r#"{"rules": [
  {"id": "to-builds",
   "match": {"all": [{"pointer": "/kind", "equals": "build"},
                     {"header": "X-Event", "glob": "push*"}]},
   "action": {"queue": "builds"}},
  {"id": "drop-pings",
   "match": {"any": [{"header": "X-Event", "equals": "ping"}]},
   "action": {"drop": true}}
]}"#;

/// Everything a webhook's page shows.
#[derive(Debug, Clone, Copy)]
pub struct WebhookPage<'a> {
    /// The webhook.
    pub webhook: &'a WebhookRow,
    /// The human's endpoints (to name the webhook's).
    pub endpoints: &'a [EndpointRow],
    /// Its owner, as [`crate::board::owners::Owners::label`] reads.
    pub owner: &'a str,
    /// Whether the human may save its rules (admin of its scope).
    pub may_admin: bool,
    /// The editor's contents: the rules (the saved ones, pretty, unless the human is
    /// mid-edit) and the sample delivery.
    pub form: &'a RulesForm,
    /// Why the last save or dry run was refused.
    pub error: Option<&'a str>,
    /// The dry run's answer, when one ran.
    pub result: Option<&'a RuleTestAnswer>,
    /// Now, for "3 min ago".
    pub now: DateTime<Utc>,
}

/// The saved rules as the editor shows them (pretty JSON).
pub fn saved_rules_text(w: &WebhookRow) -> String {
    serde_json::to_string_pretty(&w.rules).unwrap_or_else(|_| w.rules.to_string())
}

/// How many rules the saved set holds.
pub fn rule_count(w: &WebhookRow) -> usize {
    w.rules.get("rules").and_then(|r| r.as_array()).map_or(0, Vec::len)
}

fn when(now: DateTime<Utc>, at: DateTime<Utc>) -> Markup {
    html! { time datetime=(machine(at)) title=(utc(at)) { (ago(now, at)) } }
}

/// A webhook's page.
pub fn webhook_page(p: &WebhookPage<'_>, csrf: &CsrfToken) -> Markup {
    let w = p.webhook;
    html! {
        p.sb-hint { a href=(paths::WEBHOOKS) { "← Webhooks" } }
        h1 { "Webhook " code { (w.id) } }
        dl.sb-facts {
            dt { "Endpoint" } dd { (endpoint_link(p.endpoints, w.endpoint_id)) }
            dt { "Owner" } dd { (p.owner) }
            dt { "Source" } dd { (w.source_type.as_str()) " " (verification(w)) }
            dt { "Default queue" } dd { span.sb-chip.sb-chip-queue { (w.queue) } }
            dt { "Max attempts" } dd { (w.max_attempts) }
            dt { "Trusted actors" } dd { (trusted(w)) }
            dt { "Refused deliveries" } dd { (w.refused_deliveries) }
            dt { "Ingest token" } dd { code { (w.ingest_token_prefix) "…" } }
            @if let Some(fp) = &w.secret_fingerprint { dt { "Secret" } dd { code { (fp) } span.sb-muted { " (fingerprint)" } } }
            dt { "Created" } dd { (when(p.now, w.created_at)) }
        }
        (rules_editor(p, csrf))
    }
}

fn rules_editor(p: &WebhookPage<'_>, csrf: &CsrfToken) -> Markup {
    let w = p.webhook;
    html! {
        section #rules aria-labelledby="sb-rules-heading" {
            h2 #sb-rules-heading { "Routing rules" }
            p.sb-hint {
                "Saved: " (rule_count(w)) " rules. In order, the first match wins; a delivery that matches none goes to "
                code { (w.queue) } ". A rule that faults quarantines the delivery."
            }
            @if let Some(why) = p.error {
                p.sb-notice.sb-notice-error role="alert" { "Refused: " (why) }
            }
            @if let Some(answer) = p.result { (dry_run_answer(answer)) }
            form.sb-form.sb-form-wide method="post" action=(paths::rules(w.id)) {
                (csrf.field())
                label for="sb-rules" { "Rules (JSON)" }
                textarea #sb-rules name="rules" rows="16" spellcheck="false" aria-describedby="sb-rules-hint" { (p.form.rules) }
                details #sb-rules-hint .sb-hint {
                    summary { "The rule format" }
                    p { "A condition names " code { "pointer" } " (into the JSON body) or " code { "header" } " and one of "
                        code { "equals" } ", " code { "glob" } ", " code { "exists" } "; " code { "all" } " / " code { "any" }
                        " nest. An action has one of " code { "queue" } ", " code { "drop: true" } ", " code { "quarantine: true" } "." }
                    pre { code { (EXAMPLE_RULES) } }
                }
                fieldset.sb-sample {
                    legend { "Dry run: a sample delivery" }
                    label for="sb-headers" { "Headers, one " code { "Name: value" } " per line" }
                    textarea #sb-headers name="headers" rows="3" spellcheck="false" placeholder="X-Event: push" { (p.form.headers) }
                    label for="sb-body" { "JSON body" }
                    textarea #sb-body name="body" rows="6" spellcheck="false" placeholder="{\"kind\": \"build\"}" { (p.form.body) }
                }
                div.sb-actions {
                    button.sb-btn type="submit" formaction=(paths::rules_test(w.id)) { "Dry run (saves nothing)" }
                    @if p.may_admin {
                        button.sb-btn.sb-btn-primary type="submit" { "Save rules" }
                    }
                }
                p.sb-hint { "The dry run tries the rules in the editor, saved or not (empty: the saved rules)." }
            }
        }
    }
}

/// What a dry run found: the rule that matched and what would happen.
pub fn dry_run_answer(a: &RuleTestAnswer) -> Markup {
    html! {
        div.sb-notice.sb-notice-done.sb-dry-run role="status" {
            strong { "Dry run: " }
            @match (a.outcome.as_str(), &a.matched_rule) {
                ("default_queue", _) => { "no rule matched; the delivery would go to the default queue " },
                ("fault", Some(rule)) => { "rule " code { (rule) } " faulted; the delivery would be quarantined " },
                (_, Some(rule)) => { "rule " code { (rule) } " matched; " },
                _ => {},
            }
            @match a.outcome.as_str() {
                "queue" => { "action " strong { "queue" } " → " },
                "drop" => { "action " strong { "drop" } ": the delivery would be recorded and no todo made." },
                "quarantine" => { "action " strong { "quarantine" } " → " },
                _ => {},
            }
            @if let Some(q) = &a.queue { span.sb-chip.sb-chip-queue { (q) } }
            @if let Some(why) = &a.fault { " (" (why) ")" }
        }
    }
}
