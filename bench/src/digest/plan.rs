//! The digest's eight section queries, as the library exports them, and their
//! `EXPLAIN (ANALYZE, BUFFERS)` plans with the binds a digest sends.

use chrono::{DateTime, Utc};
use switchboard::db::statement::Statement;
use switchboard::digests::statements::sql;
use switchboard::domain::ids::ScopeId;

use crate::BenchResult;
use crate::database::BenchDb;

/// The tables a section must never read sequentially (the ones that grow with work).
pub const BIG_TABLES: [&str; 6] = ["todos", "events", "todo_attempts", "doorbell_rings", "outbox", "queue_deferrals"];

/// Each section's name (as the digest's report names it) and statement.
pub static SECTIONS: [(&str, &Statement); 8] = [
    ("pending", &sql::PENDING),
    ("claimed", &sql::CLAIMED),
    ("dead_letters", &sql::DEAD),
    ("quarantined", &sql::QUARANTINED),
    ("unheard_doorbells", &sql::UNHEARD),
    ("clocked_out", &sql::CLOCKED_OUT),
    ("deferred", &sql::DEFERRED),
    ("undeliverable", &sql::UNDELIVERABLE),
];

/// The binds of one digest build: `$1` scope, `$2` queues (empty: all), `$3` since,
/// `$4` until, `$5` the doorbell acknowledgement window (only where the SQL uses it).
#[derive(Debug, Clone)]
pub struct Binds {
    /// The owner scope.
    pub scope: ScopeId,
    /// The previous digest's send time.
    pub since: DateTime<Utc>,
    /// This one's.
    pub until: DateTime<Utc>,
    /// Seconds.
    pub ack_seconds: i64,
}

/// One section's explained plan.
#[derive(Debug, Clone)]
pub struct SectionPlan {
    /// The section.
    pub section: &'static str,
    /// `EXPLAIN (ANALYZE, BUFFERS)` output.
    pub text: String,
}

impl SectionPlan {
    /// The tables this plan reads sequentially (each once, in plan order).
    pub fn seq_scanned(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for line in self.text.lines() {
            if let Some((_, rest)) = line.split_once("Seq Scan on ") {
                let table = rest.split_whitespace().next().unwrap_or_default().to_owned();
                if !out.contains(&table) {
                    out.push(table);
                }
            }
        }
        out
    }

    /// The big tables ([`BIG_TABLES`]) this plan reads sequentially.
    pub fn big_seq_scans(&self) -> Vec<String> {
        self.seq_scanned().into_iter().filter(|t| BIG_TABLES.contains(&t.as_str())).collect()
    }

    /// The indexes the plan reads (each once, in plan order), as `index (table)`.
    pub fn indexes(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        // A bitmap index scan names no table: its parent, the line above, does.
        let mut heap = String::new();
        for line in self.text.lines() {
            let found = if let Some((_, rest)) = line.split_once(" using ") {
                // `Index Scan using i on t`, `Index Only Scan using i on t`
                let mut words = rest.split_whitespace();
                match (words.next(), words.next(), words.next()) {
                    (Some(i), Some("on"), Some(t)) if line.contains("Index") => Some(format!("{i} ({t})")),
                    _ => None,
                }
            } else if let Some((_, rest)) = line.split_once("Bitmap Heap Scan on ") {
                heap = rest.split_whitespace().next().unwrap_or_default().to_owned();
                None
            } else if let Some((_, rest)) = line.split_once("Bitmap Index Scan on ") {
                rest.split_whitespace().next().map(|i| format!("{i} ({heap})"))
            } else {
                None
            };
            if let Some(f) = found
                && !out.contains(&f)
            {
                out.push(f);
            }
        }
        out
    }
}

/// `'2026-12-01 09:00:00.000000+00'`, a timestamptz literal.
fn literal(at: DateTime<Utc>) -> String {
    format!("'{}'", at.format("%Y-%m-%d %H:%M:%S%.6f+00"))
}

/// Explains every section with `b` (custom plans, as the library's unnamed statements
/// get; inside a rolled-back transaction).
pub async fn explain(db: &BenchDb, b: &Binds) -> BenchResult<Vec<SectionPlan>> {
    let mut plans = Vec::new();
    for &(section, statement) in &SECTIONS {
        let query = statement.text();
        let (types, values) = if query.contains("$5") {
            (
                "uuid, text[], timestamptz, timestamptz, float8",
                format!("'{}', '{{}}', {}, {}, {}", b.scope.0, literal(b.since), literal(b.until), b.ack_seconds),
            )
        } else {
            (
                "uuid, text[], timestamptz, timestamptz",
                format!("'{}', '{{}}', {}, {}", b.scope.0, literal(b.since), literal(b.until)),
            )
        };
        let text = crate::plan::explain_prepared(db, "bench_digest", types, query, "custom", &values)
            .await
            .map_err(|e| format!("{e} (section {section})"))?;
        plans.push(SectionPlan { section, text });
    }
    Ok(plans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> SectionPlan {
        SectionPlan { section: "s", text: text.into() }
    }

    #[test]
    fn big_tables_scanned_are_caught_and_small_ones_are_not() {
        let p = plan(
            "Sort\n  ->  Hash Join\n        ->  Seq Scan on todos t  (cost=…)\n        ->  Hash\n              ->  Seq Scan on endpoints e",
        );
        assert_eq!(p.seq_scanned(), vec!["todos", "endpoints"]);
        assert_eq!(p.big_seq_scans(), vec!["todos"]);
        let q = plan("Parallel Seq Scan on todo_attempts a\nSeq Scan on webhooks w");
        assert_eq!(q.big_seq_scans(), vec!["todo_attempts"]);
    }

    #[test]
    fn indexes_are_named_once_each() {
        let p = plan(
            "Nested Loop\n  ->  Index Scan using endpoints_scope_idx on endpoints e  (cost=…)\n  ->  Index Only Scan \
             using todos_claim_queue_idx on todos t\n  ->  Index Only Scan using todos_claim_queue_idx on todos t\n  \
             ->  Bitmap Heap Scan on outbox  (cost=…)\n    ->  Bitmap Index Scan on outbox_undeliverable_idx  (cost=…)\n  \
             Sort Key: e.slug using <",
        );
        assert_eq!(
            p.indexes(),
            vec![
                "endpoints_scope_idx (endpoints)",
                "todos_claim_queue_idx (todos)",
                "outbox_undeliverable_idx (outbox)"
            ]
        );
        assert!(p.big_seq_scans().is_empty());
    }
}
