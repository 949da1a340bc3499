//! The upgrade over connections an earlier release stored (no destination, unsalted
//! fingerprints, sinks whose history was not recorded): a connection whose sinks a human
//! set up, in a scope no agent could have steered, is bound to their one destination; a
//! connection whose sink an agent may have rewritten is left unbound, its messages held
//! (not lost, not sent to the rewritten host) until an admin rotates it with a
//! destination; the digest says so; fingerprints are keyed; a second pass does nothing.

use serde_json::json;
use switchboard::domain::grants::Verb;
use switchboard::startup::Application;
use switchboard::vault::Vault;

use super::*;
use crate::harness::wait::wait_count;
use crate::harness::{Signals, test_settings};

/// Turns every connection, sink and webhook back into what an earlier release left:
/// gotify connections without a destination, undecided, their fingerprints the bare
/// SHA-256 prefix; sinks whose writer was not recorded.
async fn as_an_earlier_release_left_them(app: &TestApp, secrets: &[(&str, &str)]) {
    app.db.exec("UPDATE connections SET bound = NULL, base_url = NULL, fingerprint_keyed = false").await;
    for (name, secret) in secrets {
        let sql = format!("UPDATE connections SET fingerprint = '{}' WHERE name = '{name}'", sha256_prefix(secret));
        app.db.exec(&sql).await;
    }
    app.db.exec("UPDATE sinks SET changed_by_agent = NULL").await;
    app.db.exec("UPDATE webhooks SET secret_fingerprint_keyed = false").await;
}

/// Starts an instance of this release on `app`'s database (its start-up runs the pass).
async fn upgraded_instance(app: &TestApp) -> actix_web::dev::ServerHandle {
    let mut s = test_settings(&app.db);
    settings(&mut s);
    let signals = Signals::start();
    let server =
        Application::build_with_lookup(&s, &app.db.url, signals.emitter(), switchboard::outbound::SystemLookup)
            .await
            .expect("the upgraded instance starts");
    let handle = server.handle();
    actix_rt::spawn(server.run_until_stopped());
    handle
}

/// A sink of `o` with `connection`, subscribed to dead letters; its id.
async fn dead_letter_sink(app: &TestApp, o: &Owner, name: &str, connection: &Value) -> String {
    let body = json!({"name": name, "kind": "gotify", "connection_id": connection["id"]});
    let (s, sink) = app.post("/api/v1/sinks", &o.token, body).await;
    assert_eq!(s, 201, "{sink}");
    let id = sink["id"].as_str().unwrap().to_owned();
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    let (s, b) = app.call("PUT", &format!("/api/v1/sinks/{id}/subscriptions"), Some(&o.token), Some(&subs)).await;
    assert_eq!(s, 200, "{b}");
    id
}

#[actix_web::test]
async fn an_upgrade_binds_what_humans_set_up_and_holds_what_an_agent_may_have_rewritten() {
    let app = spawn().await;
    // An owner no agent can steer: one sink, set up by a human.
    let calm = app.owner("calm@example.com").await;
    let calm_rx = Receiver::start().await;
    let cc = connection(&app, &calm, "calm-phone", "calm-token", &calm_rx).await;
    dead_letter_sink(&app, &calm, "calm", &cc).await;
    let calm_worker = agent(&app, &calm, "calm-worker", &[]).await;
    let body = json!({"endpoint_id": calm_worker.id, "source_type": "github", "queue": "inbox", "secret": "whsec-old"});
    assert_eq!(app.post("/api/v1/webhooks", &calm.token, body).await.0, 201);
    // An owner with an agent holding `notifications`, which (under the earlier release)
    // pointed the owner's sink at its own host.
    let steered = app.owner("steered@example.com").await;
    let (home, evil) = (Receiver::start().await, Receiver::start().await);
    let cs = connection(&app, &steered, "steered-phone", SECRET, &home).await;
    let sink = dead_letter_sink(&app, &steered, "steered", &cs).await;
    agent(&app, &steered, "injected", &[Verb::Notifications]).await;
    let steered_worker = agent(&app, &steered, "steered-worker", &[]).await;
    let d = json!({"name": "morning", "schedule": "Mon 09:00", "sink_ids": [sink]});
    let (s, digest) = app.post("/api/v1/digests", &steered.token, d).await;
    assert_eq!(s, 201, "{digest}");

    as_an_earlier_release_left_them(&app, &[("calm-phone", "calm-token"), ("steered-phone", SECRET)]).await;
    app.db.exec(&format!("UPDATE sinks SET base_url = '{}' WHERE name = 'steered'", evil.base())).await;
    app.db.exec(&format!("UPDATE webhooks SET secret_fingerprint = '{}'", sha256_prefix("whsec-old"))).await;
    let _upgraded = upgraded_instance(&app).await;

    let (_, listed) = app.get("/api/v1/connections", &calm.token).await;
    let c = &listed["connections"][0];
    assert_eq!((&c["bound"], &c["base_url"]), (&json!(true), &json!(calm_rx.base())), "{listed}");
    assert_ne!(c["fingerprint"], sha256_prefix("calm-token"), "fingerprints are keyed: {listed}");
    let (_, listed) = app.get("/api/v1/connections", &steered.token).await;
    let c = &listed["connections"][0];
    assert_eq!((&c["bound"], &c["base_url"]), (&json!(false), &json!(null)), "{listed}");
    assert_ne!(c["fingerprint"], sha256_prefix(SECRET), "{listed}");
    let (_, hooks) = app.get("/api/v1/webhooks", &calm.token).await;
    let rekeyed = hooks["webhooks"][0]["secret_fingerprint"].as_str().unwrap_or_default();
    assert_eq!(rekeyed.len(), 12, "{hooks}");
    assert_ne!(rekeyed, sha256_prefix("whsec-old"), "the earlier release's fingerprint is re-keyed: {hooks}");

    // The bound one sends to its connection's destination, even where an instance of the
    // earlier release rewrote the sink's own copy of the URL afterwards; the unbound one
    // holds, sending nothing anywhere.
    app.db.exec(&format!("UPDATE sinks SET base_url = '{}' WHERE name = 'calm'", evil.base())).await;
    dead_letter(&app, &calm_worker, "calm build", json!({})).await;
    assert_eq!(calm_rx.wait_for(1).await[0].header("x-gotify-key"), Some("calm-token"));
    dead_letter(&app, &steered_worker, "steered build", json!({})).await;
    wait_count(&app.db, "SELECT count(*) FROM outbox WHERE status = 'held' AND last_error = 'connection_unbound'", 1)
        .await;
    assert_eq!((home.count(), evil.count()), (0, 0));
    // Its sink cannot be tested either, and says why.
    let (s, b) = app.post(&format!("/api/v1/sinks/{sink}/test"), &steered.token, json!({})).await;
    assert_eq!((s.as_u16(), b["error"]["code"].as_str()), (409, Some("conflict")), "{b}");
    let (s, p) = app
        .call(
            "POST",
            &format!("/api/v1/digests/{}/preview", digest["id"].as_str().unwrap()),
            Some(&steered.token),
            None,
        )
        .await;
    assert_eq!(s, 200, "{p}");
    assert!(p["text"].as_str().unwrap().contains("steered-phone (1 held)"), "{p}");
    assert_eq!(p["quiet"], false, "{p}");

    // A second pass finds nothing to do.
    let vault = Vault::new(Some(&KEY));
    assert_eq!(app.store.bind_earlier_connections(&vault).await.unwrap().changed(), 0);

    // The owner rotates it with its secret and its destination: the held message goes there.
    let rotate = json!({"secret": SECRET, "base_url": home.base()});
    let (s, rotated) =
        app.post(&format!("/api/v1/connections/{}/rotate", cs["id"].as_str().unwrap()), &steered.token, rotate).await;
    assert_eq!((s.as_u16(), &rotated["bound"]), (200, &json!(true)), "{rotated}");
    let got = home.wait_for(1).await;
    assert_eq!(got[0].header("x-gotify-key"), Some(SECRET));
    assert_eq!(evil.count(), 0, "the host the sink was rewritten to never got the secret");
}
