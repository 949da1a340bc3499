//! An injected agent holding `notifications`: every verb and tool, tried the way an
//! attacker would, never makes a secret leave for a host the owner did not choose, and
//! never makes payload text leave through a sink.

use serde_json::json;
use switchboard::domain::grants::Verb;

use super::*;
use crate::mcp::{Client, Mode, mcp_url};

/// The code at the start of a refused tool call's text.
fn code_of(text: &str) -> &str {
    text.split(':').next().unwrap_or_default()
}

#[actix_web::test]
async fn an_agent_cannot_make_any_notifications_verb_send_the_owners_secret_to_a_host_of_its_choosing() {
    let app = spawn().await;
    let owner = app.owner("owner@example.com").await;
    let ep = agent(&app, &owner, "injected", &[Verb::Notifications]).await;
    let (home, evil) = (Receiver::start().await, Receiver::start().await);
    let c = connection(&app, &owner, "phone", SECRET, &home).await;
    let cid = c["id"].as_str().unwrap().to_owned();
    let mut answers = Vec::new();

    // The connection id is visible to the agent, as before; the secret is not.
    let (s, listed) = app.get("/api/v1/agent/sinks", &ep.token).await;
    assert_eq!(s, 200, "{listed}");
    answers.push(listed.to_string());

    // Pairing the owner's connection with its own host: refused, nothing stored.
    for body in [
        json!({"kind": "gotify", "base_url": evil.base(), "connection_id": cid, "enabled": false}),
        json!({"base_url": format!("{}/", evil.base()), "connection_id": cid}),
        json!({"base_url": format!("{}/message", home.base()), "connection_id": cid}),
    ] {
        let (s, b) = app.call("PUT", "/api/v1/agent/sinks/x", Some(&ep.token), Some(&body)).await;
        assert_eq!(s, 422, "{body} -> {b}");
        assert_eq!(b["error"]["code"], "destination_mismatch", "{b}");
        answers.push(b.to_string());
    }
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0, "a refused put stores nothing");
    // Naming the owner's destination (normalised) or none is what the grant is for.
    let same = json!({"base_url": format!("{}/", home.base()).replacen("http", "HTTP", 1), "connection_id": cid});
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/x", Some(&ep.token), Some(&same)).await;
    assert_eq!(s, 201, "{b}");
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/x", Some(&ep.token), Some(&json!({"connection_id": cid}))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(shown(&b), home.base(), "the sink posts where the connection is bound: {b}");
    answers.push(b.to_string());
    // A kind that is not the connection's is no way around it either.
    let (s, b) = app
        .call("PUT", "/api/v1/agent/sinks/x", Some(&ep.token), Some(&json!({"kind": "apprise", "connection_id": cid})))
        .await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (422, Some("reference_out_of_scope")), "{b}");

    // A test send goes to the owner's destination, never elsewhere.
    let (s, tested) = app.post("/api/v1/agent/sinks/x/test", &ep.token, json!({})).await;
    assert_eq!((s.as_u16(), &tested["ok"]), (200, &json!(true)), "{tested}");
    let got = home.wait_for(1).await;
    assert_eq!(got[0].header("x-gotify-key"), Some(SECRET), "the owner's own server gets its token");
    answers.push(tested.to_string());

    // The same through every MCP tool of the family.
    let mut mcp = Client::connect(&mcp_url(&app, "injected"), &ep.token, Mode::Auto).await;
    let text = mcp.refused("set_sink", json!({"name": "y", "base_url": evil.base(), "connection_id": cid})).await;
    assert_eq!(code_of(&text), "destination_mismatch", "{text}");
    answers.push(text);
    let made = mcp.ok("set_sink", json!({"name": "y", "connection_id": cid, "enabled": false})).await;
    assert_eq!(shown(&made), home.base(), "{made}");
    answers.push(made.to_string());
    let tested = mcp.ok("test_sink", json!({"name": "y"})).await;
    assert_eq!(tested["ok"], true, "{tested}");
    home.wait_for(2).await;
    answers.push(tested.to_string());
    let listed = mcp.ok("list_sinks", json!({})).await;
    answers.push(listed.to_string());
    let subs = json!({"name": "y", "subscriptions": [{"events": ["todo.dead_lettered"]}]});
    answers.push(mcp.ok("set_sink_subscriptions", subs).await.to_string());
    let deleted = mcp.call("delete_sink", json!({"name": "y"})).await;
    assert_eq!(deleted["is_error"], false, "{deleted}");

    assert_eq!(evil.count(), 0, "the agent's host was never dialled");
    for answer in &answers {
        holds_no_secret(answer);
    }
}

#[actix_web::test]
async fn an_agent_may_not_subscribe_with_excerpts_and_no_payload_of_another_endpoint_reaches_a_sink_through_it() {
    let app = spawn().await;
    let owner = app.owner("owner@example.com").await;
    let ep = agent(&app, &owner, "injected", &[Verb::Notifications]).await;
    let other = agent(&app, &owner, "payroll", &[]).await;
    let rx = Receiver::start().await;
    let c = connection(&app, &owner, "phone", SECRET, &rx).await;
    let (s, b) =
        app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&json!({"connection_id": c["id"]}))).await;
    assert_eq!(s, 201, "{b}");
    let sink_id = b["id"].as_str().unwrap().to_owned();

    // The owner turned excerpts on; the agent cannot, and replacing drops the owner's.
    let with_excerpt = json!({"subscriptions": [{"events": ["todo.dead_lettered"], "include_excerpt": true}]});
    let (s, b) = app
        .call("PUT", &format!("/api/v1/sinks/{sink_id}/subscriptions"), Some(&owner.token), Some(&with_excerpt))
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/phone/subscriptions", Some(&ep.token), Some(&with_excerpt)).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (403, Some("forbidden")), "{b}");
    let mut mcp = Client::connect(&mcp_url(&app, "injected"), &ep.token, Mode::Auto).await;
    let text = mcp
        .refused(
            "set_sink_subscriptions",
            json!({"name": "phone", "subscriptions": [{"events": ["todo.dead_lettered"], "include_excerpt": true}]}),
        )
        .await;
    assert_eq!(code_of(&text), "forbidden", "{text}");
    assert_eq!(
        app.db.count("SELECT count(*) FROM sink_subscriptions WHERE include_excerpt").await,
        1,
        "a refused replacement changes nothing"
    );
    let plain = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/phone/subscriptions", Some(&ep.token), Some(&plain)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["subscriptions"][0]["include_excerpt"], false, "{b}");

    // Another endpoint's payload dies: the owner hears of it, without a word of it.
    dead_letter(&app, &other, "salary run", json!({"note": "PAYLOAD-CANARY 4111-1111"})).await;
    let got = rx.wait_for(1).await;
    let message = String::from_utf8_lossy(&got[0].body).to_string();
    assert!(message.contains("salary run"), "{message}");
    assert!(!message.contains("PAYLOAD-CANARY"), "no payload through the agent's subscription: {message}");

    // The owner turns excerpts on again; an agent that re-points the sink drops them.
    let (s, b) = app
        .call("PUT", &format!("/api/v1/sinks/{sink_id}/subscriptions"), Some(&owner.token), Some(&with_excerpt))
        .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) =
        app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&json!({"connection_id": c["id"]}))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions WHERE include_excerpt").await, 0);
}
