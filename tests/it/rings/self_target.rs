//! A hook may not point at Switchboard itself: not at the host of its public base URL
//! (`SWITCHBOARD_BASE_URL`, where a proxy in front forwards to us), and not at one of
//! our ingest routes on any host. Refused when saved (API, agent API and Board), with
//! a reason and without the URL, and again when dialled.

use std::io;
use std::net::SocketAddr;

use futures_util::future::BoxFuture;
use serde_json::json;
use switchboard::outbound::Lookup;

use super::*;
use crate::board::{board_owner, post_form, sign_in};
use testkit::receiver::Receiver;

/// DNS answering one address for every name.
struct Everywhere(&'static str);

impl Lookup for Everywhere {
    fn lookup<'a>(&'a self, _host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        let ip = self.0.parse().unwrap();
        Box::pin(async move { Ok(vec![SocketAddr::new(ip, port)]) })
    }
}

/// The public name the apps here are reached at.
const BASE_HOST: &str = "switchboard.example.test";

#[actix_web::test]
async fn a_hook_at_the_base_urls_host_or_at_an_ingest_route_is_refused_when_saved_saying_why() {
    let app = TestApp::spawn_with_lookup(
        |s| {
            notify_settings(s);
            s.base_url = Some(format!("https://{BASE_HOST}"));
        },
        Everywhere("203.0.113.10"),
    )
    .await;
    let owner = board_owner(&app, "a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let board = sign_in(&app, "a@example.com").await;
    // A real ingest URL, as the webhook route hands it out, behind a relay's name.
    let (_, w) = webhook(&app, &owner, &ep, json!({"source_type": "generic", "queue": "inbox"})).await;
    let ingest = w["ingest_url"].as_str().unwrap().replace(BASE_HOST, "relay.example.test");
    let ingest_token = w["ingest_token"].as_str().unwrap().to_owned();
    let refused = [
        (ingest, "ingest route"),
        (format!("https://{BASE_HOST}/hook"), "SWITCHBOARD_BASE_URL"),
        ("https://Switchboard.Example.Test.:443/hook".to_owned(), "SWITCHBOARD_BASE_URL"),
        (format!("https://{BASE_HOST}:8443/elsewhere"), "SWITCHBOARD_BASE_URL"),
        ("https://relay.example.test/webhooks/w/whk_secret_token".to_owned(), "ingest route"),
        ("https://relay.example.test//webhooks/w/whk_secret_token".to_owned(), "ingest route"),
        ("https://relay.example.test/%77ebhooks/w/whk_secret_token".to_owned(), "ingest route"),
        ("https://relay.example.test/a/../webhooks/w/whk_secret_token?x=1".to_owned(), "ingest route"),
    ];
    for (url, why) in &refused {
        for (token, path) in [
            (&owner.token, format!("/api/v1/endpoints/{}/hooks", ep.id)),
            (&ep.token, "/api/v1/agent/hooks".to_owned()),
        ] {
            let (s, b) = app.post(&path, token, json!({"url": url})).await;
            assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{url} via {path}: {b}");
            let message = b["error"]["message"].as_str().unwrap();
            assert!(message.contains(why), "{url}: {message}");
            assert!(!message.contains("whk_secret_token") && !message.contains(ingest_token.as_str()), "{message}");
            assert!(!message.contains(BASE_HOST) && !message.contains("relay"), "{message}");
        }
        let form = [("csrf_token", board.csrf.as_str()), ("url", url.as_str()), ("queues", "")];
        let page = post_form(&app, &format!("/hooks/endpoint/{}", ep.id), Some(&board.cookie), &form).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{url} on the Board");
        assert!(page.body.contains(why), "{url}: {}", page.body);
    }
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks").await, 0);

    // Another host, and a path that is not an ingest route, are somebody else.
    for url in ["https://hooks.example.test/hook", "https://hooks.example.test/webhooks/github"] {
        let (s, b) = app.post(&format!("/api/v1/endpoints/{}/hooks", ep.id), &owner.token, json!({"url": url})).await;
        assert_eq!(s, StatusCode::CREATED, "{url}: {b}");
    }
}

#[actix_web::test]
async fn a_saved_hook_whose_host_is_now_the_base_urls_is_refused_at_dial_without_retry() {
    // Every name resolves to the loopback receiver (allowlisted), so only the host rule
    // stands between the notification and the receiver.
    let app = TestApp::spawn_with_lookup(
        |s| {
            notify_settings(s);
            s.base_url = Some(format!("http://{BASE_HOST}"));
        },
        Everywhere("127.0.0.1"),
    )
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    let hook = hook(&app, &owner, &ep, &format!("http://hooks.example.test:{}/hook", rx.port()), &[]).await;
    // The hook was saved before Switchboard was reached at this name (the base URL
    // changed since, or the row predates the rule): its host is ours now.
    app.db
        .exec(&format!(
            "UPDATE notify_hooks SET url = 'http://{BASE_HOST}:{}/hook' WHERE id = '{}'",
            rx.port(),
            hook.id.0
        ))
        .await;

    generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;
    let h = finished_hook(&app, &owner, &ep, hook.id).await;
    assert_eq!(h["health"]["last_error"], "rejected_ssrf", "{h}");
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "failed"), 1).await;
    assert_eq!(metric(&app, &attempts("rejected_ssrf")).await, 1, "one attempt, never retried");
    assert_eq!(rx.count(), 0, "nothing reached the receiver");
}
