//! A property-based fuzz of tool arguments: any tool (or none of that name) with any
//! JSON for arguments is answered 200 with a tool result or a JSON-RPC error, never a 5xx
//! and never an internal error, and a refusal's text starts with a SPEC error code.

use awc::http::StatusCode;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use switchboard::domain::ids::{HookId, TodoId};

use super::wire_to;
use crate::harness::TestApp;

/// The codes a refusal may start with (never `internal` or `unavailable`).
const CODES: &[&str] = &[
    "forbidden",
    "not_found",
    "conflict",
    "invalid_argument",
    "rate_limited",
    "encryption_required",
    "forbidden_scheme",
    "forbidden_target",
    "reference_out_of_scope",
];

const TOOLS: &[&str] = &[
    "list_todos",
    "get_todo",
    "claim",
    "claim_next",
    "heartbeat",
    "complete",
    "fail",
    "release",
    "complete_many",
    "fail_many",
    "interrupt",
    "resume",
    "create_todo",
    "create_todos",
    "clock_in",
    "clock_out",
    "list_hooks",
    "create_hook",
    "rotate_hook",
    "delete_hook",
    "notify_owner",
    "list_sinks",
    "set_sink",
    "delete_sink",
    "test_sink",
    "set_sink_subscriptions",
    "no_such_tool",
];

/// Field names the tools know, and a few they do not.
const KEYS: &[&str] = &[
    "id",
    "lease_token",
    "queue",
    "title",
    "state",
    "limit",
    "wait_seconds",
    "lease_ttl_seconds",
    "claimant",
    "relay",
    "result",
    "summary",
    "artifact",
    "reason",
    "payload",
    "kind",
    "idempotency_key",
    "max_attempts",
    "items",
    "name",
    "url",
    "queues",
    "severity",
    "todo_id",
    "subscriptions",
    "events",
    "connection_id",
    "base_url",
    "x",
    "",
];

fn text(known: Vec<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z_]{0,12}",
        2 => proptest::sample::select(known),
        1 => Just("a\u{0}b".to_owned()),
        1 => Just("x".repeat(3000)),
        1 => "\\PC{0,40}",
    ]
}

fn json_value(known: Vec<String>) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-5i64..200).prop_map(Value::from),
        any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        text(known).prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::vec((proptest::sample::select(KEYS), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

fn arguments(known: Vec<String>) -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((proptest::sample::select(KEYS), json_value(known)), 0..6)
        .prop_map(|kv| kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

#[actix_web::test]
async fn fuzzed_tool_arguments_never_answer_a_server_error() {
    // Nothing waits for work: a generated `wait_seconds` answers at once.
    let app = TestApp::spawn_with(|s| s.long_poll_max_waiters = 0).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let mut known = vec![TodoId::new().to_string(), HookId::new().to_string(), "inbox".into(), "pending".into()];
    for n in 0..3 {
        known.push(app.create_todo(&ep, "inbox", &format!("t{n}")).await.to_string());
    }
    let mut wire = wire_to(&app, "worker", &ep);
    wire.initialize().await.unwrap();
    let case = (proptest::sample::select(TOOLS), arguments(known));
    let mut runner = TestRunner::new(Config { cases: 300, failure_persistence: None, ..Config::default() });
    for n in 0..300u64 {
        let (tool, args) = case.new_tree(&mut runner).expect("a case").current();
        let (status, answer) = wire.call(n + 1, tool, Value::Object(args.clone())).await.unwrap();
        let what = format!("{tool} {}", Value::Object(args));
        assert_eq!(status, StatusCode::OK, "{what}");
        if let Some(error) = answer.get("error") {
            assert_ne!(error["code"], -32603, "an internal JSON-RPC error: {what}: {answer}");
            assert_eq!(tool, "no_such_tool", "a tool of the table answers a tool result: {what}: {answer}");
            continue;
        }
        let result = &answer["result"];
        if result["isError"] == true {
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            let code = text.split_once(':').map(|(c, _)| c).unwrap_or_default();
            assert!(CODES.contains(&code), "{what}: refused with {text:?}");
        } else {
            assert!(result["structuredContent"].is_object() || tool == "delete_sink", "{what}: {answer}");
        }
    }
    let (status, answer) = wire.call(10_000, "list_todos", json!({})).await.unwrap();
    assert_eq!(status, StatusCode::OK);
    assert_eq!(answer["result"]["isError"], false, "the server still answers: {answer}");
}
