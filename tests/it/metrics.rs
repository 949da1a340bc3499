//! `/metrics`: refused without the exact bearer token (and always when none is
//! configured); with it, Prometheus text that counts intake and shows the notify-hook
//! families.

use serde_json::{Value, json};

use crate::harness::TestApp;

const TOKEN: &str = "metrics-token-0123456789abcdef0123456789";

/// GET /metrics with an optional Authorization header: status and body text.
async fn scrape(app: &TestApp, auth: Option<&str>) -> (u16, String) {
    let mut req = app.client.get(format!("{}/metrics", app.base));
    if let Some(a) = auth {
        req = req.insert_header(("Authorization", a));
    }
    let mut resp = req.send().await.unwrap();
    let body = resp.body().await.unwrap();
    (resp.status().as_u16(), String::from_utf8_lossy(&body).into_owned())
}

/// POSTs a delivery to an ingest URL.
async fn deliver(app: &TestApp, ingest_url: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let path = ingest_url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let mut req = app.client.post(format!("{}{}", app.base, path)).insert_header(("content-type", "application/json"));
    for h in headers {
        req = req.insert_header(*h);
    }
    req.send_body(body.to_owned()).await.unwrap().status().as_u16()
}

fn value(text: &str, series: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[actix_web::test]
async fn metrics_are_refused_without_the_exact_token_and_count_intake_with_it() {
    let app = TestApp::spawn_with(|s| {
        s.metrics_token = Some(TOKEN.into());
        s.secret_encryption_key = Some(switchboard::config::SecretKey([5; 32]));
    })
    .await;
    for auth in [None, Some("Bearer wrong-token-0123456789abcdef0123456789"), Some(TOKEN), Some("Basic x")] {
        let (status, body) = scrape(&app, auth).await;
        assert_eq!(status, 401, "{auth:?}");
        let envelope: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(envelope["error"]["code"], "unauthenticated");
    }

    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let create = |source: &str| json!({"endpoint_id": ep.id.to_string(), "source_type": source, "queue": "inbox"});
    let (s, signed) = app.post("/api/v1/webhooks", &owner.token, create("github")).await;
    assert_eq!(s, 201, "{signed}");
    let (s, generic) = app.post("/api/v1/webhooks", &owner.token, create("generic")).await;
    assert_eq!(s, 201, "{generic}");
    let forged = [("X-Hub-Signature-256", "sha256=00")];
    assert_eq!(deliver(&app, signed["ingest_url"].as_str().unwrap(), &forged, "{}").await, 401);
    assert_eq!(deliver(&app, generic["ingest_url"].as_str().unwrap(), &[("X-Delivery-Id", "d-1")], "{}").await, 202);

    let (status, text) = scrape(&app, Some(&format!("Bearer {TOKEN}"))).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(value(&text, "switchboard_webhook_verify_failures_total"), Some(1), "{text}");
    assert_eq!(value(&text, "switchboard_webhook_deliveries_total"), Some(1), "{text}");
    assert_eq!(value(&text, "switchboard_signals_dropped_total"), Some(0), "{text}");
    for family in [
        "# TYPE switchboard_notify_hook_notifications_total counter",
        "# TYPE switchboard_notify_hook_attempts_total counter",
        "# TYPE switchboard_notify_hooks_disabled_total counter",
    ] {
        assert!(text.contains(family), "{family} missing:\n{text}");
    }
    assert_eq!(
        value(&text, r#"switchboard_notify_hook_notifications_total{type="todo.dead_lettered",outcome="failed"}"#),
        Some(0)
    );
    assert!(!text.contains(&ep.id.to_string()) && !text.contains(&owner.scope.to_string()), "no ids as labels");
}

#[actix_web::test]
async fn without_a_configured_token_every_scrape_is_refused() {
    let app = TestApp::spawn().await;
    for auth in [None, Some("Bearer "), Some("Bearer anything-at-all-0123456789abcdef")] {
        assert_eq!(scrape(&app, auth).await.0, 401, "{auth:?}");
    }
}

/// A database out of reach does not take the scrape down: `/metrics` still answers, with
/// the 503s the outage caused (what the database-unavailable alert reads) and
/// `switchboard_outbox_depth_read` at 0; once the database is back, at 1 again.
#[actix_web::test]
async fn metrics_still_answer_while_the_database_is_out_of_reach() {
    let app = TestApp::spawn_with(|s| s.metrics_token = Some(TOKEN.into())).await;
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = scrape(&app, Some(&bearer)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(value(&body, "switchboard_outbox_depth_read"), Some(1), "{body}");

    // The database takes no new sessions, and every session of the app's is ended.
    let name = app.db.url.rsplit('/').next().unwrap().to_owned();
    let (admin, conn) = tokio_postgres::connect(&crate::harness::admin_url(), tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    admin.batch_execute(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false")).await.unwrap();
    admin
        .batch_execute(&format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        ))
        .await
        .unwrap();
    let owner_token = "sbo_not_a_real_token_but_it_must_reach_the_database";
    let (status, _) = app.get("/api/v1/endpoints", owner_token).await;
    assert_eq!(status, 503, "the outage answers 503");
    let (status, body) = scrape(&app, Some(&bearer)).await;
    admin.batch_execute(&format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS true")).await.unwrap();
    assert_eq!(status, 200, "the scrape answers through the outage: {body}");
    assert_eq!(value(&body, "switchboard_outbox_depth_read"), Some(0), "{body}");
    let unavailable: u64 = body
        .lines()
        .filter(|l| l.starts_with("switchboard_http_unavailable_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert!(unavailable >= 1, "the 503 is counted where the alert reads it:\n{body}");

    let (status, body) = scrape(&app, Some(&bearer)).await;
    assert_eq!((status, value(&body, "switchboard_outbox_depth_read")), (200, Some(1)), "{body}");
}
