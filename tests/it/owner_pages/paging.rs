//! `notify_owner` with its grant: one message per subscribed sink of the owner,
//! carrying the agent's text cut, stripped and labelled; never another owner's sink;
//! never a sink whose subscription wants a higher severity; a todo of its own linked,
//! another endpoint's refused with nothing queued.

use serde_json::json;

use super::*;
use testkit::receiver::Reply;

#[actix_web::test]
async fn notify_owner_reaches_the_owners_subscribed_sink_once_with_the_text_labelled_cut_and_stripped() {
    let app = spawn().await;
    let a = app.owner("a@example.com").await;
    let b = app.owner("b@example.com").await;
    let rx_a = Receiver::scripted(vec![], Reply::Status(200)).await;
    let rx_b = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &a, "a-phone", &rx_a, json!([{"events": ["agent.notify"]}])).await;
    let b_sink = subscribed_sink(&app, &b, "b-phone", &rx_b, json!([{"events": ["agent.notify"]}])).await;
    let pager = agent(&app, &a, "pager", &[Verb::PageOwner]).await;

    let text = format!("Deploy\u{7} blocked\r\nneeds a human\u{1b}[31m {}", "z".repeat(200));
    let (s, answer) = page(&app, &pager, json!({"title": text})).await;
    assert_eq!((s.as_u16(), answer.clone()), (202, json!({"enqueued": 1})));

    let got = rx_a.wait_for(1).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    assert_eq!((got[0].method.as_str(), got[0].path.as_str()), ("POST", "/message"), "the Gotify contract");
    assert_eq!(got[0].header("x-gotify-key"), Some("token-a-phone"));
    let body = got[0].json();
    assert_eq!(body["title"], "Agent · pager", "titled by the endpoint, never by the agent's text");
    assert_eq!(body["priority"], 5, "normal by default");
    let message = body["message"].as_str().unwrap();
    let line = message.lines().find(|l| l.starts_with("Notice (agent-written): \"")).expect(message);
    let quoted = line.trim_start_matches("Notice (agent-written): \"").trim_end_matches('"');
    assert!(quoted.starts_with("Deploy blocked  needs a human[31m zzz"), "stripped, one line: {quoted:?}");
    assert_eq!(quoted.chars().count(), 120, "cut to 120 characters: {quoted:?}");
    assert!(quoted.ends_with('…'), "the cut is marked");
    assert!(!message.chars().any(|c| c.is_control() && c != '\n'), "no control characters: {message:?}");
    assert!(message.contains(&format!("/endpoints/{}", pager.id)), "links the endpoint's page: {message}");
    assert_eq!(rx_a.count(), 1, "exactly once");

    assert_eq!(app.db.count(&format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", b_sink.0)).await, 0);
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM outbox WHERE scope_id = '{}'", b.scope.0)).await, 0);
    assert_eq!(rx_b.count(), 0, "another owner's sink is never told");
}

#[actix_web::test]
async fn a_page_below_a_subscriptions_minimum_severity_is_not_sent_and_one_at_it_is() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let (rx_loud, rx_all) =
        (Receiver::scripted(vec![], Reply::Status(200)).await, Receiver::scripted(vec![], Reply::Status(200)).await);
    let loud =
        subscribed_sink(&app, &o, "loud", &rx_loud, json!([{"events": ["agent.notify"], "min_severity": "high"}]))
            .await;
    subscribed_sink(&app, &o, "all", &rx_all, json!([{"events": ["agent.notify"]}])).await;
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;

    let (s, b) = page(&app, &pager, json!({"title": "fyi", "severity": "normal"})).await;
    assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 1})), "only the sink that takes normal");
    let (s, b) = page(&app, &pager, json!({"title": "on fire", "severity": "high"})).await;
    assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 2})));

    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 3).await;
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", loud.0)).await, 1);
    let heard = rx_loud.wait_for(1).await;
    assert_eq!(heard.len(), 1, "the normal page never reached the high-only sink");
    assert_eq!(heard[0].json()["priority"], 8);
    assert!(heard[0].json()["message"].as_str().unwrap().contains("on fire"));
    assert_eq!(rx_all.wait_for(2).await.len(), 2);
}

#[actix_web::test]
async fn a_page_about_its_own_todo_links_it_and_matches_queue_filters_and_another_endpoints_todo_is_not_found() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let (rx_builds, rx_any) =
        (Receiver::scripted(vec![], Reply::Status(200)).await, Receiver::scripted(vec![], Reply::Status(200)).await);
    let builds =
        subscribed_sink(&app, &o, "builds", &rx_builds, json!([{"events": ["agent.notify"], "queues": ["builds"]}]))
            .await;
    subscribed_sink(&app, &o, "any", &rx_any, json!([{"events": ["agent.notify"]}])).await;
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    let sibling = agent(&app, &o, "sibling", &[]).await;
    let mine = app.create_todo(&pager, "builds", "nightly build").await;
    let theirs = app.create_todo(&sibling, "builds", "their build").await;

    let (s, b) = page(&app, &pager, json!({"title": "stuck on this one", "todo_id": mine})).await;
    assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 2})), "the queue filter matches the todo's queue");
    let got = rx_builds.wait_for(1).await;
    let message = got[0].json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains(&format!("/todos/{mine}")), "the todo's Board link: {message}");
    assert!(message.contains("Queue: builds"), "{message}");
    assert!(!message.contains("nightly build"), "the todo's sender-written title is not the page's: {message}");

    let (s, b) = page(&app, &pager, json!({"title": "no todo this time"})).await;
    assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 1})), "a queue-filtered subscription needs a todo");
    assert_eq!(app.db.count(&format!("SELECT count(*) FROM outbox WHERE sink_id = '{}'", builds.0)).await, 1);

    let outbox = app.db.count("SELECT count(*) FROM outbox").await;
    let calls = app.db.count("SELECT count(*) FROM agent_notify_calls").await;
    let (s, b) = page(&app, &pager, json!({"title": "not mine", "todo_id": theirs})).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (404, Some("not_found")), "{b}");
    let unknown = switchboard::domain::ids::TodoId::new();
    let (s, b) = page(&app, &pager, json!({"title": "nobody's", "todo_id": unknown})).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (404, Some("not_found")), "{b}");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, outbox, "nothing queued");
    assert_eq!(app.db.count("SELECT count(*) FROM agent_notify_calls").await, calls, "nor counted against the hour");
}

#[actix_web::test]
async fn a_page_nobody_subscribes_to_answers_zero_enqueued_and_a_page_without_text_is_refused() {
    let app = spawn().await;
    let o = app.owner("o@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    subscribed_sink(&app, &o, "dead-letters-only", &rx, json!([{"events": ["todo.dead_lettered"]}])).await;
    let other = agent(&app, &o, "other", &[]).await;
    subscribed_sink(
        &app,
        &o,
        "other-endpoint-only",
        &rx,
        json!([{"events": ["agent.notify"], "endpoint_ids": [other.id.to_string()]}]),
    )
    .await;
    let pager = agent(&app, &o, "pager", &[Verb::PageOwner]).await;
    let (s, b) = page(&app, &pager, json!({"title": "anyone?"})).await;
    assert_eq!((s.as_u16(), b), (202, json!({"enqueued": 0})), "no sink subscribes: 0, said plainly");
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0);

    for bad in [
        json!({"title": ""}),
        json!({"title": "\u{7}\u{1b}\t  \r\n"}),
        json!({"title": "x", "severity": "urgent"}),
        json!({"title": "x", "todo_id": "not-an-id"}),
        json!({"title": "x", "to": "someone@example.com"}),
        json!({}),
    ] {
        let (s, b) = page(&app, &pager, bad.clone()).await;
        assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (422, Some("invalid_argument")), "{bad}: {b}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM outbox").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM agent_notify_calls").await, 1, "only the accepted call counts");
    assert_eq!(rx.count(), 0);
}
