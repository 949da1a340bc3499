//! Whether dead letters reached any sink: read from their outbox record (written by the
//! dead letter's own transaction when its scope has an enabled sink, deleted in the
//! statement that writes its last sink's row) and their sinks' outbox rows (one per
//! subscribed sink, keyed `dead_letter:{todo}:{dead_letter_count}`), whichever instance
//! wrote them. Only for dead letters no hook reached (`sinks::worker::reach`), never on
//! a todo's own path.

use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Bool, Int4, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use crate::db::statement::statement;
use crate::domain::ids::TodoId;
use crate::error::Result;
use crate::store::Store;

/// Where a dead letter's sink messages stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkReach {
    /// Not settled yet: its record waits for a worker, or a sink's row is pending or held.
    Open,
    /// A sink took its message (sent, coalesced, or partly sent).
    Told,
    /// Every subscribed sink's row ended undeliverable.
    Failed,
    /// No sink was subscribed (no record was written, or it was settled with no row).
    NoSink,
}

/// One dead letter, as its todo and dead-letter count name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeadLetterKey {
    /// The todo.
    pub todo: TodoId,
    /// Its dead-letter count when it died (a todo retried by hand dies again with the next).
    pub dead_letter_count: i32,
}

statement! {
    /// `$1`, `$2`: the dead letters' todos and counts. The records are read in one pass
    /// (`outbox_events` has no index on the todo; it holds only unsettled records), the
    /// rows through `outbox_todo_idx`.
    static SINK_REACH = "WITH w AS (SELECT * FROM unnest($1::uuid[], $2::int4[]) AS w(todo_id, n)), \
        recorded AS MATERIALIZED (SELECT DISTINCT e.todo_id, e.dead_letter_count AS n FROM outbox_events e \
                                  WHERE e.todo_id = ANY ($1)) \
        SELECT w.todo_id, w.n, \
               EXISTS (SELECT 1 FROM recorded r WHERE r.todo_id = w.todo_id AND r.n = w.n) AS recorded, \
               count(o.id) FILTER (WHERE o.status IN ('sent', 'coalesced', 'partial')) AS told, \
               count(o.id) FILTER (WHERE o.status IN ('pending', 'held')) AS open, \
               count(o.id) AS rows \
        FROM w LEFT JOIN outbox o ON o.todo_id = w.todo_id AND o.dedup_key = 'dead_letter:' || w.todo_id || ':' || w.n \
        GROUP BY w.todo_id, w.n";
}

impl Store {
    /// Where each of `dead` stands with its sinks (every one of them answered once).
    pub async fn sink_reach(&self, dead: &[DeadLetterKey]) -> Result<Vec<(DeadLetterKey, SinkReach)>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            todo_id: TodoId,
            #[diesel(sql_type = Int4)]
            n: i32,
            #[diesel(sql_type = Bool)]
            recorded: bool,
            #[diesel(sql_type = BigInt)]
            told: i64,
            #[diesel(sql_type = BigInt)]
            open: i64,
            #[diesel(sql_type = BigInt)]
            rows: i64,
        }
        if dead.is_empty() {
            return Ok(Vec::new());
        }
        let todos: Vec<TodoId> = dead.iter().map(|d| d.todo).collect();
        let counts: Vec<i32> = dead.iter().map(|d| d.dead_letter_count).collect();
        let mut conn = self.conn().await?;
        let rows: Vec<Row> = SINK_REACH
            .query()
            .bind::<Array<SqlUuid>, _>(&todos)
            .bind::<Array<Int4>, _>(&counts)
            .load(&mut conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| {
                // One sink told is enough, whatever the others still do.
                let reach = if r.told > 0 {
                    SinkReach::Told
                } else if r.recorded || r.open > 0 {
                    SinkReach::Open
                } else if r.rows > 0 {
                    SinkReach::Failed
                } else {
                    SinkReach::NoSink
                };
                (DeadLetterKey { todo: r.todo_id, dead_letter_count: r.n }, reach)
            })
            .collect())
    }
}
