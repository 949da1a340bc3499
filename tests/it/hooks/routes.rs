//! Hook management through the operator and agent routes.

use awc::http::StatusCode;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::HookId;
use switchboard::domain::todo_state::TeamRole;
use switchboard::hooks::rules::health::HookHealthUpdate;
use switchboard::hooks::rules::hook::LastError;

use super::*;

const AGENT_HOOKS: &str = "/api/v1/agent/hooks";

fn at(v: &Value) -> DateTime<Utc> {
    v.as_str().unwrap_or_else(|| panic!("not a timestamp: {v}")).parse().unwrap()
}

fn failure() -> HookHealthUpdate {
    HookHealthUpdate { succeeded: false, last_status: Some(503), last_error: Some(LastError::ServerError) }
}

#[actix_web::test]
async fn an_operator_creates_lists_rotates_and_deletes_a_hook_and_sees_each_secret_once() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let created = operator_create(
        &app,
        &owner,
        &ep,
        body("https://198.51.100.7/in?token=s3cret", &["builds", "deploys", "builds"]),
    )
    .await;
    let id = hook_id(&created, "id");
    assert!(created["id"].as_str().unwrap().starts_with("nh_"), "{created}");
    assert_eq!(created["url"], "https://198.51.100.7/in?redacted", "the query is never shown");
    assert_eq!(created["queues"], json!(["builds", "deploys"]), "duplicates collapse");
    assert_eq!(created["enabled"], true);
    let secret = created["signing_secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_") && secret.len() == "whsec_".len() + 44, "{secret}");

    // Stored sealed: the column is an envelope that opens to the secret shown.
    let (sealed, previous) = stored_secrets(&app, id).await;
    assert!(sealed.starts_with("enc:v1:") && !sealed.contains(&secret["whsec_".len()..]), "{sealed}");
    assert_eq!(vault().open(&sealed).unwrap(), secret.as_bytes());
    assert_eq!(previous, None);
    // The full URL is kept for delivery.
    let url = text(&app, &format!("SELECT url FROM notify_hooks WHERE id = '{}'", id.0)).await;
    assert_eq!(url.as_deref(), Some("https://198.51.100.7/in?token=s3cret"));

    let (s, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    assert_eq!(listed["ceiling"], json!({"max": 5, "used": 1}));
    let hook = &listed["hooks"][0];
    assert_eq!(hook["id"], created["id"]);
    assert_eq!(hook["url"], "https://198.51.100.7/in?redacted");
    assert_eq!(hook["queues"], json!(["builds", "deploys"]));
    assert_eq!(hook["enabled"], true);
    assert_eq!(hook["disabled_reason"], Value::Null);
    assert_eq!(
        hook["health"],
        json!({"consecutive_failures": 0, "last_status": null, "last_error": null, "last_attempt_at": null})
    );
    assert_eq!(hook["previous_secret_valid_until"], Value::Null);
    let raw = listed.to_string();
    assert!(!raw.contains(&secret) && !raw.contains("signing_secret") && !raw.contains("s3cret"), "{raw}");

    let before_rotation = Utc::now();
    let (s, rotated) = app.post(&format!("/api/v1/hooks/{id}/rotate"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    assert_eq!(rotated["hook_id"], created["id"]);
    assert_eq!(rotated["enabled"], true);
    let new_secret = rotated["signing_secret"].as_str().unwrap().to_owned();
    assert!(new_secret.starts_with("whsec_") && new_secret != secret);
    let until = at(&rotated["previous_secret_valid_until"]);
    assert!(until > before_rotation + Duration::hours(24) - Duration::minutes(1), "{until}");
    assert!(until < Utc::now() + Duration::hours(24) + Duration::minutes(1), "{until}");
    let (sealed_now, previous) = stored_secrets(&app, id).await;
    assert_eq!(vault().open(&sealed_now).unwrap(), new_secret.as_bytes());
    assert_eq!(previous.as_deref(), Some(sealed.as_str()), "the old secret is kept, still sealed");

    let (_, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    assert_eq!(at(&listed["hooks"][0]["previous_secret_valid_until"]), until);
    assert!(!listed.to_string().contains(&new_secret));

    let (s, deleted) = app.call("DELETE", &format!("/api/v1/hooks/{id}"), Some(&owner.token), None).await;
    assert_eq!(s, StatusCode::OK, "{deleted}");
    assert_eq!(deleted, json!({"hook_id": id.to_string(), "deleted": true}));
    assert_eq!(hook_count(&app).await, 0);
    let (s, _) = app.call("DELETE", &format!("/api/v1/hooks/{id}"), Some(&owner.token), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "a deleted hook is gone");
    let (_, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    assert_eq!(listed, json!({"hooks": [], "ceiling": {"max": 5, "used": 0}}));
}

#[actix_web::test]
async fn an_agent_manages_its_own_endpoints_hooks_and_nothing_else_in_its_scope() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let me = app.endpoint(owner.scope, "me", &[Verb::ManageHooks]).await;
    let sibling = app.agent(owner.scope, "sibling").await;
    let theirs = operator_create(&app, &owner, &sibling, body("https://203.0.113.10/sibling", &[])).await;
    let theirs_id = hook_id(&theirs, "id");

    let (s, created) = app.post(AGENT_HOOKS, &me.token, body("https://203.0.113.10/mine", &["q"])).await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let mine = hook_id(&created, "id");
    let secret = created["signing_secret"].as_str().unwrap().to_owned();
    let endpoint_of_mine =
        text(&app, &format!("SELECT endpoint_id::text FROM notify_hooks WHERE id = '{}'", mine.0)).await.unwrap();
    assert_eq!(endpoint_of_mine, me.id.0.to_string());

    let (s, listed) = app.get(AGENT_HOOKS, &me.token).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    assert_eq!(listed["ceiling"], json!({"max": 5, "used": 1}), "the sibling's hook is not counted");
    assert_eq!(listed["hooks"].as_array().unwrap().len(), 1);
    assert_eq!(listed["hooks"][0]["id"], created["id"]);
    assert!(!listed.to_string().contains(&secret));

    // The sibling's hook, though in the same scope, reads like an unknown one.
    let (s, _) = app.post(&format!("{AGENT_HOOKS}/{theirs_id}/rotate"), &me.token, json!({})).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = app.call("DELETE", &format!("{AGENT_HOOKS}/{theirs_id}"), Some(&me.token), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (sibling_secret, sibling_previous) = stored_secrets(&app, theirs_id).await;
    assert_eq!(vault().open(&sibling_secret).unwrap(), theirs["signing_secret"].as_str().unwrap().as_bytes());
    assert_eq!(sibling_previous, None);

    let (s, rotated) = app.post(&format!("{AGENT_HOOKS}/{mine}/rotate"), &me.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    assert_eq!(rotated["hook_id"], created["id"]);
    assert_ne!(rotated["signing_secret"].as_str().unwrap(), secret);
    assert!(rotated["previous_secret_valid_until"].is_string());

    let (s, deleted) = app.call("DELETE", &format!("{AGENT_HOOKS}/{mine}"), Some(&me.token), None).await;
    assert_eq!(s, StatusCode::OK, "{deleted}");
    assert_eq!(deleted, json!({"hook_id": mine.to_string(), "deleted": true}));
    assert_eq!(hook_count(&app).await, 1, "only the sibling's hook is left");
}

#[actix_web::test]
async fn an_agent_without_the_notify_hooks_grant_is_forbidden_and_changes_nothing() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    // Every verb but notify_hooks: the grant is never implied.
    let others: Vec<Verb> = Verb::ALL.iter().copied().filter(|v| *v != Verb::ManageHooks).collect();
    let ep = app.endpoint(owner.scope, "worker", &others).await;
    let hook = operator_create(&app, &owner, &ep, body("https://203.0.113.10/h", &[])).await;
    let id = hook_id(&hook, "id");
    let before = stored_secrets(&app, id).await;
    for (method, path, payload) in [
        ("POST", AGENT_HOOKS.to_owned(), Some(body("https://203.0.113.10/other", &[]))),
        ("GET", AGENT_HOOKS.to_owned(), None),
        ("POST", format!("{AGENT_HOOKS}/{id}/rotate"), Some(json!({}))),
        ("DELETE", format!("{AGENT_HOOKS}/{id}"), None),
    ] {
        let (s, b) = app.call(method, &path, Some(&ep.token), payload.as_ref()).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{method} {path}: {b}");
        assert_eq!(b["error"]["code"], "forbidden");
        assert!(b["error"]["message"].as_str().unwrap().contains("notify_hooks"), "{b}");
    }
    assert_eq!(hook_count(&app).await, 1);
    assert_eq!(stored_secrets(&app, id).await, before, "the hook was not rotated");
}

#[actix_web::test]
async fn another_owners_endpoint_and_hooks_are_not_found() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let ep = app.agent(a.scope, "a-worker").await;
    let hook = operator_create(&app, &a, &ep, body("https://203.0.113.10/h", &[])).await;
    let id = hook_id(&hook, "id");
    let before = stored_secrets(&app, id).await;
    let unknown = HookId::new();
    let reference = app.call("DELETE", &format!("/api/v1/hooks/{unknown}"), Some(&b.token), None).await;
    assert_eq!(reference.0, StatusCode::NOT_FOUND);
    for (method, path, payload) in [
        ("POST", hooks_of(ep.id), Some(body("https://203.0.113.10/intruder", &[]))),
        ("GET", hooks_of(ep.id), None),
        ("POST", format!("/api/v1/hooks/{id}/rotate"), None),
        ("POST", format!("/api/v1/hooks/{id}/enable"), None),
        ("POST", format!("/api/v1/hooks/{id}/disable"), None),
        ("DELETE", format!("/api/v1/hooks/{id}"), None),
    ] {
        let got = app.call(method, &path, Some(&b.token), payload.as_ref()).await;
        assert_eq!(got.0, StatusCode::NOT_FOUND, "{method} {path}: {}", got.1);
        assert_eq!(got.1, reference.1, "{method} {path}: a foreign hook reads like an unknown one");
    }
    // Another owner's agent cannot reach it either.
    let b_agent = app.agent(b.scope, "b-worker").await;
    for (method, path) in [("POST", format!("{AGENT_HOOKS}/{id}/rotate")), ("DELETE", format!("{AGENT_HOOKS}/{id}"))] {
        let got = app.call(method, &path, Some(&b_agent.token), Some(&json!({}))).await;
        assert_eq!(got.0, StatusCode::NOT_FOUND, "{method} {path}: {}", got.1);
    }
    assert_eq!(hook_count(&app).await, 1);
    assert_eq!(stored_secrets(&app, id).await, before);
    let (_, listed) = app.get(&hooks_of(ep.id), &a.token).await;
    assert_eq!(listed["hooks"][0]["enabled"], true);
}

#[actix_web::test]
async fn a_team_member_may_list_the_teams_hooks_but_only_an_admin_may_change_them() {
    let app = spawn().await;
    let admin = app.owner("boss@example.com").await;
    let member = app.owner("m@example.com").await;
    let (team, _, team_scope) = app.store.create_team("crew", "boss@example.com").await.unwrap();
    app.store.add_team_member(team, member.id, TeamRole::Member).await.unwrap();
    let ep = app.agent(team_scope, "crew-worker").await;
    let hook = operator_create(&app, &admin, &ep, body("https://203.0.113.10/h", &[])).await;
    let id = hook_id(&hook, "id");

    let (s, listed) = app.get(&hooks_of(ep.id), &member.token).await;
    assert_eq!(s, StatusCode::OK, "{listed}");
    assert_eq!(listed["ceiling"]["used"], 1);
    for (method, path, payload) in [
        ("POST", hooks_of(ep.id), Some(body("https://203.0.113.10/member", &[]))),
        ("POST", format!("/api/v1/hooks/{id}/rotate"), None),
        ("POST", format!("/api/v1/hooks/{id}/disable"), None),
        ("DELETE", format!("/api/v1/hooks/{id}"), None),
    ] {
        let (s, b) = app.call(method, &path, Some(&member.token), payload.as_ref()).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{method} {path}: {b}");
    }
    assert_eq!(hook_count(&app).await, 1);
    let (s, _) = app.post(&format!("/api/v1/hooks/{id}/rotate"), &admin.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "the admin may");
}

#[actix_web::test]
async fn the_hook_past_the_ceiling_is_refused_and_nothing_is_written() {
    let app = spawn_with(|s| s.notify_hook_max = 2).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let other = app.agent(owner.scope, "other").await;
    let first = operator_create(&app, &owner, &ep, body("https://203.0.113.10/1", &[])).await;
    operator_create(&app, &owner, &ep, body("https://203.0.113.10/2", &[])).await;
    for (token, path) in [(&owner.token, hooks_of(ep.id)), (&ep.token, AGENT_HOOKS.to_owned())] {
        let (s, b) = app.post(&path, token, body("https://203.0.113.10/3", &[])).await;
        assert_eq!(s, StatusCode::CONFLICT, "{path}: {b}");
        assert_eq!(b["error"]["code"], "conflict");
        assert!(b["error"]["message"].as_str().unwrap().starts_with("ceiling_exceeded"), "{b}");
    }
    assert_eq!(hook_count(&app).await, 2);
    let (_, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    assert_eq!(listed["ceiling"], json!({"max": 2, "used": 2}));
    // The ceiling is per endpoint.
    operator_create(&app, &owner, &other, body("https://203.0.113.10/other", &[])).await;
    // Deleting one makes room again.
    let id = hook_id(&first, "id");
    let (s, _) = app.call("DELETE", &format!("/api/v1/hooks/{id}"), Some(&owner.token), None).await;
    assert_eq!(s, StatusCode::OK);
    operator_create(&app, &owner, &ep, body("https://203.0.113.10/3", &[])).await;
}

#[actix_web::test]
async fn racing_creates_never_pass_the_ceiling_together() {
    let app = spawn_with(|s| s.notify_hook_max = 2).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let path = hooks_of(ep.id);
    let calls: Vec<_> =
        (0..8).map(|i| app.post(&path, &owner.token, body(&format!("https://203.0.113.10/{i}"), &[]))).collect();
    let answers = futures_util::future::join_all(calls).await;
    let created = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
    let refused = answers.iter().filter(|(s, _)| *s == StatusCode::CONFLICT).count();
    assert_eq!((created, refused), (2, 6), "{answers:?}");
    assert_eq!(hook_count(&app).await, 2);
}

#[actix_web::test]
async fn with_the_kill_switch_or_a_ceiling_of_zero_creation_is_refused_and_listing_still_works() {
    for (enabled, max) in [(false, 5), (true, 0)] {
        let app = spawn_with(|s| {
            s.notify_hooks_enabled = enabled;
            s.notify_hook_max = max;
        })
        .await;
        let owner = app.owner("a@example.com").await;
        let ep = app.agent(owner.scope, "worker").await;
        // A URL that would be refused on its own: the switch answers first.
        for url in ["https://203.0.113.10/h", "ftp://nowhere"] {
            for (token, path) in [(&owner.token, hooks_of(ep.id)), (&ep.token, AGENT_HOOKS.to_owned())] {
                let (s, b) = app.post(&path, token, body(url, &[])).await;
                assert_eq!(s, StatusCode::CONFLICT, "enabled={enabled} max={max} {path}: {b}");
                let message = b["error"]["message"].as_str().unwrap();
                assert!(message.contains("SWITCHBOARD_NOTIFY_HOOKS_ENABLED"), "{message}");
            }
        }
        assert_eq!(hook_count(&app).await, 0);
        let (s, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
        assert_eq!(s, StatusCode::OK);
        assert_eq!(listed, json!({"hooks": [], "ceiling": {"max": max, "used": 0}}));
    }
}

#[actix_web::test]
async fn without_an_encryption_key_creation_is_refused_naming_the_setting() {
    let app = TestApp::spawn_with(|s| s.secret_encryption_key = None).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    for (token, path) in [(&owner.token, hooks_of(ep.id)), (&ep.token, AGENT_HOOKS.to_owned())] {
        let (s, b) = app.post(&path, token, body("https://203.0.113.10/h", &[])).await;
        assert_eq!(s, StatusCode::CONFLICT, "{path}: {b}");
        assert!(b["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"), "{b}");
    }
    assert_eq!(hook_count(&app).await, 0);
}

#[actix_web::test]
async fn a_revoked_endpoint_takes_no_new_hooks() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let (s, _) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, b) = app.post(&hooks_of(ep.id), &owner.token, body("https://203.0.113.10/h", &[])).await;
    assert_eq!(s, StatusCode::CONFLICT, "{b}");
    assert_eq!(hook_count(&app).await, 0);
}

#[actix_web::test]
async fn plain_http_urls_are_accepted_only_when_the_instance_allows_them() {
    let strict = spawn().await;
    let owner = strict.owner("a@example.com").await;
    let ep = strict.agent(owner.scope, "worker").await;
    let (s, b) = strict.post(&hooks_of(ep.id), &owner.token, body("http://203.0.113.10/h", &[])).await;
    assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{b}");
    assert!(b["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_PUSH_ALLOW_HTTP"), "{b}");

    let lax = spawn_with(|s| s.push_allow_http = true).await;
    let owner = lax.owner("a@example.com").await;
    let ep = lax.agent(owner.scope, "worker").await;
    let created = operator_create(&lax, &owner, &ep, body("http://203.0.113.10/h", &[])).await;
    assert_eq!(created["url"], "http://203.0.113.10/h");
}

#[actix_web::test]
async fn rotation_re_enables_a_hook_failures_disabled_but_not_one_an_operator_disabled() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let failing = hook_id(&operator_create(&app, &owner, &ep, body("https://203.0.113.10/a", &[])).await, "id");
    let switched_off = hook_id(&operator_create(&app, &owner, &ep, body("https://203.0.113.10/b", &[])).await, "id");
    for _ in 0..10 {
        app.store.record_hook_outcome(failing, failure()).await.unwrap();
    }
    let (s, off) = app.post(&format!("/api/v1/hooks/{switched_off}/disable"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{off}");
    assert_eq!((off["enabled"].clone(), off["disabled_reason"].clone()), (json!(false), json!("operator")));

    let (_, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    let first = &listed["hooks"][0];
    assert_eq!(first["enabled"], false);
    assert_eq!(first["disabled_reason"], "consecutive_failures");
    assert_eq!(first["health"]["consecutive_failures"], 10);
    assert_eq!(first["health"]["last_status"], 503);
    assert_eq!(first["health"]["last_error"], "server_error");
    assert!(first["health"]["last_attempt_at"].is_string());

    let (s, rotated) = app.post(&format!("/api/v1/hooks/{failing}/rotate"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    assert_eq!(rotated["enabled"], true, "auto-disabled: a rotation is the fix");
    let (s, rotated) = app.post(&format!("/api/v1/hooks/{switched_off}/rotate"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{rotated}");
    assert_eq!(rotated["enabled"], false, "an operator's decision stands");

    let (_, listed) = app.get(&hooks_of(ep.id), &owner.token).await;
    assert_eq!(listed["hooks"][0]["disabled_reason"], Value::Null);
    assert_eq!(listed["hooks"][0]["health"]["consecutive_failures"], 0, "a re-enabled hook starts over");
    assert_eq!(listed["hooks"][1]["disabled_reason"], "operator");

    // Only an operator switches it back on; its count starts over.
    let (s, on) = app.post(&format!("/api/v1/hooks/{switched_off}/enable"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{on}");
    assert_eq!((on["enabled"].clone(), on["disabled_reason"].clone()), (json!(true), Value::Null));
    assert_eq!(on["health"]["consecutive_failures"], 0);
}

#[actix_web::test]
async fn an_agent_may_list_but_never_rotate_or_delete_a_hook_a_human_put_on_its_endpoint() {
    // A rotation answers the new signing secret: with it an injected agent could sign
    // doorbells the human's receiver trusts.
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let me = app.endpoint(owner.scope, "me", &[Verb::ManageHooks]).await;
    let humans = operator_create(&app, &owner, &me, body("https://203.0.113.10/humans", &[])).await;
    let humans_id = hook_id(&humans, "id");
    let (s, listed) = app.get(AGENT_HOOKS, &me.token).await;
    assert_eq!((s, listed["hooks"].as_array().unwrap().len()), (StatusCode::OK, 1), "{listed}");
    let (s, b) = app.post(&format!("{AGENT_HOOKS}/{humans_id}/rotate"), &me.token, json!({})).await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{b}");
    assert!(!b.to_string().contains("signing_secret"), "{b}");
    let (s, _) = app.call("DELETE", &format!("{AGENT_HOOKS}/{humans_id}"), Some(&me.token), None).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (secret, previous) = stored_secrets(&app, humans_id).await;
    assert_eq!(vault().open(&secret).unwrap(), humans["signing_secret"].as_str().unwrap().as_bytes());
    assert_eq!(previous, None, "nothing rotated");
    // The owner still rotates it.
    let (s, b) = app.post(&format!("/api/v1/hooks/{humans_id}/rotate"), &owner.token, json!({})).await;
    assert_eq!(s, StatusCode::OK, "{b}");
}
