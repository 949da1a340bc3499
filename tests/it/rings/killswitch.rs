//! `SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false`: no hook can be created and no dispatcher
//! runs, so even a hook already stored hears nothing.

use serde_json::json;
use switchboard::hooks::rules::hook::HookSpec;
use switchboard::store::signals::Signal;
use switchboard::vault::Vault;

use super::*;
use testkit::receiver::Receiver;

#[actix_web::test]
async fn with_the_kill_switch_off_creation_is_refused_and_a_stored_hook_never_fires() {
    let app = spawn_with(|s| s.notify_hooks_enabled = false).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    let (s, b) = app.post(&format!("/api/v1/endpoints/{}/hooks", ep.id), &owner.token, json!({"url": rx.url()})).await;
    assert_eq!(s, StatusCode::CONFLICT, "{b}");
    assert!(b["error"]["message"].as_str().unwrap().contains("SWITCHBOARD_NOTIFY_HOOKS_ENABLED"), "{b}");
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks").await, 0);

    // A hook stored earlier (as if created before the switch was thrown).
    let spec = HookSpec::parse(&rx.url(), &[], true).unwrap();
    app.store.create_hook(&Vault::new(Some(&KEY)), owner.scope, ep.id, &spec, 5, false).await.unwrap();
    let id = generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;
    fail_to_dead_letter(&app, &ep, id).await;
    // The store announced both, with the sender gate passed.
    let signals = app.signals.take().await;
    assert!(signals.iter().any(|s| matches!(s, Signal::Ready(r) if r.todo.id == id && r.todo.sender_gate)));
    assert!(signals.iter().any(|s| matches!(s, Signal::DeadLettered(d) if d.todo.id == id && d.todo.sender_gate)));

    // Nothing can fire as a control here: no dispatcher was started, so nothing can
    // ring later either, and the instance's listener session does not follow hook
    // changes (no `hooks` series of the listening gauge).
    assert!(app.dispatcher.is_none(), "no dispatcher runs");
    let text = app.metrics_text(METRICS_TOKEN).await;
    assert!(text.contains(r#"switchboard_change_listener_listening{listener="auth"}"#), "{text}");
    assert!(!text.contains(r#"listener="hooks""#), "no hook change follower: {text}");
    assert_eq!(rx.count(), 0);
    for kind in ["todo.ready", "todo.dead_lettered"] {
        for outcome in ["delivered", "failed", "dropped"] {
            assert_eq!(metric(&app, &notifications(kind, outcome)).await, 0, "{kind} {outcome}");
        }
    }
}
