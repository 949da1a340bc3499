//! Sign-in, sessions, CSRF, sign-out and the sign-in rate limit, over real HTTP.

use awc::http::StatusCode;

use super::{PASSWORD, Page, get, human, login_form, post_form, sign_in, submit_login};
use crate::harness::TestApp;

async fn sessions(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM board_sessions").await
}

fn refusal_text(page: &Page) -> String {
    let start = page.body.find(r#"role="alert">"#).expect("a refusal notice") + r#"role="alert">"#.len();
    let end = page.body[start..].find('<').unwrap();
    page.body[start..start + end].to_owned()
}

#[actix_web::test]
async fn the_sign_in_form_has_the_contract_fields_and_sets_its_csrf_cookie() {
    let app = TestApp::spawn().await;
    let page = get(&app, "/login", None).await;
    assert_eq!(page.status, StatusCode::OK);
    for field in [r#"name="email""#, r#"name="password""#, r#"name="csrf_token""#] {
        assert!(page.body.contains(field), "{field} missing from {}", page.body);
    }
    assert!(page.body.contains(r#"<meta name="viewport""#));
    let cookie = page.set_cookie("sb_login_csrf").expect("double-submit cookie");
    assert_eq!(cookie.value(), page.csrf_field().unwrap(), "the cookie and the field carry the same token");
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(page.headers.get("x-frame-options").unwrap(), "DENY");
    assert_eq!(page.headers.get("cache-control").unwrap(), "no-store");
}

#[actix_web::test]
async fn signing_in_sets_an_http_only_lax_cookie_whose_session_opens_the_board() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada Lovelace").await;

    let page = submit_login(&app, "Ada@Example.com", PASSWORD).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    assert_eq!(page.location(), "/todos");
    let cookie = page.set_cookie("sb_session").expect("session cookie");
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.same_site(), Some(actix_web::cookie::SameSite::Lax));
    assert_eq!(cookie.path(), Some("/"));
    assert_ne!(cookie.secure(), Some(true), "plain http on loopback: no Secure, or the browser would drop it");
    assert_eq!(cookie.max_age().map(|d| d.whole_hours()), Some(12));
    let token = cookie.value().to_owned();
    assert_eq!(
        app.db.count(&format!("SELECT count(*) FROM board_sessions WHERE token_hash = sha256('{token}'::bytea)")).await,
        1,
        "the database holds the token's SHA-256"
    );

    let header = format!("sb_session={token}");
    let todos = get(&app, "/todos", Some(&header)).await;
    assert_eq!(todos.status, StatusCode::OK);
    assert!(todos.body.contains("Ada Lovelace"));
    for nav in ["Todos", "Endpoints", "Webhooks", "Hooks", "Quarantine", "Sinks", "Sign out"] {
        assert!(todos.body.contains(nav), "nav shows {nav}");
    }
    assert_eq!(get(&app, "/", Some(&header)).await.location(), "/todos");
    assert_eq!(get(&app, "/login", Some(&header)).await.location(), "/todos", "signed in: the form is skipped");
    assert_eq!(get(&app, "/", None).await.location(), "/login");
    assert_eq!(get(&app, "/todos", None).await.status, StatusCode::SEE_OTHER);
}

#[actix_web::test]
async fn a_wrong_password_an_unknown_email_and_a_passwordless_human_get_one_refusal_and_no_cookie() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    app.store.create_human("nopass@example.com", "No Password", None).await.unwrap();

    let wrong = submit_login(&app, "ada@example.com", "not the password at all").await;
    let unknown = submit_login(&app, "nobody@example.com", PASSWORD).await;
    let passwordless = submit_login(&app, "nopass@example.com", PASSWORD).await;
    let nul = submit_login(&app, "ada\0@example.com", PASSWORD).await;
    for page in [&wrong, &unknown, &passwordless, &nul] {
        assert_eq!(page.status, StatusCode::UNAUTHORIZED, "{}", page.body);
        assert!(page.set_cookie("sb_session").is_none());
        assert_eq!(refusal_text(page), refusal_text(&wrong), "one message for every refusal");
    }
    assert_eq!(refusal_text(&wrong), "That email and password do not match an account.");
    assert!(!wrong.body.contains("not the password"), "the password is never echoed");
    assert!(unknown.body.contains(r#"value="nobody@example.com""#), "the email is kept in the form");
    assert_eq!(sessions(&app).await, 0);
}

#[actix_web::test]
async fn sign_in_with_a_missing_or_wrong_csrf_token_is_refused_and_starts_no_session() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    let (cookie, csrf) = login_form(&app).await;
    let creds = [("email", "ada@example.com"), ("password", PASSWORD)];

    let missing = post_form(&app, "/login", Some(&cookie), &creds).await;
    let wrong = post_form(&app, "/login", Some(&cookie), &[creds[0], creds[1], ("csrf_token", &"A".repeat(43))]).await;
    let no_cookie = post_form(&app, "/login", None, &[creds[0], creds[1], ("csrf_token", &csrf)]).await;
    for page in [&missing, &wrong, &no_cookie] {
        assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.body);
        assert!(page.set_cookie("sb_session").is_none());
        assert!(page.body.contains("nothing was changed"));
    }
    assert_eq!(sessions(&app).await, 0);

    let ok = post_form(&app, "/login", Some(&cookie), &[creds[0], creds[1], ("csrf_token", &csrf)]).await;
    assert_eq!(ok.status, StatusCode::SEE_OTHER, "the same form with its token signs in");
    assert_eq!(sessions(&app).await, 1);
}

#[actix_web::test]
async fn sign_out_needs_its_csrf_token_and_then_ends_the_session_on_the_server() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    human(&app, "bob@example.com", "Bob").await;
    let ada = sign_in(&app, "ada@example.com").await;
    let bob = sign_in(&app, "bob@example.com").await;

    for form in [vec![], vec![("csrf_token", "")], vec![("csrf_token", bob.csrf.as_str())]] {
        let refused = post_form(&app, "/logout", Some(&ada.cookie), &form).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN, "{form:?}");
        assert_eq!(get(&app, "/todos", Some(&ada.cookie)).await.status, StatusCode::OK, "still signed in");
    }
    assert_eq!(sessions(&app).await, 2);

    let out = post_form(&app, "/logout", Some(&ada.cookie), &[("csrf_token", &ada.csrf)]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert_eq!(out.location(), "/login");
    assert_eq!(out.set_cookie("sb_session").map(|c| c.value().to_owned()), Some(String::new()), "cookie cleared");
    let after = get(&app, "/todos", Some(&ada.cookie)).await;
    assert_eq!(after.status, StatusCode::SEE_OTHER, "the old cookie no longer works");
    assert_eq!(after.location(), "/login?next=%2Ftodos");
    assert_eq!(sessions(&app).await, 1, "Bob's session is untouched");
    assert_eq!(get(&app, "/todos", Some(&bob.cookie)).await.status, StatusCode::OK);

    let again = post_form(&app, "/logout", Some(&ada.cookie), &[("csrf_token", &ada.csrf)]).await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "a dead session posting is sent to sign in");
    assert_eq!(again.location(), "/login");
}

#[actix_web::test]
async fn an_expired_session_is_sent_to_sign_in_and_returns_where_it_was_afterwards() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    let ada = sign_in(&app, "ada@example.com").await;
    app.db.exec("UPDATE board_sessions SET expires_at = now() - interval '1 second'").await;

    let page = get(&app, "/todos?filter=dead&q=build", Some(&ada.cookie)).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER);
    assert_eq!(page.location(), "/login?next=%2Ftodos%3Ffilter%3Ddead%26q%3Dbuild");
    assert_eq!(page.set_cookie("sb_session").map(|c| c.value().to_owned()), Some(String::new()));

    let form = get(&app, page.location(), None).await;
    let next = super::hidden_value(&form.body, "next").expect("the form carries next");
    assert_eq!(next, "/todos?filter=dead&amp;q=build", "escaped in the HTML");
    let (cookie, csrf) = login_form(&app).await;
    let back = post_form(
        &app,
        "/login",
        Some(&cookie),
        &[("email", "ada@example.com"), ("password", PASSWORD), ("csrf_token", &csrf), ("next", "/todos?filter=dead")],
    )
    .await;
    assert_eq!(back.location(), "/todos?filter=dead");
    let elsewhere = post_form(
        &app,
        "/login",
        Some(&cookie),
        &[("email", "ada@example.com"), ("password", PASSWORD), ("csrf_token", &csrf), ("next", "//evil.example/")],
    )
    .await;
    assert_eq!(elsewhere.location(), "/todos", "never to another site");
}

#[actix_web::test]
async fn sign_in_attempts_over_the_limit_answer_429_without_checking_the_password() {
    let app = TestApp::spawn().await;
    human(&app, "ada@example.com", "Ada").await;
    let limit = switchboard::board::rate_limit::PER_EMAIL_PER_MINUTE;
    for _ in 0..limit {
        assert_eq!(
            submit_login(&app, "ada@example.com", "a wrong password guess").await.status,
            StatusCode::UNAUTHORIZED
        );
    }
    let limited = submit_login(&app, "ADA@example.com", PASSWORD).await;
    assert_eq!(limited.status, StatusCode::TOO_MANY_REQUESTS, "even the right password waits");
    assert!(limited.set_cookie("sb_session").is_none());
    assert!(limited.headers.get("retry-after").is_some());
    assert!(limited.body.contains("Too many sign-in attempts"));
    assert_eq!(sessions(&app).await, 0);
}

#[actix_web::test]
async fn a_display_name_with_markup_is_shown_as_text() {
    let app = TestApp::spawn().await;
    human(&app, "eve@example.com", "<script>alert('x')</script>").await;
    let eve = sign_in(&app, "eve@example.com").await;
    let page = get(&app, "/todos", Some(&eve.cookie)).await;
    assert!(!page.body.contains("<script>"), "{}", page.body);
    assert!(page.body.contains("&lt;script&gt;alert('x')&lt;/script&gt;"));
}
