//! Every tool's input schema is its REST body's: the bodies the API documents and takes
//! validate against it (checked by the client's JSON Schema validator), with the route's
//! path parameter beside them. A call with a bad argument is a tool error
//! `invalid_argument` and changes nothing.

use serde_json::{Value, json};
use switchboard::domain::ids::{ConnectionId, HookId, TodoId};

use super::{Client, Mode, code_of, mcp_url};
use crate::harness::TestApp;

/// A REST body each tool's route takes, with the path parameter as the tool takes it.
fn examples(ep: &str) -> Vec<(&'static str, Value)> {
    let td = TodoId::new().to_string();
    let nh = HookId::new().to_string();
    let cn = ConnectionId::new().to_string();
    let finish = json!({"id": td, "result": {"ok": true}, "summary": "done", "artifact": "https://example.com/a",
                        "lease_token": "AAAAAAAAAAAAAAAAAAAAAA"});
    vec![
        ("list_todos", json!({"queue": "inbox", "state": "pending", "limit": 10})),
        ("get_todo", json!({"id": td})),
        ("claim", json!({"id": td, "lease_ttl_seconds": 600, "claimant": "agent-1", "relay": false})),
        (
            "claim_next",
            json!({"queue": "inbox", "lease_ttl_seconds": 600, "claimant": "harness/h/a/run-1",
                              "relay": true, "limit": 1, "wait_seconds": 5}),
        ),
        ("heartbeat", json!({"id": td, "lease_ttl_seconds": 300, "lease_token": "AAAAAAAAAAAAAAAAAAAAAA"})),
        ("complete", finish.clone()),
        ("fail", finish.clone()),
        ("release", finish),
        ("complete_many", json!({"items": [{"id": td, "lease_token": "t", "result": {"n": 1}, "summary": "s"}]})),
        ("fail_many", json!({"items": [{"id": td, "summary": "broke", "artifact": "mcp://cairn/abc"}]})),
        (
            "interrupt",
            json!({"id": td, "state": "input_required", "wait_seconds": 3600, "reason": "which branch?",
                             "lease_token": "t"}),
        ),
        ("resume", json!({"id": td, "lease_ttl_seconds": 300, "lease_token": "t"})),
        (
            "create_todo",
            json!({"queue": "inbox", "title": "t", "kind": "k", "payload": {"a": [1, 2]},
                               "idempotency_key": "k-1", "max_attempts": 3}),
        ),
        ("create_todos", json!({"items": [{"queue": "inbox", "title": "a"}, {"queue": "inbox", "title": "b"}]})),
        ("clock_in", json!({})),
        ("clock_out", json!({})),
        ("list_hooks", json!({})),
        ("create_hook", json!({"url": "https://example.com/hook", "queues": ["inbox"]})),
        ("rotate_hook", json!({"id": nh})),
        ("delete_hook", json!({"id": nh})),
        ("notify_owner", json!({"title": "a human must look", "severity": "high", "todo_id": td})),
        ("list_sinks", json!({})),
        (
            "set_sink",
            json!({"name": "phone", "kind": "apprise", "base_url": "https://apprise.example.com",
                            "connection_id": cn, "apprise_mode": "key", "enabled": true}),
        ),
        ("delete_sink", json!({"name": "phone"})),
        ("test_sink", json!({"name": "phone"})),
        (
            "set_sink_subscriptions",
            json!({"name": "phone", "subscriptions": [{"events": ["todo.dead_lettered",
            "agent.notify"], "queues": ["inbox"], "endpoint_ids": [ep], "webhook_ids": [], "min_severity": "normal",
            "include_excerpt": false}]}),
        ),
    ]
}

/// The tool of an agent route of the OpenAPI document (method and path).
fn tool_of(method: &str, path: &str) -> Option<&'static str> {
    Some(match (method, path) {
        ("post", "/api/v1/agent/todos/claim-next") => "claim_next",
        ("post", "/api/v1/agent/todos") => "create_todo",
        ("post", "/api/v1/agent/todos/batch") => "create_todos",
        ("post", "/api/v1/agent/todos/complete") => "complete_many",
        ("post", "/api/v1/agent/todos/fail") => "fail_many",
        ("post", "/api/v1/agent/hooks") => "create_hook",
        ("post", "/api/v1/agent/notify-owner") => "notify_owner",
        _ => return None,
    })
}

#[actix_web::test]
async fn every_tools_input_schema_validates_the_rest_bodies_and_refuses_unknown_fields() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let mut mcp = Client::connect(&mcp_url(&app, "worker"), &ep.token, Mode::Legacy).await;
    let listed = mcp.tool_names().await;
    let mut examples = examples(&ep.id.to_string());
    // And every request body example the OpenAPI document gives for an agent route.
    let (_, doc) = app.call("GET", "/api/openapi.json", None, None).await;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(example) = op.pointer("/requestBody/content/application~1json/example") else { continue };
            if let Some(tool) = tool_of(method, path) {
                examples.push((tool, example.clone()));
            }
        }
    }
    assert!(examples.len() > 26, "the document's examples were found");
    let mut covered: Vec<String> = examples.iter().map(|(t, _)| t.to_string()).collect();
    covered.sort();
    covered.dedup();
    assert_eq!(covered, listed, "an example for every tool an all-verbs endpoint is given");

    for (tool, example) in &examples {
        let checked = mcp.send(json!({"op": "validate", "tool": tool, "instance": example})).await;
        assert_eq!(checked["valid"], true, "{tool}: {example}: {checked}");
        let mut unknown = example.clone();
        unknown["lease_tokn"] = json!("typo");
        let checked = mcp.send(json!({"op": "validate", "tool": tool, "instance": unknown})).await;
        assert_eq!(checked["valid"], false, "{tool} takes an unknown field");
    }
    for tool in ["complete", "get_todo", "rotate_hook", "test_sink", "set_sink"] {
        let checked = mcp.send(json!({"op": "validate", "tool": tool, "instance": {}})).await;
        assert_eq!(checked["valid"], false, "{tool} without its path parameter");
    }
}

#[actix_web::test]
async fn a_call_with_a_bad_argument_is_invalid_argument_and_changes_nothing() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "inbox", "held").await;
    let mut mcp = Client::connect(&mcp_url(&app, "worker"), &ep.token, Mode::Legacy).await;
    let claimed = mcp.ok("claim", json!({"id": id.to_string()})).await;
    let token = claimed["lease_token"].clone();
    let before = mcp.ok("get_todo", json!({"id": id.to_string()})).await;
    let id = id.to_string();

    for (tool, args) in [
        ("complete", json!({"id": id, "lease_token": 5})),
        ("complete", json!({"id": id, "lease_token": token, "lease_tokn": "typo"})),
        ("complete", json!({"lease_token": token})),
        ("complete", json!({"id": id, "lease_token": token, "artifact": "ftp://nope"})),
        ("fail", json!({"id": id, "lease_token": token, "summary": "a\u{0}b"})),
        ("heartbeat", json!({"id": id, "lease_ttl_seconds": "long"})),
        ("heartbeat", json!({"id": id, "lease_ttl_seconds": 0})),
        ("release", json!({"id": [id]})),
        ("interrupt", json!({"id": id, "wait_seconds": 60})),
        ("claim", json!({"id": id, "limit": 2})),
        ("claim_next", json!({"limit": 0})),
        ("claim_next", json!({"wait_seconds": 31})),
        ("list_todos", json!({"limit": "ten"})),
        ("create_todo", json!({"queue": "inbox"})),
        ("create_todo", json!({"queue": "Not A Queue!", "title": "t"})),
        ("create_todos", json!({"items": []})),
        ("clock_in", json!({"at": "now"})),
    ] {
        let text = mcp.refused(tool, args.clone()).await;
        assert_eq!(code_of(&text), "invalid_argument", "{tool} {args}: {text}");
    }
    // An id that does not parse is an unknown id, as on the route (`tests/it/mcp/parity.rs`).
    let text = mcp.refused("complete", json!({"id": "td_not-an-id", "lease_token": token})).await;
    assert_eq!(code_of(&text), "not_found", "{text}");

    let after = mcp.ok("get_todo", json!({"id": id})).await;
    assert_eq!(after, before, "nothing changed");
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, 1, "nothing created");
    let presence = app.db.count("SELECT count(*) FROM endpoints WHERE presence_changed_at IS NOT NULL").await;
    assert_eq!(presence, 0, "no presence set");
}
