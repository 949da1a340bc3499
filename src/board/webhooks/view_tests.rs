//! The Webhooks pages' bodies, rendered from plain data.

use chrono::{Duration, TimeZone, Utc};
use serde_json::json;

use super::detail::{WebhookPage, dry_run_answer, rule_count, saved_rules_text, webhook_page};
use super::form::{RulesForm, WebhookForm};
use super::view::{Created, created_page, webhooks_page};
use crate::board::csrf::CsrfToken;
use crate::db::models::EndpointRow;
use crate::domain::ids::{EndpointId, ScopeId, WebhookId};
use crate::domain::todo_state::{EndpointState, Presence};
use crate::intake::verify::SourceType;
use crate::service::webhooks::RuleTestAnswer;
use crate::store::webhooks::WebhookRow;

fn now() -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 3, 0, 0).unwrap()
}

fn endpoint(scope: ScopeId) -> EndpointRow {
    EndpointRow {
        id: EndpointId::new(),
        scope_id: scope,
        slug: "builder".into(),
        token_prefix: "sbk_abcd".into(),
        grants: vec![],
        state: EndpointState::Active,
        revoked_at: None,
        expires_at: None,
        default_lease_seconds: None,
        presence: Presence::Out,
        presence_changed_at: None,
        created_at: now() - Duration::hours(3),
    }
}

fn webhook(e: &EndpointRow, source_type: SourceType) -> WebhookRow {
    WebhookRow {
        id: WebhookId::new(),
        scope_id: e.scope_id,
        endpoint_id: e.id,
        source_type,
        queue: "builds".into(),
        max_attempts: 5,
        ingest_token_prefix: "sbw_abcd".into(),
        secret_fingerprint: Some("fp:1234".into()),
        unverified: false,
        trusted_actors: Some(json!({"logins": ["<i>octo</i>", "mona"]})),
        rules: json!({"rules": [{"id": "to-builds", "match": {"all": [{"pointer": "/kind", "equals": "build"}]}, "action": {"queue": "builds"}}]}),
        refused_deliveries: 7,
        created_at: now() - Duration::minutes(10),
    }
}

#[test]
fn the_list_shows_endpoint_source_queue_verification_trusted_actors_and_refusals_as_text() {
    let e = endpoint(ScopeId::new());
    let signed = webhook(&e, SourceType::Github);
    let mut open = webhook(&e, SourceType::Gitea);
    open.unverified = true;
    open.trusted_actors = None;
    let generic = webhook(&e, SourceType::Generic);
    let html = webhooks_page(
        &[signed.clone(), open, generic],
        std::slice::from_ref(&e),
        &[&e],
        &WebhookForm::default(),
        None,
        &CsrfToken::random(),
        now(),
    )
    .into_string();
    assert!(html.contains(&format!(r#"href="/webhooks/{}""#, signed.id)), "{html}");
    assert!(html.contains(&format!(r#"href="/endpoints/{}""#, e.id)) && html.contains("builder"));
    assert!(html.contains(">signed<") && html.contains(">unverified<") && html.contains(">token only<"));
    assert!(html.contains("&lt;i&gt;octo&lt;/i&gt;") && !html.contains("<i>octo"), "logins are text: {html}");
    assert!(html.contains("no one (every delivery is quarantined)"));
    assert!(html.contains(">7<"), "refused deliveries");
}

#[test]
fn the_create_form_offers_usable_endpoints_every_source_type_and_posts_with_the_token() {
    let e = endpoint(ScopeId::new());
    let csrf = CsrfToken::random();
    let html =
        webhooks_page(&[], std::slice::from_ref(&e), &[&e], &WebhookForm::default(), None, &csrf, now()).into_string();
    assert!(html.contains(r#"method="post" action="/webhooks""#) && html.contains(csrf.as_str()), "{html}");
    assert!(html.contains(&format!(r#"value="{}""#, e.id)));
    for s in ["github", "gitea", "stripe", "standard", "generic"] {
        assert!(html.contains(&format!(r#"value="{s}""#)), "{s}");
    }
    let none =
        webhooks_page(&[], std::slice::from_ref(&e), &[], &WebhookForm::default(), None, &csrf, now()).into_string();
    assert!(!none.contains(r#"action="/webhooks""#) && none.contains("Vend one first"));
}

#[test]
fn a_refused_create_shows_why_and_keeps_what_was_typed() {
    let e = endpoint(ScopeId::new());
    let form = WebhookForm {
        endpoint_id: e.id.to_string(),
        source_type: "stripe".into(),
        queue: "<bad queue>".into(),
        logins: "<i>x</i>".into(),
        unverified: Some("on".into()),
        ..Default::default()
    };
    let html = webhooks_page(
        &[],
        std::slice::from_ref(&e),
        &[&e],
        &form,
        Some("queue: not a drainable queue name"),
        &CsrfToken::random(),
        now(),
    )
    .into_string();
    assert!(html.contains("Not created: queue: not a drainable queue name"), "{html}");
    assert!(html.contains(r#"value="&lt;bad queue&gt;""#) && html.contains("&lt;i&gt;x&lt;/i&gt;</textarea>"));
    assert!(html.contains(r#"value="stripe" selected"#) && html.contains(r#"name="unverified" value="on" checked"#));
}

#[test]
fn the_created_page_shows_url_token_and_secret_once() {
    let e = endpoint(ScopeId::new());
    let w = webhook(&e, SourceType::Github);
    let c = Created {
        webhook: &w,
        ingest_url: "http://sb.example/webhooks/w/sbw_tok",
        ingest_token: "sbw_tok",
        signing_secret: Some("whsec_s3cret"),
    };
    let html = created_page(&c).into_string();
    for v in ["http://sb.example/webhooks/w/sbw_tok", ">sbw_tok<", ">whsec_s3cret<", "shown on this page only"] {
        assert!(html.contains(v), "{v} in {html}");
    }
    let html = created_page(&Created { signing_secret: None, ..c }).into_string();
    assert!(!html.contains("Signing secret"));
}

fn page(
    w: &WebhookRow,
    e: &EndpointRow,
    form: &RulesForm,
    error: Option<&str>,
    result: Option<&RuleTestAnswer>,
    admin: bool,
) -> String {
    webhook_page(
        &WebhookPage {
            webhook: w,
            endpoints: std::slice::from_ref(e),
            owner: "you",
            may_admin: admin,
            form,
            error,
            result,
            now: now(),
        },
        &CsrfToken::random(),
    )
    .into_string()
}

#[test]
fn the_webhook_page_edits_the_saved_rules_and_offers_a_dry_run_without_saving() {
    let e = endpoint(ScopeId::new());
    let w = webhook(&e, SourceType::Github);
    assert_eq!(rule_count(&w), 1);
    let form = RulesForm { rules: saved_rules_text(&w), ..Default::default() };
    let html = page(&w, &e, &form, None, None, true);
    assert!(html.contains(&format!(r#"action="/webhooks/{}/rules""#, w.id)), "{html}");
    assert!(html.contains(&format!(r#"formaction="/webhooks/{}/rules/test""#, w.id)));
    assert!(html.contains("&quot;to-builds&quot;"), "the saved rules are in the editor: {html}");
    assert!(html.contains(r#"name="headers""#) && html.contains(r#"name="body""#));
    assert!(html.contains("Save rules"));
    assert!(!page(&w, &e, &form, None, None, false).contains("Save rules"), "a member may only dry-run");
}

#[test]
fn a_refused_save_shows_why_as_text_and_keeps_the_edit() {
    let e = endpoint(ScopeId::new());
    let w = webhook(&e, SourceType::Github);
    let form = RulesForm { rules: r#"{"rules": [{"id": "<x>"}]}"#.into(), ..Default::default() };
    let html = page(&w, &e, &form, Some(r#"rule "<x>": bad id"#), None, true);
    assert!(html.contains(r#"role="alert""#) && html.contains("rule &quot;&lt;x&gt;&quot;: bad id"), "{html}");
    assert!(html.contains("&quot;&lt;x&gt;&quot;}]}</textarea>"));
}

#[test]
fn a_dry_run_names_the_matched_rule_and_where_the_delivery_would_go() {
    let answer = |matched: Option<&str>, outcome: &str, queue: Option<&str>, fault: Option<&str>| RuleTestAnswer {
        matched_rule: matched.map(str::to_owned),
        outcome: outcome.into(),
        queue: queue.map(str::to_owned),
        fault: fault.map(str::to_owned),
    };
    let html = dry_run_answer(&answer(Some("to-builds"), "queue", Some("builds"), None)).into_string();
    assert!(html.contains("rule <code>to-builds</code> matched") && html.contains(">builds<"), "{html}");
    let html = dry_run_answer(&answer(None, "default_queue", Some("inbox"), None)).into_string();
    assert!(html.contains("no rule matched") && html.contains(">inbox<"), "{html}");
    let html = dry_run_answer(&answer(Some("drop-pings"), "drop", None, None)).into_string();
    assert!(html.contains("<strong>drop</strong>"), "{html}");
    let html = dry_run_answer(&answer(Some("slow"), "fault", Some("quarantine"), Some("<budget>"))).into_string();
    assert!(html.contains("faulted") && html.contains("&lt;budget&gt;"), "{html}");
}
