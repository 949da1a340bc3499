//! What a new sink hears (SPEC 13): without a `subscriptions` field it is subscribed to
//! the dead letters (`todo.dead_lettered`, `relay.exhausted`), whoever creates it (the
//! operator API, the Board's add form, an agent's `notifications` verb); `[]` subscribes
//! it to nothing, and then its page and its test send say so; a bad list is refused like
//! the subscriptions route refuses it, and no sink is stored. Every dead letter here is
//! real (a todo claimed and failed) and reaches a Gotify-contract loopback receiver.

use serde_json::{Value, json};
use switchboard::board::respond::{NOTICE_COOKIE, Notice};
use switchboard::domain::grants::{DRAIN_FAMILY, Verb};

use super::instances::{dead_letter_in_store, outbox_settings};
use super::*;
use testkit::receiver::{Receiver, Reply};

/// Adds a Gotify sink of `o` named `name` posting to `rx`, with `extra` merged into the
/// create body; answers the status and the body.
async fn create(app: &TestApp, o: &Owner, name: &str, rx: &Receiver, extra: Value) -> (u16, Value) {
    let c = connection_at(app, o, &format!("c-{name}"), "gotify", "token", &rx.base()).await;
    let mut body = json!({"name": name, "kind": "gotify", "connection_id": c["id"]});
    if let (Some(b), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(extra.clone());
    }
    let (s, b) = app.post("/api/v1/sinks", &o.token, body).await;
    (s.as_u16(), b)
}

/// The outbox rows written for sink `id`.
async fn rows_for(app: &TestApp, id: &str) -> i64 {
    app.db.count(&format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", uuid_of(id))).await
}

/// The UUID inside a prefixed id (`sk_<32 hex>`), as the database stores it.
fn uuid_of(id: &str) -> uuid::Uuid {
    uuid::Uuid::parse_str(id.rsplit('_').next().unwrap()).unwrap()
}

#[actix_web::test]
async fn a_new_sink_created_without_subscriptions_hears_a_real_dead_letter() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let (s, sink) = create(&app, &o, "phone", &rx, json!({})).await;
    assert_eq!(s, 201, "{sink}");
    // The answer says what it hears.
    assert_eq!(sink["subscriptions"][0]["events"], json!(["todo.dead_lettered", "relay.exhausted"]), "{sink}");
    assert_eq!(sink["subscriptions"][0]["include_excerpt"], false, "{sink}");
    let id = sink["id"].as_str().unwrap();
    let (_, subs) = app.get(&format!("/api/v1/sinks/{id}/subscriptions"), &o.token).await;
    assert_eq!(subs["subscriptions"].as_array().map(Vec::len), Some(1), "{subs}");

    let ep = app.agent(o.scope, "worker").await;
    dead_letter_in_store(&app, ep.id, "Nightly export").await;
    let got = rx.wait_for(1).await;
    let message = got[0].json();
    assert_eq!(message["title"], "Dead letter · inbox", "{message}");
    // The todo was created (and titled) by an agent, not by a webhook's sender.
    let text = message["message"].as_str().unwrap();
    assert!(text.contains("Todo title (agent-written): \"Nightly export\""), "{text}");
    assert!(!text.contains("sender-written"), "{text}");
}

#[actix_web::test]
async fn a_sink_created_with_an_empty_list_hears_nothing_and_its_page_and_test_send_say_so() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = crate::board::board_owner(&app, "a@example.com").await;
    let (quiet_rx, heard_rx) =
        (Receiver::scripted(vec![], Reply::Status(200)).await, Receiver::scripted(vec![], Reply::Status(200)).await);
    let (s, silent) = create(&app, &o, "silent", &quiet_rx, json!({"subscriptions": []})).await;
    assert_eq!(s, 201, "{silent}");
    assert_eq!(silent["subscriptions"], json!([]), "{silent}");
    let silent_id = silent["id"].as_str().unwrap().to_owned();
    let (s, heard) = create(&app, &o, "heard", &heard_rx, json!({})).await;
    assert_eq!(s, 201, "{heard}");
    let heard_id = heard["id"].as_str().unwrap().to_owned();

    // A dead letter reaches the default sink; the fan-out that wrote its row wrote none
    // for the silent one.
    let ep = app.agent(o.scope, "worker").await;
    dead_letter_in_store(&app, ep.id, "Nightly export").await;
    heard_rx.wait_for(1).await;
    // The row is recorded once the answer is in (a moment after the message).
    let heard_rows = format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", uuid_of(&heard_id));
    crate::harness::wait::wait_count(&app.db, &heard_rows, 1).await;
    assert_eq!(rows_for(&app, &silent_id).await, 0, "a sink with no subscription is told nothing");
    assert!(quiet_rx.seen().is_empty());

    // The API's test send passes, and says the sink hears nothing.
    let (s, tested) = app.post(&format!("/api/v1/sinks/{silent_id}/test"), &o.token, json!({})).await;
    assert_eq!(s, 200, "{tested}");
    assert_eq!(tested["ok"], true, "{tested}");
    assert!(tested["warning"].as_str().unwrap().contains("hears nothing"), "{tested}");
    let (_, tested) = app.post(&format!("/api/v1/sinks/{heard_id}/test"), &o.token, json!({})).await;
    assert_eq!(tested, json!({"ok": true, "error": null}), "a sink that hears something: no warning");

    // The Board marks the silent sink's row, and only it.
    let session = crate::board::sign_in(&app, "a@example.com").await;
    let page = crate::board::get(&app, "/sinks", Some(&session.cookie)).await;
    let row = |id: &str| {
        let start = page.body.find(&format!("<tr id=\"sink-{id}\"")).expect("the sink's row");
        let end = page.body[start..].find("</tr>").unwrap();
        page.body[start..start + end].to_owned()
    };
    assert!(row(&silent_id).contains(">hears nothing<"), "{}", row(&silent_id));
    assert!(!row(&heard_id).contains("hears nothing"), "{}", row(&heard_id));
    let detail = crate::board::get(&app, &format!("/sinks/{silent_id}"), Some(&session.cookie)).await;
    assert!(detail.body.contains(">hears nothing<"), "{}", detail.body);

    // The Board's test send says so too.
    let form = [("csrf_token", session.csrf.as_str())];
    let sent = crate::board::post_form(&app, &format!("/sinks/{silent_id}/test"), Some(&session.cookie), &form).await;
    let notice = Notice::decode(sent.set_cookie(NOTICE_COOKIE).expect("a notice").value()).unwrap();
    assert!(notice.text.contains("Test sent") && notice.text.contains("hears nothing"), "{}", notice.text);
}

#[actix_web::test]
async fn bad_subscriptions_on_create_are_refused_with_422_and_no_sink_is_stored() {
    let app = spawn().await;
    let o = app.owner("a@example.com").await;
    let bob = app.owner("b@example.com").await;
    let bobs = app.agent(bob.scope, "bobs").await;
    let c = connection(&app, &o, "phone", "gotify", "token").await;
    let bad = [
        json!([{"events": []}]),
        json!([{"events": ["todo.dead_lettered"], "queues": ["not a queue!"]}]),
        json!([{"events": ["no.such.event"]}]),
        json!({"events": ["todo.dead_lettered"]}),
        // Another owner's endpoint: checked in the transaction that would write the sink.
        json!([{"events": ["todo.dead_lettered"], "endpoint_ids": [bobs.id]}]),
    ];
    for subs in bad {
        let body = json!({"name": "phone", "kind": "gotify", "connection_id": c["id"], "subscriptions": subs});
        let (s, b) = app.post("/api/v1/sinks", &o.token, body).await;
        assert_eq!(s, 422, "{subs} -> {b}");
        assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0, "{subs}: no sink stored");
        assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions").await, 0, "{subs}");
    }
    // The same list, well formed, is taken as given.
    let own = app.agent(o.scope, "mine").await;
    let subs = json!([{"events": ["delivery.quarantined"], "endpoint_ids": [own.id], "min_severity": "high"}]);
    let body = json!({"name": "phone", "kind": "gotify", "connection_id": c["id"], "subscriptions": subs});
    let (s, b) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{b}");
    assert_eq!(b["subscriptions"][0]["events"], json!(["delivery.quarantined"]), "{b}");
    assert_eq!(b["subscriptions"][0]["min_severity"], "high", "{b}");
}

#[actix_web::test]
async fn an_agents_new_sink_hears_dead_letters_by_default_and_its_own_list_keeps_the_agent_rules() {
    let app = TestApp::spawn_with(outbox_settings).await;
    let o = app.owner("a@example.com").await;
    let mut grants = DRAIN_FAMILY.to_vec();
    grants.extend([Verb::CreateTodo, Verb::Notifications]);
    let ep = app.endpoint(o.scope, "agent", &grants).await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let c = connection_at(&app, &o, "phone", "gotify", "token", &rx.base()).await;

    // An excerpt is the owner's to turn on: refused, nothing stored.
    let excerpt = json!({"connection_id": c["id"], "subscriptions": [{"events": ["todo.dead_lettered"], "include_excerpt": true}]});
    let (s, b) = app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&excerpt)).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (403, Some("forbidden")), "{b}");
    assert_eq!(app.db.count("SELECT count(*) FROM sinks").await, 0);

    let (s, b) =
        app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&json!({"connection_id": c["id"]}))).await;
    assert_eq!(s, 201, "{b}");
    let id = b["id"].as_str().unwrap().to_owned();
    let (_, subs) = app.get(&format!("/api/v1/sinks/{id}/subscriptions"), &o.token).await;
    assert_eq!(subs["subscriptions"][0]["events"], json!(["todo.dead_lettered", "relay.exhausted"]), "{subs}");
    dead_letter_in_store(&app, ep.id, "Sync ledger").await;
    assert_eq!(rx.wait_for(1).await[0].json()["title"], "Dead letter · inbox");

    // Replacing it without a list keeps what it hears; with `[]` it hears nothing.
    let (s, _) =
        app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&json!({"connection_id": c["id"]}))).await;
    assert_eq!(s, 200);
    assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions").await, 1);
    let none = json!({"connection_id": c["id"], "subscriptions": []});
    let (s, _) = app.call("PUT", "/api/v1/agent/sinks/phone", Some(&ep.token), Some(&none)).await;
    assert_eq!(s, 200);
    assert_eq!(app.db.count("SELECT count(*) FROM sink_subscriptions").await, 0);
    let (_, tested) = app.post("/api/v1/agent/sinks/phone/test", &ep.token, json!({})).await;
    assert!(tested["warning"].as_str().unwrap().contains("hears nothing"), "{tested}");
}
