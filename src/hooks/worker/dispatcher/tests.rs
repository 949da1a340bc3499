//! The supervisor's mailbox bound, seen from the dispatcher's side: the supervisor runs
//! on the dispatcher's thread, so everything handed over in one go is queued before it
//! can take anything out.

use std::num::NonZeroU32;

use uuid::Uuid;

use super::*;
use crate::config::CidrList;
use crate::domain::ids::HookId;
use crate::hooks::cache::HookCache;
use crate::hooks::rules::body::HookEvent;
use crate::metrics::Metrics;
use crate::outbound::{Guard, Policy};
use crate::store::Store;
use crate::store::signals::Emitter;
use crate::vault::Vault;

/// A channel whose store and outbound client are never used: nothing here runs long
/// enough to reach them (the pool connects lazily, and never does).
fn channel() -> HookChannel {
    let listen = "127.0.0.1:9".parse().expect("an address");
    HookChannel {
        store: Store::new(crate::db::pool("postgres://postgres@127.0.0.1:9/unused", 1).expect("pool"), Emitter::none()),
        vault: Vault::new(None),
        guard: Guard::new(Policy::new(false, &CidrList(Vec::new()), listen)).expect("guard"),
        metrics: Metrics::new(&Emitter::none()),
        rate_per_minute: NonZeroU32::new(120).expect("non-zero"),
        cache: HookCache::default(),
    }
}

/// `n` hooks of `endpoint`.
fn hooks(endpoint: EndpointId, n: usize) -> Vec<HookTarget> {
    (0..n)
        .map(|i| HookTarget {
            hook_id: HookId(Uuid::from_u128(i as u128 + 1)),
            endpoint_id: endpoint,
            url: format!("https://203.0.113.10/h{i}"),
            sealed_secret: "enc:v1:x".into(),
            sealed_previous_secret: None,
            previous_valid_until: None,
            endpoint_expires_at: None,
        })
        .collect()
}

/// `todo.ready` rings counted as dropped.
fn dropped(metrics: &Metrics) -> u64 {
    let text = metrics.render().expect("render");
    let series = r#"switchboard_notify_hook_notifications_total{type="todo.ready",outcome="dropped"} "#;
    text.lines().find_map(|l| l.strip_prefix(series)).and_then(|v| v.trim().parse().ok()).expect("series")
}

#[actix_rt::test]
async fn announcements_handed_over_before_the_supervisor_runs_queue_no_more_than_its_mailbox_holds() {
    let channel = channel();
    let metrics = channel.metrics.clone();
    let mut dispatcher = Dispatcher::new(channel);
    let endpoint = EndpointId(Uuid::from_u128(7));
    let hooks = hooks(endpoint, SUPERVISOR_MAILBOX + 44);
    // Two announcements back to back, as the dispatcher hands over a backlog: the new
    // supervisor gets no turn in between, so its mailbox holds what it holds.
    for _ in 0..2 {
        let in_flight = metrics.ring_in_flight();
        let n = Announcement {
            kind: HookEvent::Ready,
            todo: crate::domain::ids::TodoId::new(),
            queue: "builds".into(),
            body: Bytes::new(),
            in_flight,
        };
        dispatcher.hand_over(endpoint, &hooks, true, n);
    }
    assert_eq!(
        dropped(&metrics),
        (2 * hooks.len() - SUPERVISOR_MAILBOX) as u64,
        "the first {SUPERVISOR_MAILBOX} were queued, nothing more"
    );
}
