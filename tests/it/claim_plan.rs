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

#[actix_web::test]
async fn the_claim_and_complete_statements_stay_prepared_on_their_connection() {
    use diesel_async::RunQueryDsl;
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
    #[derive(diesel::QueryableByName)]
    struct Row {
        #[diesel(sql_type = diesel::sql_types::Text)]
        statement: String,
    }
    let mut conn = store.conn().await.unwrap();
    let prepared: Vec<Row> =
        diesel::sql_query("SELECT statement FROM pg_prepared_statements").load(&mut conn).await.unwrap();
    let has = |needle: &str| prepared.iter().filter(|r| r.statement.contains(needle)).count();
    assert_eq!(has("FOR UPDATE SKIP LOCKED"), 1, "claim_next prepared once and reused");
    assert_eq!(has("outcome = 'completed'"), 1, "complete prepared once and reused");
    assert_eq!(has("INSERT INTO todos"), 1, "create prepared once and reused");
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
