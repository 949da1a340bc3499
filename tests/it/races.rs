//! Two store instances (two pools) racing on the same rows: every transition moves a
//! row once.

use std::collections::HashSet;

use futures_util::future::join_all;
use serde_json::json;
use switchboard::store::Store;
use switchboard::store::todos::ClaimRequest;

use crate::harness::wait::wait_for_blocked;
use crate::harness::{Signals, TestApp};

const TODOS: usize = 200;

async fn drain(store: Store, endpoint: switchboard::domain::ids::EndpointId) -> Vec<String> {
    let mut got = Vec::new();
    while let Some(c) = store.claim_next(endpoint, ClaimRequest::default()).await.unwrap().claimed() {
        got.push(c.todo.id.to_string());
    }
    got
}

#[actix_web::test]
async fn two_instances_racing_claims_never_claim_a_todo_twice() {
    let (app, o, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state) \
             SELECT gen_random_uuid(), '{}', '{}', 'q', 't' || n, 'pending' FROM generate_series(1, {TODOS}) n",
            ep.id.0, o.scope.0
        ))
        .await;
    let a = app.db.store(Signals::start().emitter());
    let b = app.db.store(Signals::start().emitter());
    // Eight concurrent claimers, four on each instance.
    let workers = (0..8).map(|i| drain(if i % 2 == 0 { a.clone() } else { b.clone() }, ep.id));
    let claimed: Vec<String> = join_all(workers).await.into_iter().flatten().collect();
    let unique: HashSet<&String> = claimed.iter().collect();
    assert_eq!(claimed.len(), TODOS, "every todo claimed");
    assert_eq!(unique.len(), TODOS, "no todo claimed twice");
    assert_eq!(
        app.db.count("SELECT sum(attempts_total)::int8 FROM todos").await,
        TODOS as i64,
        "one attempt per claim"
    );
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempts").await, 0, "every attempt still open on its todo row");
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE attempt = 1 AND state = 'claimed'").await, TODOS as i64);
}

#[actix_web::test]
async fn racing_lease_reapers_move_each_row_once_and_announce_it_once() {
    let (app, o, ep) = TestApp::with_worker().await;
    // Half at the cap (dead letters), half below (requeues).
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, attempts_total, max_attempts, \
                                lease_expires_at, claimed_at) \
             SELECT gen_random_uuid(), '{}', '{}', 'q', 't' || n, 'claimed', 1, 1, CASE WHEN n % 2 = 0 THEN 1 ELSE 3 END, \
                    now() - interval '1 minute', now() - interval '10 minutes' FROM generate_series(1, 1200) n",
            ep.id.0, o.scope.0
        ))
        .await;
    app.db
        .exec("INSERT INTO todo_attempts (todo_id, seq, claimed_at, lease_expires_at) SELECT id, 1, claimed_at, lease_expires_at FROM todos")
        .await;
    let (sa, sb) = (Signals::start(), Signals::start());
    let (a, b) = (app.db.store(sa.emitter()), app.db.store(sb.emitter()));
    let (ra, rb) = tokio::join!(a.reap_expired_leases(), b.reap_expired_leases());
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.requeued + rb.requeued, 600);
    assert_eq!(ra.dead_lettered + rb.dead_lettered, 600);
    let mut seen = HashSet::new();
    let mut dead = 0;
    for signal in sa.take().await.into_iter().chain(sb.take().await) {
        let id = match &signal {
            switchboard::store::signals::Signal::Ready(r) => r.todo.id,
            switchboard::store::signals::Signal::DeadLettered(d) => {
                dead += 1;
                d.todo.id
            }
        };
        assert!(seen.insert(id), "{id} announced twice");
    }
    assert_eq!((seen.len(), dead), (1200, 600));
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempts WHERE ended_at IS NULL").await, 0);
    assert_eq!(app.db.count("SELECT count(*) FROM todo_attempts WHERE outcome = 'lease_expired'").await, 1200);
}

#[actix_web::test]
async fn a_complete_racing_the_reaper_lands_exactly_one_of_them() {
    let (app, _, ep) = TestApp::with_worker().await;
    for _ in 0..30 {
        let id = app.create_todo(&ep, "q", "t").await;
        app.claim_next(&ep).await;
        app.lapse_lease(id).await;
        let reap = app.store.reap_expired_leases();
        let path = format!("/api/v1/agent/todos/{id}/complete");
        let complete = app.post(&path, &ep.token, json!({}));
        let (reaped, (status, _)) = tokio::join!(reap, complete);
        let reaped = reaped.unwrap().requeued;
        assert!(reaped + usize::from(status == 200) == 1, "reaped={reaped} status={status}");
        assert_eq!(
            app.db
                .count(&format!(
                    "SELECT count(*) FROM todo_attempt_history WHERE todo_id = '{}' AND ended_at IS NOT NULL",
                    id.0
                ))
                .await,
            1
        );
        // Leave nothing claimable behind for the next round.
        app.db.exec("UPDATE todos SET state = 'done', completed_at = now() WHERE state = 'pending'").await;
    }
}

#[actix_web::test]
async fn a_todo_created_while_its_endpoint_is_revoked_is_either_refused_or_dead_lettered() {
    use diesel_async::AsyncConnection;
    use switchboard::store::todos::{NewTodo, insert_todo};

    let (app, o, ep) = TestApp::with_worker().await;
    let creator = app.db.store(Signals::start().emitter());
    let mut conn = creator.conn().await.unwrap();
    // Intake inserts inside its own transaction; hold that transaction open while the
    // revocation starts, then commit.
    // Commits only once the revocation is seen waiting on a lock in pg_stat_activity.
    let (inserted, revocation_waits) = (tokio::sync::Notify::new(), tokio::sync::Notify::new());
    let create = conn.transaction::<_, switchboard::error::Error, _>(async |c| {
        insert_todo(c, &NewTodo::new(ep.id, "q", "racing")).await?;
        inserted.notify_one();
        revocation_waits.notified().await;
        Ok(())
    });
    let revoke = async {
        inserted.notified().await;
        app.store.revoke_endpoint(&[o.scope], ep.id).await
    };
    let watch = async {
        wait_for_blocked(&app.db, 1, std::time::Duration::from_secs(10)).await;
        revocation_waits.notify_one();
    };
    let (created, revoked, ()) = tokio::join!(create, revoke, watch);
    created.unwrap();
    assert_eq!(revoked.unwrap().dead_lettered, 1, "the revocation waited for the insert and cascaded it");
    assert_eq!(app.db.count("SELECT count(*) FROM todos WHERE state = 'pending'").await, 0);
}
