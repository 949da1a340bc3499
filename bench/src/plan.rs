//! The claim_next statement's plan on the seeded table (most rows done, one queue
//! holding everything), with `EXPLAIN (ANALYZE, BUFFERS)`.
//!
//! The statement is not copied from `store/todos/claim.rs`: the bench captures the SQL
//! the library really sends, through diesel's instrumentation hook on a pooled
//! connection, so the plan can never describe a stale copy. It is then explained both
//! ways PostgreSQL may run it: with a custom plan (planned for the actual values, which
//! is what runs while the store's statements are not kept prepared) and with the
//! generic plan a long-lived prepared statement can switch to.

use std::sync::{Arc, Mutex};

use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel_async::AsyncConnection;
use switchboard::store::Store;
use switchboard::store::todos::{ClaimRequest, Finish};

use crate::BenchResult;
use crate::database::{BenchDb, QUEUE, Seeded};

/// The partial indexes that keep claim_next off the done rows.
const CLAIM_INDEXES: [&str; 2] = ["todos_claim_queue_idx", "todos_claim_any_idx"];

/// One explained form of the claim statement.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Which claim_next form (`queue` given or not).
    pub form: &'static str,
    /// The partial index made for that form (the other one serves it correctly too).
    pub designed_index: &'static str,
    /// `custom` or `generic`.
    pub mode: &'static str,
    /// The full `EXPLAIN (ANALYZE, BUFFERS)` output.
    pub text: String,
}

impl Plan {
    /// The part of the plan that picks the candidate row (the `candidate` CTE); the
    /// rest (updating that one row by primary key, opening its attempt) is the same
    /// whatever the table looks like.
    pub fn candidate_search(&self) -> String {
        let lines: Vec<&str> = self.text.lines().collect();
        let Some(start) = lines.iter().position(|l| l.trim_start().starts_with("CTE candidate")) else {
            return self.text.clone();
        };
        let indent = |l: &str| l.len() - l.trim_start().len();
        let depth = indent(lines[start]);
        let end = lines[start + 1..].iter().position(|l| indent(l) <= depth).map_or(lines.len(), |i| start + 1 + i);
        lines[start..end].join("\n")
    }

    /// Which of the two partial claim indexes the candidate search uses, if any.
    pub fn claim_index_used(&self) -> Option<&'static str> {
        let search = self.candidate_search();
        CLAIM_INDEXES.into_iter().find(|i| search.contains(i))
    }

    /// Whether the candidate search scans the table or walks the primary key (what the
    /// partial indexes exist to prevent).
    pub fn scans_or_walks(&self) -> bool {
        let search = self.candidate_search();
        search.contains("Seq Scan") || search.contains("todos_pkey")
    }

    /// The first `Buffers:` line of the candidate search: pages it touched.
    pub fn candidate_buffers(&self) -> String {
        self.candidate_search()
            .lines()
            .find_map(|l| l.trim().strip_prefix("Buffers: "))
            .unwrap_or("(not reported)")
            .to_owned()
    }

    /// PASS when a claim index is used and nothing scans or walks.
    pub fn passes(&self) -> bool {
        self.claim_index_used().is_some() && !self.scans_or_walks()
    }
}

/// Captures both claim_next statements as the library sends them, then explains each
/// with a custom and a generic plan inside a rolled-back transaction.
pub async fn explain_claim_next(db: &BenchDb, seeded: &Seeded) -> BenchResult<Vec<Plan>> {
    let (on_queue, any_queue) = capture_claim_statements(db, seeded).await?;
    let mut plans = Vec::new();
    for (form, index, sql) in [
        ("claim_next on one queue", "todos_claim_queue_idx", &on_queue),
        ("claim_next on any queue", "todos_claim_any_idx", &any_queue),
    ] {
        for mode in ["custom", "generic"] {
            let text = explain(db, sql, seeded, form.ends_with("one queue"), mode).await?;
            plans.push(Plan { form, designed_index: index, mode, text });
        }
    }
    Ok(plans)
}

/// Runs claim_next (one queue, then any queue) on a one-connection pool whose
/// connection records every statement it sends; completes both claims so the table
/// stays as seeded. Returns the two claim statements' SQL.
async fn capture_claim_statements(db: &BenchDb, seeded: &Seeded) -> BenchResult<(String, String)> {
    let store: Store = db.store(1)?;
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let mut conn = store.conn().await.map_err(|e| e.to_string())?;
        conn.set_instrumentation(recorder(seen.clone()));
        // Dropping the connection returns it to the pool, where the next call finds it.
    }
    for queue in [Some(QUEUE.to_owned()), None] {
        let claimed = store
            .claim_next(seeded.cycles, ClaimRequest { queue, ..ClaimRequest::default() })
            .await
            .map_err(|e| format!("claim_next: {e}"))?
            .claimed()
            .ok_or("claim_next found the queue empty")?;
        let finish = Finish { lease_token: Some(claimed.lease_token), ..Finish::default() };
        store.complete(seeded.cycles, claimed.todo.id, finish).await.map_err(|e| format!("complete: {e}"))?;
    }
    let seen = seen.lock().map_err(|_| "statement recorder poisoned")?.clone();
    let mut claims =
        seen.into_iter().filter(|sql| sql.trim_start().starts_with("WITH") && sql.contains(" candidate AS ("));
    match (claims.next(), claims.next()) {
        (Some(q), Some(a)) => Ok((q, a)),
        _ => Err("did not see both claim_next statements; has claim.rs stopped using a `candidate` CTE?".into()),
    }
}

/// An instrumentation hook that keeps the SQL of every statement started.
pub(crate) fn recorder(seen: Arc<Mutex<Vec<String>>>) -> impl Instrumentation {
    move |event: InstrumentationEvent<'_>| {
        if let InstrumentationEvent::StartQuery { query, .. } = event {
            // Diesel renders a query as `<sql> -- binds: [...]`; keep the SQL.
            let rendered = query.to_string();
            let sql = rendered.rsplit_once(" -- binds: ").map_or(rendered.as_str(), |(sql, _)| sql).to_owned();
            if let Ok(mut s) = seen.lock() {
                s.push(sql);
            }
        }
    }
}

/// `EXPLAIN (ANALYZE, BUFFERS)` of `sql` as a prepared statement with the parameter
/// types the store binds (endpoint, queue, lease seconds, token hash, claimant, relay),
/// in `mode` (custom or generic plan). The claim it performs is rolled back.
async fn explain(db: &BenchDb, sql: &str, seeded: &Seeded, on_queue: bool, mode: &str) -> BenchResult<String> {
    let queue = if on_queue { format!("'{QUEUE}'") } else { "NULL".into() };
    let values = format!("'{}', {queue}, 300, '\\x00'::bytea, NULL, false", seeded.cycles.0);
    explain_prepared(db, "bench_claim", "uuid, text, int4, bytea, text, bool", sql, mode, &values).await
}

/// `EXPLAIN (ANALYZE, BUFFERS)` of `sql` prepared as `name` with parameter `types`,
/// planned in `mode` (`custom` or `generic`) and executed with `values`, inside a
/// transaction that is rolled back (whatever the statement changes is undone) and with
/// the statement deallocated after (PREPARE outlives a rollback).
pub async fn explain_prepared(
    db: &BenchDb,
    name: &str,
    types: &str,
    sql: &str,
    mode: &str,
    values: &str,
) -> BenchResult<String> {
    let client = db.client();
    let steps = [
        "BEGIN".to_owned(),
        format!("PREPARE {name} ({types}) AS {sql}"),
        format!("SET LOCAL plan_cache_mode = force_{mode}_plan"),
    ];
    let mut outcome = Ok(String::new());
    for step in &steps {
        if let Err(e) = client.batch_execute(step).await {
            outcome = Err(format!("{e}; in: {}", step.chars().take(120).collect::<String>()));
            break;
        }
    }
    if outcome.is_ok() {
        let explain = format!("EXPLAIN (ANALYZE, BUFFERS) EXECUTE {name} ({values})");
        outcome = client.simple_query(&explain).await.map_err(|e| format!("EXPLAIN {name}: {e}")).map(|messages| {
            messages
                .iter()
                .filter_map(|m| match m {
                    tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n")
        });
    }
    let _ = client.batch_execute("ROLLBACK").await;
    let _ = client.batch_execute(&format!("DEALLOCATE {name}")).await;
    outcome
}
