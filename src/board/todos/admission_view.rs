//! The Todos view's admission panel: every queue with a budget (paused or running, its
//! todos in flight and its claims this hour against the caps), a pause or resume button
//! and a small limits form for the queues the human administers, and a form to budget
//! another queue. Every form posts to [`paths::ADMISSION`], which calls the same service
//! as the operator API's `PUT …/queues/{queue}/admission`.

use maud::{Markup, html};

use super::paths::{self, ADMISSION_ANCHOR, FILTER_FIELD};
use crate::board::csrf::CsrfToken;
use crate::db::models::EndpointRow;
use crate::domain::pills::Pill;
use crate::store::admission::AdmissionRow;
use crate::store::tenancy::Reach;

/// What the panel shows.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionPanel<'a> {
    /// Budgets in the human's scopes, by endpoint and queue.
    pub budgets: &'a [AdmissionRow],
    /// Active endpoints the human administers (the new budget's choices).
    pub endpoints: &'a [EndpointRow],
    /// Who is looking (which budgets they may change).
    pub reach: &'a Reach,
    /// The list to come back to.
    pub pill: Pill,
    /// Its search.
    pub search: &'a str,
}

/// The panel; every form carries the CSRF token.
pub fn admission_panel(v: &AdmissionPanel<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        section.sb-admission #(ADMISSION_ANCHOR) aria-labelledby="sb-admission-heading" {
            h2 #sb-admission-heading { "Queue admission" }
            p.sb-hint {
                "Pause a queue, or cap how many of its todos agents hold at once and how many they may claim per hour "
                "(UTC). A claim a budget refuses is deferred, not failed: the agent hears why and asks again later."
            }
            @if v.budgets.is_empty() {
                p.sb-empty { "No queue has a budget: every queue admits every claim." }
            } @else {
                (budget_table(v, csrf))
            }
            @if !v.endpoints.is_empty() { (new_budget_form(v, csrf)) }
        }
    }
}

/// The fields every form of the panel shares: the token, the queue, the way back.
fn common(v: &AdmissionPanel<'_>, csrf: &CsrfToken, endpoint: Option<&str>, queue: Option<&str>) -> Markup {
    html! {
        (csrf.field())
        input type="hidden" name=(FILTER_FIELD) value=(v.pill.as_str());
        input type="hidden" name="q" value=(v.search);
        @if let Some(e) = endpoint { input type="hidden" name="endpoint_id" value=(e); }
        @if let Some(q) = queue { input type="hidden" name="queue" value=(q); }
    }
}

fn of_cap(used: i64, cap: Option<i32>) -> Markup {
    html! {
        @match cap {
            Some(cap) => { (used) " of " (cap) }
            None => { (used) " " small.sb-hint { "(no cap)" } }
        }
    }
}

fn budget_table(v: &AdmissionPanel<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        div.sb-table-wrap {
            table.sb-table.sb-stack {
                caption.sb-visually-hidden { "Queues with an admission budget" }
                thead {
                    tr {
                        th scope="col" { "Endpoint" }
                        th scope="col" { "Queue" }
                        th scope="col" { "State" }
                        th scope="col" { "In flight" }
                        th scope="col" { "Claims this hour" }
                        th scope="col" { span.sb-visually-hidden { "Actions" } }
                    }
                }
                tbody {
                    @for b in v.budgets {
                        tr {
                            td data-label="Endpoint" { (b.endpoint_slug) }
                            td data-label="Queue" { code { (b.queue) } }
                            td data-label="State" {
                                @if b.paused { span.sb-chip.sb-chip-held { "paused" } }
                                @else { span.sb-chip.sb-chip-healthy { "admitting" } }
                            }
                            td.sb-num data-label="In flight" { (of_cap(b.in_flight, b.max_in_flight)) }
                            td.sb-num data-label="Claims this hour" { (of_cap(i64::from(b.claims_this_hour), b.per_hour)) }
                            td data-label="Actions" {
                                @if v.reach.is_admin_of(b.scope_id) { (budget_actions(v, b, csrf)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn budget_actions(v: &AdmissionPanel<'_>, b: &AdmissionRow, csrf: &CsrfToken) -> Markup {
    let endpoint = b.endpoint_id.to_string();
    let key = format!("{}-{}", b.endpoint_id, b.queue);
    let (max_id, hour_id) = (format!("max-{key}"), format!("hour-{key}"));
    let label = format!("{} on {}", b.queue, b.endpoint_slug);
    html! {
        div.sb-actions {
            form.sb-inline method="post" action=(paths::ADMISSION) {
                (common(v, csrf, Some(&endpoint), Some(&b.queue)))
                @if b.paused {
                    input type="hidden" name="paused" value="false";
                    button.sb-btn.sb-btn-small type="submit" aria-label=(format!("Resume {label}")) { "Resume" }
                } @else {
                    input type="hidden" name="paused" value="true";
                    button.sb-btn.sb-btn-small type="submit" aria-label=(format!("Pause {label}")) { "Pause" }
                }
            }
            details {
                summary.sb-btn.sb-btn-small { "Limits…" }
                form.sb-form method="post" action=(paths::ADMISSION) {
                    (common(v, csrf, Some(&endpoint), Some(&b.queue)))
                    (limit_inputs(&max_id, &hour_id, b.max_in_flight, b.per_hour))
                    button.sb-btn.sb-btn-primary type="submit" { "Save limits" }
                }
            }
        }
    }
}

fn limit_inputs(max_id: &str, hour_id: &str, max: Option<i32>, per_hour: Option<i32>) -> Markup {
    html! {
        label for=(max_id) { "Most claimed at once" }
        input id=(max_id) type="number" name="max_in_flight" min="1" max="10000" value=[max]
            placeholder="no cap";
        label for=(hour_id) { "Most claims per hour" }
        input id=(hour_id) type="number" name="per_hour" min="1" max="1000000" value=[per_hour]
            placeholder="no cap";
        p.sb-hint { "Leave a field empty for no cap." }
    }
}

fn new_budget_form(v: &AdmissionPanel<'_>, csrf: &CsrfToken) -> Markup {
    html! {
        details {
            summary.sb-btn.sb-btn-small { "Budget a queue…" }
            form.sb-form method="post" action=(paths::ADMISSION) {
                (common(v, csrf, None, None))
                label for="sb-admission-endpoint" { "Endpoint" }
                select #sb-admission-endpoint name="endpoint_id" {
                    @for e in v.endpoints { option value=(e.id.to_string()) { (e.slug) } }
                }
                label for="sb-admission-queue" { "Queue" }
                input #sb-admission-queue type="text" name="queue" required maxlength="64"
                    pattern="[a-z0-9][a-z0-9._\\-]{0,63}" autocomplete="off";
                (limit_inputs("sb-admission-max", "sb-admission-hour", None, None))
                label { input type="checkbox" name="paused" value="true"; " Paused" }
                button.sb-btn.sb-btn-primary type="submit" { "Save budget" }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{EndpointId, HumanId, ScopeId};
    use crate::domain::todo_state::TeamRole;
    use crate::store::tenancy::ScopeGrant;

    fn row(scope: ScopeId, paused: bool) -> AdmissionRow {
        AdmissionRow {
            endpoint_id: EndpointId::new(),
            endpoint_slug: "builder".into(),
            scope_id: scope,
            queue: "<builds>".into(),
            paused,
            max_in_flight: Some(3),
            per_hour: None,
            in_flight: 2,
            claims_this_hour: 7,
            updated_at: chrono::Utc::now(),
        }
    }

    fn reach(admin_of: ScopeId, member_of: ScopeId) -> Reach {
        Reach {
            human: HumanId::new(),
            personal: admin_of,
            scopes: vec![
                ScopeGrant { scope: admin_of, role: TeamRole::Admin },
                ScopeGrant { scope: member_of, role: TeamRole::Member },
            ],
        }
    }

    #[test]
    fn an_admin_gets_pause_resume_and_limits_and_a_member_only_sees_the_budget() {
        let (mine, theirs) = (ScopeId::new(), ScopeId::new());
        let budgets = [row(mine, true), row(theirs, false)];
        let who = reach(mine, theirs);
        let v = AdmissionPanel { budgets: &budgets, endpoints: &[], reach: &who, pill: Pill::Dead, search: "" };
        let html = admission_panel(&v, &CsrfToken::random()).into_string();
        assert_eq!(html.matches(r#"name="paused" value="false""#).count(), 1, "resume for the paused one: {html}");
        assert!(!html.contains(r#"name="paused" value="true""#), "no pause for the member's row: {html}");
        assert_eq!(html.matches("Save limits").count(), 1);
        assert!(html.contains("2 of 3") && html.contains("7 "), "{html}");
        assert!(html.contains("&lt;builds&gt;") && !html.contains("<builds>"), "queue names are escaped");
        assert!(!html.contains("Budget a queue"), "no endpoint to budget, no form");
    }
}
