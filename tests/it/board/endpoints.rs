//! The Endpoints pages over real HTTP: vend (token shown once), the bad-input form,
//! revoke behind its warning, scoping, CSRF, and user text shown as text.

use awc::http::StatusCode;
use switchboard::domain::ids::ScopeId;

use super::{Page, Session, get, human, post_form, sign_in};
use crate::harness::TestApp;

/// The text between `start` and the next `<`.
pub fn text_after(body: &str, start: &str) -> Option<String> {
    let from = body.find(start)? + start.len();
    let len = body[from..].find('<')?;
    Some(body[from..from + len].to_owned())
}

async fn signed_in(app: &TestApp, email: &str) -> (Session, ScopeId) {
    let id = human(app, email, "Ada").await;
    let scope = app.store.reach_of(id).await.unwrap().personal;
    (sign_in(app, email).await, scope)
}

async fn endpoints(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM endpoints").await
}

async fn vend(app: &TestApp, s: &Session, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, "/endpoints", Some(&s.cookie), &form).await
}

#[actix_web::test]
async fn vending_shows_the_token_once_uncached_and_the_token_works_on_the_agent_api() {
    let app = TestApp::spawn().await;
    let (s, _) = signed_in(&app, "ada@example.com").await;
    let list = get(&app, "/endpoints", Some(&s.cookie)).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    assert!(list.body.contains(r#"action="/endpoints""#) && list.body.contains(r#"aria-current="page">Endpoints"#));

    let page = vend(
        &app,
        &s,
        &[
            ("slug", "builder"),
            ("owner", "ada@example.com"),
            ("grants", "create_todo"),
            ("grants", "claim_next"),
            ("default_lease_seconds", "120"),
        ],
    )
    .await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(page.headers.get("cache-control").unwrap(), "no-store");
    assert!(page.headers.get("location").is_none() && page.headers.get("set-cookie").is_none());
    let token = text_after(&page.body, r#"id="sb-token">"#).expect("the token is on the page");
    assert!(token.starts_with("sbk_"), "{token}");
    assert_eq!(page.body.matches(&token).count(), 1, "shown once on the page");

    let (status, todo) =
        app.post("/api/v1/agent/todos", &token, serde_json::json!({"queue": "builds", "title": "t"})).await;
    assert_eq!(status, StatusCode::CREATED, "{todo}");
    let (status, _) = app.get("/api/v1/agent/todos", &token).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "list_todos was not ticked");
    assert_eq!(
        app.db
            .count(
                "SELECT count(*) FROM endpoints WHERE slug = 'builder' AND default_lease_seconds = 120 \
                    AND grants = ARRAY['create_todo', 'claim_next']"
            )
            .await,
        1
    );

    let again = get(&app, "/endpoints", Some(&s.cookie)).await;
    assert!(again.body.contains("builder") && !again.body.contains(&token), "the list never shows the token");
}

#[actix_web::test]
async fn bad_input_shows_the_form_again_with_why_and_creates_nothing() {
    let app = TestApp::spawn().await;
    let (s, _) = signed_in(&app, "ada@example.com").await;
    for (fields, why) in [
        (vec![("slug", "<b>Bad Slug</b>")], "slug: must be"),
        (vec![("slug", "ok"), ("owner", "team:nope")], "owner: no such owner"),
        (vec![("slug", "ok"), ("default_lease_seconds", "5")], "default_lease_seconds"),
        (vec![("slug", "ok"), ("default_lease_seconds", "soon")], "whole number"),
        (vec![("slug", "ok"), ("grants", "root")], "unknown grant"),
    ] {
        let page = vend(&app, &s, &fields).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{fields:?}: {}", page.body);
        let alert = text_after(&page.body, r#"role="alert">"#).unwrap_or_default();
        assert!(alert.contains(why), "{why} in {alert:?}");
        assert!(page.body.contains(r#"action="/endpoints""#), "the form is shown again");
    }
    // A NUL (which PostgreSQL cannot store) or a control character is a clear refusal, not a 500.
    for owner in ["a\u{0}@example.com", "a\u{1}@example.com"] {
        let page = vend(&app, &s, &[("slug", "ok"), ("owner", owner)]).await;
        assert!(page.status.is_client_error(), "{owner:?}: {} {}", page.status, page.body);
    }
    let page = vend(&app, &s, &[("slug", "<b>Bad Slug</b>")]).await;
    assert!(page.body.contains(r#"value="&lt;b&gt;Bad Slug&lt;/b&gt;""#) && !page.body.contains("<b>Bad"));
    assert_eq!(endpoints(&app).await, 0);

    assert_eq!(vend(&app, &s, &[("slug", "taken")]).await.status, StatusCode::OK);
    let dup = vend(&app, &s, &[("slug", "taken")]).await;
    assert_eq!(dup.status, StatusCode::CONFLICT);
    assert!(text_after(&dup.body, r#"role="alert">"#).unwrap().contains("already exists"));
    assert_eq!(endpoints(&app).await, 1);
}

#[actix_web::test]
async fn revoking_warns_first_then_dead_letters_the_claimed_todo_and_reports_the_count() {
    let app = TestApp::spawn().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    let claimed = app.create_todo(&ep, "builds", "claimed one").await;
    app.claim_next(&ep).await;
    app.create_todo(&ep, "builds", "pending one").await;

    let shown = get(&app, &format!("/endpoints/{}", ep.id), Some(&s.cookie)).await;
    assert_eq!(shown.status, StatusCode::OK, "{}", shown.body);
    assert!(shown.body.contains(&format!(r#"href="/endpoints/{}/revoke""#, ep.id)));

    let confirm = get(&app, &format!("/endpoints/{}/revoke", ep.id), Some(&s.cookie)).await;
    assert_eq!(confirm.status, StatusCode::OK, "{}", confirm.body);
    assert!(confirm.body.contains("silently dead-letters"), "{}", confirm.body);
    assert!(confirm.body.contains("<strong>1</strong> pending") && confirm.body.contains("<strong>1</strong> claimed"));
    assert!(confirm.body.contains("Revoke and dead-letter 2"));
    assert_eq!(
        app.db.count("SELECT count(*) FROM endpoints WHERE state = 'active'").await,
        1,
        "asking revokes nothing"
    );

    let done =
        post_form(&app, &format!("/endpoints/{}/revoke", ep.id), Some(&s.cookie), &[("csrf_token", &s.csrf)]).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.body);
    assert_eq!(done.location(), format!("/endpoints/{}", ep.id));
    let notice = done.set_cookie("sb_notice").expect("a notice");
    let after = get(&app, done.location(), Some(&format!("{}; sb_notice={}", s.cookie, notice.value()))).await;
    assert!(after.body.contains("2 todos it held are now dead letters"), "{}", after.body);
    assert!(after.body.contains(">revoked<") && !after.body.contains("/revoke\""));

    assert_eq!(
        app.db
            .count(&format!(
                "SELECT count(*) FROM todos WHERE id = '{}' AND state = 'failed' AND dead_reason = 'endpoint_revoked'",
                claimed.0
            ))
            .await,
        1,
        "the claimed todo is a dead letter"
    );
    let (status, _) = app.get("/api/v1/agent/todos", &ep.token).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the token stopped working");

    let twice =
        post_form(&app, &format!("/endpoints/{}/revoke", ep.id), Some(&s.cookie), &[("csrf_token", &s.csrf)]).await;
    assert_eq!(twice.status, StatusCode::SEE_OTHER, "a second revoke is a notice, not an error page");
}

#[actix_web::test]
async fn another_scopes_endpoint_answers_404_on_every_route_and_stays_active() {
    let app = TestApp::spawn().await;
    let (s, _) = signed_in(&app, "ada@example.com").await;
    let bob = app.owner("bob@example.com").await;
    let theirs = app.agent(bob.scope, "bobs-worker").await;

    for path in
        [format!("/endpoints/{}", theirs.id), format!("/endpoints/{}/revoke", theirs.id), "/endpoints/ep_nope".into()]
    {
        assert_eq!(get(&app, &path, Some(&s.cookie)).await.status, StatusCode::NOT_FOUND, "{path}");
    }
    let post =
        post_form(&app, &format!("/endpoints/{}/revoke", theirs.id), Some(&s.cookie), &[("csrf_token", &s.csrf)]).await;
    assert_eq!(post.status, StatusCode::NOT_FOUND);
    assert!(!get(&app, "/endpoints", Some(&s.cookie)).await.body.contains("bobs-worker"));
    let bobs = vend(&app, &s, &[("slug", "sneaky"), ("owner", "bob@example.com")]).await;
    assert_eq!(bobs.status, StatusCode::UNPROCESSABLE_ENTITY, "another human is not an owner you administer");
    assert_eq!(app.db.count("SELECT count(*) FROM endpoints WHERE state = 'active'").await, 1);
}

#[actix_web::test]
async fn without_the_csrf_token_nothing_is_vended_or_revoked() {
    let app = TestApp::spawn().await;
    let (s, scope) = signed_in(&app, "ada@example.com").await;
    let ep = app.agent(scope, "worker").await;
    for token in ["", "forged"] {
        let page = post_form(&app, "/endpoints", Some(&s.cookie), &[("csrf_token", token), ("slug", "x")]).await;
        assert_eq!(page.status, StatusCode::FORBIDDEN);
        let page =
            post_form(&app, &format!("/endpoints/{}/revoke", ep.id), Some(&s.cookie), &[("csrf_token", token)]).await;
        assert_eq!(page.status, StatusCode::FORBIDDEN);
    }
    let page = post_form(&app, "/endpoints", Some(&s.cookie), &[("slug", "x")]).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN);
    assert_eq!(endpoints(&app).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM endpoints WHERE state = 'active'").await, 1);
    let signed_out = post_form(&app, "/endpoints", None, &[("csrf_token", &s.csrf), ("slug", "x")]).await;
    assert_eq!(signed_out.status, StatusCode::SEE_OTHER, "no session: to sign-in");
    assert_eq!(endpoints(&app).await, 1);
}

#[actix_web::test]
async fn a_team_named_with_markup_owns_endpoints_and_reads_as_text() {
    let app = TestApp::spawn().await;
    let (s, _) = signed_in(&app, "ada@example.com").await;
    let (_, _, team_scope) = app.store.create_team("<b>ops</b>", "ada@example.com").await.unwrap();
    let list = get(&app, "/endpoints", Some(&s.cookie)).await;
    assert!(list.body.contains("team:&lt;b&gt;ops&lt;/b&gt;") && !list.body.contains("<b>ops"), "{}", list.body);

    let page = vend(&app, &s, &[("slug", "team-worker"), ("owner", "team:<b>ops</b>")]).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert_eq!(
        app.db
            .count(&format!(
                "SELECT count(*) FROM endpoints WHERE slug = 'team-worker' AND scope_id = '{}'",
                team_scope.0
            ))
            .await,
        1
    );
    let list = get(&app, "/endpoints", Some(&s.cookie)).await;
    assert!(list.body.contains("team-worker") && !list.body.contains("<b>ops"));
}
