//! `max_in_flight` under racing agents: sixteen agents (half claiming on the queue, half
//! on any queue) never hold more of its todos than the cap, on one server or spread
//! over two servers on one database, and nothing is lost; claims racing changes of the
//! budget never answer a 5xx.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::{Value, json};
use switchboard::startup::Application;

use super::*;
use crate::harness::{Owner, Signals, test_settings};

/// How long an agent works on a claim before completing it.
const HOLD: Duration = Duration::from_millis(25);
/// How long an agent waits after an empty answer before asking again.
const BACKOFF: Duration = Duration::from_millis(3);
const QUEUE: &str = "builds";

/// What a race saw.
#[derive(Default)]
struct Seen {
    /// Per claim: when its answer arrived and when its completion was sent (inside the
    /// time the todo was claimed in the database).
    held: Vec<(Instant, Instant)>,
    /// Deferred answers by reason.
    deferred: BTreeMap<String, i64>,
    /// The most claimed todos of the queue one look at the database found.
    most_in_db: i64,
    /// Looks at the database taken during the race.
    looks: u32,
}

impl Seen {
    /// The most claims held at once, from the answers alone.
    fn most_held_at_once(&self) -> i64 {
        let mut edges: Vec<(Instant, i64)> = self.held.iter().flat_map(|(a, b)| [(*a, 1), (*b, -1)]).collect();
        // At one instant, a release comes before a claim.
        edges.sort();
        let (mut now, mut most) = (0, 0);
        for (_, step) in edges {
            now += step;
            most = most.max(now);
        }
        most
    }
}

/// Sixteen agents of `ep` claim through the servers at `bases` (agent `i` on
/// `bases[i % len]`; even agents name the queue, odd ones ask for any) until `total`
/// todos are done, while the database is watched for the queue's claimed count.
async fn race(app: &TestApp, bases: &[String], ep: &Ep, total: usize) -> Seen {
    let seen = RefCell::new(Seen::default());
    let done = Cell::new(0usize);
    let agents = (0..16).map(|i| {
        let (base, seen, done) = (&bases[i % bases.len()], &seen, &done);
        async move {
            let body = if i % 2 == 0 { json!({"queue": QUEUE}) } else { json!({}) };
            while done.get() < total {
                let answer = post(app, base, "/api/v1/agent/todos/claim-next", &ep.token, &body).await;
                if answer["empty"] == true {
                    if let Some(reason) = deferred(&answer) {
                        *seen.borrow_mut().deferred.entry(reason.to_owned()).or_default() += 1;
                    }
                    actix_rt::time::sleep(BACKOFF).await;
                    continue;
                }
                let got = Instant::now();
                actix_rt::time::sleep(HOLD).await;
                let id = answer["todo"]["id"].as_str().unwrap();
                let released = Instant::now();
                let finish = json!({"lease_token": answer["lease_token"]});
                post(app, base, &format!("/api/v1/agent/todos/{id}/complete"), &ep.token, &finish).await;
                seen.borrow_mut().held.push((got, released));
                done.set(done.get() + 1);
            }
        }
    });
    let watch = async {
        let sql = format!("SELECT count(*) FROM todos WHERE queue = '{QUEUE}' AND state = 'claimed'");
        let session = app.db.session().await;
        while done.get() < total {
            let n = session.count(&sql).await;
            let mut s = seen.borrow_mut();
            s.most_in_db = s.most_in_db.max(n);
            s.looks += 1;
        }
    };
    let (_, ()) = tokio::join!(join_all(agents), watch);
    seen.into_inner()
}

/// POST `body` to `base` + `path` as `token`; the answer must be a 200.
async fn post(app: &TestApp, base: &str, path: &str, token: &str, body: &Value) -> Value {
    let mut resp = app
        .client
        .post(format!("{base}{path}"))
        .insert_header(("Authorization", format!("Bearer {token}")))
        .send_json(body)
        .await
        .expect("request");
    let bytes = resp.body().await.expect("body");
    let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_eq!(resp.status(), 200, "{path}: {answer}");
    answer
}

/// The queue capped at three, with `total` todos waiting.
async fn capped_queue(app: &TestApp, total: usize) -> (Owner, Ep) {
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    set_admission(app, &owner.token, ep.id, QUEUE, json!({"max_in_flight": 3})).await;
    for i in 0..total {
        app.create_todo(&ep, QUEUE, &format!("t{i}")).await;
    }
    (owner, ep)
}

/// What every race must show: the cap held (seen by the database and by the answers),
/// it was reached (claims were deferred as `in_flight_full`, which only a full queue
/// answers), every todo was claimed once and is done, and every deferral the agents
/// heard is counted once.
async fn assert_held(app: &TestApp, seen: &Seen, total: usize) {
    assert!(seen.looks > 0, "the database was watched during the race");
    assert!(seen.most_in_db <= 3, "{} claimed at once in the database", seen.most_in_db);
    let held = seen.most_held_at_once();
    assert!((1..=3).contains(&held), "the answers show {held} claims held at once");
    assert!(seen.deferred.get("in_flight_full").copied().unwrap_or(0) > 0, "the cap was reached");
    assert_eq!(seen.deferred.keys().collect::<Vec<_>>(), ["in_flight_full"], "{:?}", seen.deferred);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'done'").await, total as i64, "nothing lost");
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempt_history").await, total as i64, "each claimed once");
    let counted = app.db.count("SELECT coalesce(sum(count), 0)::bigint FROM queue_deferrals").await;
    assert_eq!(counted, seen.deferred["in_flight_full"], "every deferral heard is counted, once");
}

#[actix_web::test]
async fn sixteen_racing_agents_never_hold_more_than_max_in_flight_and_lose_nothing() {
    let app = TestApp::spawn().await;
    let total = 40;
    let (_, ep) = capped_queue(&app, total).await;
    let seen = race(&app, std::slice::from_ref(&app.base), &ep, total).await;
    assert_held(&app, &seen, total).await;
}

/// Another server on `app`'s database; stopped when the handle is.
async fn another_instance(app: &TestApp) -> (String, actix_web::dev::ServerHandle) {
    let settings = test_settings(&app.db);
    let signals = Signals::start();
    let second =
        Application::build_with_lookup(&settings, &app.db.url, signals.emitter(), switchboard::outbound::SystemLookup)
            .await
            .expect("second instance");
    let base = format!("http://127.0.0.1:{}", second.port());
    let handle = second.handle();
    actix_rt::spawn(second.run_until_stopped());
    (base, handle)
}

#[actix_web::test]
async fn max_in_flight_holds_across_two_servers_on_one_database() {
    let app = TestApp::spawn().await;
    let (second, handle) = another_instance(&app).await;
    let total = 40;
    let (_, ep) = capped_queue(&app, total).await;
    let seen = race(&app, &[app.base.clone(), second], &ep, total).await;
    assert_held(&app, &seen, total).await;
    handle.stop(false).await;
}

#[actix_web::test]
async fn claims_racing_budget_changes_never_answer_a_server_error() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let ep = app.agent(owner.scope, "worker").await;
    let total = 60;
    for i in 0..total {
        app.create_todo(&ep, if i % 3 == 0 { "other" } else { QUEUE }, &format!("t{i}")).await;
    }
    let done = Cell::new(0usize);
    let agents = (0..8).map(|i| {
        let done = &done;
        let ep = &ep;
        let app = &app;
        async move {
            let body = if i % 2 == 0 { json!({"queue": QUEUE}) } else { json!({}) };
            while done.get() < total {
                let answer = post(app, &app.base, "/api/v1/agent/todos/claim-next", &ep.token, &body).await;
                if answer["empty"] == true {
                    actix_rt::time::sleep(BACKOFF).await;
                    continue;
                }
                let id = answer["todo"]["id"].as_str().unwrap();
                let finish = json!({"lease_token": answer["lease_token"]});
                post(app, &app.base, &format!("/api/v1/agent/todos/{id}/complete"), &ep.token, &finish).await;
                done.set(done.get() + 1);
            }
        }
    });
    let changes = [
        json!({"paused": true}),
        json!({"paused": false, "max_in_flight": 1}),
        json!({"per_hour": 1000, "max_in_flight": 5}),
        json!({"paused": true, "per_hour": null}),
        json!({"paused": false, "max_in_flight": null, "per_hour": null}),
    ];
    let changer = async {
        let mut rounds = 0;
        while done.get() < total {
            for change in &changes {
                for queue in [QUEUE, "other"] {
                    set_admission(&app, &owner.token, ep.id, queue, change.clone()).await;
                }
            }
            rounds += 1;
        }
        rounds
    };
    let (_, rounds) = tokio::join!(join_all(agents), changer);
    assert!(rounds > 0);
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'done'").await, total as i64, "nothing lost");
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempt_history").await, total as i64, "each claimed once");
    assert_eq!(app.db.count("SELECT count(*) FROM queue_admission").await, 0, "every round ends without a budget");
}
