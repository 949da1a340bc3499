//! The `notifications` verbs: an endpoint holding the grant lists, creates, replaces,
//! tests, re-subscribes and deletes its owner's sinks by name, in its owner's scope
//! only; another owner's sinks are not found and another owner's connection, endpoint
//! or webhook is `reference_out_of_scope`; no answer carries a connection's secret;
//! bad input changes nothing.

use serde_json::json;

use super::*;
use testkit::receiver::Reply;

const SECRET_ONE: &str = "gotify-app-token-SECRET-ONE";
const SECRET_TWO: &str = "gotify-app-token-SECRET-TWO";

/// Every answer of a run, to search for secrets afterwards.
#[derive(Default)]
struct Answers(String);

impl Answers {
    async fn call(&mut self, app: &TestApp, method: &str, path: &str, ep: &Ep, body: Option<Value>) -> (u16, Value) {
        let (s, b) = app.call(method, path, Some(&ep.token), body.as_ref()).await;
        self.0.push_str(&b.to_string());
        (s.as_u16(), b)
    }
}

/// How many sinks `scope` holds (counted in the database).
async fn sinks_of(app: &TestApp, scope: switchboard::domain::ids::ScopeId) -> i64 {
    app.db.count(&format!("SELECT count(*) FROM sinks WHERE scope_id = '{}'", scope.0)).await
}

/// Sinks, agent-notify subscriptions and enabled loopback sinks, counted.
async fn snapshot(app: &TestApp) -> (i64, i64, i64) {
    (
        app.db.count("SELECT count(*) FROM sinks").await,
        app.db.count("SELECT count(*) FROM sink_subscriptions WHERE 'agent.notify' = ANY (events)").await,
        app.db.count("SELECT count(*) FROM sinks WHERE base_url LIKE 'http://127.0.0.1:%' AND enabled").await,
    )
}

#[actix_web::test]
async fn the_notifications_verbs_create_list_replace_test_subscribe_and_delete_a_sink_of_the_owner() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let one = connection(&app, &o, "one", SECRET_ONE, &rx.base()).await;
    let two = connection(&app, &o, "two", SECRET_TWO, &rx.base()).await;
    let ep = agent(&app, &o, "manager", &[Verb::Notifications]).await;
    let mut seen = Answers::default();

    let put = json!({"kind": "gotify", "base_url": format!("{}/", rx.base()), "connection_id": one});
    let (s, created) = seen.call(&app, "PUT", "/api/v1/agent/sinks/phone", &ep, Some(put)).await;
    assert_eq!(s, 201, "{created}");
    assert_eq!((created["name"].as_str(), created["kind"].as_str()), (Some("phone"), Some("gotify")));
    assert_eq!((created["enabled"].clone(), created["connection_id"].clone()), (json!(true), json!(one)));
    let stored = format!("SELECT count(*) FROM sinks WHERE base_url = '{}'", rx.base());
    assert_eq!(app.db.count(&stored).await, 1, "the slash is no other destination: it posts to its connection's");
    let id = created["id"].as_str().unwrap().to_owned();
    let (_, listed) = app.get("/api/v1/sinks", &o.token).await;
    assert_eq!(listed["sinks"][0]["id"], id.as_str(), "the owner sees it: it is theirs");

    let (s, list) = seen.call(&app, "GET", "/api/v1/agent/sinks", &ep, None).await;
    assert_eq!((s, list["sinks"].as_array().unwrap().len()), (200, 1), "{list}");
    assert_eq!(list["sinks"][0]["name"], "phone");

    let replace = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": two, "enabled": false});
    let (s, replaced) = seen.call(&app, "PUT", "/api/v1/agent/sinks/phone", &ep, Some(replace)).await;
    assert_eq!(s, 200, "{replaced}");
    assert_eq!((replaced["id"].as_str(), replaced["enabled"].clone()), (Some(id.as_str()), json!(false)));
    assert_eq!(replaced["connection_id"], json!(two));
    // Kind and base URL may be left out: the connection's.
    let again = json!({"connection_id": two});
    let (s, kept) = seen.call(&app, "PUT", "/api/v1/agent/sinks/phone", &ep, Some(again)).await;
    assert_eq!((s, kept["enabled"].clone()), (200, json!(false)), "absent, enabled stays as it was");
    assert_eq!(sinks_of(&app, o.scope).await, 1, "replaced, not added");

    let (s, tested) = seen.call(&app, "POST", "/api/v1/agent/sinks/phone/test", &ep, None).await;
    assert_eq!((s, tested.clone()), (200, json!({"ok": true, "error": null})));
    let got = rx.wait_for(1).await;
    assert_eq!(got[0].header("x-gotify-key"), Some(SECRET_TWO), "the test went out with the new connection");

    let subs = json!({"subscriptions": [{"events": ["agent.notify", "todo.dead_lettered"],
                                         "endpoint_ids": [ep.id.to_string()], "min_severity": "normal"}]});
    let (s, set) = seen.call(&app, "PUT", "/api/v1/agent/sinks/phone/subscriptions", &ep, Some(subs)).await;
    assert_eq!(s, 200, "{set}");
    assert_eq!(set["subscriptions"][0]["endpoint_ids"], json!([ep.id.to_string()]));
    assert_eq!(set["subscriptions"][0]["include_excerpt"], false);
    let (_, shown) = app.get(&format!("/api/v1/sinks/{id}/subscriptions"), &o.token).await;
    assert_eq!(shown, set, "the owner sees the same subscriptions");

    let (s, gone) = seen.call(&app, "DELETE", "/api/v1/agent/sinks/phone", &ep, None).await;
    assert_eq!((s, gone), (204, Value::Null));
    assert_eq!(sinks_of(&app, o.scope).await, 0);
    let (s, _) = seen.call(&app, "DELETE", "/api/v1/agent/sinks/phone", &ep, None).await;
    assert_eq!(s, 404, "gone");

    for secret in [SECRET_ONE, SECRET_TWO] {
        assert!(!seen.0.contains(secret), "an answer carried a connection's secret: {}", seen.0);
    }
    assert!(!seen.0.contains("secret"), "no answer has anything named secret: {}", seen.0);
}

#[actix_web::test]
async fn the_notifications_verbs_never_reach_another_owners_sinks_connections_or_endpoints() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let b_sink = subscribed_sink(&app, &b, "b-phone", &rx, json!([{"events": ["agent.notify"]}])).await;
    let b_conn = connection(&app, &b, "b-spare", "b-secret-token", &rx.base()).await;
    let b_endpoint = app.endpoint(b.scope, "b-worker", &[]).await;
    let a_conn = connection(&app, &a, "a-conn", SECRET_ONE, &rx.base()).await;
    let ep = agent(&app, &a, "a-manager", &[Verb::Notifications]).await;
    let b_subs_sql = format!(
        "SELECT count(*) FROM sink_subscriptions s JOIN sinks k ON k.id = s.sink_id WHERE k.scope_id = '{}'",
        b.scope.0
    );
    let b_subs = app.db.count(&b_subs_sql).await;
    let mut seen = Answers::default();

    let foreign = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": b_conn});
    let (s, refused) = seen.call(&app, "PUT", "/api/v1/agent/sinks/stolen", &ep, Some(foreign)).await;
    assert_eq!((s, refused["error"]["code"].as_str()), (422, Some("reference_out_of_scope")), "{refused}");
    assert_eq!(sinks_of(&app, a.scope).await, 0, "nothing stored");

    let (_, list) = seen.call(&app, "GET", "/api/v1/agent/sinks", &ep, None).await;
    assert_eq!(list, json!({"sinks": []}), "another owner's sinks are not listed");
    for (method, path) in [
        ("DELETE", "/api/v1/agent/sinks/b-phone"),
        ("POST", "/api/v1/agent/sinks/b-phone/test"),
        ("PUT", "/api/v1/agent/sinks/b-phone/subscriptions"),
    ] {
        let body = (method == "PUT").then(|| json!({"subscriptions": []}));
        let (s, answer) = seen.call(&app, method, path, &ep, body).await;
        assert_eq!((s, answer["error"]["code"].as_str()), (404, Some("not_found")), "{method} {path}: {answer}");
    }

    // The same name in the endpoint's own scope is its own sink; the other stays.
    let own = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": a_conn});
    let (s, mine) = seen.call(&app, "PUT", "/api/v1/agent/sinks/b-phone", &ep, Some(own)).await;
    assert_eq!(s, 201, "{mine}");
    assert_ne!(mine["id"], json!(b_sink.to_string()));
    let foreign_filter =
        json!({"subscriptions": [{"events": ["agent.notify"], "endpoint_ids": [b_endpoint.id.to_string()]}]});
    let (s, answer) =
        seen.call(&app, "PUT", "/api/v1/agent/sinks/b-phone/subscriptions", &ep, Some(foreign_filter)).await;
    assert_eq!((s, answer["error"]["code"].as_str()), (422, Some("reference_out_of_scope")), "{answer}");

    assert_eq!(sinks_of(&app, b.scope).await, 1, "the other owner's sink is untouched");
    assert_eq!(app.db.count(&b_subs_sql).await, b_subs, "and its subscriptions");
    assert_eq!(rx.count(), 0, "and it was never tested");
    assert!(!seen.0.contains("b-secret-token") && !seen.0.contains(SECRET_ONE), "{}", seen.0);
}

#[actix_web::test]
async fn bad_input_to_the_notifications_verbs_changes_nothing() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "phone", &rx, json!([{"events": ["agent.notify"]}])).await;
    let conn = connection(&app, &o, "spare", SECRET_ONE, &rx.base()).await;
    let ep = agent(&app, &o, "manager", &[Verb::Notifications]).await;
    let before = snapshot(&app).await;
    let long = "n".repeat(101);
    let sink = |extra: Value| {
        let mut b = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": conn});
        for (k, v) in extra.as_object().unwrap() {
            b[k] = v.clone();
        }
        b
    };
    let bad_puts = [
        ("phone", sink(json!({"kind": "slack"}))),
        ("phone", sink(json!({"base_url": "http://10.0.0.1"}))),
        ("phone", sink(json!({"base_url": "ftp://example.com"}))),
        ("phone", sink(json!({"apprise_mode": "key"}))),
        ("phone", sink(json!({"owner": "team:elsewhere"}))),
        ("phone", sink(json!({"connection_id": "cn_nonsense"}))),
        ("phone", json!({"kind": "gotify"})),
        (long.as_str(), sink(json!({}))),
    ];
    for (name, body) in bad_puts {
        let (s, b) = app.call("PUT", &format!("/api/v1/agent/sinks/{name}"), Some(&ep.token), Some(&body)).await;
        assert_eq!(s, 422, "{name} {body}: {b}");
    }
    let unknown = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": switchboard::domain::ids::ConnectionId::new()});
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&unknown)).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (422, Some("reference_out_of_scope")), "{b}");
    for subs in [
        json!({"subscriptions": [{"events": []}]}),
        json!({"subscriptions": [{"events": ["agent.paged"]}]}),
        json!({"subscriptions": [{"events": ["agent.notify"], "queues": ["not a queue!"]}]}),
        json!({"subscriptions": [{"events": ["agent.notify"], "min_severity": "loud"}]}),
        json!({"subscriptions": (0..33).map(|_| json!({"events": ["agent.notify"]})).collect::<Vec<_>>()}),
    ] {
        let (s, b) = app.call("PUT", "/api/v1/agent/sinks/phone/subscriptions", Some(&ep.token), Some(&subs)).await;
        assert_eq!(s, 422, "{subs}: {b}");
    }
    assert_eq!(snapshot(&app).await, before, "nothing changed");
}

#[actix_web::test]
async fn a_replacement_at_the_sink_cap_succeeds_a_new_sink_past_it_is_refused_and_tests_are_six_a_minute() {
    let app = TestApp::spawn_with(|s| {
        settings(s);
        s.sink_max = 1;
    })
    .await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let conn = connection(&app, &o, "conn", SECRET_ONE, &rx.base()).await;
    let ep = agent(&app, &o, "manager", &[Verb::Notifications]).await;
    let body = json!({"kind": "gotify", "base_url": rx.base(), "connection_id": conn});
    let put = |name: &str| format!("/api/v1/agent/sinks/{name}");
    assert_eq!(app.call("PUT", &put("first"), Some(&ep.token), Some(&body)).await.0, 201);
    let (s, b) = app.call("PUT", &put("first"), Some(&ep.token), Some(&body)).await;
    assert_eq!(s, 200, "a replacement is no new sink: {b}");
    let (s, b) = app.call("PUT", &put("second"), Some(&ep.token), Some(&body)).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (409, Some("conflict")), "{b}");
    assert_eq!(sinks_of(&app, o.scope).await, 1);

    for i in 1..=6 {
        let (s, b) = app.post("/api/v1/agent/sinks/first/test", &ep.token, json!({})).await;
        assert_eq!((s.as_u16(), b["ok"].clone()), (200, json!(true)), "test {i}: {b}");
    }
    let (s, b) = app.post("/api/v1/agent/sinks/first/test", &ep.token, json!({})).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (429, Some("rate_limited")), "{b}");
    assert_eq!(rx.count(), 6, "the seventh test never went out");
}
