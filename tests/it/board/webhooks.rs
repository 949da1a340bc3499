//! The Webhooks pages over real HTTP: create (credentials shown once), bad input, the
//! rules editor (save with cache eviction, dry run, refusals), scoping, CSRF, and user
//! text shown as text.

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::domain::ids::{ScopeId, WebhookId};

use super::endpoints::text_after;
use super::{Page, Session, get, human, post_form, sign_in};
use crate::harness::{Ep, TestApp};

async fn app_with_key() -> TestApp {
    TestApp::spawn_with(|s| s.secret_encryption_key = Some(switchboard::config::SecretKey([5; 32]))).await
}

async fn signed_in(app: &TestApp, email: &str) -> (Session, ScopeId) {
    let id = human(app, email, "Ada").await;
    let scope = app.store.reach_of(id).await.unwrap().personal;
    (sign_in(app, email).await, scope)
}

async fn create(app: &TestApp, s: &Session, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, "/webhooks", Some(&s.cookie), &form).await
}

/// A generic webhook on `ep` made through the Board; its id and ingest URL.
async fn generic(app: &TestApp, s: &Session, ep: &Ep, queue: &str) -> (WebhookId, String) {
    let id = ep.id.to_string();
    let page = create(app, s, &[("endpoint_id", &id), ("source_type", "generic"), ("queue", queue)]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let url = text_after(&page.body, r#"id="sb-ingest-url">"#).expect("ingest URL");
    let webhook = text_after(&page.body, r#"<a class="sb-btn" href="/webhooks/"#)
        .expect("link")
        .replace("\">Set up its rules", "");
    (webhook.parse().expect("webhook id"), url)
}

async fn deliver(app: &TestApp, ingest_url: &str, headers: &[(&str, &str)], body: &Value) -> StatusCode {
    let path = ingest_url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut req = app.client.post(format!("{}{}", app.base, path));
    for h in headers {
        req = req.insert_header(*h);
    }
    req.send_json(body).await.unwrap().status()
}

async fn rules_of(app: &TestApp, id: WebhookId) -> i64 {
    app.db
        .count(&format!("SELECT jsonb_array_length(rules->'rules')::bigint FROM webhooks WHERE id = '{}'", id.0))
        .await
}

const RULES: &str = r#"{"rules": [
  {"id": "to-builds", "match": {"all": [{"pointer": "/kind", "equals": "build"}]}, "action": {"queue": "builds"}},
  {"id": "drop-pings", "match": {"any": [{"header": "X-Event", "equals": "ping"}]}, "action": {"drop": true}}
]}"#;

#[actix_web::test]
async fn creating_a_signed_webhook_shows_url_token_and_secret_once_uncached() {
    let app = app_with_key().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let list = get(&app, "/webhooks", Some(&s.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body.contains(&format!(r#"value="{}""#, ep.id)), "the form offers the endpoint");

    let id = ep.id.to_string();
    let page = create(
        &app,
        &s,
        &[("endpoint_id", &id), ("source_type", "github"), ("queue", "builds"), ("logins", "<i>octo</i>\nmona")],
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.headers.get("cache-control").unwrap(), "no-store");
    assert!(page.headers.get("set-cookie").is_none() && page.headers.get("location").is_none());
    let url = text_after(&page.body, r#"id="sb-ingest-url">"#).unwrap();
    let token = text_after(&page.body, r#"id="sb-ingest-token">"#).unwrap();
    let secret = text_after(&page.body, r#"id="sb-secret">"#).unwrap();
    assert!(url.contains("/webhooks/w/") && url.ends_with(&token) && token.starts_with("sbw_"), "{url} {token}");
    assert!(secret.starts_with("whsec_"), "{secret}");

    let list = get(&app, "/webhooks", Some(&s.cookie)).await;
    assert!(!list.body.contains(&token) && !list.body.contains(&secret), "the list never shows credentials");
    assert!(list.body.contains("&lt;i&gt;octo&lt;/i&gt;") && !list.body.contains("<i>octo"), "logins are text");
    assert!(list.body.contains(">signed<") && list.body.contains("worker"));
}

#[actix_web::test]
async fn bad_input_shows_the_form_again_and_creates_nothing() {
    let app = app_with_key().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let id = ep.id.to_string();
    for (fields, why) in [
        (vec![("source_type", "generic"), ("queue", "<bad queue>")], "queue: not a drainable queue name"),
        (vec![("source_type", "generic"), ("queue", "q"), ("max_attempts", "500")], "max_attempts"),
        (vec![("source_type", "generic"), ("queue", "q"), ("unverified", "on")], "source_type"),
        (vec![("source_type", "gitlab"), ("queue", "q")], "source_type"),
    ] {
        let mut form = vec![("endpoint_id", id.as_str())];
        form.extend(fields.iter().copied());
        let page = create(&app, &s, &form).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}: {}", page.body);
        let alert = text_after(&page.body, r#"role="alert">"#).unwrap_or_default();
        assert!(alert.contains(why), "{why} in {alert:?}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, 0);
}

#[actix_web::test]
async fn saved_rules_route_the_next_delivery_and_a_dry_run_shows_the_matched_rule() {
    let app = app_with_key().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let (id, url) = generic(&app, &s, &ep, "inbox").await;
    // A delivery before the rules: the default queue (and the webhook is now cached).
    assert_eq!(deliver(&app, &url, &[], &json!({"kind": "build"})).await, StatusCode::ACCEPTED);

    let saved = post_form(
        &app,
        &format!("/webhooks/{id}/rules"),
        Some(&s.cookie),
        &[("csrf_token", &s.csrf), ("rules", RULES)],
    )
    .await;
    assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.body);
    assert_eq!(saved.location(), format!("/webhooks/{id}"));
    assert_eq!(rules_of(&app, id).await, 2);
    let notice = saved.set_cookie("sb_notice").unwrap();
    let page = get(&app, saved.location(), Some(&format!("{}; sb_notice={}", s.cookie, notice.value()))).await;
    assert!(page.body.contains("Saved 2 rules.") && page.body.contains("&quot;to-builds&quot;"), "{}", page.body);

    assert_eq!(deliver(&app, &url, &[], &json!({"kind": "build"})).await, StatusCode::ACCEPTED);
    assert_eq!(
        app.db.count("SELECT count(*) FROM todos WHERE queue = 'builds'").await,
        1,
        "the saved rules route the very next delivery: the intake cache was evicted"
    );

    let test = |rules: &'static str, headers: &'static str, body: &'static str| {
        let (app, s) = (&app, &s);
        async move {
            post_form(
                app,
                &format!("/webhooks/{id}/rules/test"),
                Some(&s.cookie),
                &[("csrf_token", &s.csrf), ("rules", rules), ("headers", headers), ("body", body)],
            )
            .await
        }
    };
    let matched = test("", "X-Event: push", r#"{"kind": "build"}"#).await;
    assert_eq!(matched.status, StatusCode::OK, "{}", matched.body);
    assert!(matched.body.contains("rule <code>to-builds</code> matched"), "{}", matched.body);
    assert!(matched.body.contains(r#"<span class="sb-chip sb-chip-queue">builds</span></div>"#));
    let dropped = test("", "X-Event: ping", "").await;
    assert!(
        dropped.body.contains("rule <code>drop-pings</code> matched") && dropped.body.contains("<strong>drop</strong>")
    );
    let unsaved = test(r#"{"rules": []}"#, "", r#"{"kind": "build"}"#).await;
    assert!(unsaved.body.contains("no rule matched"), "the editor's rules, unsaved: {}", unsaved.body);
    assert!(unsaved.body.contains("{&quot;rules&quot;: []}</textarea>"), "the editor keeps what was tried");
    assert_eq!(rules_of(&app, id).await, 2, "a dry run saves nothing");
    let bad = test("", "no colon here", "").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(text_after(&bad.body, r#"role="alert">"#).unwrap().contains("headers: line 1"));
}

#[actix_web::test]
async fn invalid_rules_are_refused_with_why_and_nothing_is_saved() {
    let app = app_with_key().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let (id, _) = generic(&app, &s, &ep, "inbox").await;
    let two_actions = r#"{"rules": [{"id": "both", "match": {"all": []}, "action": {"queue": "a", "drop": true}}]}"#;
    for (rules, why) in [
        ("not json", "rules: not valid JSON"),
        (two_actions, "both"),
        ("", "rules: empty"),
        (r#"{"rules": [{"id": "<script>", "match": {"all": []}, "action": {"drop": true}}]}"#, "id must be"),
    ] {
        let page = post_form(
            &app,
            &format!("/webhooks/{id}/rules"),
            Some(&s.cookie),
            &[("csrf_token", &s.csrf), ("rules", rules)],
        )
        .await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{rules}: {}", page.body);
        let alert = text_after(&page.body, r#"role="alert">"#).unwrap_or_default();
        assert!(alert.contains(why), "{why} in {alert:?}");
        assert!(!page.body.contains("<script>"));
        let kept = rules.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;");
        assert!(page.body.contains(&format!("{kept}</textarea>")), "the editor keeps the refused rules, as text");
        assert_eq!(rules_of(&app, id).await, 0, "nothing saved");
    }
}

#[actix_web::test]
async fn another_scopes_webhook_and_endpoint_answer_404_on_every_route() {
    let app = app_with_key().await;
    let (s, _) = signed_in(&app, "ada@example.com").await;
    let bob = app.owner("bob@example.com").await;
    let bobs_ep = app.agent(bob.scope, "bobs-worker").await;
    let (status, w) = app
        .post(
            "/api/v1/webhooks",
            &bob.token,
            json!({"endpoint_id": bobs_ep.id.to_string(), "source_type": "generic", "queue": "inbox"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{w}");
    let id = w["id"].as_str().unwrap();

    assert_eq!(get(&app, &format!("/webhooks/{id}"), Some(&s.cookie)).await.status, StatusCode::NOT_FOUND);
    assert_eq!(get(&app, "/webhooks/wh_nope", Some(&s.cookie)).await.status, StatusCode::NOT_FOUND);
    for path in [format!("/webhooks/{id}/rules"), format!("/webhooks/{id}/rules/test")] {
        let page = post_form(&app, &path, Some(&s.cookie), &[("csrf_token", &s.csrf), ("rules", RULES)]).await;
        assert_eq!(page.status, StatusCode::NOT_FOUND, "{path}");
    }
    let bobs = bobs_ep.id.to_string();
    let page = create(&app, &s, &[("endpoint_id", &bobs), ("source_type", "generic"), ("queue", "x")]).await;
    assert_eq!(page.status, StatusCode::NOT_FOUND, "another scope's endpoint");
    assert!(!get(&app, "/webhooks", Some(&s.cookie)).await.body.contains(id));
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks WHERE rules = '{\"rules\": []}'").await, 1);
}

#[actix_web::test]
async fn without_the_csrf_token_nothing_is_created_or_saved() {
    let app = app_with_key().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let (id, _) = generic(&app, &s, &ep, "inbox").await;
    let ep_id = ep.id.to_string();
    for token in ["", "forged"] {
        let page = post_form(
            &app,
            "/webhooks",
            Some(&s.cookie),
            &[("csrf_token", token), ("endpoint_id", &ep_id), ("source_type", "generic"), ("queue", "x")],
        )
        .await;
        assert_eq!(page.status, StatusCode::FORBIDDEN);
        let page = post_form(
            &app,
            &format!("/webhooks/{id}/rules"),
            Some(&s.cookie),
            &[("csrf_token", token), ("rules", RULES)],
        )
        .await;
        assert_eq!(page.status, StatusCode::FORBIDDEN);
    }
    assert_eq!(app.db.count("SELECT count(*) FROM webhooks").await, 1);
    assert_eq!(rules_of(&app, id).await, 0);
}
