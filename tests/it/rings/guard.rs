//! Deliveries through the SSRF guard and the retry rules, against real receivers: a
//! loopback hook refused at creation without the allowlist, a name that rebinds to
//! loopback refused at dial time without retry, a redirect never followed, 429 and 5xx
//! retried with the same message id, other 4xx not.

use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::json;
use switchboard::outbound::Lookup;

use super::*;
use testkit::receiver::{Received, Receiver, Reply};

#[actix_web::test]
async fn a_hook_to_a_loopback_receiver_is_refused_without_the_allowlist_and_nothing_is_stored() {
    let app = spawn_with(|s| s.notify_hook_allow_cidrs = CidrList::default()).await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    for (token, path) in
        [(&owner.token, format!("/api/v1/endpoints/{}/hooks", ep.id)), (&ep.token, "/api/v1/agent/hooks".to_owned())]
    {
        let (s, b) = app.post(&path, token, json!({"url": rx.url()})).await;
        assert_eq!(s, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {b}");
        assert_eq!(b["error"]["code"], "forbidden_target", "{path}: {b}");
        let message = b["error"]["message"].as_str().unwrap();
        assert_eq!(message, switchboard::outbound::refusal::FORBIDDEN_TARGET_MESSAGE, "the same for every cause");
        assert!(!message.contains("127.0.0.1"), "{message}");
    }
    assert_eq!(app.db.count("SELECT count(*) FROM notify_hooks").await, 0);
    assert_eq!(rx.count(), 0);
}

/// DNS that answers one address for the first lookup of a name (when the hook is
/// saved) and another for every later one (when it is dialled); counts lookups.
struct Rebinding {
    first: &'static str,
    later: &'static str,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Lookup for Rebinding {
    fn lookup<'a>(&'a self, host: &'a str, port: u16) -> BoxFuture<'a, io::Result<Vec<SocketAddr>>> {
        let mut asked = self.asked.lock().unwrap();
        let ip = if asked.is_empty() { self.first } else { self.later };
        asked.push(host.to_owned());
        Box::pin(async move { Ok(vec![SocketAddr::new(ip.parse().unwrap(), port)]) })
    }
}

#[actix_web::test]
async fn a_name_that_rebinds_to_loopback_after_the_hook_is_saved_is_refused_at_dial_without_retry() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let lookup = Rebinding { first: "203.0.113.10", later: "127.0.0.1", asked: asked.clone() };
    // No allowlist: loopback is refused, so only the guard stands between the
    // notification and the receiver listening where the name now points.
    let app = TestApp::spawn_with_lookup(
        |s| {
            notify_settings(s);
            s.notify_hook_allow_cidrs = CidrList::default();
        },
        lookup,
    )
    .await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let rx = Receiver::start().await;
    let url = format!("http://hooks.rebind.test:{}/hook", rx.port());
    let hook = hook(&app, &owner, &ep, &url, &[]).await;
    assert_eq!(asked.lock().unwrap().len(), 1, "checked when saved, and public then");

    generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;
    let h = finished_hook(&app, &owner, &ep, hook.id).await;
    // The class that a name that no longer resolves gets too: the stored error does not
    // tell where the name points now.
    assert_eq!(h["health"]["last_error"], "forbidden_target", "{h}");
    assert_eq!(h["health"]["last_status"], Value::Null);
    assert_eq!(h["health"]["consecutive_failures"], 1);
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "failed"), 1).await;
    assert_eq!(metric(&app, &attempts("forbidden_target")).await, 1, "one attempt, never retried");
    assert_eq!(*asked.lock().unwrap(), ["hooks.rebind.test", "hooks.rebind.test"], "looked up again only to dial once");
    assert_eq!(rx.count(), 0, "nothing reached the receiver");
}

#[actix_web::test]
async fn a_redirect_is_not_followed_and_ends_the_delivery_after_one_attempt() {
    let (app, owner, ep) = with_worker().await;
    let landing = Receiver::start().await;
    let redirector = Receiver::scripted(vec![], Reply::RedirectTo(landing.url())).await;
    let hook = hook(&app, &owner, &ep, &redirector.url(), &[]).await;
    generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;

    let h = finished_hook(&app, &owner, &ep, hook.id).await;
    assert_eq!(
        (h["health"]["last_status"].clone(), h["health"]["last_error"].clone()),
        (json!(302), json!("redirect"))
    );
    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "failed"), 1).await;
    assert_eq!(metric(&app, &attempts("3xx")).await, 1);
    assert_eq!(redirector.count(), 1, "not retried");
    assert_eq!(landing.count(), 0, "the redirect target gets nothing");
}

/// Seconds between two arrivals.
fn gap(a: &Received, b: &Received) -> Duration {
    b.at.duration_since(a.at)
}

fn timestamp(r: &Received) -> i64 {
    r.header("webhook-timestamp").unwrap().parse().unwrap()
}

#[actix_web::test]
async fn status_429_and_5xx_are_retried_with_the_same_message_id_and_other_4xx_are_not() {
    let (app, owner, ep) = with_worker().await;
    let too_many = Receiver::scripted(vec![Reply::Status(429)], Reply::Status(204)).await;
    let bad_gateway = Receiver::scripted(vec![Reply::Status(502)], Reply::Status(200)).await;
    let broken = Receiver::scripted(vec![], Reply::Status(500)).await;
    let refusing = Receiver::scripted(vec![], Reply::Status(400)).await;
    let h_too_many = hook(&app, &owner, &ep, &too_many.url(), &[]).await;
    let h_bad_gateway = hook(&app, &owner, &ep, &bad_gateway.url(), &[]).await;
    let h_broken = hook(&app, &owner, &ep, &broken.url(), &[]).await;
    let h_refusing = hook(&app, &owner, &ep, &refusing.url(), &[]).await;
    generic(&app, &owner, &ep, "builds", 1).await.deliver(&app, "build", json!({})).await;

    for (rx, hook, status) in [(&too_many, &h_too_many, 204), (&bad_gateway, &h_bad_gateway, 200)] {
        let seen = rx.wait_for(2).await;
        assert_eq!(seen[0].header("webhook-id"), seen[1].header("webhook-id"), "a retry keeps its message id");
        for r in &seen {
            r.verify(&hook.secret).expect("every attempt is signed afresh and verifies");
        }
        // At least the first wait (1 s less 20 % jitter, less clock slack); how much
        // later a loaded machine runs it says nothing (`notify::retry` pins the schedule).
        let waited = gap(&seen[0], &seen[1]);
        assert!(waited >= Duration::from_millis(750), "{waited:?}");
        assert!(timestamp(&seen[1]) >= timestamp(&seen[0]));
        let h = finished_hook(&app, &owner, &ep, hook.id).await;
        assert_eq!(h["health"]["last_status"], status, "{h}");
        assert_eq!(h["health"]["consecutive_failures"], 0);
    }

    // The 400 is final at once: its delivery ends after one attempt.
    let h = finished_hook(&app, &owner, &ep, h_refusing.id).await;
    assert_eq!(
        (h["health"]["last_status"].clone(), h["health"]["last_error"].clone()),
        (json!(400), json!("client_error"))
    );
    assert_eq!(refusing.count(), 1, "a 4xx other than 408 and 429 is not retried");

    // Always 500: three attempts, at least 1 s then 5 s apart (less 20 %), then it gives up.
    let seen = broken.wait_for(3).await;
    let h = finished_hook(&app, &owner, &ep, h_broken.id).await;
    assert_eq!(
        (h["health"]["last_status"].clone(), h["health"]["last_error"].clone()),
        (json!(500), json!("server_error"))
    );
    assert_eq!(h["health"]["consecutive_failures"], 1, "one failed delivery, however many attempts");
    assert_eq!(broken.count(), 3, "never a fourth attempt");
    let ids: Vec<&str> = seen.iter().map(|r| r.header("webhook-id").unwrap()).collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    for r in &seen {
        r.verify(&h_broken.secret).unwrap();
    }
    let second_wait = gap(&seen[1], &seen[2]);
    assert!(second_wait >= Duration::from_millis(3900), "{second_wait:?}");
    assert!(timestamp(&seen[2]) >= timestamp(&seen[0]) + 3, "each attempt signs its own timestamp");

    wait_metric(&app, METRICS_TOKEN, &notifications("todo.ready", "failed"), 2).await;
    assert_eq!(metric(&app, &notifications("todo.ready", "delivered")).await, 2);
    assert_eq!(metric(&app, &attempts("4xx")).await, 2, "the 429 and the 400");
    assert_eq!(metric(&app, &attempts("5xx")).await, 4, "the 502 and three 500s");
    assert_eq!(metric(&app, &attempts("2xx")).await, 2);
}
