//! The hooks page over real HTTP: create (secret shown once, stored sealed), the
//! guard and the ceiling and the kill switch at save time, health, rotate, enable,
//! disable, delete, scope and CSRF.

use awc::http::StatusCode;
use switchboard::config::{SecretKey, Settings};
use switchboard::domain::ids::{EndpointId, HookId};
use switchboard::domain::todo_state::TeamRole;
use switchboard::hooks::rules::health::HookHealthUpdate;
use switchboard::hooks::rules::hook::{HookSpec, LastError};
use switchboard::vault::Vault;

use super::{Page, Session, board_owner, get, post_form, sign_in, text_after};
use crate::harness::{Owner, TestApp};

const KEY: SecretKey = SecretKey([9; 32]);

async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(KEY);
        adjust(s);
    })
    .await
}

/// The app, a signed-in owner and their endpoint `worker`.
async fn setup_with(adjust: impl FnOnce(&mut Settings)) -> (TestApp, Owner, Session, EndpointId) {
    let app = spawn_with(adjust).await;
    let owner = board_owner(&app, "ada@example.com").await;
    let ep = app.agent(owner.scope, "worker").await.id;
    let session = sign_in(&app, "ada@example.com").await;
    (app, owner, session, ep)
}

async fn setup() -> (TestApp, Owner, Session, EndpointId) {
    setup_with(|_| {}).await
}

async fn create(app: &TestApp, s: &Session, ep: EndpointId, url: &str, queues: &str) -> Page {
    let path = format!("/hooks/endpoint/{ep}");
    post_form(app, &path, Some(&s.cookie), &[("csrf_token", &s.csrf), ("url", url), ("queues", queues)]).await
}

async fn act(app: &TestApp, s: &Session, id: HookId, action: &str) -> Page {
    post_form(app, &format!("/hooks/{id}/{action}"), Some(&s.cookie), &[("csrf_token", &s.csrf)]).await
}

/// The `whsec_…` secret a page shows.
fn secret_on(page: &Page) -> String {
    text_after(&page.body, "whsec_").unwrap_or_else(|| panic!("no secret on {}", page.body)).to_owned()
}

async fn hook_count(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM notify_hooks").await
}

/// One text value of one row.
async fn text(app: &TestApp, sql: &str) -> String {
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.expect("connect");
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0)
}

async fn only_hook(app: &TestApp, ep: EndpointId) -> HookId {
    let id = text(app, &format!("SELECT id::text FROM notify_hooks WHERE endpoint_id = '{}'", ep.0)).await;
    HookId(id.parse().expect("uuid"))
}

async fn sealed_secret(app: &TestApp, id: HookId) -> String {
    text(app, &format!("SELECT secret FROM notify_hooks WHERE id = '{}'", id.0)).await
}

#[actix_web::test]
async fn creating_a_hook_shows_its_secret_once_and_stores_it_sealed() {
    let (app, _owner, s, ep) = setup().await;
    let page = get(&app, "/hooks", Some(&s.cookie)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(page.body.contains("worker") && page.body.contains("0 of 5 hooks used"), "{}", page.body);
    assert!(page.body.contains(&format!(r#"action="/hooks/endpoint/{ep}""#)), "{}", page.body);

    let created = create(&app, &s, ep, "https://203.0.113.10/in?token=s3cret", "builds, deploys").await;
    assert_eq!(created.status, StatusCode::OK, "{}", created.body);
    assert_eq!(created.headers.get("cache-control").unwrap(), "no-store");
    assert!(created.headers.get("location").is_none());
    let secret = secret_on(&created);
    assert!(secret.len() == "whsec_".len() + 44, "{secret}");
    for (name, value) in created.headers.iter() {
        let value = value.to_str().unwrap_or_default();
        assert!(!value.contains(&secret["whsec_".len()..]), "the secret is never in a header ({name})");
    }
    assert!(created.body.contains("https://203.0.113.10/in?redacted") && !created.body.contains("s3cret"));

    let id = only_hook(&app, ep).await;
    let sealed = sealed_secret(&app, id).await;
    assert!(sealed.starts_with("enc:v1:"), "{sealed}");
    assert_eq!(Vault::new(Some(&KEY)).open(&sealed).unwrap(), secret.as_bytes(), "the shown secret is the stored one");

    let listed = get(&app, "/hooks", Some(&s.cookie)).await;
    assert!(listed.body.contains("1 of 5 hooks used"), "{}", listed.body);
    assert!(listed.body.contains("https://203.0.113.10/in?redacted") && listed.body.contains("deploys"));
    assert!(!listed.body.contains(&secret) && !listed.body.contains("whsec_") && !listed.body.contains("s3cret"));
}

#[actix_web::test]
async fn a_loopback_or_private_url_is_refused_by_the_guard_with_a_clear_message() {
    let (app, _owner, s, ep) = setup().await;
    for url in ["https://127.0.0.1/x", "https://10.0.0.5/x", "https://169.254.169.254/latest"] {
        let page = create(&app, &s, ep, url, "").await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{url}: {}", page.body);
        let message = switchboard::outbound::refusal::FORBIDDEN_TARGET_MESSAGE;
        assert!(page.body.contains(&format!("Nothing was created: {message}")), "{url}: {}", page.body);
        assert!(page.body.contains(&format!(r#"value="{url}""#)), "the form keeps what was typed");
        assert!(!page.body.contains("whsec_"));
    }
    let bad = create(&app, &s, ep, "http://203.0.113.10/x", "").await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.body.contains("must use https"), "{}", bad.body);
    assert_eq!(hook_count(&app).await, 0);
}

#[actix_web::test]
async fn at_the_ceiling_creation_is_refused_and_nothing_is_created() {
    let (app, _owner, s, ep) = setup_with(|st| st.notify_hook_max = 1).await;
    assert_eq!(create(&app, &s, ep, "https://203.0.113.10/a", "").await.status, StatusCode::OK);
    let page = get(&app, "/hooks", Some(&s.cookie)).await;
    assert!(page.body.contains("1 of 1 hooks used") && page.body.contains("Delete one to add another"));
    let refused = create(&app, &s, ep, "https://203.0.113.10/b", "").await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert!(refused.body.contains("at most 1 notify hooks"), "{}", refused.body);
    assert_eq!(hook_count(&app).await, 1);
}

#[actix_web::test]
async fn with_the_kill_switch_on_the_page_says_so_and_creation_is_refused() {
    let (app, _owner, s, ep) = setup_with(|st| st.notify_hooks_enabled = false).await;
    let page = get(&app, "/hooks", Some(&s.cookie)).await;
    assert!(page.body.contains("Notify hooks are switched off on this instance"), "{}", page.body);
    assert!(!page.body.contains("/hooks/endpoint/"), "no create form: {}", page.body);
    let refused = create(&app, &s, ep, "https://203.0.113.10/a", "").await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert_eq!(hook_count(&app).await, 0);
}

#[actix_web::test]
async fn health_renders_after_a_recorded_failure() {
    let (app, owner, s, ep) = setup().await;
    let spec = HookSpec::parse("https://203.0.113.10/in", &[], false).unwrap();
    let id = app.store.create_hook(&Vault::new(Some(&KEY)), owner.scope, ep, &spec, 5, false).await.unwrap().hook.id;
    let failure =
        HookHealthUpdate { succeeded: false, last_status: Some(503), last_error: Some(LastError::ServerError) };
    app.store.record_hook_outcome(id, failure).await.unwrap();
    let page = get(&app, "/hooks", Some(&s.cookie)).await;
    assert!(page.body.contains("1 failure in a row"), "{}", page.body);
    assert!(page.body.contains("503") && page.body.contains("server_error") && page.body.contains("just now"));
}

#[actix_web::test]
async fn rotate_disable_enable_and_delete_work_from_the_board() {
    let (app, _owner, s, ep) = setup().await;
    let first = secret_on(&create(&app, &s, ep, "https://203.0.113.10/in", "").await);
    let id = only_hook(&app, ep).await;

    let rotated = act(&app, &s, id, "rotate").await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    assert_eq!(rotated.headers.get("cache-control").unwrap(), "no-store");
    let second = secret_on(&rotated);
    assert_ne!(first, second);
    assert!(rotated.body.contains("For 24 hours both secrets sign"), "{}", rotated.body);
    assert_eq!(Vault::new(Some(&KEY)).open(&sealed_secret(&app, id).await).unwrap(), second.as_bytes());
    let listed = get(&app, "/hooks", Some(&s.cookie)).await;
    assert!(listed.body.contains("new and previous secret, until"), "{}", listed.body);

    let off = act(&app, &s, id, "disable").await;
    assert_eq!(off.status, StatusCode::SEE_OTHER, "{}", off.body);
    assert_eq!(off.location(), format!("/hooks#ep-{ep}"));
    assert!(off.set_cookie("sb_notice").is_some());
    let reason = format!(
        "SELECT count(*) FROM notify_hooks WHERE NOT enabled AND disabled_reason = 'operator' AND id = '{}'",
        id.0
    );
    assert_eq!(app.db.count(&reason).await, 1);
    assert!(get(&app, "/hooks", Some(&s.cookie)).await.body.contains("switched off by an operator"));

    assert_eq!(act(&app, &s, id, "enable").await.status, StatusCode::SEE_OTHER);
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks WHERE enabled AND disabled_reason IS NULL").await, 1);

    let deleted = act(&app, &s, id, "delete").await;
    assert_eq!(deleted.status, StatusCode::SEE_OTHER);
    assert_eq!(hook_count(&app).await, 0);
    assert_eq!(act(&app, &s, id, "delete").await.status, StatusCode::NOT_FOUND, "gone");
}

#[actix_web::test]
async fn another_scopes_endpoint_and_hooks_answer_404_and_change_nothing() {
    let (app, _owner, s, ep) = setup().await;
    let secret = secret_on(&create(&app, &s, ep, "https://203.0.113.10/theirs", "").await);
    let id = only_hook(&app, ep).await;
    board_owner(&app, "eve@example.com").await;
    let eve = sign_in(&app, "eve@example.com").await;

    let page = get(&app, "/hooks", Some(&eve.cookie)).await;
    assert!(!page.body.contains("203.0.113.10") && !page.body.contains("worker"), "{}", page.body);
    assert_eq!(create(&app, &eve, ep, "https://203.0.113.10/mine", "").await.status, StatusCode::NOT_FOUND);
    for action in ["rotate", "disable", "enable", "delete"] {
        assert_eq!(act(&app, &eve, id, action).await.status, StatusCode::NOT_FOUND, "{action}");
    }
    let path = "/hooks/nh_nope/rotate";
    let malformed = post_form(&app, path, Some(&eve.cookie), &[("csrf_token", &eve.csrf)]).await;
    assert_eq!(malformed.status, StatusCode::NOT_FOUND);
    assert_eq!(hook_count(&app).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks WHERE enabled").await, 1);
    assert_eq!(Vault::new(Some(&KEY)).open(&sealed_secret(&app, id).await).unwrap(), secret.as_bytes());
}

#[actix_web::test]
async fn a_post_without_its_csrf_token_is_refused_and_changes_nothing() {
    let (app, _owner, s, ep) = setup().await;
    create(&app, &s, ep, "https://203.0.113.10/in", "").await;
    let id = only_hook(&app, ep).await;

    let path = format!("/hooks/endpoint/{ep}");
    let no_token = post_form(&app, &path, Some(&s.cookie), &[("url", "https://203.0.113.10/b")]).await;
    assert_eq!(no_token.status, StatusCode::FORBIDDEN);
    let wrong = post_form(&app, &format!("/hooks/{id}/disable"), Some(&s.cookie), &[("csrf_token", "x")]).await;
    assert_eq!(wrong.status, StatusCode::FORBIDDEN);
    let delete = post_form(&app, &format!("/hooks/{id}/delete"), Some(&s.cookie), &[]).await;
    assert_eq!(delete.status, StatusCode::FORBIDDEN);
    assert_eq!(hook_count(&app).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks WHERE enabled").await, 1);
}

#[actix_web::test]
async fn a_team_member_who_is_not_admin_sees_the_teams_hooks_but_may_not_change_them() {
    let (app, _owner, s, _ep) = setup().await;
    let (team, _, team_scope) = app.store.create_team("ops", "ada@example.com").await.unwrap();
    let team_ep = app.agent(team_scope, "team-runner").await.id;
    create(&app, &s, team_ep, "https://203.0.113.10/team", "").await;
    let id = only_hook(&app, team_ep).await;
    let bob = board_owner(&app, "bob@example.com").await;
    app.store.add_team_member(team, bob.id, TeamRole::Member).await.unwrap();
    let bob = sign_in(&app, "bob@example.com").await;

    let page = get(&app, "/hooks", Some(&bob.cookie)).await;
    assert!(page.body.contains("https://203.0.113.10/team") && page.body.contains("Only an admin"), "{}", page.body);
    assert!(!page.body.contains(&format!("/hooks/{id}/rotate")), "no buttons for a member");
    assert_eq!(act(&app, &bob, id, "disable").await.status, StatusCode::FORBIDDEN);
    assert_eq!(create(&app, &bob, team_ep, "https://203.0.113.10/b", "").await.status, StatusCode::FORBIDDEN);
    assert_eq!(hook_count(&app).await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks WHERE enabled").await, 1);
}
