//! Retention: history past its age goes (todos with their attempts, then events no
//! todo references, and admission deferral counts of hours past it), everything live,
//! quarantined, young or still referenced stays; racing pruners delete each row once; a
//! prune never waits on a lock; its statements stay on indexes; and the running server
//! prunes on its own.

use std::collections::BTreeSet;
use std::time::Duration;

use switchboard::domain::retention::prunable;
use switchboard::domain::todo_state::TodoState;
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::retention::{PRUNE_DEFERRALS_SQL, PRUNE_EVENTS_SQL, PRUNE_TODOS_SQL, PruneReport};
use switchboard::store::signals::Emitter;
use uuid::Uuid;

use crate::harness::wait::wait_count_within;
use crate::harness::{TestApp, TestDb};

/// The default age, as the server runs it.
const THIRTY_DAYS: Duration = Duration::from_secs(30 * 86_400);
/// One generous bound for anything that must finish on its own.
const PATIENCE: Duration = Duration::from_secs(60);

/// A database with one owner and one endpoint, and a store over it.
struct Fixture {
    db: TestDb,
    store: Store,
    scope: Uuid,
    endpoint: Uuid,
}

impl Fixture {
    async fn new() -> Fixture {
        let db = TestDb::new().await;
        let store = db.store(Emitter::none());
        let human = store.create_human("a@example.com", "Owner", None).await.unwrap();
        let vended = store
            .vend_endpoint(VendEndpoint {
                scope: human.scope,
                slug: "worker".into(),
                grants: Vec::new(),
                default_lease_seconds: None,
                expires_at: None,
            })
            .await
            .unwrap();
        Fixture { db, store, scope: human.scope.0, endpoint: vended.endpoint.id.0 }
    }

    /// An event received `days` ago.
    async fn event(&self, days: i64) -> Uuid {
        let id = Uuid::new_v4();
        self.db
            .exec(&format!(
                "INSERT INTO events (id, scope_id, source, trust_mode, verified, disposition, received_at) \
                 VALUES ('{id}', '{}', 'github', 'signed', true, 'routed', now() - interval '{days} days')",
                self.scope
            ))
            .await;
        id
    }

    /// A todo in `kind`'s state on `queue`, last changed `days` ago, carrying `event`,
    /// with one closed attempt in its history.
    async fn todo(&self, kind: Kind, queue: &str, days: i64, event: Option<Uuid>) -> Uuid {
        let id = Uuid::new_v4();
        let event = event.map_or("NULL".into(), |e| format!("'{e}'"));
        let (state, extra_cols, extra_vals) = kind.columns();
        self.db
            .exec(&format!(
                "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, attempts_total, \
                   event_id, created_at, updated_at{extra_cols}) \
                 VALUES ('{id}', '{ep}', '{sc}', '{queue}', 't', '{state}', 1, 1, {event}, \
                   now() - interval '{days} days' - interval '1 hour', now() - interval '{days} days'{extra_vals})",
                ep = self.endpoint,
                sc = self.scope,
            ))
            .await;
        self.db
            .exec(&format!(
                "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimed_at, lease_expires_at, \
                   ended_at, outcome, disposition) \
                 VALUES ('{id}', 1, '{}', now() - interval '{days} days' - interval '1 hour', \
                   now() - interval '{days} days', now() - interval '{days} days', 'failed', 'retry_scheduled')",
                self.endpoint
            ))
            .await;
        id
    }

    async fn ids(&self, table: &str) -> BTreeSet<Uuid> {
        let column = if table == "todo_attempts" { "todo_id" } else { "id" };
        let (client, conn) = tokio_postgres::connect(&self.db.url, tokio_postgres::NoTls).await.unwrap();
        actix_rt::spawn(conn);
        let rows = client.query(&format!("SELECT {column}::text FROM {table}"), &[]).await.unwrap();
        rows.iter().map(|r| r.get::<_, &str>(0).parse().unwrap()).collect()
    }
}

/// Every kind of todo, as the rows the product writes look.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Pending,
    Claimed,
    InputRequired,
    AuthRequired,
    Done,
    Canceled,
    RetryScheduled,
    DeadLetter,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Pending,
        Kind::Claimed,
        Kind::InputRequired,
        Kind::AuthRequired,
        Kind::Done,
        Kind::Canceled,
        Kind::RetryScheduled,
        Kind::DeadLetter,
    ];

    /// The state, and the extra columns (with their values) its CHECKs ask for.
    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Kind::Pending => ("pending", "", ""),
            Kind::Claimed => ("claimed", ", lease_expires_at", ", now() + interval '1 hour'"),
            Kind::InputRequired => (
                "input_required",
                ", interrupt_expires_at, interrupt_wait_seconds",
                ", now() + interval '1 hour', 3600",
            ),
            Kind::AuthRequired => {
                ("auth_required", ", interrupt_expires_at, interrupt_wait_seconds", ", now() + interval '1 hour', 3600")
            }
            Kind::Done => ("done", ", completed_at", ", now() - interval '40 days'"),
            Kind::Canceled => ("canceled", "", ""),
            Kind::RetryScheduled => ("failed", ", next_retry_at", ", now() + interval '1 hour'"),
            Kind::DeadLetter => (
                "failed",
                ", dead_reason, dead_lettered_at, dead_letter_count",
                ", 'attempts_exhausted', now() - interval '40 days', 1",
            ),
        }
    }

    fn state(self) -> TodoState {
        self.columns().0.parse().unwrap()
    }

    fn retry_scheduled(self) -> bool {
        matches!(self, Kind::RetryScheduled)
    }
}

#[actix_web::test]
async fn old_history_goes_with_its_attempts_and_events_and_live_held_young_or_referenced_rows_stay() {
    let f = Fixture::new().await;
    let mut expected_gone = BTreeSet::new();
    let mut expected_kept = BTreeSet::new();
    let mut events_gone = BTreeSet::new();
    let mut events_kept = BTreeSet::new();
    for kind in Kind::ALL {
        for queue in ["work", "quarantine"] {
            // 31 days is past the line, 29 days before it; each todo has its own event.
            for days in [31, 29] {
                let event = f.event(days + 1).await;
                let todo = f.todo(kind, queue, days, Some(event)).await;
                let goes = days > 30 && prunable(kind.state(), kind.retry_scheduled());
                if goes {
                    expected_gone.insert(todo);
                    events_gone.insert(event);
                } else {
                    expected_kept.insert(todo);
                    events_kept.insert(event);
                }
            }
        }
    }
    // Deliveries that made no todo: an old one goes, a young one stays.
    events_gone.insert(f.event(31).await);
    events_kept.insert(f.event(29).await);
    // A fan-out: one old delivery became an old done todo and a live one. The done todo
    // goes; the delivery stays, because the live todo still points at it.
    let shared = f.event(40).await;
    expected_gone.insert(f.todo(Kind::Done, "work", 40, Some(shared)).await);
    expected_kept.insert(f.todo(Kind::Pending, "work", 40, Some(shared)).await);
    events_kept.insert(shared);

    let report = f.store.prune_expired(THIRTY_DAYS).await.unwrap();

    let todos = f.ids("todos").await;
    assert_eq!(todos, expected_kept, "todos left after the prune");
    assert_eq!(f.ids("todo_attempts").await, expected_kept, "attempts go with their todo, and only then");
    let events = f.ids("events").await;
    assert_eq!(events, events_kept, "events left after the prune");
    assert_eq!(report, PruneReport { todos: expected_gone.len(), events: events_gone.len(), outbox: 0, records: 0 });
    // Three old terminal kinds on each queue (a closed quarantine row is history too),
    // plus the fan-out's done todo.
    assert_eq!(expected_gone.len(), 7);
    // The live todo that shares the old delivery still carries it (a deleted event
    // would have been set NULL under it, and its sender gate with it).
    let still_linked =
        f.db.count(&format!("SELECT count(*) FROM todos WHERE event_id = '{shared}' AND state = 'pending'")).await;
    assert_eq!(still_linked, 1);

    let again = f.store.prune_expired(THIRTY_DAYS).await.unwrap();
    assert_eq!(again, PruneReport::default(), "a second pass finds nothing left to prune");
}

#[actix_web::test]
async fn two_instances_pruning_at_once_delete_each_row_once_and_neither_fails() {
    let f = Fixture::new().await;
    // More than a few batches each way: 2 100 old done todos, each with an attempt and
    // its own delivery, plus 1 300 old deliveries that made nothing; and live rows.
    f.db.exec(&format!(
        "WITH ev AS ( \
           INSERT INTO events (id, scope_id, source, trust_mode, verified, disposition, received_at) \
           SELECT gen_random_uuid(), '{sc}', 'github', 'signed', true, 'routed', now() - interval '35 days' \
           FROM generate_series(1, 3400) RETURNING id), \
         numbered AS (SELECT id, row_number() OVER () AS n FROM ev), \
         done AS ( \
           INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, event_id, completed_at, updated_at) \
           SELECT gen_random_uuid(), '{ep}', '{sc}', 'work', 't', 'done', id, now(), now() - interval '31 days' \
           FROM numbered WHERE n <= 2100 RETURNING id) \
         INSERT INTO todo_attempts (todo_id, seq, claimed_at, lease_expires_at, ended_at, outcome, disposition) \
         SELECT id, 1, now(), now(), now(), 'completed', 'done' FROM done",
        ep = f.endpoint,
        sc = f.scope
    ))
    .await;
    let live = f.todo(Kind::Pending, "work", 60, None).await;
    let other = f.db.store(Emitter::none());
    let (a, b) = tokio::time::timeout(
        PATIENCE,
        futures_util::future::join(f.store.prune_expired(THIRTY_DAYS), other.prune_expired(THIRTY_DAYS)),
    )
    .await
    .expect("both pruners finish");
    let (a, b) = (a.expect("first pruner"), b.expect("second pruner"));
    assert_eq!(a.todos + b.todos, 2100, "each todo deleted once: {a:?} {b:?}");
    assert_eq!(a.events + b.events, 3400, "each event deleted once: {a:?} {b:?}");
    assert_eq!(f.ids("todos").await, BTreeSet::from([live]));
    assert_eq!(f.db.count("SELECT count(*) FROM events").await, 0);
    assert_eq!(f.db.count("SELECT count(*) FROM todo_attempts").await, 1);
}

#[actix_web::test]
async fn a_prune_skips_rows_another_transaction_holds_instead_of_waiting_for_them() {
    let f = Fixture::new().await;
    let held = f.todo(Kind::DeadLetter, "work", 31, None).await;
    let free = f.todo(Kind::DeadLetter, "work", 31, None).await;
    let (client, conn) = tokio_postgres::connect(&f.db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(conn);
    // What a "retry now" on the Board holds while it commits.
    client.batch_execute("BEGIN").await.unwrap();
    client.execute(&format!("SELECT 1 FROM todos WHERE id = '{held}' FOR UPDATE"), &[]).await.unwrap();

    let report = tokio::time::timeout(PATIENCE, f.store.prune_expired(THIRTY_DAYS))
        .await
        .expect("the prune does not wait for the held row")
        .unwrap();
    assert_eq!(report.todos, 1);
    assert_eq!(f.ids("todos").await, BTreeSet::from([held]));
    assert!(!f.ids("todos").await.contains(&free));

    client.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(f.store.prune_expired(THIRTY_DAYS).await.unwrap().todos, 1, "the next pass takes it");
    assert!(f.ids("todos").await.is_empty());
}

impl Fixture {
    /// Deferral counts of the endpoint: `n` queues (`q1`…) refused for `reason` in the
    /// clock hour (UTC) `hours_ago` hours before this one.
    async fn deferrals(&self, n: i32, hours_ago: i32, reason: &str) {
        self.db
            .exec(&format!(
                "INSERT INTO queue_deferrals (endpoint_id, queue, hour, reason, count) \
                 SELECT '{}', 'q' || i, date_trunc('hour', now(), 'UTC') - {hours_ago} * interval '1 hour', \
                   '{reason}', 3 FROM generate_series(1, {n}) i",
                self.endpoint
            ))
            .await;
    }

    /// The deferral counts left, as `hours ago × rows`, oldest first.
    async fn deferral_hours(&self) -> String {
        self.db
            .plan(
                "SELECT coalesce(string_agg(format('%s×%s', h, n), ' ' ORDER BY h DESC), '') FROM ( \
                   SELECT extract(epoch FROM date_trunc('hour', now(), 'UTC') - hour)::int / 3600 AS h, \
                     count(*) AS n FROM queue_deferrals GROUP BY 1) x",
            )
            .await
    }
}

#[actix_web::test]
async fn deferral_counts_go_once_their_whole_hour_is_past_the_age_in_batches_and_younger_ones_stay() {
    let f = Fixture::new().await;
    let days = 30 * 24;
    // More than two batches of counts long past the age, then the hours at the line:
    // the hour that ended just before it goes, the hour it falls in stays (part of it is
    // inside the age), as does everything younger and this hour's.
    f.deferrals(1200, days + 48, "paused").await;
    f.deferrals(2, days + 1, "in_flight_full").await;
    f.deferrals(2, days, "window_exhausted").await;
    f.deferrals(2, days - 1, "paused").await;
    f.deferrals(2, 0, "in_flight_full").await;
    let before = format!("{}×1200 {}×2 {days}×2 {}×2 0×2", days + 48, days + 1, days - 1);
    assert_eq!(f.deferral_hours().await, before);

    let report = f.store.prune_expired(THIRTY_DAYS).await.unwrap();

    assert_eq!(report.records, 1202, "{report:?}");
    assert_eq!(f.deferral_hours().await, format!("{days}×2 {}×2 0×2", days - 1));
    assert_eq!(f.store.prune_expired(THIRTY_DAYS).await.unwrap(), PruneReport::default(), "nothing left to prune");
}

#[actix_web::test]
async fn the_deferral_prune_reads_its_candidates_from_the_hour_index() {
    let f = Fixture::new().await;
    // A month of hourly counts over many queues, a few of them past the age.
    f.db.exec(&format!(
        "INSERT INTO queue_deferrals (endpoint_id, queue, hour, reason, count) \
         SELECT '{}', 'q' || q, date_trunc('hour', now(), 'UTC') - h * interval '1 hour', 'paused', 1 \
         FROM generate_series(1, 40) q, generate_series(0, 30 * 24 + 2) h",
        f.endpoint
    ))
    .await;
    f.db.exec("ANALYZE queue_deferrals").await;
    for mode in ["force_generic_plan", "force_custom_plan"] {
        let plan = prepared_plan(&f.db, PRUNE_DEFERRALS_SQL.text(), "float8, int8", "2592000, 500", mode).await;
        assert!(plan.contains("queue_deferrals_hour_idx"), "{mode}:\n{plan}");
        assert!(!plan.contains("Seq Scan"), "{mode}:\n{plan}");
    }
}

/// The plan of `sql` prepared with `types` and executed with `args`, generic or custom.
async fn prepared_plan(db: &TestDb, sql: &str, types: &str, args: &str, mode: &str) -> String {
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(conn);
    client
        .batch_execute(&format!("SET plan_cache_mode = {mode}; PREPARE p({types}) AS {sql}"))
        .await
        .unwrap_or_else(|e| panic!("prepare: {e}"));
    let rows = client.query(&format!("EXPLAIN EXECUTE p({args})"), &[]).await.unwrap();
    rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n")
}

#[actix_web::test]
async fn the_prune_statements_read_their_candidates_from_indexes_on_a_large_table() {
    let f = Fixture::new().await;
    // Mostly young done rows and live work, a few old ones: what a busy queue looks like.
    f.db.exec(&format!(
        "INSERT INTO events (id, scope_id, source, trust_mode, verified, disposition, received_at) \
         SELECT gen_random_uuid(), '{sc}', 'github', 'signed', true, 'routed', now() - n * interval '1 minute' \
         FROM generate_series(1, 40000) n",
        sc = f.scope
    ))
    .await;
    f.db.exec(&format!(
        "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, completed_at, updated_at) \
         SELECT gen_random_uuid(), '{ep}', '{sc}', 'work', 't', \
                CASE WHEN n % 4 = 0 THEN 'pending' ELSE 'done' END, \
                CASE WHEN n % 4 = 0 THEN NULL ELSE now() END, now() - n * interval '1 minute' \
         FROM generate_series(1, 60000) n",
        ep = f.endpoint,
        sc = f.scope
    ))
    .await;
    f.db.exec("ANALYZE todos").await;
    f.db.exec("ANALYZE events").await;
    for mode in ["force_generic_plan", "force_custom_plan"] {
        let plan = prepared_plan(&f.db, PRUNE_TODOS_SQL.text(), "float8, int8", "2592000, 500", mode).await;
        assert!(plan.contains("todos_retention_idx"), "{mode}:\n{plan}");
        assert!(!plan.contains("Seq Scan on todos"), "{mode}:\n{plan}");
        let args = format!("'{}', 2592000, NULL, 500", f.scope);
        let plan = prepared_plan(&f.db, PRUNE_EVENTS_SQL.text(), "uuid, float8, timestamptz, int8", &args, mode).await;
        assert!(plan.contains("events_scope_received_idx"), "{mode}:\n{plan}");
        assert!(plan.contains("todos_event_idx"), "the reference check probes todos by event: {mode}:\n{plan}");
        assert!(!plan.contains("Seq Scan"), "{mode}:\n{plan}");
    }
}

#[actix_web::test]
async fn the_running_server_prunes_old_history_on_its_own_and_keeps_live_work() {
    let app = TestApp::spawn_with(|s| {
        s.retention_days = 30;
        s.retention_interval_ms = 100;
    })
    .await;
    let o = app.owner("a@example.com").await;
    let ep = app.agent(o.scope, "worker").await;
    let finished = app.create_todo(&ep, "q", "finished long ago").await;
    let waiting = app.create_todo(&ep, "q", "waiting long").await;
    let claimed = app.claim_next(&ep).await;
    assert_eq!(claimed["todo"]["id"].as_str(), Some(finished.to_string().as_str()), "{claimed}");
    let (s, b) = app.post(&format!("/api/v1/agent/todos/{finished}/complete"), &ep.token, serde_json::json!({})).await;
    assert_eq!(s, 200, "{b}");
    app.db
        .exec("UPDATE todos SET updated_at = now() - interval '31 days', created_at = now() - interval '31 days'")
        .await;

    let gone = format!("SELECT count(*) FROM todos WHERE id = '{}'", finished.0);
    // The retention actor prunes the old done todo.
    wait_count_within(&app.db, &gone, 0, PATIENCE).await;
    assert_eq!(
        app.db.count(&format!("SELECT count(*) FROM todo_attempt_history WHERE todo_id = '{}'", finished.0)).await,
        0
    );
    let (s, b) = app.get(&format!("/api/v1/agent/todos/{waiting}"), &ep.token).await;
    assert_eq!((s.as_u16(), b["state"].as_str()), (200, Some("pending")), "{b}");
}
