//! `switchboard_digest_runs_total{outcome}` counts each send time once, by what came of
//! it: sent, skipped as quiet, skipped for being late.

use super::*;
use crate::harness::wait::wait_metric;

/// A digest of `o` (weekly, to a sink subscribed to nothing else), due `ago` ago.
async fn due_digest(app: &TestApp, o: &Owner, rx: &Receiver, name: &str, skip_when_quiet: bool, ago: &str) {
    let body = json!({"name": format!("c-{name}"), "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = app.post("/api/v1/connections", &o.token, body).await;
    assert_eq!(s, 201, "{c}");
    let body = json!({"name": format!("s-{name}"), "kind": "gotify", "base_url": rx.base(),
                      "connection_id": c["id"], "subscriptions": []});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let body = json!({"name": name, "schedule": "Mon 09:00", "sink_ids": [sink["id"]],
                      "skip_when_quiet": skip_when_quiet});
    let (s, d) = app.post("/api/v1/digests", &o.token, body).await;
    assert_eq!(s, 201, "{d}");
    let id = d["id"].as_str().unwrap().strip_prefix("dg_").unwrap().to_owned();
    app.db.exec(&format!("UPDATE digests SET next_send_at = now() - interval '{ago}' WHERE id = '{id}'")).await;
}

#[actix_web::test]
async fn each_digest_send_time_counts_once_by_its_outcome() {
    let app = spawn_with(|s| s.digest_interval_ms = 50).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::start().await;
    due_digest(&app, &o, &rx, "quiet", true, "0 seconds").await;
    due_digest(&app, &o, &rx, "loud", false, "0 seconds").await;
    due_digest(&app, &o, &rx, "late", false, "3 hours").await;
    wait_metric(&app, METRICS_TOKEN, r#"switchboard_digest_runs_total{outcome="skipped_quiet"}"#, 1).await;
    wait_metric(&app, METRICS_TOKEN, r#"switchboard_digest_runs_total{outcome="sent"}"#, 1).await;
    wait_metric(&app, METRICS_TOKEN, r#"switchboard_digest_runs_total{outcome="skipped_late"}"#, 1).await;
    rx.wait_for(1).await;
    let text = scrape(&app).await;
    for outcome in ["failed", "published", "publish_failed"] {
        assert_eq!(value(&text, &format!(r#"switchboard_digest_runs_total{{outcome="{outcome}"}}"#)), 0, "{outcome}");
    }
}
