//! What the dispatcher relies on: which hooks a todo matches, the re-check before each
//! attempt, health after each ring, and previous secrets that expire.

use switchboard::domain::ids::HookId;
use switchboard::hooks::rules::health::HookHealthUpdate;
use switchboard::hooks::rules::hook::FAILURES_BEFORE_DISABLE;
use switchboard::hooks::rules::hook::LastError;
use switchboard::hooks::statements::{HookReach, HookTarget};

use super::*;

fn failed(error: LastError) -> HookHealthUpdate {
    HookHealthUpdate { succeeded: false, last_status: None, last_error: Some(error) }
}

fn succeeded() -> HookHealthUpdate {
    HookHealthUpdate { succeeded: true, last_status: Some(204), last_error: None }
}

fn ids(targets: &[HookTarget]) -> Vec<HookId> {
    targets.iter().map(|t| t.hook_id).collect()
}

async fn health(app: &TestApp, id: HookId) -> (bool, Option<String>, i64) {
    let enabled = app.db.count(&format!("SELECT enabled::int::bigint FROM notify_hooks WHERE id = '{}'", id.0)).await;
    let reason = text(app, &format!("SELECT disabled_reason FROM notify_hooks WHERE id = '{}'", id.0)).await;
    let failures =
        app.db.count(&format!("SELECT consecutive_failures::bigint FROM notify_hooks WHERE id = '{}'", id.0)).await;
    (enabled == 1, reason, failures)
}

#[actix_web::test]
async fn the_tenth_consecutive_failure_disables_the_hook_and_says_so_once() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    for n in 1..FAILURES_BEFORE_DISABLE {
        assert_eq!(
            app.store.record_hook_outcome(id, failed(LastError::Timeout)).await.unwrap(),
            Some(false),
            "failure {n}"
        );
        assert_eq!(health(&app, id).await, (true, None, i64::from(n)));
    }
    assert_eq!(app.store.record_hook_outcome(id, failed(LastError::Network)).await.unwrap(), Some(true), "the 10th");
    assert_eq!(health(&app, id).await, (false, Some("consecutive_failures".into()), 10));
    let last = text(&app, &format!("SELECT last_error FROM notify_hooks WHERE id = '{}'", id.0)).await;
    assert_eq!(last.as_deref(), Some("network"));
    // A straggling attempt that ends later does not announce the disabling again.
    assert_eq!(app.store.record_hook_outcome(id, failed(LastError::Timeout)).await.unwrap(), Some(false));
    // Nor does a success switch it back on: that takes a rotation or an operator.
    assert_eq!(app.store.record_hook_outcome(id, succeeded()).await.unwrap(), Some(false));
    assert_eq!(health(&app, id).await, (false, Some("consecutive_failures".into()), 0));
}

#[actix_web::test]
async fn a_success_resets_the_failure_count_and_clears_the_last_error() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    for _ in 1..FAILURES_BEFORE_DISABLE {
        app.store.record_hook_outcome(id, failed(LastError::ServerError)).await.unwrap();
    }
    assert_eq!(app.store.record_hook_outcome(id, succeeded()).await.unwrap(), Some(false));
    assert_eq!(health(&app, id).await, (true, None, 0));
    assert_eq!(text(&app, &format!("SELECT last_error FROM notify_hooks WHERE id = '{}'", id.0)).await, None);
    assert_eq!(app.db.count(&format!("SELECT last_status::bigint FROM notify_hooks WHERE id = '{}'", id.0)).await, 204);
    // Nine more failures after the success are nine, not nineteen.
    for _ in 1..FAILURES_BEFORE_DISABLE {
        assert_eq!(app.store.record_hook_outcome(id, failed(LastError::Timeout)).await.unwrap(), Some(false));
    }
    assert_eq!(health(&app, id).await, (true, None, 9));
}

#[actix_web::test]
async fn failures_on_an_operator_disabled_hook_keep_the_operators_reason() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    app.store.set_hook_enabled(HookReach::Scopes(&[owner.scope]), id, false).await.unwrap();
    for _ in 0..FAILURES_BEFORE_DISABLE + 2 {
        assert_eq!(app.store.record_hook_outcome(id, failed(LastError::Timeout)).await.unwrap(), Some(false));
    }
    assert_eq!(health(&app, id).await, (false, Some("operator".into()), 12));
}

#[actix_web::test]
async fn recording_an_outcome_for_a_deleted_hook_finds_nothing() {
    let app = spawn().await;
    assert_eq!(app.store.record_hook_outcome(HookId::new(), succeeded()).await.unwrap(), None);
}

#[actix_web::test]
async fn a_hook_on_another_queue_stays_silent() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let every = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    let builds = store_create(&app, owner.scope, ep.id, &["builds", "deploys"]).await.hook.id;
    let other = store_create(&app, owner.scope, ep.id, &["other"]).await.hook.id;
    assert_eq!(ids(&app.store.matching_hooks(ep.id, "builds").await.unwrap()), vec![every, builds]);
    assert_eq!(ids(&app.store.matching_hooks(ep.id, "deploys").await.unwrap()), vec![every, builds]);
    assert_eq!(ids(&app.store.matching_hooks(ep.id, "other").await.unwrap()), vec![every, other]);
    assert_eq!(ids(&app.store.matching_hooks(ep.id, "misc").await.unwrap()), vec![every]);
    assert!(app.store.matching_hooks(ep.id, "quarantine").await.unwrap().is_empty(), "held deliveries never announce");
    assert!(app.store.recheck_hook(builds, "builds").await.unwrap().is_some());
    assert!(app.store.recheck_hook(builds, "misc").await.unwrap().is_none());
    assert!(app.store.recheck_hook(every, "misc").await.unwrap().is_some());
}

#[actix_web::test]
async fn only_enabled_hooks_of_this_active_unexpired_endpoint_match() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let neighbour = app.agent(owner.scope, "neighbour").await;
    let on = store_create(&app, owner.scope, ep.id, &[]).await;
    let off = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    let theirs = store_create(&app, owner.scope, neighbour.id, &[]).await.hook.id;
    app.store.set_hook_enabled(HookReach::Scopes(&[owner.scope]), off, false).await.unwrap();

    let targets = app.store.matching_hooks(ep.id, "q").await.unwrap();
    assert_eq!(ids(&targets), vec![on.hook.id]);
    let target = &targets[0];
    assert_eq!(target.endpoint_id, ep.id);
    assert_eq!(target.url, "https://198.51.100.7/in?token=abc", "the dispatcher gets the full URL");
    assert_eq!(vault().open(&target.sealed_secret).unwrap(), on.signing_secret.as_bytes());
    assert_eq!(target.sealed_previous_secret, None);
    let debug = format!("{target:?}");
    assert!(!debug.contains("token=abc") && !debug.contains(&target.sealed_secret), "{debug}");
    assert!(app.store.recheck_hook(off, "q").await.unwrap().is_none(), "disabled");
    assert!(app.store.recheck_hook(theirs, "q").await.unwrap().is_some());

    // An expired endpoint (not yet swept) is silent, and so is a revoked one.
    app.db
        .exec(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{}'", ep.id.0))
        .await;
    assert!(app.store.matching_hooks(ep.id, "q").await.unwrap().is_empty());
    assert!(app.store.recheck_hook(on.hook.id, "q").await.unwrap().is_none());
    app.store.revoke_endpoint(&[owner.scope], neighbour.id).await.unwrap();
    assert!(app.store.matching_hooks(neighbour.id, "q").await.unwrap().is_empty());
    assert!(app.store.recheck_hook(theirs, "q").await.unwrap().is_none());
}

#[actix_web::test]
async fn a_deleted_hook_fails_its_recheck() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    assert!(app.store.recheck_hook(id, "q").await.unwrap().is_some());
    app.store.delete_hook(HookReach::Scopes(&[owner.scope]), id).await.unwrap();
    assert!(app.store.recheck_hook(id, "q").await.unwrap().is_none());
    assert_eq!(app.store.record_hook_outcome(id, succeeded()).await.unwrap(), None);
}

#[actix_web::test]
async fn the_previous_secret_signs_for_24_hours_after_a_rotation_and_is_then_forgotten() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let created = store_create(&app, owner.scope, ep.id, &[]).await;
    let id = created.hook.id;
    let rotated = app.store.rotate_hook(&vault(), HookReach::Scopes(&[owner.scope]), id).await.unwrap();

    let target = app.store.recheck_hook(id, "q").await.unwrap().unwrap();
    assert_eq!(vault().open(&target.sealed_secret).unwrap(), rotated.signing_secret.as_bytes());
    let previous = target.sealed_previous_secret.expect("dual signing after a rotation");
    assert_eq!(vault().open(&previous).unwrap(), created.signing_secret.as_bytes());
    assert_eq!(app.store.clear_expired_previous_secrets().await.unwrap(), 0, "still within its 24 hours");

    // 24 hours later (time travel by SQL): no longer offered, then swept.
    app.db
        .exec(&format!(
            "UPDATE notify_hooks SET previous_valid_until = now() - interval '1 second' WHERE id = '{}'",
            id.0
        ))
        .await;
    let target = app.store.matching_hooks(ep.id, "q").await.unwrap().remove(0);
    assert_eq!(target.sealed_previous_secret, None);
    assert_eq!(app.store.clear_expired_previous_secrets().await.unwrap(), 1);
    assert_eq!(stored_secrets(&app, id).await.1, None);
    let left = app.db.count("SELECT count(*) FROM notify_hooks WHERE previous_valid_until IS NOT NULL").await;
    assert_eq!(left, 0);
    assert_eq!(app.store.clear_expired_previous_secrets().await.unwrap(), 0);
}

#[actix_web::test]
async fn a_second_rotation_keeps_only_the_secret_it_replaced() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = store_create(&app, owner.scope, ep.id, &[]).await.hook.id;
    let scopes = [owner.scope];
    let reach = HookReach::Scopes(&scopes);
    let first = app.store.rotate_hook(&vault(), reach, id).await.unwrap();
    let second = app.store.rotate_hook(&vault(), reach, id).await.unwrap();
    let target = app.store.recheck_hook(id, "q").await.unwrap().unwrap();
    assert_eq!(vault().open(&target.sealed_secret).unwrap(), second.signing_secret.as_bytes());
    assert_eq!(vault().open(&target.sealed_previous_secret.unwrap()).unwrap(), first.signing_secret.as_bytes());
}
