//! Dead letters per day per queue over the last [`CHART_DAYS`] days, for the Board's
//! chart. Days are UTC calendar days, today included. Queues beyond the
//! [`CHART_QUEUES`] busiest are summed as "other", in SQL, so the answer stays small
//! and still adds up to every dead letter of the period.
//!
//! It counts the todos that are dead letters now, by the day they died: a dead letter
//! retried since has left the chart (the chart shows what is waiting on someone).

use chrono::{Duration, NaiveDate, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Date, Int8, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::super::dead_letters::{DEAD_LETTER, scope_array};
use crate::db::statement::statement;
use crate::domain::ids::ScopeId;
use crate::error::Result;

/// Days the chart covers, today included.
pub const CHART_DAYS: u32 = 14;
/// Queues shown on their own; the rest are summed as "other".
pub const CHART_QUEUES: i64 = 6;

/// Dead letters of one queue (or of the other queues) on one day.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct DeadLetterDay {
    /// The UTC day they died.
    #[diesel(sql_type = Date)]
    pub day: NaiveDate,
    /// The queue; `None` for the queues outside the busiest [`CHART_QUEUES`].
    #[diesel(sql_type = Nullable<Text>)]
    pub queue: Option<String>,
    /// How many.
    #[diesel(sql_type = BigInt)]
    pub count: i64,
}

/// The chart's data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterDays {
    /// The first day shown; the chart covers it and the [`CHART_DAYS`]` - 1` days after.
    pub first_day: NaiveDate,
    /// Non-zero (day, queue) counts, by day then queue (`None` last).
    pub rows: Vec<DeadLetterDay>,
}

statement! {
    /// Dead letters per UTC day and queue (`$1` scopes, `$2` since, `$3` how many queues
    /// the chart names). One pass over the fortnight's index entries (index-only: the
    /// index carries the queue) into per-day-and-queue counts; the folding works on those
    /// few rows.
    static PER_DAY = format!(
        "WITH d AS ( \
           SELECT (t.dead_lettered_at AT TIME ZONE 'UTC')::date AS day, t.queue, count(*) AS n FROM todos t \
           WHERE t.scope_id = ANY($1) AND {DEAD_LETTER} AND t.dead_lettered_at >= $2 GROUP BY 1, 2), \
         busiest AS (SELECT queue FROM d GROUP BY queue ORDER BY sum(n) DESC, queue LIMIT $3) \
         SELECT day, CASE WHEN queue IN (SELECT queue FROM busiest) THEN queue END AS queue, \
           sum(n)::int8 AS count \
         FROM d GROUP BY 1, 2 ORDER BY 1, 2 NULLS LAST"
    );
}

impl Store {
    /// Dead letters across `scopes` per UTC day and queue over the last
    /// [`CHART_DAYS`] days (today included).
    pub async fn dead_letters_per_day(&self, scopes: &[ScopeId]) -> Result<DeadLetterDays> {
        let first_day = Utc::now().date_naive() - Duration::days(i64::from(CHART_DAYS) - 1);
        let since = first_day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc();
        let mut conn = self.conn().await?;
        let rows = PER_DAY
            .query()
            .bind::<Array<SqlUuid>, _>(scope_array(scopes))
            .bind::<Timestamptz, _>(since)
            .bind::<Int8, _>(CHART_QUEUES)
            .load(&mut conn)
            .await?;
        Ok(DeadLetterDays { first_day, rows })
    }
}
