//! The database dropping every connection (a restart, a failover, an operator's
//! `pg_terminate_backend`) under working agents, half of them using the batch verbs: 503
//! while it happens, never 500, and no broken connection handed out afterwards.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use crate::harness::wait::wait_backends_gone;
use crate::harness::{Ep, TestApp};

const AGENTS: usize = 4;
const STORMS: usize = 5;
/// Cycles the agents complete between two storms: proof the app reconnected.
const CYCLES_BETWEEN: u64 = 15;
/// One generous limit for the whole test.
const WITHIN: Duration = Duration::from_secs(120);

/// Terminates every backend of the app's database but the one asking; returns their pids.
const TERMINATE_ALL: &str = "WITH victims AS MATERIALIZED ( \
         SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) \
     SELECT coalesce(array_agg(pid), '{}') FROM victims WHERE pg_terminate_backend(pid)";

/// What the agents saw: every status by verb, and cycles completed.
#[derive(Default)]
pub struct Seen {
    pub statuses: RefCell<Vec<(&'static str, u16, String)>>,
    cycles: Cell<u64>,
    /// Woken after each completed cycle.
    progressed: tokio::sync::Notify,
    stop: Cell<bool>,
}

impl Seen {
    fn record(&self, verb: &'static str, status: u16, body: &serde_json::Value) {
        self.statuses.borrow_mut().push((verb, status, body.to_string()));
    }
}

/// One create → claim-next → complete cycle; true when all three succeeded.
pub async fn cycle(app: &TestApp, ep: &Ep, seen: &Seen) -> bool {
    let (s, b) = app.post("/api/v1/agent/todos", &ep.token, json!({"queue": "q", "title": "t"})).await;
    seen.record("create", s.as_u16(), &b);
    let (s, b) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({})).await;
    seen.record("claim-next", s.as_u16(), &b);
    let (Some(id), Some(lease)) = (b["todo"]["id"].as_str(), b["lease_token"].as_str()) else { return false };
    let (s, b) =
        app.post(&format!("/api/v1/agent/todos/{id}/complete"), &ep.token, json!({"lease_token": lease})).await;
    seen.record("complete", s.as_u16(), &b);
    s == 200
}

/// The same with the batch verbs: a batch create of two, a claim-next with a `limit` of
/// two, a batch complete; true when every call and item succeeded.
async fn batch_cycle(app: &TestApp, ep: &Ep, seen: &Seen) -> bool {
    let items = json!({"items": [{"queue": "q", "title": "b1"}, {"queue": "q", "title": "b2"}]});
    let (s, b) = app.post("/api/v1/agent/todos/batch", &ep.token, items).await;
    seen.record("batch create", s.as_u16(), &b);
    let (s, b) = app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"limit": 2})).await;
    seen.record("batch claim", s.as_u16(), &b);
    let claimed = b["claims"].as_array().cloned().unwrap_or_default();
    if claimed.is_empty() {
        return false;
    }
    let items: Vec<_> =
        claimed.iter().map(|c| json!({"id": c["todo"]["id"], "lease_token": c["lease_token"]})).collect();
    let (s, b) = app.post("/api/v1/agent/todos/complete", &ep.token, json!({"items": items})).await;
    seen.record("batch complete", s.as_u16(), &b);
    s == 200 && b["results"].as_array().is_some_and(|r| r.iter().all(|r| r["ok"] == true))
}

/// One agent's cycles, single or batched.
async fn cycle_of(app: &TestApp, ep: &Ep, seen: &Seen, batched: bool) -> bool {
    if batched { batch_cycle(app, ep, seen).await } else { cycle(app, ep, seen).await }
}

async fn agent(app: &TestApp, ep: &Ep, seen: &Seen, batched: bool) {
    while !seen.stop.get() {
        if cycle_of(app, ep, seen, batched).await {
            seen.cycles.set(seen.cycles.get() + 1);
            seen.progressed.notify_waiters();
        }
    }
}

/// Waits until the agents have completed `n` more cycles.
async fn progress(seen: &Seen, n: u64, deadline: Instant) {
    let target = seen.cycles.get() + n;
    while seen.cycles.get() < target {
        let left = deadline.saturating_duration_since(Instant::now());
        let woken = tokio::time::timeout(left, seen.progressed.notified()).await;
        assert!(woken.is_ok(), "agents stopped making progress ({} cycles)", seen.cycles.get());
    }
}

#[actix_web::test]
async fn terminating_every_database_connection_under_cycling_agents_answers_503_never_500_and_agents_recover() {
    let app = TestApp::spawn().await;
    let owner = app.owner("a@example.com").await;
    let mut agents = Vec::new();
    for i in 0..AGENTS {
        agents.push(app.agent(owner.scope, &format!("agent-{i}")).await);
    }
    let seen = Seen::default();
    let deadline = Instant::now() + WITHIN;
    let storms = async {
        let mut terminated = Vec::new();
        for _ in 0..STORMS {
            progress(&seen, CYCLES_BETWEEN, deadline).await;
            let pids = terminate_all(&app).await;
            assert!(!pids.is_empty(), "the app had no connection to terminate");
            terminated = pids;
        }
        progress(&seen, CYCLES_BETWEEN, deadline).await;
        seen.stop.set(true);
        terminated
    };
    let (last, _) =
        tokio::join!(storms, join_all(agents.iter().enumerate().map(|(i, ep)| agent(&app, ep, &seen, i % 2 == 1))));

    let statuses = seen.statuses.take();
    let unavailable = statuses.iter().filter(|(_, s, _)| *s == 503).count();
    assert!(statuses.iter().any(|(v, s, _)| *v == "batch complete" && *s == 200), "the batch agents worked too");
    let errors: Vec<_> = statuses.iter().filter(|(_, s, _)| *s >= 500 && *s != 503).collect();
    assert!(
        errors.is_empty(),
        "{} of {} responses were server errors other than 503 ({unavailable} × 503), e.g. {:?}",
        errors.len(),
        statuses.len(),
        &errors[..errors.len().min(3)]
    );

    // After the storm: the terminated backends are gone, and every agent works at once
    // (a broken connection handed out again would fail here).
    wait_backends_gone(&app.db, &last, deadline.saturating_duration_since(Instant::now())).await;
    for (i, ep) in agents.iter().enumerate() {
        for _ in 0..3 {
            let ok = cycle_of(&app, ep, &seen, i % 2 == 1).await;
            assert!(ok, "after the storm: {:?}", seen.statuses.take().last());
        }
    }
}

async fn terminate_all(app: &TestApp) -> Vec<i32> {
    let (client, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.expect("connect");
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client.query_one(TERMINATE_ALL, &[]).await.expect("terminate").get(0)
}
