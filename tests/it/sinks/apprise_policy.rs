//! Issue 37, finding 6: `SWITCHBOARD_APPRISE_ALLOWED_SCHEMES` holds at every send, not
//! only when URLs are saved. Stateless Apprise URLs stored while the operator allowed
//! their scheme are not sent once the instance runs with a setting that does not: the
//! outbox ends the row `undeliverable` naming the scheme only, a test send answers
//! `forbidden_scheme`, and the Apprise server gets nothing.

use serde_json::json;
use switchboard::config::Settings;
use switchboard::startup::Application;

use super::instances::{dead_letter_in_store, outbox_settings, stop_and_wait};
use super::*;
use crate::harness::{Signals, test_settings};
use testkit::receiver::{Receiver, Reply};

/// Stateless URLs whose scheme makes Apprise dial a host of the URL's choosing.
const URLS: &str = "ntfys://ntfy.internal.example/alerts?auth=SeCrEtToKeN";

/// Another server on `app`'s database with `schemes` as the setting; its handle and
/// base URL.
async fn instance_allowing(app: &TestApp, schemes: &str) -> (actix_web::dev::ServerHandle, String) {
    let mut settings: Settings = test_settings(&app.db);
    outbox_settings(&mut settings);
    settings.apprise_allowed_schemes = schemes.into();
    let signals = Signals::start();
    let server =
        Application::build_with_lookup(&settings, &app.db.url, signals.emitter(), switchboard::outbound::SystemLookup)
            .await
            .expect("instance");
    let base = format!("http://127.0.0.1:{}", server.port());
    let handle = server.handle();
    actix_rt::spawn(server.run_until_stopped());
    (handle, base)
}

#[actix_web::test]
async fn stored_apprise_urls_whose_scheme_the_operator_no_longer_allows_are_never_sent() {
    // Saved while the operator listed ntfys.
    let app = TestApp::spawn_with(|s| {
        outbox_settings(s);
        s.apprise_allowed_schemes = "ntfys,tgram".into();
    })
    .await;
    let (o, rx, id) = stateless_sink(&app).await;
    let ep = app.agent(o.scope, "w").await;

    // The operator narrows the setting to the default allow list and restarts.
    stop_and_wait(&app).await;
    let (next, base) = instance_allowing(&app, "").await;
    dead_letter_in_store(&app, ep.id, "the build broke").await;
    wait_count(
        &app.db,
        "SELECT count(*) FROM outbox WHERE status = 'undeliverable' AND last_error = 'forbidden_scheme: ntfys'",
        1,
    )
    .await;
    let (s, log) = call(&app, &base, "GET", &format!("/api/v1/sinks/{id}/deliveries"), &o.token).await;
    assert_eq!(s, 200, "{log}");
    assert_eq!(log["deliveries"][0]["status"], "undeliverable", "{log}");
    assert_eq!(log["deliveries"][0]["last_error"], "forbidden_scheme: ntfys", "{log}");

    let (s, tested) = call(&app, &base, "POST", &format!("/api/v1/sinks/{id}/test"), &o.token).await;
    assert_eq!(s, 200, "{tested}");
    assert_eq!((tested["ok"].clone(), tested["error"]["code"].clone()), (json!(false), json!("forbidden_scheme")));
    let message = tested["error"]["message"].as_str().unwrap();
    assert!(message.contains("ntfys"), "{message}");
    for answer in [log.to_string(), tested.to_string()] {
        for leak in ["ntfy.internal", "SeCrEtToKeN", "alerts"] {
            assert!(!answer.contains(leak), "{leak} in {answer}");
        }
    }
    assert_eq!(rx.count(), 0, "the Apprise server got nothing");
    next.stop(false).await;
}

#[actix_web::test]
async fn with_the_scheme_listed_the_same_stored_urls_are_sent() {
    let app = TestApp::spawn_with(|s| {
        outbox_settings(s);
        s.apprise_allowed_schemes = "ntfys".into();
    })
    .await;
    let (o, rx, _) = stateless_sink(&app).await;
    let ep = app.agent(o.scope, "w").await;
    dead_letter_in_store(&app, ep.id, "the build broke").await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'sent'", 1).await;
    let got = rx.wait_for(1).await;
    assert_eq!((got[0].path.as_str(), got[0].json()["urls"].clone()), ("/notify/", json!(URLS)));
}

/// An owner with a stateless Apprise sink (URLS) on a loopback Apprise server that
/// answers 200, subscribed to dead letters: the owner, the server and the sink's id.
async fn stateless_sink(app: &TestApp) -> (Owner, Receiver, String) {
    let o = app.owner("a@example.com").await;
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let c = connection_at(app, &o, "relay", "apprise", URLS, &rx.base()).await;
    let body = json!({"name": "phone", "kind": "apprise", "connection_id": c["id"], "apprise_mode": "urls"});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let id = sink["id"].as_str().unwrap().to_owned();
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    assert_eq!(app.call("PUT", &format!("/api/v1/sinks/{id}/subscriptions"), Some(&o.token), Some(&subs)).await.0, 200);
    (o, rx, id)
}

/// A request to the server at `base` (not `app`'s own, which is stopped).
async fn call(app: &TestApp, base: &str, method: &str, path: &str, token: &str) -> (u16, serde_json::Value) {
    let method: awc::http::Method = method.parse().unwrap();
    let req = app.client.request(method.clone(), format!("{base}{path}"));
    let req = req.insert_header(("Authorization", format!("Bearer {token}")));
    let sent = if method == awc::http::Method::POST { req.send_json(&json!({})).await } else { req.send().await };
    let mut resp = sent.expect("request");
    let bytes = resp.body().await.expect("body");
    (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or_default())
}
