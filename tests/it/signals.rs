//! Exactly when the store emits `TodoReady` and `DeadLettered`, with what, after commit.

use serde_json::json;
use switchboard::domain::ids::{EndpointId, EventId, ScopeId, TodoId};
use switchboard::domain::todo_state::{AttemptOutcome, DeadReason, QuarantineReason, ReadyReason};
use switchboard::store::signals::Signal;
use switchboard::store::todos::NewTodo;

use crate::harness::wait::{DEADLINE, wait_until_every};
use crate::harness::{Ep, TestApp};

async fn todo_with_cap(app: &TestApp, ep: &Ep, cap: i32) -> TodoId {
    let (_, b) = app
        .post(
            "/api/v1/agent/todos",
            &ep.token,
            json!({"queue": "q", "title": "t", "kind": "build", "max_attempts": cap}),
        )
        .await;
    b["id"].as_str().unwrap().parse().unwrap()
}

/// Inserts an event row as intake will, returning its id.
async fn event(app: &TestApp, scope: ScopeId, verified: bool, trust_mode: &str) -> EventId {
    let id = EventId::new();
    app.db
        .exec(&format!(
            "INSERT INTO events (id, scope_id, source, trust_mode, verified, disposition) \
             VALUES ('{}', '{}', 'github', '{trust_mode}', {verified}, 'routed')",
            id.0, scope.0
        ))
        .await;
    id
}

async fn todo_from_event(app: &TestApp, endpoint: EndpointId, event: EventId) -> TodoId {
    let out = app
        .store
        .create_todo(NewTodo {
            kind: Some("push".into()),
            source: Some("github".into()),
            payload: Some(json!({"secret": "never announced"})),
            max_attempts: Some(1),
            event_id: Some(event),
            ..NewTodo::new(endpoint, "q", "from a delivery")
        })
        .await
        .unwrap();
    out.todo.id
}

#[actix_web::test]
async fn todo_ready_rings_on_create_with_reason_created() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = app.create_todo(&ep, "q", "t").await;
    let ready = app.signals.take_ready().await;
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].reason, ReadyReason::Created);
    assert_eq!(ready[0].todo.id, id);
    assert_eq!(ready[0].todo.endpoint_slug, "worker");
    assert_eq!(ready[0].todo.attempt, 0);
    assert!(!ready[0].todo.sender_gate, "an agent-authored todo never passes the sender gate");
}

#[actix_web::test]
async fn an_idempotency_hit_rings_nothing() {
    let (app, _, ep) = TestApp::with_worker().await;
    let body = json!({"queue": "q", "title": "t", "idempotency_key": "k"});
    app.post("/api/v1/agent/todos", &ep.token, body.clone()).await;
    app.signals.take().await;
    app.post("/api/v1/agent/todos", &ep.token, body).await;
    assert!(app.signals.take().await.is_empty());
}

#[actix_web::test]
async fn todo_ready_rings_requeued_for_a_lapsed_lease_a_due_retry_and_a_release() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 5).await;
    app.claim_next(&ep).await;
    app.signals.take().await;

    app.lapse_lease(id).await;
    let report = app.store.reap_expired_leases().await.unwrap();
    assert_eq!((report.requeued, report.dead_lettered), (1, 0));
    let ready = app.signals.take_ready().await;
    assert_eq!(ready.len(), 1);
    assert_eq!((ready[0].reason, ready[0].todo.attempt), (ReadyReason::Requeued, 1));

    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
    assert!(app.signals.take().await.is_empty(), "a fail below the cap rings nothing until the retry is due");
    app.make_retry_due(id).await;
    app.store.requeue_due_retries().await.unwrap();
    let ready = app.signals.take_ready().await;
    assert_eq!((ready.len(), ready[0].reason), (1, ReadyReason::Requeued));

    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{id}/release"), &ep.token, json!({})).await;
    let ready = app.signals.take_ready().await;
    assert_eq!((ready.len(), ready[0].reason), (1, ReadyReason::Requeued));
}

#[actix_web::test]
async fn agent_fail_at_the_cap_announces_attempts_exhausted_with_the_closing_attempt() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 2).await;
    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "red"})).await;
    assert!(app.signals.take_dead().await.is_empty(), "never below the cap");
    app.make_retry_due(id).await;
    app.store.requeue_due_retries().await.unwrap();
    app.claim_next(&ep).await;
    app.signals.take().await;
    app.post(
        &format!("/api/v1/agent/todos/{id}/fail"),
        &ep.token,
        json!({"summary": "still red", "artifact": "https://ci.example.com/run/9", "result": {"log": "x"}}),
    )
    .await;
    let signals = app.signals.take().await;
    assert_eq!(signals.len(), 1, "exactly one signal: {signals:?}");
    let Signal::DeadLettered(d) = &signals[0] else { panic!("expected a dead letter: {signals:?}") };
    assert_eq!(d.reason, DeadReason::AttemptsExhausted);
    assert_eq!(d.todo.id, id);
    assert_eq!(d.todo.kind.as_deref(), Some("build"));
    assert_eq!(d.todo.attempts_total, 2);
    assert_eq!(d.dead_letter_count, 1);
    assert!(!d.relay);
    let fa = d.final_attempt.as_ref().expect("final attempt");
    assert_eq!((fa.seq, fa.outcome), (2, AttemptOutcome::Failed));
    assert_eq!(fa.summary.as_deref(), Some("still red"));
    assert_eq!(fa.artifact.as_deref(), Some("https://ci.example.com/run/9"));
}

#[actix_web::test]
async fn operator_fail_at_the_cap_announces_and_below_the_cap_schedules_a_retry() {
    let (app, o, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 2).await;
    app.claim_next(&ep).await;
    app.signals.take().await;
    let (s, row) =
        app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({"summary": "operator says no"})).await;
    assert_eq!(s, 200, "{row}");
    assert_eq!(row["dead_letter"], false);
    assert!(!row["next_retry_at"].is_null());
    assert!(app.signals.take_dead().await.is_empty());

    app.make_retry_due(id).await;
    app.store.requeue_due_retries().await.unwrap();
    app.claim_next(&ep).await;
    app.signals.take().await;
    let (_, row) = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({"summary": "stop"})).await;
    assert_eq!(row["dead_reason"], "attempts_exhausted");
    let dead = app.signals.take_dead().await;
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].reason, DeadReason::AttemptsExhausted);
    let fa = dead[0].final_attempt.as_ref().unwrap();
    assert_eq!((fa.seq, fa.outcome, fa.summary.as_deref()), (2, AttemptOutcome::Failed, Some("stop")));
}

#[actix_web::test]
async fn operator_fails_of_unclaimed_work_count_as_attempts_and_at_the_cap_announce_with_no_final_attempt() {
    let (app, o, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 2).await;
    app.signals.take().await;
    // Pending, never claimed: the operator's fail is attempt 1 of 2, a retry.
    let (s, row) = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({})).await;
    assert_eq!(s, 200, "{row}");
    assert_eq!((row["attempt"].as_i64(), row["dead_letter"].as_bool()), (Some(1), Some(false)));
    assert!(app.signals.take_dead().await.is_empty());
    // A parked retry failed again by the operator is attempt 2 of 2: a dead letter.
    let (_, row) = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({})).await;
    assert_eq!((row["attempt"].as_i64(), row["dead_reason"].as_str()), (Some(2), Some("attempts_exhausted")));
    let dead = app.signals.take_dead().await;
    assert_eq!(dead.len(), 1);
    assert!(dead[0].final_attempt.is_none(), "no attempt was open to close");
    // A dead letter cannot be failed again.
    let (s, _) = app.post(&format!("/api/v1/todos/{id}/fail"), &o.token, json!({})).await;
    assert_eq!(s, 409);
    let listed = app.store.list_dead_letters(&[o.scope], None, 10).await.unwrap();
    assert!(listed[0].final_seq.is_none());
}

#[actix_web::test]
async fn lease_reaper_at_the_cap_announces_lease_expired_and_below_the_cap_requeues() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 2).await;
    app.claim_next(&ep).await;
    app.lapse_lease(id).await;
    app.store.reap_expired_leases().await.unwrap();
    assert!(app.signals.take_dead().await.is_empty());
    app.claim_next(&ep).await;
    app.lapse_lease(id).await;
    let report = app.store.reap_expired_leases().await.unwrap();
    assert_eq!((report.requeued, report.dead_lettered), (0, 1));
    let signals = app.signals.take().await;
    assert_eq!(signals.len(), 1, "{signals:?}");
    let Signal::DeadLettered(d) = &signals[0] else { panic!("{signals:?}") };
    assert_eq!(d.reason, DeadReason::LeaseExpired);
    let fa = d.final_attempt.as_ref().unwrap();
    assert_eq!((fa.seq, fa.outcome, fa.summary.clone()), (2, AttemptOutcome::LeaseExpired, None));
    let (_, t) = app.get(&format!("/api/v1/agent/todos/{id}"), &ep.token).await;
    assert_eq!(t["dead_reason"], "lease_expired");
    assert_eq!(t["attempts"][0]["outcome"], "lease_expired");
    assert_eq!(t["attempts"][0]["disposition"], "dead_lettered");
    assert_eq!(t["attempts"][1]["disposition"], "requeued");
}

#[actix_web::test]
async fn interrupt_reaper_at_the_cap_announces_interrupt_expired_and_below_the_cap_requeues() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 2).await;
    for round in 1..=2 {
        app.claim_next(&ep).await;
        app.post(&format!("/api/v1/agent/todos/{id}/interrupt"), &ep.token, json!({"state": "auth_required"})).await;
        app.signals.take().await;
        app.lapse_interrupt(id).await;
        let report = app.store.reap_expired_interrupts().await.unwrap();
        let signals = app.signals.take().await;
        assert_eq!(signals.len(), 1, "{signals:?}");
        if round == 1 {
            assert_eq!(report.requeued, 1);
            assert!(matches!(&signals[0], Signal::Ready(r) if r.reason == ReadyReason::Requeued));
        } else {
            assert_eq!(report.dead_lettered, 1);
            let Signal::DeadLettered(d) = &signals[0] else { panic!("{signals:?}") };
            assert_eq!(d.reason, DeadReason::InterruptExpired);
            assert_eq!(d.final_attempt.as_ref().unwrap().outcome, AttemptOutcome::InterruptExpired);
        }
    }
}

#[actix_web::test]
async fn revocation_cascade_dead_letters_live_work_silently() {
    let (app, o, ep) = TestApp::with_worker().await;
    let pending = app.create_todo(&ep, "q", "pending").await;
    let claimed = app.create_todo(&ep, "q", "claimed").await;
    let interrupted = app.create_todo(&ep, "q", "interrupted").await;
    let retrying = app.create_todo(&ep, "q", "retrying").await;
    let done = app.create_todo(&ep, "q", "done").await;
    for (id, then) in [
        (pending, None),
        (claimed, Some("none")),
        (interrupted, Some("interrupt")),
        (retrying, Some("fail")),
        (done, Some("complete")),
    ] {
        let Some(then) = then else { continue };
        app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
        match then {
            "interrupt" => {
                app.post(&format!("/api/v1/agent/todos/{id}/interrupt"), &ep.token, json!({"state": "input_required"}))
                    .await
            }
            "none" => continue,
            verb => app.post(&format!("/api/v1/agent/todos/{id}/{verb}"), &ep.token, json!({})).await,
        };
    }
    app.signals.take().await;
    let (s, r) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &o.token, json!({})).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["dead_lettered"], 4);
    assert!(app.signals.take().await.is_empty(), "the cascade is silent");
    let dead = app.store.list_dead_letters(&[o.scope], None, 100).await.unwrap();
    assert_eq!(dead.len(), 4);
    assert!(dead.iter().all(|d| d.reason == DeadReason::EndpointRevoked));
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempts WHERE ended_at IS NULL").await, 0);
    assert_eq!(
        app.db
            .count("SELECT count(*) FROM todo_attempts WHERE outcome = 'revoked' AND disposition = 'dead_lettered'")
            .await,
        2,
        "the claimed and the interrupted attempt"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'done'").await, 1);
    // The token stops working at once.
    let (s, _) = app.get("/api/v1/agent/todos", &ep.token).await;
    assert_eq!(s, 401);
    // A second revocation is a conflict.
    let (s, _) = app.post(&format!("/api/v1/endpoints/{}/revoke", ep.id), &o.token, json!({})).await;
    assert_eq!(s, 409);
}

#[actix_web::test]
async fn manual_retry_resets_the_attempt_counter_keeps_history_and_rings_nothing() {
    let (app, o, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 1).await;
    app.claim_next(&ep).await;
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"summary": "boom"})).await;
    app.signals.take().await;
    let (s, row) = app.post(&format!("/api/v1/todos/{id}/retry"), &o.token, json!({})).await;
    assert_eq!(s, 200, "{row}");
    assert_eq!(
        (row["state"].as_str(), row["attempt"].as_i64(), row["dead_letter"].as_bool()),
        (Some("pending"), Some(0), Some(false))
    );
    assert!(row["dead_reason"].is_null());
    assert!(app.signals.take().await.is_empty(), "manual retry rings nothing");
    // It dies again: a new dead-lettering with a higher count (keys sink dedup).
    let c = app.claim_next(&ep).await;
    assert_eq!(c["attempt_seq"], 2);
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
    let dead = app.signals.take_dead().await;
    assert_eq!(dead[0].dead_letter_count, 2);
}

#[actix_web::test]
async fn the_sender_gate_passes_only_verified_or_token_trust_deliveries() {
    let (app, o, ep) = TestApp::with_worker().await;
    let cases = [(true, "signed", true), (false, "token", true), (false, "open", false), (false, "signed", false)];
    for (verified, mode, gate) in cases {
        let ev = event(&app, o.scope, verified, mode).await;
        let id = todo_from_event(&app, ep.id, ev).await;
        let ready = app.signals.take_ready().await;
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].todo.sender_gate, gate, "{mode} verified={verified} on create");
        assert_eq!(ready[0].todo.event_id, Some(ev));
        // The gate travels on the dead letter too, answered again in SQL.
        app.post(&format!("/api/v1/agent/todos/{id}/claim"), &ep.token, json!({})).await;
        app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({})).await;
        let dead = app.signals.take_dead().await;
        assert_eq!(dead[0].todo.sender_gate, gate, "{mode} verified={verified} on dead letter");
    }
}

#[actix_web::test]
async fn a_relay_attempt_marks_the_dead_letter_as_relay() {
    let (app, _, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 1).await;
    app.post("/api/v1/agent/todos/claim-next", &ep.token, json!({"claimant": "harness/box-1/claude/run-7"})).await;
    app.signals.take().await;
    app.post(&format!("/api/v1/agent/todos/{id}/fail"), &ep.token, json!({"artifact": "mcp://cairn/art_1"})).await;
    let dead = app.signals.take_dead().await;
    assert!(dead[0].relay);
    assert_eq!(dead[0].final_attempt.as_ref().unwrap().artifact.as_deref(), Some("mcp://cairn/art_1"));
}

#[actix_web::test]
async fn a_quarantined_todo_never_rings() {
    let (app, o, ep) = TestApp::with_worker().await;
    let ev = event(&app, o.scope, true, "signed").await;
    let out = app
        .store
        .create_todo(NewTodo {
            source: Some("github".into()),
            event_id: Some(ev),
            quarantine_reason: Some(QuarantineReason::UntrustedActor),
            ..NewTodo::new(ep.id, "quarantine", "held")
        })
        .await
        .unwrap();
    assert!(out.created);
    assert!(app.signals.take().await.is_empty());
    assert_eq!(app.claim_next(&ep).await["empty"], true, "agents never see quarantine");
}

#[actix_web::test]
async fn a_full_recipient_mailbox_drops_and_counts_instead_of_blocking_the_store_however_often_it_is_cloned() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use actix::{Actor, Addr, Context, Handler};
    use switchboard::store::signals::{DeadLettered, Emitter, TodoReady};

    /// A recipient whose first signal holds its thread until the test lets go.
    struct Stuck {
        gate: std::sync::mpsc::Receiver<()>,
        handled: Arc<AtomicUsize>,
    }
    impl Actor for Stuck {
        type Context = Context<Self>;
    }
    impl Handler<TodoReady> for Stuck {
        type Result = ();
        fn handle(&mut self, _: TodoReady, _: &mut Context<Self>) {
            if self.handled.fetch_add(1, Ordering::SeqCst) == 0 {
                let _ = self.gate.recv();
            }
        }
    }
    impl Handler<DeadLettered> for Stuck {
        type Result = ();
        fn handle(&mut self, _: DeadLettered, _: &mut Context<Self>) {}
    }
    /// Sent last: once it is handled, nothing sent before it is still on its way.
    #[derive(actix::Message)]
    #[rtype(result = "()")]
    struct Marker;
    impl Handler<Marker> for Stuck {
        type Result = ();
        fn handle(&mut self, _: Marker, _: &mut Context<Self>) {}
    }

    const CAPACITY: usize = 4;
    const SENT: usize = 30;
    let (app, _, ep) = TestApp::with_worker().await;
    // On its own thread, so its held handler blocks only itself; its mailbox is created
    // with its capacity, as the product's actors are.
    let arbiter = actix::Arbiter::new();
    let (release, gate) = std::sync::mpsc::channel();
    let handled = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = actix::dev::channel::channel(CAPACITY);
    let counter = handled.clone();
    arbiter.spawn_fn(move || {
        Context::with_receiver(rx).run(Stuck { gate, handled: counter });
    });
    let stuck = Addr::new(tx);
    let probe = stuck.clone();
    let emitter = Emitter::to(stuck.clone().recipient(), stuck.recipient());
    // The server clones its store per worker and per sweep run: each todo here comes
    // through a clone of its own, and the bound must hold across them.
    let store = app.db.store(emitter.clone());
    for i in 0..SENT {
        store.clone().create_todo(NewTodo::new(ep.id, "q", format!("t{i}"))).await.unwrap();
    }
    // One signal held in the handler, CAPACITY queued; every other one refused.
    let dropped = emitter.dropped() as usize;
    assert!(dropped >= SENT - (CAPACITY + 1), "dropped {dropped} of {SENT} with room for {}", CAPACITY + 1);
    let shown = switchboard::metrics::Metrics::new(&emitter).render().unwrap();
    assert!(shown.contains(&format!("switchboard_signals_dropped_total {dropped}")), "{shown}");
    assert_eq!(app.db.count("SELECT count(*) FROM todos").await, SENT as i64, "the work itself is never lost");

    // Let go: exactly the signals that were not dropped arrive.
    release.send(()).unwrap();
    let every = std::time::Duration::from_millis(10);
    wait_until_every(format!("{} signals handled", SENT - dropped), DEADLINE, every, async || {
        let n = handled.load(Ordering::SeqCst);
        if n >= SENT - dropped { Ok(()) } else { Err(format!("handled {n}")) }
    })
    .await;
    probe.send(Marker).await.expect("the recipient is alive");
    assert_eq!(handled.load(Ordering::SeqCst) + dropped, SENT, "each signal handled or dropped, once");
    arbiter.stop();
}

/// The hook dispatcher is sent a `todo.ready` only when its todo may ring a hook: an
/// agent's bulk create (its todos never pass the sender gate) neither fills its mailbox
/// nor counts as dropped, while a verified delivery's todo still reaches it; dead
/// letters reach it either way (it reports which reached no hook).
#[actix_web::test]
async fn the_hook_dispatcher_is_sent_only_ready_todos_that_may_ring_so_an_agents_bulk_create_drops_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use actix::{Actor, Context, Handler};
    use switchboard::store::signals::{DeadLettered, Emitter, TodoReady};

    /// Counts what arrives.
    struct Counting(Arc<AtomicUsize>, Arc<AtomicUsize>);
    impl Actor for Counting {
        type Context = Context<Self>;
    }
    impl Handler<TodoReady> for Counting {
        type Result = ();
        fn handle(&mut self, _: TodoReady, _: &mut Context<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    impl Handler<DeadLettered> for Counting {
        type Result = ();
        fn handle(&mut self, _: DeadLettered, _: &mut Context<Self>) {
            self.1.fetch_add(1, Ordering::SeqCst);
        }
    }

    const CAPACITY: usize = 4;
    const BULK: usize = 30;
    let (app, o, ep) = TestApp::with_worker().await;
    let (ready, dead) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (tx, rx) = actix::dev::channel::channel(CAPACITY);
    let (r, d) = (ready.clone(), dead.clone());
    // Not running until the bulk is sent: nothing is taken off the mailbox meanwhile.
    let counting = actix::Addr::new(tx);
    let emitter = Emitter::to_hooks(counting.clone().recipient(), counting.clone().recipient());
    let store = app.db.store(emitter.clone());
    for i in 0..BULK {
        store.create_todo(NewTodo::new(ep.id, "q", format!("bulk {i}"))).await.unwrap();
    }
    assert_eq!(emitter.dropped(), 0, "an agent's todos never reach the dispatcher's mailbox");
    let ev = event(&app, o.scope, true, "signed").await;
    store
        .create_todo(NewTodo { source: Some("github".into()), event_id: Some(ev), ..NewTodo::new(ep.id, "q", "rings") })
        .await
        .unwrap();
    let dead_one =
        store.create_todo(NewTodo { max_attempts: Some(1), ..NewTodo::new(ep.id, "q", "dies") }).await.unwrap();
    store.claim(ep.id, dead_one.todo.id, Default::default()).await.unwrap();
    store.fail(ep.id, dead_one.todo.id, Default::default()).await.unwrap();
    Context::with_receiver(rx).run(Counting(r, d));
    wait_until_every(
        "the verified todo and the dead letter",
        DEADLINE,
        std::time::Duration::from_millis(10),
        async || match (ready.load(Ordering::SeqCst), dead.load(Ordering::SeqCst)) {
            (1, 1) => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;
    assert_eq!(emitter.dropped(), 0);
}

#[actix_web::test]
async fn the_sweeps_cap_rule_agrees_with_the_domain_rule() {
    use switchboard::domain::transitions::{AfterLapse, after_lapse};
    let (app, o, ep) = TestApp::with_worker().await;
    let cases = [(1, 1), (1, 2), (2, 2), (4, 5), (5, 5), (3, 100)];
    for (attempt, max) in cases {
        app.db
            .exec(&format!(
                "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, attempts_total, \
                                    max_attempts, lease_expires_at) \
                 VALUES (gen_random_uuid(), '{}', '{}', 'q', '{attempt}/{max}', 'claimed', {attempt}, {attempt}, \
                         {max}, now() - interval '1 second')",
                ep.id.0, o.scope.0
            ))
            .await;
    }
    app.store.reap_expired_leases().await.unwrap();
    for (attempt, max) in cases {
        let dead = app
            .db
            .count(&format!("SELECT count(*) FROM todos WHERE title = '{attempt}/{max}' AND state = 'failed'"))
            .await;
        let want = matches!(after_lapse(attempt, max, DeadReason::LeaseExpired), AfterLapse::DeadLetter(_));
        assert_eq!(dead == 1, want, "attempt {attempt} of {max}");
    }
}

#[actix_web::test]
async fn sweeps_leave_an_expired_endpoints_work_to_the_silent_expiry_cascade() {
    let (app, o, ep) = TestApp::with_worker().await;
    let id = todo_with_cap(&app, &ep, 1).await;
    app.claim_next(&ep).await;
    app.lapse_lease(id).await;
    app.db
        .exec(&format!("UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = '{}'", ep.id.0))
        .await;
    app.signals.take().await;
    assert_eq!(app.store.reap_expired_leases().await.unwrap(), Default::default());
    let revoked = app.store.expire_endpoints().await.unwrap();
    assert_eq!(revoked.len(), 1);
    assert_eq!(revoked[0].dead_lettered, 1);
    assert!(app.signals.take().await.is_empty(), "expiry is silent");
    assert_eq!(app.store.list_dead_letters(&[o.scope], None, 10).await.unwrap()[0].reason, DeadReason::EndpointRevoked);
}
