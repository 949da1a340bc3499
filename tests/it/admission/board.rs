//! The Todos view's admission panel: an admin pauses and resumes a queue and sets its
//! limits through the same service as the API; a typo is said back and changes nothing;
//! a member sees the budget without its forms and is refused a change; a form without
//! its CSRF token changes nothing.

use awc::http::StatusCode;
use switchboard::board::respond::{NOTICE_COOKIE, Notice, Tone};
use switchboard::domain::todo_state::TeamRole;

use crate::board::{Page, Session, board_owner, get, post_form, sign_in};
use crate::harness::TestApp;

const PATH: &str = "/todos/queues/admission";

async fn post(app: &TestApp, s: &Session, fields: &[(&str, &str)]) -> Page {
    let mut form = vec![("csrf_token", s.csrf.as_str())];
    form.extend_from_slice(fields);
    post_form(app, PATH, Some(&s.cookie), &form).await
}

fn notice(page: &Page) -> Notice {
    Notice::decode(page.set_cookie(NOTICE_COOKIE).expect("a notice").value()).expect("a notice that decodes")
}

async fn budget(app: &TestApp) -> String {
    app.db
        .plan(
            "SELECT coalesce(string_agg(format('%s paused=%s max=%s hour=%s', queue, paused, max_in_flight, per_hour), \
             ' | ' ORDER BY queue), 'none') FROM queue_admission",
        )
        .await
}

#[actix_web::test]
async fn an_admin_pauses_resumes_and_limits_a_queue_from_the_todos_view() {
    let app = TestApp::spawn().await;
    let ada = board_owner(&app, "ada@example.com").await;
    let ep = app.agent(ada.scope, "builder").await;
    let s = sign_in(&app, "ada@example.com").await;
    let id = ep.id.to_string();

    let page = get(&app, "/todos", Some(&s.cookie)).await;
    assert!(page.body.contains("Queue admission") && page.body.contains("Budget a queue"), "{}", page.body);

    let paused =
        post(&app, &s, &[("endpoint_id", &id), ("queue", "builds"), ("paused", "true"), ("filter", "all")]).await;
    assert_eq!(paused.status, StatusCode::SEE_OTHER, "{}", paused.body);
    assert_eq!(paused.location(), "/todos?filter=all#admission");
    assert_eq!(notice(&paused).tone, Tone::Done);
    assert_eq!(budget(&app).await, "builds paused=t max= hour=");

    let page = get(&app, "/todos?filter=all", Some(&s.cookie)).await;
    assert!(page.body.contains("Resume builds on builder"), "{}", page.body);

    let limited =
        post(&app, &s, &[("endpoint_id", &id), ("queue", "builds"), ("max_in_flight", "3"), ("per_hour", "")]).await;
    assert_eq!(notice(&limited).tone, Tone::Done, "{:?}", notice(&limited));
    assert_eq!(budget(&app).await, "builds paused=t max=3 hour=");

    let typo = post(&app, &s, &[("endpoint_id", &id), ("queue", "builds"), ("max_in_flight", "three")]).await;
    let said = notice(&typo);
    assert_eq!((said.tone, said.text.contains("max_in_flight")), (Tone::Warn, true), "{said:?}");
    let zero = post(&app, &s, &[("endpoint_id", &id), ("queue", "builds"), ("per_hour", "0")]).await;
    assert_eq!(notice(&zero).tone, Tone::Warn);
    assert_eq!(budget(&app).await, "builds paused=t max=3 hour=", "nothing changed");

    let resumed =
        post(&app, &s, &[("endpoint_id", &id), ("queue", "builds"), ("paused", "false"), ("max_in_flight", "")]).await;
    assert_eq!(notice(&resumed).tone, Tone::Done);
    assert_eq!(budget(&app).await, "none", "resumed without limits: no budget left");

    let forged =
        post_form(&app, PATH, Some(&s.cookie), &[("endpoint_id", &id), ("queue", "builds"), ("paused", "true")]).await;
    assert!(forged.status.is_client_error(), "{}", forged.status);
    assert_eq!(budget(&app).await, "none", "a form without its CSRF token changes nothing");
}

#[actix_web::test]
async fn a_team_member_sees_the_teams_budgets_without_forms_and_is_refused_a_change() {
    let app = TestApp::spawn().await;
    let admin = board_owner(&app, "admin@example.com").await;
    let member = board_owner(&app, "member@example.com").await;
    let (team, _, scope) = app.store.create_team("crew", "admin@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(scope, "crew-worker").await;
    super::set_admission(&app, &admin.token, ep.id, "inbox", serde_json::json!({"paused": true})).await;
    let s = sign_in(&app, "member@example.com").await;

    let page = get(&app, "/todos", Some(&s.cookie)).await;
    assert!(page.body.contains("crew-worker") && page.body.contains("paused"), "{}", page.body);
    assert!(!page.body.contains("Resume inbox"), "no forms for a team the member does not administer");
    let refused = post(&app, &s, &[("endpoint_id", &ep.id.to_string()), ("queue", "inbox"), ("paused", "false")]).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(budget(&app).await, "inbox paused=t max= hour=");
}
