//! The hooks page bodies, rendered from plain rows.

use chrono::{DateTime, Duration, Utc};
use maud::{Markup, html};

use super::view::*;
use crate::db::models::EndpointRow;
use crate::domain::ids::{EndpointId, HookId, ScopeId};
use crate::domain::todo_state::{EndpointState, Presence};
use crate::hooks::rules::hook::HookDisabledReason;
use crate::hooks::statements::HookRow;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
}

fn csrf() -> Markup {
    html! { input type="hidden" name="csrf_token" value="tok"; }
}

fn endpoint(slug: &str) -> EndpointRow {
    EndpointRow {
        id: EndpointId::new(),
        scope_id: ScopeId::new(),
        slug: slug.into(),
        token_prefix: "sbe_abc".into(),
        grants: vec![],
        state: EndpointState::Active,
        revoked_at: None,
        expires_at: None,
        default_lease_seconds: None,
        presence: Presence::Out,
        presence_changed_at: None,
        created_at: now() - Duration::days(3),
    }
}

fn hook(endpoint: EndpointId, url: &str) -> HookRow {
    HookRow {
        id: HookId::new(),
        endpoint_id: endpoint,
        url: url.into(),
        queues: vec![],
        enabled: true,
        disabled_reason: None,
        previous_valid_until: None,
        consecutive_failures: 0,
        last_status: None,
        last_error: None,
        last_attempt_at: None,
        created_at: now() - Duration::days(1),
        updated_at: now() - Duration::days(1),
    }
}

fn section(hooks: Vec<HookRow>, ep: EndpointRow, may_change: bool) -> EndpointHooks {
    EndpointHooks { endpoint: ep, hooks, may_change }
}

fn render(endpoints: &[EndpointHooks], accepting: bool, refused: Option<&RefusedCreate>) -> String {
    let v = HooksView { endpoints, accepting, max: 5, now: now(), refused };
    hooks_page(&v, &csrf()).into_string()
}

#[test]
fn a_hook_is_listed_under_its_endpoint_with_its_query_redacted_and_the_ceiling_counted() {
    let ep = endpoint("ci-runner");
    let mut h = hook(ep.id, "https://203.0.113.10/in?token=s3cret");
    h.queues = vec!["builds".into(), "deploys".into()];
    let html = render(&[section(vec![h.clone()], ep, true)], true, None);
    assert!(html.contains("ci-runner"), "{html}");
    assert!(html.contains("https://203.0.113.10/in?redacted"), "{html}");
    assert!(!html.contains("s3cret"), "the query never reaches the page: {html}");
    assert!(html.contains("1 of 5 hooks used"), "{html}");
    assert!(html.contains("builds") && html.contains("deploys"));
    assert!(html.contains(&format!(r#"action="/hooks/{}/rotate""#, h.id)));
    assert!(html.contains(&format!(r#"action="/hooks/{}/disable""#, h.id)));
    assert!(html.contains(&format!(r#"action="/hooks/{}/delete""#, h.id)));
    assert!(html.contains("Add a hook"), "below the ceiling the form is offered");
}

#[test]
fn health_shows_failures_the_last_status_and_error_and_when() {
    let ep = endpoint("ci-runner");
    let mut h = hook(ep.id, "https://203.0.113.10/in");
    h.consecutive_failures = 3;
    h.last_status = Some(503);
    h.last_error = Some("server_error".into());
    h.last_attempt_at = Some(now() - Duration::minutes(4));
    let html = health(&h, now()).into_string();
    assert!(html.contains("3 failures in a row"), "{html}");
    assert!(html.contains("503") && html.contains("server_error") && html.contains("4 min ago"), "{html}");

    let fresh = hook(ep.id, "https://203.0.113.10/in");
    assert!(health(&fresh, now()).into_string().contains("no delivery yet"));
}

#[test]
fn a_disabled_hook_says_who_switched_it_off_and_offers_enable() {
    let ep = endpoint("ci-runner");
    let mut failing = hook(ep.id, "https://203.0.113.10/a");
    failing.enabled = false;
    failing.disabled_reason = Some(HookDisabledReason::ConsecutiveFailures);
    failing.consecutive_failures = 10;
    let mut by_hand = hook(ep.id, "https://203.0.113.10/b");
    by_hand.enabled = false;
    by_hand.disabled_reason = Some(HookDisabledReason::Operator);
    assert!(state(&failing).into_string().contains("after 10 failures in a row"));
    assert!(state(&by_hand).into_string().contains("switched off by an operator"));
    let html = render(&[section(vec![failing.clone(), by_hand], ep, true)], true, None);
    assert!(html.contains(&format!(r#"action="/hooks/{}/enable""#, failing.id)), "{html}");
}

#[test]
fn dual_signing_shows_until_when_the_previous_secret_signs_and_not_after() {
    let ep = endpoint("ci-runner");
    let mut h = hook(ep.id, "https://203.0.113.10/a");
    h.previous_valid_until = Some(now() + Duration::hours(20));
    let html = signing(&h, now()).into_string();
    assert!(html.contains("2026-11-30 23:00:00 UTC") && html.contains("in 20 h"), "{html}");
    h.previous_valid_until = Some(now() - Duration::hours(1));
    assert_eq!(signing(&h, now()).into_string(), "one secret");
}

#[test]
fn the_kill_switch_is_said_plainly_and_no_create_form_is_offered() {
    let ep = endpoint("ci-runner");
    let html = render(&[section(vec![], ep, true)], false, None);
    assert!(html.contains("Notify hooks are switched off on this instance"), "{html}");
    assert!(html.contains("SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false"));
    assert!(!html.contains("Add hook") && !html.contains("/hooks/endpoint/"), "{html}");
}

#[test]
fn at_the_ceiling_the_form_gives_way_to_a_reason() {
    let ep = endpoint("ci-runner");
    let hooks = (0..5).map(|i| hook(ep.id, &format!("https://203.0.113.10/{i}"))).collect();
    let html = render(&[section(hooks, ep, true)], true, None);
    assert!(html.contains("5 of 5 hooks used") && html.contains("Delete one to add another"), "{html}");
    assert!(!html.contains("/hooks/endpoint/"), "{html}");
}

#[test]
fn a_member_who_is_not_admin_sees_hooks_but_no_forms() {
    let ep = endpoint("team-runner");
    let h = hook(ep.id, "https://203.0.113.10/a");
    let html = render(&[section(vec![h.clone()], ep, false)], true, None);
    assert!(html.contains("https://203.0.113.10/a"));
    assert!(html.contains("Only an admin"), "{html}");
    assert!(!html.contains("/rotate") && !html.contains("/hooks/endpoint/"), "{html}");
}

#[test]
fn a_refused_create_shows_the_reason_beside_its_form_with_the_input_escaped() {
    let ep = endpoint("ci-runner");
    let refused = RefusedCreate {
        endpoint: ep.id,
        url: "https://127.0.0.1/\"><script>".into(),
        queues: "builds".into(),
        message: "url: refused: loopback <address>".into(),
    };
    let html = render(&[section(vec![], ep, true)], true, Some(&refused));
    assert!(html.contains("Nothing was created: url: refused: loopback &lt;address&gt;"), "{html}");
    assert!(html.contains("&quot;&gt;&lt;script&gt;") && !html.contains("<script>"), "{html}");
    assert!(html.contains(r#"value="builds""#), "{html}");
}

#[test]
fn the_created_page_shows_the_secret_once_with_the_url_redacted() {
    let ep = endpoint("ci-runner");
    let h = hook(ep.id, "https://203.0.113.10/in?token=s3cret");
    let html = created_page("ci-runner", &h, "whsec_AAAA").into_string();
    assert!(html.contains("whsec_AAAA") && html.contains("shown only this once"), "{html}");
    assert!(html.contains("https://203.0.113.10/in?redacted") && !html.contains("s3cret"));
}

#[test]
fn the_rotated_page_says_both_secrets_sign_for_24_hours() {
    let ep = endpoint("ci-runner");
    let mut h = hook(ep.id, "https://203.0.113.10/in");
    h.previous_valid_until = Some(now() + Duration::hours(24));
    let html = rotated_page(&h, "whsec_BBBB", now()).into_string();
    assert!(html.contains("whsec_BBBB") && html.contains("For 24 hours both secrets sign"), "{html}");
    assert!(html.contains("2026-12-01 03:00:00 UTC"), "{html}");
}

#[test]
fn a_revoked_endpoint_keeps_its_hooks_listed_but_takes_no_new_one() {
    let mut ep = endpoint("old");
    ep.state = EndpointState::Revoked;
    assert!(!is_live(&ep, now()));
    let h = hook(ep.id, "https://203.0.113.10/a");
    let html = render(&[section(vec![h], ep, true)], true, None);
    assert!(html.contains("revoked or expired") && !html.contains("/hooks/endpoint/"), "{html}");
    let mut expired = endpoint("gone");
    expired.expires_at = Some(now() - Duration::minutes(1));
    assert!(!is_live(&expired, now()));
}
