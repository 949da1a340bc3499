//! Revocation and expiry racing agents that use every verb (the batch verbs too),
//! through the real server: no answer is a server error, and every todo of the endpoint
//! ends either finished before the endpoint died or as an `endpoint_revoked` dead
//! letter. None is lost.
//!
//! These pin the lock order written down in `src/store/mod.rs`: before it, a claim
//! (todo row, then its foreign keys' key-share lock on the endpoint) and a revocation
//! (endpoint row `FOR UPDATE`, then the todos) deadlocked and the revocation answered 500.

use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::harness::wait::{wait_count_at_least, wait_until_every};
use crate::harness::{Ep, Owner, TestApp};

/// Agents cycling on one endpoint.
const AGENTS: usize = 8;
/// Todos seeded per round; the endpoint dies after a third of them are done.
const TODOS: i64 = 150;
/// Rounds per test, each on a fresh endpoint (the deadlock showed in 1 round of 4).
const ROUNDS: usize = 4;

/// What the agents saw.
#[derive(Default)]
struct Seen {
    server_errors: std::sync::Mutex<Vec<String>>,
    calls: AtomicUsize,
    /// Todos claimed by a batch claim (so the batch verbs did race the death).
    batch_claimed: AtomicUsize,
}

impl Seen {
    fn check(&self, what: &str, status: u16, body: &Value) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        if status >= 500 {
            self.server_errors.lock().unwrap().push(format!("{what}: {status} {body}"));
        }
    }
}

/// One agent: claims (next, or by id every third round), heartbeats, then ends the
/// attempt with a verb that depends on the round (complete, fail, release, interrupt
/// and resume); agents 3 and 7 use the batch verbs every other round instead. Agent 0
/// also creates todos, one or a batch of two at a time. Stops at its first 401 (the endpoint is
/// gone) or when `stop` is set.
async fn agent(app: Rc<TestApp>, token: String, n: usize, seen: Arc<Seen>, stop: Arc<AtomicBool>) {
    let mut round = n;
    while !stop.load(Ordering::Relaxed) {
        round += 1;
        if n == 0 {
            let (s, b) = match round % 2 {
                0 => app.post("/api/v1/agent/todos", &token, json!({"queue": "q", "title": "made"})).await,
                _ => {
                    let items =
                        json!({"items": [{"queue": "q", "title": "made 1"}, {"queue": "q", "title": "made 2"}]});
                    app.post("/api/v1/agent/todos/batch", &token, items).await
                }
            };
            seen.check("create", s.as_u16(), &b);
            if s == 401 {
                return;
            }
        }
        if n % 4 == 3 && round.is_multiple_of(2) {
            if !batch_cycle(&app, &token, &seen).await {
                return;
            }
            continue;
        }
        let (s, b) = if round.is_multiple_of(3) {
            let (s, list) = app.get("/api/v1/agent/todos?state=pending&limit=1", &token).await;
            seen.check("list", s.as_u16(), &list);
            if s == 401 {
                return;
            }
            match list["todos"][0]["id"].as_str() {
                Some(id) => app.post(&format!("/api/v1/agent/todos/{id}/claim"), &token, json!({})).await,
                None => app.post("/api/v1/agent/todos/claim-next", &token, json!({})).await,
            }
        } else {
            app.post("/api/v1/agent/todos/claim-next", &token, json!({})).await
        };
        seen.check("claim", s.as_u16(), &b);
        if s == 401 {
            return;
        }
        let (Some(id), Some(lease)) = (b["todo"]["id"].as_str(), b["lease_token"].as_str()) else {
            // Nothing claimable (or the claim lost a race): let the others move.
            actix_rt::task::yield_now().await;
            continue;
        };
        let base = format!("/api/v1/agent/todos/{id}");
        let (s, b) = app.post(&format!("{base}/heartbeat"), &token, json!({"lease_token": lease})).await;
        seen.check("heartbeat", s.as_u16(), &b);
        let finish = json!({"lease_token": lease, "summary": "s"});
        let (verb, (s, b)) = match round % 5 {
            0 | 1 => ("complete", app.post(&format!("{base}/complete"), &token, finish).await),
            2 => ("fail", app.post(&format!("{base}/fail"), &token, finish).await),
            3 => ("release", app.post(&format!("{base}/release"), &token, finish).await),
            _ => {
                let body = json!({"state": "input_required", "wait_seconds": 60, "lease_token": lease});
                let (s, b) = app.post(&format!("{base}/interrupt"), &token, body).await;
                seen.check("interrupt", s.as_u16(), &b);
                let (s, b) = app.post(&format!("{base}/resume"), &token, json!({"lease_token": lease})).await;
                seen.check("resume", s.as_u16(), &b);
                ("complete", app.post(&format!("{base}/complete"), &token, finish).await)
            }
        };
        seen.check(verb, s.as_u16(), &b);
    }
}

/// A batch claim of up to three todos, then a batch complete of every other one and a
/// batch fail of the rest. False once the endpoint is gone (a 401).
async fn batch_cycle(app: &TestApp, token: &str, seen: &Seen) -> bool {
    let (s, b) = app.post("/api/v1/agent/todos/claim-next", token, json!({"limit": 3})).await;
    seen.check("batch claim", s.as_u16(), &b);
    if s == 401 {
        return false;
    }
    let claims = b["claims"].as_array().cloned().unwrap_or_default();
    seen.batch_claimed.fetch_add(claims.len(), Ordering::Relaxed);
    let item = |c: &Value| json!({"id": c["todo"]["id"], "lease_token": c["lease_token"], "summary": "s"});
    for (verb, parity) in [("complete", 0), ("fail", 1)] {
        let items: Vec<Value> =
            claims.iter().enumerate().filter(|(i, _)| i % 2 == parity).map(|(_, c)| item(c)).collect();
        if items.is_empty() {
            continue;
        }
        let (s, b) = app.post(&format!("/api/v1/agent/todos/{verb}"), token, json!({"items": items})).await;
        seen.check(&format!("batch {verb}"), s.as_u16(), &b);
        if s == 401 {
            return false;
        }
    }
    true
}

/// Seeds a round's endpoint with pending todos (a few with a cap of one attempt, so
/// fails at the cap make dead letters too) and some failed ones waiting on a retry.
async fn seed(app: &TestApp, o: &Owner, ep: &Ep) {
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, max_attempts, created_at) \
             SELECT gen_random_uuid(), '{}', '{}', 'q', 't' || n, 'pending', CASE WHEN n % 7 = 0 THEN 1 ELSE 5 END, \
                    now() - n * interval '1 millisecond' FROM generate_series(1, {TODOS}) n",
            ep.id.0, o.scope.0
        ))
        .await;
}

/// Runs the operator's side (retry now, bulk retry) and the system sweeps while the
/// agents work, until `stop`.
async fn background(app: Rc<TestApp>, o: Owner, seen: Arc<Seen>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let (s, b) = app.get("/api/v1/dead-letters?limit=5", &o.token).await;
        seen.check("dead-letters", s.as_u16(), &b);
        if let Some(id) = b["dead_letters"][0]["id"].as_str() {
            let (s, b) = app.post(&format!("/api/v1/todos/{id}/retry"), &o.token, json!({})).await;
            seen.check("retry", s.as_u16(), &b);
        }
        for result in [
            app.store.reap_expired_leases().await.map(|_| ()),
            app.store.requeue_due_retries().await.map(|_| ()),
            app.store.retry_dead_letters(&[o.scope], None, None).await.map(|_| ()),
        ] {
            if let Err(e) = result {
                seen.server_errors.lock().unwrap().push(format!("sweep: {e}"));
            }
        }
        // Make waiting retries due so the scheduler has work racing the agents. Time
        // passing takes no locks: rows a transaction holds right now are skipped (a plain
        // UPDATE over many rows could deadlock with the cascade, failing the test for a
        // lock the product never takes).
        app.db
            .exec(
                "UPDATE todos SET next_retry_at = now() WHERE id IN (SELECT id FROM todos \
                 WHERE state = 'failed' AND next_retry_at IS NOT NULL FOR UPDATE SKIP LOCKED)",
            )
            .await;
    }
}

/// How the endpoint dies in a round.
#[derive(Clone, Copy)]
enum Death {
    /// `POST /api/v1/endpoints/{id}/revoke` by its owner.
    Revoke,
    /// Its expiry passes and the expiry sweep runs.
    Expiry,
}

async fn round(app: &Rc<TestApp>, o: &Owner, slug: &str, death: Death) {
    let ep = app.agent(o.scope, slug).await;
    seed(app, o, &ep).await;
    let seen = Arc::new(Seen::default());
    let stop = Arc::new(AtomicBool::new(false));
    let agents: Vec<_> = (0..AGENTS)
        .map(|n| actix_rt::spawn(agent(app.clone(), ep.token.clone(), n, seen.clone(), stop.clone())))
        .collect();
    let sweeps = actix_rt::spawn(background(app.clone(), o.clone(), seen.clone(), stop.clone()));

    // Kill the endpoint while the agents are busy: once a third of the work is done.
    let done_sql = format!("SELECT count(*) FROM todos WHERE endpoint_id = '{}' AND state = 'done'", ep.id.0);
    wait_count_at_least(&app.db, &done_sql, TODOS / 3, Duration::from_secs(60)).await;
    match death {
        Death::Revoke => {
            let (s, b) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &o.token, json!({})).await;
            assert_eq!(s, 200, "revoke under load: {b}");
        }
        Death::Expiry => {
            app.db.exec(&format!("UPDATE endpoints SET expires_at = now() WHERE id = '{}'", ep.id.0)).await;
            // A sweep skips an endpoint whose row a creation holds at that instant (SKIP
            // LOCKED); the next sweep takes it. Before the lock-order fix every sweep
            // skipped it while claims were in flight.
            let what = "an expiry sweep to take the busy endpoint";
            wait_until_every(what, Duration::from_secs(10), Duration::ZERO, async || {
                let expired = app.store.expire_endpoints().await.expect("expiry sweep under load");
                if expired.iter().any(|r| r.endpoint_id == ep.id) {
                    Ok(())
                } else {
                    Err(format!("a sweep took {} others", expired.len()))
                }
            })
            .await;
        }
    }
    // Every agent stops at its first 401; none keeps working on a dead endpoint.
    let stopped = tokio::time::timeout(Duration::from_secs(60), join_all(agents)).await;
    assert!(stopped.is_ok(), "agents still answered after the endpoint died");
    stop.store(true, Ordering::Relaxed);
    sweeps.await.expect("background task");

    assert!(seen.batch_claimed.load(Ordering::Relaxed) > 0, "no batch claim took part");
    let errors = seen.server_errors.lock().unwrap().clone();
    assert!(errors.is_empty(), "{} of {} calls failed: {errors:?}", errors.len(), seen.calls.load(Ordering::Relaxed));
    let e = ep.id.0;
    // Nothing live is left on the dead endpoint, and no attempt is left open.
    let live = app
        .db
        .count(&format!(
            "SELECT count(*) FROM todos WHERE endpoint_id = '{e}' AND (state IN ('pending', 'claimed', \
             'input_required', 'auth_required') OR (state = 'failed' AND next_retry_at IS NOT NULL))"
        ))
        .await;
    assert_eq!(live, 0, "live todos left on a dead endpoint");
    let open = app
        .db
        .count(&format!(
            "SELECT count(*) FROM todo_attempts a JOIN todos t ON t.id = a.todo_id \
             WHERE t.endpoint_id = '{e}' AND a.ended_at IS NULL"
        ))
        .await;
    assert_eq!(open, 0, "open attempts left on a dead endpoint");
    // Every attempt made has its history row: a claim in flight when the cascade began
    // is closed `revoked` with the rest.
    let unrecorded = app
        .db
        .count(&format!(
            "SELECT count(*) FROM todos t WHERE t.endpoint_id = '{e}' \
             AND t.attempts_total <> (SELECT count(*) FROM todo_attempt_history a WHERE a.todo_id = t.id)"
        ))
        .await;
    assert_eq!(unrecorded, 0, "attempts without a history row on a dead endpoint");
    // Every todo finished (done, or a dead letter at its cap) before the endpoint
    // died, or died with it (`endpoint_revoked`).
    let accounted = app
        .db
        .count(&format!(
            "SELECT count(*) FROM todos t WHERE t.endpoint_id = '{e}' \
             AND (t.state = 'done' OR (t.state = 'failed' AND t.next_retry_at IS NULL AND t.dead_reason IS NOT NULL))"
        ))
        .await;
    let total = app.db.count(&format!("SELECT count(*) FROM todos WHERE endpoint_id = '{e}'")).await;
    assert!(total >= TODOS, "todos lost: {total} of at least {TODOS}");
    assert_eq!(accounted, total, "todos neither finished before the endpoint died nor dead-lettered by it");
    let cascaded = app
        .db
        .count(&format!("SELECT count(*) FROM todos WHERE endpoint_id = '{e}' AND dead_reason = 'endpoint_revoked'"))
        .await;
    assert!(cascaded > 0, "the endpoint died with work in hand");
}

#[actix_web::test]
async fn revoking_an_endpoint_while_its_agents_use_every_verb_never_answers_500_and_loses_nothing() {
    let app = Rc::new(TestApp::spawn().await);
    let o = app.owner("a@example.com").await;
    for r in 0..ROUNDS {
        round(&app, &o, &format!("busy-{r}"), Death::Revoke).await;
    }
}

#[actix_web::test]
async fn an_endpoint_expiring_while_its_agents_use_every_verb_never_fails_the_sweep_and_loses_nothing() {
    let app = Rc::new(TestApp::spawn().await);
    let o = app.owner("a@example.com").await;
    for r in 0..ROUNDS {
        round(&app, &o, &format!("busy-{r}"), Death::Expiry).await;
    }
}
