//! The claim stays on its partial index when most rows are done and one queue holds
//! everything (a plan that walks the primary key decays as done rows pile up).

use crate::harness::TestApp;

#[actix_web::test]
async fn claim_next_uses_the_pending_index_not_the_primary_key_or_a_seq_scan() {
    let app = TestApp::spawn().await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
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
