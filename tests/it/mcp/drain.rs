//! An agent runtime drains a queue over MCP exactly as over REST: the official client
//! lists a default-grant endpoint's tools, claims and completes, is refused a stale lease
//! token with `conflict`, and fails a todo at its cap, which is announced on the hook and
//! queued for the owner's sinks just as the same fail through REST is.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::domain::grants::DRAIN_FAMILY;
use switchboard::domain::ids::TodoId;

use super::{Client, DEFAULT_TOOLS, Mode, code_of, mcp_url};
use crate::harness::TestApp;
use crate::harness::wait::wait_count_within;
use crate::rings::{generic, hook, spawn_with};
use testkit::receiver::Receiver;

/// What the Harness daemon labels a relay attempt with.
const RELAY: &str = "harness/host-1/harness-a/run-7";

/// A Gotify sink of the owner posting to `rx`, told of dead letters and relay exhaustion.
async fn subscribed_sink(app: &TestApp, owner_token: &str, rx: &Receiver) {
    let body = json!({"name": "phone", "kind": "gotify", "secret": "app-token", "base_url": rx.base()});
    let (s, c) = app.post("/api/v1/connections", owner_token, body).await;
    assert_eq!(s, 201, "{c}");
    let body = json!({"name": "phone", "kind": "gotify", "base_url": rx.base(), "connection_id": c["id"]});
    let (s, sink) = app.post("/api/v1/sinks", owner_token, body).await;
    assert_eq!(s, 201, "{sink}");
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered", "relay.exhausted"]}]});
    let path = format!("/api/v1/sinks/{}/subscriptions", sink["id"].as_str().unwrap());
    let (s, b) = app.call("PUT", &path, Some(owner_token), Some(&subs)).await;
    assert_eq!(s, 200, "{b}");
}

/// The outbox rows queued for `id`: (event, severity, count, the facts' keys).
async fn outbox_rows(app: &TestApp, id: TodoId) -> Vec<String> {
    let sql = format!(
        "SELECT count(*) FROM outbox WHERE todo_id = '{}' AND event = 'relay.exhausted' AND severity = 'high' \
         AND count = 1",
        id.0
    );
    wait_count_within(&app.db, &sql, 1, Duration::from_secs(10)).await;
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(conn);
    let rows = client
        .query(
            "SELECT event || ' ' || severity || ' ' || count::text || ' ' || \
                    coalesce((SELECT string_agg(k, ',' ORDER BY k) FROM jsonb_object_keys(facts) k), '') \
             FROM outbox WHERE todo_id = $1::text::uuid ORDER BY created_at",
            &[&id.0.to_string()],
        )
        .await
        .unwrap();
    rows.iter().map(|r| r.get::<_, String>(0)).collect()
}

/// A dead letter as the hook announced it, without what differs between two todos.
fn comparable(mut announced: Value) -> Value {
    for volatile in ["todo_id", "created_at"] {
        announced[volatile] = Value::Null;
    }
    announced["final_attempt"]["at"] = Value::Null;
    announced
}

#[actix_web::test]
async fn an_mcp_client_drains_a_default_grant_endpoint_exactly_as_rest_would() {
    let app = spawn_with(|_| {}).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.endpoint(owner.scope, "mcp-worker", &[]).await;
    let hooks = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &hooks.url(), &[]).await;
    let sinks = Receiver::start().await;
    subscribed_sink(&app, &owner.token, &sinks).await;
    // Deliveries of a token-trust webhook: their todos pass the sender gate, so a dead
    // letter is announced on the hook. One attempt each: a fail is at the cap.
    let intake = generic(&app, &owner, &ep, "builds", 1).await;
    let first = intake.deliver(&app, "build", json!({"n": 1})).await;
    let second = intake.deliver(&app, "build", json!({"n": 2})).await;
    let by_rest = intake.deliver(&app, "build", json!({"n": 3})).await;
    hooks.wait_for(3).await;

    let mut mcp = Client::connect(&mcp_url(&app, "mcp-worker"), &ep.token, Mode::Legacy).await;
    assert_eq!(mcp.tool_names().await, DEFAULT_TOOLS, "a default-grant endpoint sees the drain family");
    assert_eq!(DRAIN_FAMILY.len(), 8);

    // claim_next → complete.
    let claimed = mcp.ok("claim_next", json!({"queue": "builds", "claimant": "agent-1"})).await;
    assert_eq!(claimed["todo"]["id"], first.to_string(), "the oldest first: {claimed}");
    assert_eq!(claimed["todo"]["payload"], json!({"n": 1}));
    assert_eq!(claimed["attempt_seq"], 1);
    let token = claimed["lease_token"].as_str().unwrap();
    let done = mcp.ok("complete", json!({"id": first.to_string(), "lease_token": token, "summary": "built"})).await;
    assert_eq!(done["state"], "done", "{done}");

    // claim_next → a stale lease token is a conflict, changing nothing → fail at the cap.
    let claimed = mcp.ok("claim_next", json!({"claimant": RELAY})).await;
    assert_eq!(claimed["todo"]["id"], second.to_string());
    let token = claimed["lease_token"].as_str().unwrap().to_owned();
    let text =
        mcp.refused("complete", json!({"id": second.to_string(), "lease_token": "AAAAAAAAAAAAAAAAAAAAAA"})).await;
    assert_eq!(code_of(&text), "conflict", "{text}");
    let still = mcp.ok("get_todo", json!({"id": second.to_string()})).await;
    assert_eq!(still["state"], "claimed", "the refused complete changed nothing: {still}");
    let failed = mcp.ok("fail", json!({"id": second.to_string(), "lease_token": token, "summary": "gave up"})).await;
    assert_eq!(failed["dead_letter"], true, "{failed}");
    assert_eq!(failed["dead_reason"], "attempts_exhausted");
    let history = mcp.ok("get_todo", json!({"id": second.to_string()})).await;
    let attempt = &history["attempts"][0];
    assert_eq!((&attempt["claimant"], &attempt["relay"]), (&json!(RELAY), &json!(true)), "{history}");
    assert_eq!((&attempt["outcome"], &attempt["summary"]), (&json!("failed"), &json!("gave up")));

    // The same through REST, for the comparison.
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{by_rest}/claim"), &ep.token, json!({"claimant": RELAY})).await;
    assert_eq!(s, 200, "{b}");
    let body = json!({"lease_token": b["lease_token"], "summary": "gave up"});
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{by_rest}/fail"), &ep.token, body).await;
    assert_eq!(s, 200, "{b}");

    let seen = hooks.wait_for(5).await;
    let dead: Vec<Value> = seen.iter().filter(|r| r.kind() == "todo.dead_lettered").map(|r| r.json()).collect();
    assert_eq!(dead.len(), 2, "one dead letter each: {dead:?}");
    for r in seen.iter().filter(|r| r.kind() == "todo.dead_lettered") {
        r.verify(&hook.secret).unwrap();
    }
    let over_mcp = dead.iter().find(|d| d["todo_id"] == second.to_string()).expect("the MCP fail announced");
    let over_rest = dead.iter().find(|d| d["todo_id"] == by_rest.to_string()).expect("the REST fail announced");
    assert_eq!(over_mcp["reason"], "attempts_exhausted");
    assert_eq!(over_mcp["final_attempt"]["summary"], "gave up");
    assert_eq!(comparable(over_mcp.clone()), comparable(over_rest.clone()), "announced alike");

    let mcp_rows = outbox_rows(&app, second).await;
    assert_eq!(mcp_rows, outbox_rows(&app, by_rest).await, "queued for the sinks alike");
    assert_eq!(mcp_rows.len(), 1, "{mcp_rows:?}");
    sinks.wait_for(2).await;
}

#[actix_web::test]
async fn a_client_of_the_stateless_revision_drains_without_a_session() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let id = app.create_todo(&ep, "inbox", "stateless").await;

    let mut mcp = Client::connect(&mcp_url(&app, "worker"), &ep.token, Mode::Auto).await;
    assert_eq!(mcp.protocol_version().await, "2026-07-28");
    assert!(mcp.tool_names().await.contains(&"create_todo".to_owned()), "an all-verbs endpoint sees create_todo");
    let claimed = mcp.ok("claim_next", json!({})).await;
    assert_eq!(claimed["todo"]["id"], id.to_string());
    let done = mcp
        .ok("complete", json!({"id": id.to_string(), "lease_token": claimed["lease_token"], "result": {"ok": true}}))
        .await;
    assert_eq!(done["state"], "done");
    let empty = mcp.ok("claim_next", json!({})).await;
    assert_eq!(empty, json!({"empty": true}), "an empty queue is an answer, not an error");
}
