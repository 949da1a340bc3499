//! The data the conformance runs start from: for each identity its own owner, an
//! endpoint granted every verb, and todos in every state an agent or operator acts on.

use serde_json::{Value, json};

use crate::harness::{Ep, TestApp};

/// Creates a todo on `ep` and drives it to `state`; returns its id.
async fn todo_in(app: &TestApp, ep: &Ep, state: &str) -> String {
    let max_attempts = if state == "dead" { 1 } else { 3 };
    let (s, todo) = app
        .post("/api/v1/agent/todos", &ep.token, json!({"queue": "inbox", "title": state, "max_attempts": max_attempts}))
        .await;
    assert_eq!(s, 201, "{todo}");
    let id = todo["id"].as_str().unwrap().to_owned();
    if state == "pending" {
        return id;
    }
    let (s, claim) = app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
    assert_eq!(s, 200, "{claim}");
    let next = match state {
        "claimed" => None,
        "interrupted" => Some(("interrupt", json!({"state": "input_required"}))),
        "done" => Some(("complete", json!({"summary": "done"}))),
        "retrying" | "dead" => Some(("fail", json!({"summary": "no luck"}))),
        other => panic!("no such seed state {other}"),
    };
    if let Some((verb, body)) = next {
        let (s, answer) = app.post(&format!("/api/v1/agent/todos/{id}/{verb}"), &ep.token, body).await;
        assert_eq!(s, 200, "{verb}: {answer}");
    }
    id
}

/// Todos in every state on `ep`, several of them claimable.
async fn todos(app: &TestApp, ep: &Ep) {
    for state in ["pending", "pending", "pending", "pending", "claimed", "interrupted", "done", "retrying", "dead"] {
        todo_in(app, ep, state).await;
    }
}

/// The agent's world: an endpoint granted every verb, with todos in every state.
/// Returns its `sbk_` token.
pub async fn agent_world(app: &TestApp) -> String {
    let owner = app.owner("agent-owner@example.com").await;
    let ep = app.agent(owner.scope, "conformance-agent").await;
    todos(app, &ep).await;
    ep.token
}

/// The operator's world: endpoints of their own (one with todos in every state, two
/// spare), a webhook whose rules hold every delivery, and one held delivery. Returns
/// their `sbo_` token.
pub async fn operator_world(app: &TestApp) -> String {
    let owner = app.owner("operator@example.com").await;
    let ep = app.agent(owner.scope, "conformance-ops").await;
    app.agent(owner.scope, "spare-1").await;
    app.agent(owner.scope, "spare-2").await;
    todos(app, &ep).await;
    let (s, webhook) = app
        .post(
            "/api/v1/webhooks",
            &owner.token,
            json!({"endpoint_id": ep.id.to_string(), "source_type": "generic", "queue": "inbox"}),
        )
        .await;
    assert_eq!(s, 201, "{webhook}");
    let rules = json!({"rules": [{"id": "hold-all", "match": {"pointer": "", "exists": true}, "action": {"quarantine": true}}]});
    let path = format!("/api/v1/webhooks/{}/rules", webhook["id"].as_str().unwrap());
    let (s, saved) = app.call("PUT", &path, Some(&owner.token), Some(&rules)).await;
    assert_eq!(s, 200, "{saved}");
    hold_one(app, &webhook).await;
    owner.token
}

/// Sends one delivery to `webhook`, which its rules hold in quarantine.
async fn hold_one(app: &TestApp, webhook: &Value) {
    let url = webhook["ingest_url"].as_str().unwrap();
    let path = url.split_once("/webhooks/").map(|(_, p)| format!("/webhooks/{p}")).unwrap();
    let (s, answer) = app.call_raw("POST", &path, None, "application/json", br#"{"hello": "world"}"#.to_vec()).await;
    assert_eq!((s.as_u16(), answer["disposition"].as_str()), (202, Some("quarantined")), "{answer}");
}
