//! Notify hooks: management through the operator and agent routes (secrets shown once
//! and stored sealed, ceiling, kill switch, reach), and the store functions the
//! dispatcher relies on (matching, re-check, health, previous-secret expiry).

mod health;
mod routes;

use awc::http::StatusCode;
use serde_json::{Value, json};
use switchboard::config::SecretKey;
use switchboard::domain::ids::{EndpointId, HookId, ScopeId};
use switchboard::hooks::rules::hook::HookSpec;
use switchboard::hooks::statements::CreatedHook;
use switchboard::vault::Vault;

use crate::harness::{Ep, Owner, TestApp};

/// The instance key the hook tests run with.
const KEY: SecretKey = SecretKey([7; 32]);

/// The app with a vault key (hooks need one), otherwise test settings.
async fn spawn() -> TestApp {
    spawn_with(|_| {}).await
}

/// The app with a vault key, after `adjust`.
async fn spawn_with(adjust: impl FnOnce(&mut switchboard::config::Settings)) -> TestApp {
    TestApp::spawn_with(|s| {
        s.secret_encryption_key = Some(KEY);
        adjust(s);
    })
    .await
}

/// A vault over the tests' key, to open what the store sealed.
fn vault() -> Vault {
    Vault::new(Some(&KEY))
}

fn hooks_of(ep: EndpointId) -> String {
    format!("/api/v1/endpoints/{ep}/hooks")
}

/// Creates a hook through the operator route; returns the answer.
async fn operator_create(app: &TestApp, owner: &Owner, ep: &Ep, body: Value) -> Value {
    let (s, b) = app.post(&hooks_of(ep.id), &owner.token, body).await;
    assert_eq!(s, StatusCode::CREATED, "{b}");
    b
}

/// Creates a hook directly in the store (for the dispatcher-side tests).
async fn store_create(app: &TestApp, scope: ScopeId, ep: EndpointId, queues: &[&str]) -> CreatedHook {
    let queues: Vec<String> = queues.iter().map(|q| (*q).to_owned()).collect();
    let spec = HookSpec::parse("https://198.51.100.7/in?token=abc", &queues, false).unwrap();
    app.store.create_hook(&vault(), scope, ep, &spec, 5, false).await.expect("create hook")
}

/// One text column of one row (NULL as None).
async fn text(app: &TestApp, sql: &str) -> Option<String> {
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.expect("connect");
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0)
}

/// The stored (sealed) secret and previous secret of a hook.
async fn stored_secrets(app: &TestApp, id: HookId) -> (String, Option<String>) {
    let secret = text(app, &format!("SELECT secret FROM notify_hooks WHERE id = '{}'", id.0)).await.unwrap();
    let previous = text(app, &format!("SELECT previous_secret FROM notify_hooks WHERE id = '{}'", id.0)).await;
    (secret, previous)
}

async fn hook_count(app: &TestApp) -> i64 {
    app.db.count("SELECT count(*) FROM notify_hooks").await
}

fn hook_id(answer: &Value, field: &str) -> HookId {
    answer[field].as_str().unwrap_or_else(|| panic!("no {field} in {answer}")).parse().unwrap()
}

/// A JSON body with a URL and queues.
fn body(url: &str, queues: &[&str]) -> Value {
    json!({"url": url, "queues": queues})
}
