//! The claim stays on its partial index when most rows are done and one queue holds
//! everything (a plan that walks the primary key decays as done rows pile up).

use crate::harness::TestApp;

#[actix_web::test]
async fn claim_next_uses_the_pending_index_not_the_primary_key_or_a_seq_scan() {
    let (app, o, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, completed_at, created_at) \
             SELECT gen_random_uuid(), '{ep}', '{sc}', 'q', 't', \
                    CASE WHEN n % 100 = 0 THEN 'pending' ELSE 'done' END, \
                    CASE WHEN n % 100 = 0 THEN NULL ELSE now() END, now() - n * interval '1 second' \
             FROM generate_series(1, 50000) n",
            ep = ep.id.0,
            sc = o.scope.0
        ))
        .await;
    app.db.exec("ANALYZE todos").await;
    // With one queue holding everything either pending-only index serves; what must
    // never happen is a walk of the primary key or of the whole table.
    for candidate in ["queue = 'q'", "queue <> 'quarantine'"] {
        let plan = app
            .db
            .plan(&format!(
                "EXPLAIN SELECT id FROM todos WHERE endpoint_id = '{}' AND state = 'pending' AND {candidate} \
                 ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
                ep.id.0
            ))
            .await;
        assert!(
            plan.contains("todos_claim_queue_idx") || plan.contains("todos_claim_any_idx"),
            "claim with {candidate} should use a pending-only claim index:\n{plan}"
        );
        assert!(!plan.contains("Seq Scan") && !plan.contains("todos_pkey"), "{plan}");
    }
    let plan = app
        .db
        .plan(&format!(
            "EXPLAIN SELECT t.id FROM todos t WHERE t.scope_id = '{}' AND t.state = 'failed' AND t.next_retry_at IS NULL \
             AND t.queue <> 'quarantine' ORDER BY t.dead_lettered_at DESC, t.id DESC LIMIT 100",
            o.scope.0
        ))
        .await;
    assert!(plan.contains("todos_dead_letters_idx"), "{plan}");
}

/// The statements prepared on `store`'s one pooled connection.
#[expect(clippy::disallowed_methods, reason = "a test reading the catalog, not a product statement")]
async fn prepared_statements(store: &switchboard::store::Store) -> Vec<String> {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement: String,
    }
    let mut conn = store.conn().await.unwrap();
    let rows: Vec<Row> =
        diesel::sql_query("SELECT statement FROM pg_prepared_statements").load(&mut conn).await.unwrap();
    rows.into_iter().map(|r| r.statement).collect()
}

/// A claim-next that found work never asks why a claim came back empty (the budget
/// look-up of `claim.rs`'s `BUDGETED_QUEUE`): the hot path is the one update.
#[actix_web::test]
async fn the_claim_and_complete_statements_stay_prepared_on_their_connection() {
    use switchboard::store::Store;
    use switchboard::store::signals::Emitter;
    use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

    let (app, _, ep) = TestApp::with_worker().await;
    // One connection, so every call below runs on it.
    let store = Store::new(switchboard::db::pool(&app.db.url, 1).unwrap(), Emitter::none());
    for i in 0..3 {
        store.create_todo(NewTodo::new(ep.id, "q", format!("t{i}"))).await.unwrap();
        let c = store.claim_next(ep.id, ClaimRequest::default()).await.unwrap().claimed().unwrap();
        store.complete(ep.id, c.todo.id, Finish::default()).await.unwrap();
    }
    let why_empty = "a.queue = $2)) AS budgeted";
    let prepared = prepared_statements(&store).await;
    let has = |needle: &str| prepared.iter().filter(|s| s.contains(needle)).count();
    assert_eq!(has("FOR UPDATE SKIP LOCKED"), 1, "claim_next prepared once and reused");
    assert_eq!(has("attempt_summary = $5"), 1, "complete prepared once and reused");
    assert_eq!(has("INSERT INTO todos"), 1, "create prepared once and reused");
    assert_eq!(has(why_empty), 0, "a claim that found work asked why it was empty");
    for _ in 0..2 {
        assert!(store.claim_next(ep.id, ClaimRequest::default()).await.unwrap().claimed().is_none());
    }
    let prepared = prepared_statements(&store).await;
    assert_eq!(prepared.iter().filter(|s| s.contains(why_empty)).count(), 1, "an empty claim asks, prepared once");
}

/// A claim and its completion touch nothing of the endpoint row: no foreign-key check
/// locks it (migration `cycle_costs`), so they go through while another transaction
/// holds that row `FOR UPDATE`. With the keys on `claimed_by` and `claimer_endpoint_id`
/// the claim waited for that lock (every claim locked the row `FOR KEY SHARE`).
#[actix_web::test]
async fn a_claim_and_its_completion_take_no_lock_on_the_endpoint_row() {
    use switchboard::store::Store;
    use switchboard::store::signals::Emitter;
    use switchboard::store::todos::{ClaimRequest, Finish, NewTodo};

    let (app, _, ep) = TestApp::with_worker().await;
    let store = Store::new(switchboard::db::pool(&app.db.url, 2).unwrap(), Emitter::none());
    // Creating work locks the endpoint FOR SHARE on purpose (it must not outlive a
    // revocation): made before the row is held.
    store.create_todo(NewTodo::new(ep.id, "q", "t")).await.unwrap();
    let (holder, conn) = tokio_postgres::connect(&app.db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    holder.batch_execute(&format!("BEGIN; SELECT 1 FROM endpoints WHERE id = '{}' FOR UPDATE", ep.id.0)).await.unwrap();
    let cycle = async {
        let c = store.claim_next(ep.id, ClaimRequest::default()).await.unwrap().claimed().unwrap();
        store
            .complete(ep.id, c.todo.id, Finish { lease_token: Some(c.lease_token), ..Finish::default() })
            .await
            .unwrap()
    };
    // A deadline for a wait that must not happen at all: the cycle takes milliseconds.
    let done = tokio::time::timeout(std::time::Duration::from_secs(20), cycle).await;
    holder.batch_execute("ROLLBACK").await.unwrap();
    assert!(done.is_ok(), "the claim or the completion waited on the endpoint row's lock");
}

/// Statistics taken while a queue was idle (nothing claimed, no attempt yet) make the
/// partial indexes of claimed and interrupted todos, and the index of open attempts,
/// look empty. Every statement the agent's verbs prepare must still find its todos by
/// primary key and their attempts by todo id, in the generic plan a prepared statement
/// settles on: a walk of `todos_in_flight_idx` visited every claimed todo of the
/// endpoint (and every dead entry since the last vacuum) per completion, and a scan of
/// the open attempts matched every one against the moved rows.
#[actix_web::test]
#[expect(clippy::disallowed_methods, reason = "a test preparing the product's statements again, by their text")]
async fn the_agent_verbs_find_todos_by_key_under_statistics_taken_on_an_idle_queue() {
    use switchboard::domain::todo_state::InterruptState;
    use switchboard::store::Store;
    use switchboard::store::signals::Emitter;
    use switchboard::store::todos::{ClaimRequest, Finish};

    let (app, o, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, completed_at, created_at, max_attempts) \
             SELECT gen_random_uuid(), '{ep}', '{sc}', 'q', 't', \
                    CASE WHEN n % 10 = 0 THEN 'pending' ELSE 'done' END, \
                    CASE WHEN n % 10 = 0 THEN NULL ELSE now() END, now() - n * interval '1 second', 1 \
             FROM generate_series(1, 20000) n",
            ep = ep.id.0,
            sc = o.scope.0
        ))
        .await;
    // The done todos' history, as a queue that has worked has it: no attempt is open.
    app.db
        .exec(
            "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimed_at, lease_expires_at, ended_at, \
               outcome, disposition) \
             SELECT id, 1, endpoint_id, created_at, created_at, created_at, 'completed', 'done' FROM todos \
             WHERE state = 'done'",
        )
        .await;
    app.db.exec("VACUUM ANALYZE todos, todo_attempts").await;

    // One connection, so every statement below is prepared on it.
    let store = Store::new(switchboard::db::pool(&app.db.url, 1).unwrap(), Emitter::none());
    let claim = ClaimRequest { queue: Some("q".into()), ..ClaimRequest::default() };
    let batch = store.claim_next_batch(ep.id, claim.clone(), 8).await.unwrap().claims;
    assert_eq!(batch.len(), 8);
    let finish = |i: usize| Finish { lease_token: Some(batch[i].lease_token.clone()), ..Finish::default() };
    let id = |i: usize| batch[i].todo.id;
    for answer in store.complete_batch(ep.id, vec![(Some(id(0)), finish(0)), (Some(id(1)), finish(1))]).await.unwrap() {
        answer.unwrap();
    }
    for answer in store.fail_batch(ep.id, vec![(Some(id(2)), finish(2))]).await.unwrap() {
        answer.unwrap();
    }
    store.complete(ep.id, id(3), finish(3)).await.unwrap();
    store.fail(ep.id, id(4), finish(4)).await.unwrap();
    store.release(ep.id, id(5), finish(5)).await.unwrap();
    store.heartbeat(ep.id, None, id(6), None, Some(&batch[6].lease_token)).await.unwrap();
    store
        .interrupt(ep.id, id(6), InterruptState::InputRequired, None, None, Some(&batch[6].lease_token))
        .await
        .unwrap();
    store.resume(ep.id, None, id(6), None, Some(&batch[6].lease_token)).await.unwrap();

    #[derive(diesel::QueryableByName)]
    struct Prepared {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        types: String,
        #[diesel(sql_type = diesel::sql_types::Text)]
        nulls: String,
    }
    #[derive(diesel::QueryableByName)]
    struct Line {
        #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
        line: String,
    }
    use diesel_async::RunQueryDsl;
    let mut conn = store.conn().await.unwrap();
    // The texts the verbs prepared, prepared again under names of this test's own (the
    // driver may close its statements meanwhile).
    let prepared: Vec<Prepared> = diesel::sql_query(
        "SELECT DISTINCT statement, array_to_string(parameter_types, ', ') AS types, \
           coalesce((SELECT string_agg('NULL::' || t::text, ', ' ORDER BY n) \
                     FROM unnest(parameter_types) WITH ORDINALITY u(t, n)), '') AS nulls \
         FROM pg_prepared_statements WHERE statement ~ 'UPDATE todos' AND statement ~ 't.id = '",
    )
    .load(&mut conn)
    .await
    .unwrap();
    // Each verb's statement, by what only it says: one that is not prepared on this
    // connection would go unchecked.
    let verbs = [
        ("batch claim", "($4::bytea[])[c.n]"),
        ("batch complete", "attempt_summary = i.summary"),
        ("complete", "attempt_summary = $5"),
        ("batch fail", "$10, i.disposition"),
        ("fail", "now(), $5, $6, $7, $8, $9"),
        ("release", "'released', 'requeued'"),
        ("heartbeat", "COALESCE($4, t.interrupt_wait_seconds)"),
        ("interrupt", "interrupt_wait_seconds = $4"),
        ("resume", "FROM target g WHERE t.id = g.id AND NOT g.budgeted"),
    ];
    for (verb, marker) in verbs {
        assert!(prepared.iter().any(|p| p.statement.contains(marker)), "the {verb} statement was not prepared");
    }
    diesel::sql_query("SET plan_cache_mode = force_generic_plan").execute(&mut conn).await.unwrap();
    let args = |list: &str| if list.is_empty() { String::new() } else { format!("({list})") };
    for (i, p) in prepared.iter().enumerate() {
        diesel::sql_query(format!("PREPARE plan_check_{i}{} AS {}", args(&p.types), p.statement))
            .execute(&mut conn)
            .await
            .unwrap();
        let plan: Vec<Line> = diesel::sql_query(format!("EXPLAIN EXECUTE plan_check_{i}{}", args(&p.nulls)))
            .load(&mut conn)
            .await
            .unwrap();
        let plan = plan.into_iter().map(|l| l.line).collect::<Vec<_>>().join("\n");
        let wrong = ["todos_in_flight_idx", "todos_lapse_idx"];
        for wrong in wrong.iter().chain(&["Seq Scan on todos", "Seq Scan on todo_attempts"]) {
            assert!(!plan.contains(wrong), "{wrong} in the plan of\n{}\n{plan}", p.statement);
        }
        let lines: Vec<&str> = plan.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("Scan") && line.contains(" on todo_attempts") {
                assert!(
                    lines.get(i + 1).is_some_and(|next| next.contains("Cond:")),
                    "the attempt is found by an index condition in\n{}\n{plan}",
                    p.statement
                );
            }
        }
    }
}

/// Both reapers read their lapsed todos off the one index that replaced their two
/// (`todos_lapse_idx`, migration `lapse_index`), with an index condition, however many
/// done todos and live claims surround them.
#[actix_web::test]
async fn both_reapers_find_lapsed_work_on_the_lapse_index() {
    use switchboard::store::todos::{INTERRUPTS_DUE, LEASES_DUE};

    let (app, o, ep) = TestApp::with_worker().await;
    app.db
        .exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, completed_at, created_at, \
               lease_expires_at, interrupt_expires_at, interrupt_wait_seconds) \
             SELECT gen_random_uuid(), '{ep}', '{sc}', 'q', 't', s.state, \
                    CASE WHEN s.state = 'done' THEN now() END, now() - n * interval '1 second', \
                    CASE WHEN s.state = 'claimed' THEN now() + n * interval '1 second' END, \
                    CASE WHEN s.state = 'input_required' THEN now() + n * interval '1 second' END, \
                    CASE WHEN s.state = 'input_required' THEN 3600 END \
             FROM generate_series(1, 50000) n, \
                  LATERAL (SELECT CASE n % 50 WHEN 0 THEN 'claimed' WHEN 1 THEN 'input_required' ELSE 'done' END \
                           AS state) s",
            ep = ep.id.0,
            sc = o.scope.0
        ))
        .await;
    app.db.exec("ANALYZE todos").await;
    for (reaper, due, cond) in [
        ("lease", LEASES_DUE, "Index Cond: (lease_expires_at < now())"),
        ("interrupt", INTERRUPTS_DUE, "Index Cond: ((lease_expires_at IS NULL) AND (interrupt_expires_at < now()))"),
    ] {
        let plan = app.db.plan(&format!("EXPLAIN {due} LIMIT 500 FOR UPDATE OF t SKIP LOCKED")).await;
        assert!(plan.contains("todos_lapse_idx") && plan.contains(cond), "the {reaper} reaper:\n{plan}");
    }
}
