//! Webhooks by ingest token are cached like endpoint tokens, and kept coherent the same
//! way: a change made behind the instance (another instance, psql) is honoured from
//! the notification on, not after the cache's TTL (ten minutes here).

use std::time::Duration;

use serde_json::{Value, json};

use super::{Sql, spawn};
use crate::harness::TestApp;
use crate::harness::wait::wait_until;

/// Posts a generic delivery with its own delivery id; the status.
async fn deliver(app: &TestApp, ingest_url: &str, n: u32) -> u16 {
    let path = ingest_url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let resp = app
        .client
        .post(format!("{}{path}", app.base))
        .insert_header(("content-type", "application/json"))
        .insert_header(("X-Delivery-Id", format!("d-{n}")))
        .send_body(format!("{{\"n\": {n}}}"))
        .await
        .expect("deliver");
    resp.status().as_u16()
}

/// Todos on `queue`.
async fn on_queue(sql: &Sql, queue: &str) -> i64 {
    sql.int(&format!("SELECT count(*) FROM todos WHERE queue = '{queue}'")).await
}

#[actix_web::test]
async fn a_webhook_changed_or_deleted_behind_the_instance_is_honoured_from_the_next_delivery() {
    let app = spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let body = json!({"source_type": "generic", "queue": "inbox", "endpoint_id": ep.id.to_string()});
    let (s, w): (_, Value) = app.post("/api/v1/webhooks", &owner.token, body).await;
    assert_eq!(s, 201, "{w}");
    let (id, url) = (w["id"].as_str().unwrap().to_owned(), w["ingest_url"].as_str().unwrap().to_owned());
    let uuid = id.parse::<switchboard::domain::ids::WebhookId>().unwrap().0;
    let sql = Sql::connect(&app.db.url).await;

    // Wait until deliveries are served from the cache: a queue changed with triggers
    // off (unannounced) is then not seen.
    let mut n = 0;
    wait_until("the webhook to be served from the cache", Duration::from_secs(15), async || {
        n += 1;
        assert_eq!(deliver(&app, &url, n).await, 202);
        sql.run_unannounced(&format!("UPDATE webhooks SET queue = 'unseen' WHERE id = '{uuid}'")).await;
        n += 1;
        assert_eq!(deliver(&app, &url, n).await, 202);
        sql.run_unannounced(&format!("UPDATE webhooks SET queue = 'inbox' WHERE id = '{uuid}'")).await;
        let unseen = on_queue(&sql, "unseen").await;
        if unseen == 0 {
            return Ok(());
        }
        sql.run("DELETE FROM todos WHERE queue = 'unseen'").await;
        Err(format!("{unseen} deliveries followed a change nobody announced (asked of the database)"))
    })
    .await;

    // An announced change of its queue reaches the very next delivery.
    let payload = format!("webhook:{uuid}");
    sql.run_heard_as(&format!("UPDATE webhooks SET queue = 'moved' WHERE id = '{uuid}'"), &payload).await;
    n += 1;
    assert_eq!(deliver(&app, &url, n).await, 202);
    assert_eq!(on_queue(&sql, "moved").await, 1, "the delivery after the change followed it");

    // Deleted behind the instance: the next delivery is refused.
    sql.run_heard_as(&format!("DELETE FROM webhooks WHERE id = '{uuid}'"), &payload).await;
    n += 1;
    assert_eq!(deliver(&app, &url, n).await, 404, "a deleted webhook takes no delivery");
}
