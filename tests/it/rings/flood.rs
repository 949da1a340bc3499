//! A flood at one endpoint is bounded by its supervisor's mailbox and delivery slots,
//! and every notification is counted once: delivered, failed or dropped.

use switchboard::hooks::rules::hook::HookSpec;
use switchboard::hooks::worker::{MAX_RINGS_IN_FLIGHT, SUPERVISOR_MAILBOX};
use switchboard::vault::Vault;

use super::*;
use testkit::receiver::Receiver;

/// More hooks on one endpoint than its supervisor's mailbox holds.
const HOOKS: usize = SUPERVISOR_MAILBOX + 44;

#[actix_web::test]
async fn a_flood_at_one_endpoint_is_held_to_its_supervisors_mailbox_and_every_notification_is_counted() {
    let app = spawn_with(|s| s.notify_hook_max = HOOKS as u32).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    let vault = Vault::new(Some(&KEY));
    for i in 0..HOOKS {
        let spec = HookSpec::parse(&format!("{}/{i}", rx.url()), &[], true).unwrap();
        app.store.create_hook(&vault, owner.scope, ep.id, &spec, HOOKS as u32, false).await.unwrap();
    }

    // One todo: one notification per hook, all handed to the endpoint's new supervisor
    // in one go (it runs on the dispatcher's thread, so it takes none out meanwhile).
    generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "flood", json!({})).await;
    let sent = HOOKS as u64;
    let counted = async || {
        let mut sum = 0;
        for outcome in ["delivered", "failed", "dropped"] {
            sum += metric(&app, &notifications("todo.ready", outcome)).await;
        }
        sum
    };
    wait_until(format!("{sent} notifications counted"), DEADLINE, async || {
        let n = counted().await;
        if n >= sent { Ok(()) } else { Err(format!("counted {n}")) }
    })
    .await;
    wait_metric(&app, METRICS_TOKEN, "switchboard_notify_hook_notifications_in_flight", 0).await;

    let delivered = metric(&app, &notifications("todo.ready", "delivered")).await;
    let dropped = metric(&app, &notifications("todo.ready", "dropped")).await;
    assert_eq!(counted().await, sent, "each notification counted once");
    assert_eq!(metric(&app, &notifications("todo.ready", "failed")).await, 0);
    // The mailbox took SUPERVISOR_MAILBOX of them (the rest dropped at once); of those,
    // the supervisor started as many as it has delivery slots and dropped the others.
    // The rate (120 a minute per hook) allows every hook its one.
    assert_eq!(
        delivered,
        SUPERVISOR_MAILBOX.min(MAX_RINGS_IN_FLIGHT) as u64,
        "delivered {delivered}, dropped {dropped}"
    );
    assert_eq!(rx.count() as u64, delivered, "the receiver heard exactly the deliveries");
}
