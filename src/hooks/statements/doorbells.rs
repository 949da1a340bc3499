//! Doorbell rings: each delivered `todo.ready`, once per todo. A ring whose todo is not
//! claimed within `SWITCHBOARD_DOORBELL_ACK_SECONDS` is an unheard doorbell, which the
//! digest reports per endpoint (see `store::digests::sql::UNHEARD`). Each ring is
//! decided once after its window: heard rings are deleted, unheard ones marked, so a
//! digest reads only what it reports.

use crate::db::one_row::OneRow;
use diesel::sql_types::{Array, Double, Int8, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::error::Result;
use crate::store::Store;
use crate::store::todos::claimed_by_sql;

statement! {
    static RING = "INSERT INTO doorbell_rings (todo_id, endpoint_id, queue) \
        SELECT t, $1, q FROM unnest($2::uuid[], $3::text[]) AS r (t, q) \
        ON CONFLICT (todo_id) DO NOTHING";
    static SET_LOCK_TIMEOUT = "SET LOCAL lock_timeout = 1000";
    static SET_STATEMENT_TIMEOUT = "SET LOCAL statement_timeout = 10000";
    static DOORBELLS_DUE = concat!(
        "WITH due AS ( \
        SELECT r.todo_id, ",
        claimed_by_sql!("r.todo_id", "r.rung_at + make_interval(secs => $1)"),
        " AS heard \
        FROM doorbell_rings r \
        WHERE r.unheard IS NULL AND r.rung_at < now() - make_interval(secs => $1) \
        ORDER BY r.rung_at LIMIT $2 FOR UPDATE SKIP LOCKED), \
        gone AS (DELETE FROM doorbell_rings r USING due WHERE r.todo_id = due.todo_id AND due.heard \
        RETURNING r.todo_id), \
        marked AS (UPDATE doorbell_rings r SET unheard = true FROM due \
        WHERE r.todo_id = due.todo_id AND NOT due.heard RETURNING r.todo_id) \
        SELECT (SELECT count(*) FROM gone) + (SELECT count(*) FROM marked) AS n"
    );
}

impl Store {
    /// Records that `endpoint`'s doorbell rang for each (todo, queue) of `rings`, in one
    /// statement; a todo that already rang keeps its first ring.
    pub async fn record_doorbells(&self, endpoint: EndpointId, rings: &[(TodoId, String)]) -> Result<()> {
        let (todos, queues): (Vec<TodoId>, Vec<String>) = rings.iter().cloned().unzip();
        let mut conn = self.conn().await?;
        RING.query()
            .bind::<SqlUuid, _>(endpoint)
            .bind::<Array<SqlUuid>, _>(todos)
            .bind::<Array<Text>, _>(queues)
            .execute(&mut conn)
            .await?;
        Ok(())
    }

    /// Decides up to `batch` rings whose window of `ack_seconds` has passed, oldest
    /// first: a ring whose todo was claimed within the window is deleted (heard), the
    /// others are marked unheard. Rings another instance is deciding are skipped.
    /// Returns how many were decided.
    pub async fn decide_doorbells(&self, ack_seconds: i64, batch: i64) -> Result<usize> {
        let mut conn = self.conn().await?;
        conn.transaction::<usize, crate::error::Error, _>(async move |conn| {
            // Bounded waits: a locked or slow ring table delays the decision to the next
            // tick; it must never hold up the digests the same tick decides after it.
            SET_LOCK_TIMEOUT.query().execute(conn).await?;
            SET_STATEMENT_TIMEOUT.query().execute(conn).await?;
            let n = DOORBELLS_DUE
                .query()
                .bind::<Double, _>(ack_seconds as f64)
                .bind::<Int8, _>(batch)
                .one_row::<Decided>(conn)
                .await?
                .n;
            Ok(usize::try_from(n).unwrap_or(0))
        })
        .await
    }
}

#[derive(diesel::QueryableByName)]
struct Decided {
    #[diesel(sql_type = Int8)]
    n: i64,
}
