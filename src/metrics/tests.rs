//! The families a registry shows and where counts land.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::*;
use crate::hooks::rules::body::HookEvent;
use crate::hooks::rules::hook::HookDisabledReason;
use crate::hooks::rules::retry::AttemptClass;
use crate::outbound::failure::TransportFailure;

/// A drop count the test moves (the store's emitter is the real one).
#[derive(Clone, Default)]
struct Dropped(Arc<AtomicU64>);

impl DroppedSignals for Dropped {
    fn signals_dropped(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

fn line<'a>(text: &'a str, series: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
}

#[test]
fn every_series_is_shown_at_zero_before_anything_happens() {
    let text = Metrics::new(&Dropped::default()).render().unwrap();
    for series in [
        r#"switchboard_notify_hook_notifications_total{type="todo.ready",outcome="delivered"}"#,
        r#"switchboard_notify_hook_notifications_total{type="todo.dead_lettered",outcome="dropped"}"#,
        r#"switchboard_notify_hook_attempts_total{result="2xx"}"#,
        r#"switchboard_notify_hook_attempts_total{result="rejected_ssrf"}"#,
        r#"switchboard_notify_hooks_disabled_total{reason="consecutive_failures"}"#,
        "switchboard_webhook_deliveries_total",
        "switchboard_webhook_verify_failures_total",
        "switchboard_signals_dropped_total",
        r#"switchboard_claims_deferred_total{reason="paused"}"#,
        r#"switchboard_claims_deferred_total{reason="window_exhausted"}"#,
        r#"switchboard_agent_batches_total{verb="fail",outcome="refused"}"#,
        r#"switchboard_agent_batch_items_total{verb="create_todo",outcome="conflict"}"#,
        "switchboard_long_poll_waiters",
        "switchboard_long_poll_wakeups_total",
        r#"switchboard_long_poll_empty_total{reason="timed_out"}"#,
        r#"switchboard_long_poll_empty_total{reason="full"}"#,
        r#"switchboard_long_poll_empty_total{reason="shutdown"}"#,
        r#"switchboard_long_poll_empty_total{reason="scope_share"}"#,
        r#"switchboard_outbound_refused_total{reason="loopback"}"#,
        r#"switchboard_outbound_refused_total{reason="unresolved"}"#,
        r#"switchboard_outbound_refused_total{reason="dns_timeout"}"#,
        r#"switchboard_places_refused_total{place="mcp_session",reason="scope_share"}"#,
        r#"switchboard_places_refused_total{place="mcp_session",reason="endpoint_share"}"#,
        r#"switchboard_places_refused_total{place="mcp_session",reason="instance_full"}"#,
        r#"switchboard_places_refused_total{place="long_poll",reason="scope_share"}"#,
        r#"switchboard_places_refused_total{place="long_poll",reason="instance_full"}"#,
    ] {
        assert_eq!(line(&text, series), Some(format!("{series} 0").as_str()), "{series} in\n{text}");
    }
}

/// The exposition with each family's series sorted (a family keeps its series in a
/// hash map, so their order changes from one registry to the next) and the families
/// by name.
fn normalized(text: &str) -> String {
    let mut families: Vec<Vec<&str>> = Vec::new();
    for line in text.lines().filter(|l| *l != "# EOF") {
        if line.starts_with("# HELP ") || families.is_empty() {
            families.push(Vec::new());
        }
        families.last_mut().unwrap().push(line);
    }
    for family in &mut families {
        family.sort_by_key(|l| (!l.starts_with('#'), if l.starts_with('#') { "" } else { *l }));
    }
    families.sort();
    families.concat().join("\n") + "\n"
}

/// Every family's name, help text, type and series of a fresh registry (one listener
/// reporting), byte for byte: `exposition.txt`, which a new or changed family changes.
#[test]
fn a_fresh_registry_shows_the_checked_in_families() {
    let metrics = Metrics::new(&Dropped::default());
    // A listener's series is made when it first reports; until then its family is not shown.
    metrics.listener_listening("auth", true);
    let text = normalized(&metrics.render().unwrap());
    if std::env::var_os("SWITCHBOARD_WRITE_EXPOSITION").is_some() {
        std::fs::write(concat!(env!("CARGO_MANIFEST_DIR"), "/src/metrics/exposition.txt"), &text).unwrap();
    }
    assert_eq!(text, include_str!("exposition.txt"), "SWITCHBOARD_WRITE_EXPOSITION=1 rewrites exposition.txt");
}

#[test]
fn counts_land_on_their_own_label_set_and_clones_share_them() {
    let m = Metrics::new(&Dropped::default());
    let clone = m.clone();
    m.ring(HookEvent::DeadLettered, RingOutcome::Failed);
    clone.ring(HookEvent::DeadLettered, RingOutcome::Failed);
    m.attempt(AttemptClass::from_status(503).metric_result());
    m.attempt(AttemptClass::from(TransportFailure::RejectedSsrf).metric_result());
    m.hook_disabled(HookDisabledReason::ConsecutiveFailures);
    m.webhook_delivery();
    m.webhook_verify_failure();
    let text = m.render().unwrap();
    for (series, value) in [
        (r#"switchboard_notify_hook_notifications_total{type="todo.dead_lettered",outcome="failed"}"#, 2),
        (r#"switchboard_notify_hook_notifications_total{type="todo.ready",outcome="failed"}"#, 0),
        (r#"switchboard_notify_hook_attempts_total{result="5xx"}"#, 1),
        (r#"switchboard_notify_hook_attempts_total{result="rejected_ssrf"}"#, 1),
        (r#"switchboard_notify_hook_attempts_total{result="network"}"#, 0),
        (r#"switchboard_notify_hooks_disabled_total{reason="consecutive_failures"}"#, 1),
        ("switchboard_webhook_deliveries_total", 1),
        ("switchboard_webhook_verify_failures_total", 1),
    ] {
        assert_eq!(line(&text, series), Some(format!("{series} {value}").as_str()), "{series}");
    }
}

#[test]
fn the_dropped_signals_are_read_at_each_scrape() {
    let dropped = Dropped::default();
    let m = Metrics::new(&dropped);
    assert_eq!(
        line(&m.render().unwrap(), "switchboard_signals_dropped_total"),
        Some("switchboard_signals_dropped_total 0")
    );
    dropped.0.store(3, Ordering::Relaxed);
    assert_eq!(
        line(&m.render().unwrap(), "switchboard_signals_dropped_total"),
        Some("switchboard_signals_dropped_total 3")
    );
}
