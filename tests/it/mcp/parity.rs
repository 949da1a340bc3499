//! MCP answers the error code REST answers for the same input (the README: a tool's
//! refusal is its verb's). Every tool that takes an id or a name, and the common
//! malformed inputs (an id that does not parse, an unknown one, a wrong lease token,
//! numbers out of range), called both ways: the code a tool's text starts with is the
//! code of the route's error envelope.

use serde_json::{Map, Value, json};
use switchboard::domain::ids::{HookId, TodoId};

use super::{code_of, wire_to};
use crate::harness::TestApp;

const TODOS: &str = "/api/v1/agent/todos";

/// One input, both ways: the tool and its arguments, the route and its body.
struct Case {
    tool: &'static str,
    args: Value,
    method: &'static str,
    path: String,
    body: Option<Value>,
}

/// `segment` as a path segment (percent-encoded outside the unreserved characters).
fn seg(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// `body` with `key: value` added (the tool takes its path parameter among its arguments).
fn with(body: &Value, key: &str, value: &str) -> Value {
    let mut args: Map<String, Value> = body.as_object().cloned().unwrap_or_default();
    args.insert(key.into(), json!(value));
    Value::Object(args)
}

/// The todo verbs: tool, route suffix (none: `GET …/{id}`), the body they are sent.
fn todo_verbs() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        ("get_todo", "", None),
        ("claim", "claim", Some(json!({}))),
        ("heartbeat", "heartbeat", Some(json!({"lease_token": "t"}))),
        ("complete", "complete", Some(json!({"lease_token": "t"}))),
        ("fail", "fail", Some(json!({"lease_token": "t"}))),
        ("release", "release", Some(json!({"lease_token": "t"}))),
        ("interrupt", "interrupt", Some(json!({"lease_token": "t", "state": "input_required"}))),
        ("resume", "resume", Some(json!({}))),
    ]
}

fn todo_case(tool: &'static str, verb: &str, id: &str, body: Option<Value>) -> Case {
    let path = if verb.is_empty() { format!("{TODOS}/{}", seg(id)) } else { format!("{TODOS}/{}/{verb}", seg(id)) };
    let method = if verb.is_empty() { "GET" } else { "POST" };
    let args = with(body.as_ref().unwrap_or(&json!({})), "id", id);
    Case { tool, args, method, path, body }
}

#[actix_web::test]
async fn every_tool_answers_the_code_its_route_answers_for_the_same_malformed_input() {
    let (app, _owner, ep) = TestApp::with_worker().await;
    let pending = app.create_todo(&ep, "inbox", "waiting").await.to_string();
    let held = app.create_todo(&ep, "inbox", "held").await;
    let (s, claimed) = app.post(&format!("{TODOS}/{held}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, awc::http::StatusCode::OK, "{claimed}");
    let lease = claimed["lease_token"].as_str().unwrap().to_owned();
    let held = held.to_string();
    let hex = "0123456789abcdef0123456789abcdef";

    let mut cases = Vec::new();
    // Ids that do not parse, a hook's id where a todo's goes, and one that names nothing.
    let unknown = TodoId::new().to_string();
    let hook_id = HookId::new().to_string();
    let bad_todo_ids = [
        "td_nope".to_owned(),
        "nope".to_owned(),
        format!("TD_{}", hex.to_uppercase()),
        format!("td_{}", &hex[1..]),
        format!("td_{hex}0"),
        "00000000-0000-0000-0000-000000000000".to_owned(),
        hook_id.clone(),
        "td_a\u{0}b".to_owned(),
        unknown.clone(),
    ];
    for (tool, verb, body) in todo_verbs() {
        for id in &bad_todo_ids {
            cases.push(todo_case(tool, verb, id, body.clone()));
        }
    }
    for (tool, route) in [("rotate_hook", "rotate"), ("delete_hook", "")] {
        for id in ["nh_nope", "nope", unknown.as_str(), &HookId::new().to_string()] {
            let (method, path) = if route.is_empty() {
                ("DELETE", format!("/api/v1/agent/hooks/{}", seg(id)))
            } else {
                ("POST", format!("/api/v1/agent/hooks/{}/{route}", seg(id)))
            };
            cases.push(Case { tool, args: json!({"id": id}), method, path, body: None });
        }
    }
    // Sink names: one that names nothing, ones no statement can hold.
    for name in ["no-such-sink", "a\u{1}b", "a\u{0}b"] {
        let path = |suffix: &str| format!("/api/v1/agent/sinks/{}{suffix}", seg(name));
        cases.push(Case {
            tool: "test_sink",
            args: json!({"name": name}),
            method: "POST",
            path: path("/test"),
            body: None,
        });
        cases.push(Case {
            tool: "delete_sink",
            args: json!({"name": name}),
            method: "DELETE",
            path: path(""),
            body: None,
        });
        let subs = json!({"subscriptions": []});
        cases.push(Case {
            tool: "set_sink_subscriptions",
            args: with(&subs, "name", name),
            method: "PUT",
            path: path("/subscriptions"),
            body: Some(subs),
        });
    }
    // A wrong lease token on a claimed todo, and a pending one's verbs that need a lease.
    for (tool, verb, _) in
        todo_verbs().into_iter().filter(|(_, _, b)| b.as_ref().is_some_and(|b| b.get("lease_token").is_some()))
    {
        for token in ["wrong", "", &"x".repeat(300)] {
            let mut body = json!({"lease_token": token});
            if tool == "interrupt" {
                body["state"] = json!("input_required");
            }
            cases.push(todo_case(tool, verb, &held, Some(body.clone())));
            cases.push(todo_case(tool, verb, &pending, Some(body)));
        }
    }
    // Numbers out of range (and of the wrong width).
    for ttl in [0, -5, 86_401, 4_294_967_296_i64] {
        cases.push(todo_case(
            "heartbeat",
            "heartbeat",
            &held,
            Some(json!({"lease_token": lease, "lease_ttl_seconds": ttl})),
        ));
        cases.push(todo_case("claim", "claim", &pending, Some(json!({"lease_ttl_seconds": ttl}))));
    }
    for wait in [0, -1, 604_801] {
        let body = json!({"lease_token": lease, "state": "input_required", "wait_seconds": wait});
        cases.push(todo_case("interrupt", "interrupt", &held, Some(body)));
    }
    for body in [
        json!({"limit": 0}),
        json!({"limit": 101}),
        json!({"limit": -1}),
        json!({"wait_seconds": 31}),
        json!({"wait_seconds": -1}),
        json!({"lease_ttl_seconds": 0}),
    ] {
        let path = format!("{TODOS}/claim-next");
        cases.push(Case { tool: "claim_next", args: body.clone(), method: "POST", path, body: Some(body) });
    }
    for attempts in [0, 101, -3] {
        let body = json!({"queue": "inbox", "title": "t", "max_attempts": attempts});
        cases.push(Case {
            tool: "create_todo",
            args: body.clone(),
            method: "POST",
            path: TODOS.into(),
            body: Some(body),
        });
    }
    for limit in [0, 100_000, -1] {
        let path = format!("{TODOS}?limit={limit}");
        cases.push(Case { tool: "list_todos", args: json!({"limit": limit}), method: "GET", path, body: None });
    }

    let mut wire = wire_to(&app, "worker", &ep);
    wire.initialize().await.unwrap();
    let mut differ = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let (status, rest) = app.call(case.method, &case.path, Some(&ep.token), case.body.as_ref()).await;
        let rest_code = if status.is_success() { "ok" } else { rest["error"]["code"].as_str().unwrap_or("?") };
        let (status, answer) = wire.call(100 + n as u64, case.tool, case.args.clone()).await.unwrap();
        assert_eq!(status, awc::http::StatusCode::OK, "{} {}", case.tool, case.args);
        let result = &answer["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let mcp_code = if result["isError"] == true { code_of(text) } else { "ok" };
        assert_ne!(rest_code, "ok", "{} {}: a malformed input is refused: {rest}", case.method, case.path);
        if mcp_code != rest_code {
            differ
                .push(format!("{} {} → {rest_code}, but {} {} → {text}", case.method, case.path, case.tool, case.args));
        }
    }
    assert!(cases.len() > 100, "{} cases", cases.len());
    assert!(
        differ.is_empty(),
        "MCP and REST disagree on {} of {} inputs:\n{}",
        differ.len(),
        cases.len(),
        differ.join("\n")
    );
}
