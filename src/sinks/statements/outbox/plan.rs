//! One pass of a sink's budget, in one transaction holding the sink's row: read the
//! bucket and the held rows, let the budget divide them
//! ([`crate::sinks::rules::budget::spend`]), write the bucket back, and mark each row
//! as the division says. Each step is one registered statement.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Double, Int4, Integer, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::{CLAIM_SECONDS, OutboxRow, ROW_COLUMNS, SinkPlan, record};
use crate::db::statement::statement;
use crate::domain::ids::SinkId;
use crate::error::{Error, Result};
use crate::sinks::rules::budget::{BucketState, Spending, StoredBudget, spend};
use crate::store::Store;

statement! {
    /// The sink's bucket, its row locked for the pass (`$1` the sink).
    static LOCK_BUDGET = "SELECT tokens, tokens_at, budget_per_hour, burst, now() AS now FROM sinks WHERE id = $1 \
        FOR NO KEY UPDATE";
    /// The sink's held rows nobody has claimed, oldest first, locked (`$1` the sink).
    static HELD_ROWS = format!(
        "SELECT {ROW_COLUMNS} FROM outbox WHERE sink_id = $1 AND status = 'held' \
           AND (claimed_until IS NULL OR claimed_until < now()) ORDER BY created_at FOR UPDATE SKIP LOCKED"
    );
    /// The bucket after the pass (`$1` the sink, `$2` tokens, `$3` when refilled).
    static SPEND_BUDGET = "UPDATE sinks SET tokens = $2, tokens_at = $3 WHERE id = $1";
    /// Held rows the budget sends as themselves, claimed for the pass with their attempt
    /// counted, as a claim counts one (`$1` ids, `$2` claim seconds).
    static CLAIM_LONE = "UPDATE outbox SET claimed_until = now() + make_interval(secs => $2), attempts = attempts + 1 \
        WHERE id = ANY($1)";
    /// Rows of the coalesced message, claimed for the pass (`$1` ids, `$2` claim seconds).
    static CLAIM_COALESCED = "UPDATE outbox SET claimed_until = now() + make_interval(secs => $2) WHERE id = ANY($1)";
    /// Rows this pass claimed but cannot pay for: held, their attempt not counted (`$1`
    /// ids).
    static HOLD_DUE =
        "UPDATE outbox SET status = 'held', claimed_until = NULL, attempts = attempts - 1 WHERE id = ANY($1)";
}

impl Store {
    /// Spends `sink`'s budget on `due` (rows this pass claimed for it) and on its held
    /// rows, in one transaction holding the sink's row: what goes out one by one, what
    /// goes out as one coalesced message (every held row once a token returns), and
    /// what is held. Held rows are claimed for the coalesced send; rows the budget
    /// cannot pay for become `held`.
    pub async fn plan_sink(&self, sink: SinkId, due: Vec<OutboxRow>) -> Result<SinkPlan> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let budget = lock_budget(conn, sink).await?;
            let held: Vec<OutboxRow> = HELD_ROWS.query().bind::<SqlUuid, _>(sink).load(conn).await?;
            let (after, decision) = budget.decide(held.len(), due.len());
            spend_budget(conn, sink, after).await?;
            let Spending { individual, lone, due, held, coalesce } = spend(&decision, due, held);
            // What is held or coalesced is written first, as its claim would have left
            // it, so the statements below find it.
            let written = write_fresh(conn, &due).await?;
            let due: Vec<OutboxRow> = due.into_iter().map(|row| OutboxRow { event_ref: None, ..row }).collect();
            let mut plan = SinkPlan { individual, written, ..SinkPlan::default() };
            if let Some(lone) = lone {
                claim(conn, &CLAIM_LONE, &lone).await?;
                plan.individual.extend(lone.into_iter().map(|row| OutboxRow { attempts: row.attempts + 1, ..row }));
            }
            if coalesce {
                plan.coalesced = held.into_iter().chain(due).collect();
                claim(conn, &CLAIM_COALESCED, &plan.coalesced).await?;
            } else {
                // What this pass claimed but cannot pay for waits for a token; its
                // attempt did not happen, so it is not counted.
                plan.held = held.len() + due.len();
                plan.held_now = due.iter().map(|r| r.event).collect();
                HOLD_DUE.query().bind::<Array<SqlUuid>, _>(ids(&due)).execute(conn).await?;
            }
            Ok(plan)
        })
        .await
    }
}

/// The sink's budget as stored, its row locked ([`LOCK_BUDGET`]).
async fn lock_budget(conn: &mut AsyncPgConnection, sink: SinkId) -> Result<StoredBudget> {
    #[derive(QueryableByName)]
    struct Bucket {
        #[diesel(sql_type = Double)]
        tokens: f64,
        #[diesel(sql_type = Timestamptz)]
        tokens_at: DateTime<Utc>,
        #[diesel(sql_type = Int4)]
        budget_per_hour: i32,
        #[diesel(sql_type = Int4)]
        burst: i32,
        #[diesel(sql_type = Timestamptz)]
        now: DateTime<Utc>,
    }
    let b: Bucket = LOCK_BUDGET.query().bind::<SqlUuid, _>(sink).one_row(conn).await?;
    Ok(StoredBudget {
        state: BucketState { tokens: b.tokens, refilled_at: b.tokens_at },
        per_hour: b.budget_per_hour,
        burst: b.burst,
        now: b.now,
    })
}

/// Writes the bucket back ([`SPEND_BUDGET`]).
async fn spend_budget(conn: &mut AsyncPgConnection, sink: SinkId, after: BucketState) -> Result<()> {
    SPEND_BUDGET
        .query()
        .bind::<SqlUuid, _>(sink)
        .bind::<Double, _>(after.tokens)
        .bind::<Timestamptz, _>(after.refilled_at)
        .execute(conn)
        .await?;
    Ok(())
}

/// Writes the fresh rows among `due` (claimed from a dead letter's record) as their
/// claim would have left them; their records' references.
async fn write_fresh(conn: &mut AsyncPgConnection, due: &[OutboxRow]) -> Result<Vec<i64>> {
    let fresh: Vec<&OutboxRow> = due.iter().filter(|r| r.event_ref.is_some()).collect();
    record::write_claimed(conn, &fresh).await?;
    Ok(fresh.iter().filter_map(|r| r.event_ref).collect())
}

/// Claims `rows` for the pass with `statement` ([`CLAIM_LONE`] or [`CLAIM_COALESCED`]).
async fn claim(
    conn: &mut AsyncPgConnection,
    statement: &'static crate::db::statement::Statement,
    rows: &[OutboxRow],
) -> Result<()> {
    statement.query().bind::<Array<SqlUuid>, _>(ids(rows)).bind::<Integer, _>(CLAIM_SECONDS).execute(conn).await?;
    Ok(())
}

/// The ids of `rows`.
fn ids(rows: &[OutboxRow]) -> Vec<uuid::Uuid> {
    rows.iter().map(|r| r.id).collect()
}
