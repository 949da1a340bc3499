//! Admission budgets as stored (`queue_admission`): changing one queue's budget and
//! listing them. Enforcement is part of the claim (`store/todos/admitted.rs`).
//!
//! A row exists only while the budget restricts something: a change that sets
//! everything back to the defaults deletes it, so an unbudgeted queue's claims never
//! take the budgeted path.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::Store;
use super::todos::holds_attempt_sql;
use crate::db::statement::{Statement, statement};
use crate::domain::admission::{AdmissionChange, Budget, Change};
use crate::domain::ids::{EndpointId, HumanId, ScopeId};
use crate::domain::wakeups::Arrived;
use crate::error::{Error, Result};

/// One queue's budget with what it is using now.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct AdmissionRow {
    /// The endpoint whose queue it is.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// The endpoint's slug.
    #[diesel(sql_type = Text)]
    pub endpoint_slug: String,
    /// The endpoint's owner scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// The queue.
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// Whether the queue is paused.
    #[diesel(sql_type = Bool)]
    pub paused: bool,
    /// Most todos claimed at once.
    #[diesel(sql_type = Nullable<Int4>)]
    pub max_in_flight: Option<i32>,
    /// Most claims per clock hour.
    #[diesel(sql_type = Nullable<Int4>)]
    pub per_hour: Option<i32>,
    /// The queue's todos claimed now.
    #[diesel(sql_type = BigInt)]
    pub in_flight: i64,
    /// Claims admitted in this clock hour (UTC).
    #[diesel(sql_type = Int4)]
    pub claims_this_hour: i32,
    /// When the budget last changed.
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
}

impl AdmissionRow {
    /// The settings alone.
    pub fn budget(&self) -> Budget {
        Budget { paused: self.paused, max_in_flight: self.max_in_flight, per_hour: self.per_hour }
    }
}

#[derive(QueryableByName)]
struct BudgetRow {
    #[diesel(sql_type = Bool)]
    paused: bool,
    #[diesel(sql_type = Nullable<Int4>)]
    max_in_flight: Option<i32>,
    #[diesel(sql_type = Nullable<Int4>)]
    per_hour: Option<i32>,
}

impl From<BudgetRow> for Budget {
    fn from(r: BudgetRow) -> Self {
        Budget { paused: r.paused, max_in_flight: r.max_in_flight, per_hour: r.per_hour }
    }
}

/// The listing's columns over `queue_admission a JOIN endpoints e`.
const LISTED: &str = "SELECT a.endpoint_id, e.slug AS endpoint_slug, e.scope_id, a.queue, a.paused, a.max_in_flight, a.per_hour, \
       (SELECT count(*) FROM todos f WHERE f.endpoint_id = a.endpoint_id AND f.queue = a.queue \
          AND f.state = 'claimed') AS in_flight, \
       CASE WHEN a.window_hour = date_trunc('hour', now(), 'UTC') THEN a.window_claims ELSE 0 END AS claims_this_hour, \
       a.updated_at \
     FROM queue_admission a JOIN endpoints e ON e.id = a.endpoint_id";

/// `$3`–`$7` of a change: paused (null: keep), whether to set `max_in_flight`, its value,
/// whether to set `per_hour`, its value.
fn change_binds(change: AdmissionChange) -> (Option<bool>, bool, Option<i32>, bool, Option<i32>) {
    let paused = match change.paused {
        Change::Keep => None,
        Change::Set(p) => Some(p),
    };
    let (set_max, max) = match change.max_in_flight {
        Change::Keep => (false, None),
        Change::Set(v) => (true, v),
    };
    let (set_hour, hour) = match change.per_hour {
        Change::Keep => (false, None),
        Change::Set(v) => (true, v),
    };
    (paused, set_max, max, set_hour, hour)
}

statement! {
    /// Changes an existing budget row (locking it); none when there is no row.
    static UPDATE = "UPDATE queue_admission SET paused = coalesce($3, paused), \
           max_in_flight = CASE WHEN $4 THEN $5 ELSE max_in_flight END, \
           per_hour = CASE WHEN $6 THEN $7 ELSE per_hour END, updated_at = now(), updated_by = $8 \
         WHERE endpoint_id = $1 AND queue = $2 RETURNING paused, max_in_flight, per_hour";

    /// Creates the row (a creator racing this one is folded in, as a change). Its hour
    /// window starts with the claims the queue already made this hour, so that a `per_hour`
    /// set mid-hour counts them too: the attempts in the history and those the todo rows
    /// hold, open or closed by a completion (neither has a history row, unless an earlier
    /// release wrote one: [`holds_attempt_sql`]). The view `todo_attempt_history` is not
    /// read here: a join with it could not find the endpoint's history rows by key.
    static CREATE = concat!(
        "WITH seed AS (SELECT ( \
             (SELECT count(*) FROM todo_attempts a JOIN todos t ON t.id = a.todo_id \
              WHERE t.endpoint_id = $1 AND t.queue = $2 AND t.claimed_at >= date_trunc('hour', now(), 'UTC') \
                AND a.claimed_at >= date_trunc('hour', now(), 'UTC')) \
           + (SELECT count(*) FROM todos t \
              WHERE t.endpoint_id = $1 AND t.queue = $2 AND t.claimed_at >= date_trunc('hour', now(), 'UTC') \
                AND ",
        holds_attempt_sql!("t"),
        " AND NOT EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id AND a.seq = t.attempts_total)) \
           )::int AS n) \
         INSERT INTO queue_admission AS q (endpoint_id, queue, paused, max_in_flight, per_hour, window_hour, \
           window_claims, updated_by) \
         SELECT $1, $2, coalesce($3, false), $5, $7, date_trunc('hour', now(), 'UTC'), seed.n, $8 FROM seed \
         ON CONFLICT (endpoint_id, queue) DO UPDATE SET paused = coalesce($3, q.paused), \
           max_in_flight = CASE WHEN $4 THEN $5 ELSE q.max_in_flight END, \
           per_hour = CASE WHEN $6 THEN $7 ELSE q.per_hour END, updated_at = now(), updated_by = $8 \
         RETURNING paused, max_in_flight, per_hour"
    );

    /// Deletes endpoint `$1`'s budget of queue `$2`.
    static DELETE = "DELETE FROM queue_admission WHERE endpoint_id = $1 AND queue = $2";

    /// The budgets of endpoint `$1`, by queue.
    static OF_ENDPOINT = format!("{LISTED} WHERE a.endpoint_id = $1 ORDER BY a.queue");

    /// The budgets of every endpoint in scopes `$1`, by endpoint slug and queue.
    static IN_SCOPES = format!("{LISTED} WHERE e.scope_id = ANY($1) ORDER BY e.slug, a.queue");
}

async fn write(
    conn: &mut AsyncPgConnection,
    statement: &'static Statement,
    endpoint: EndpointId,
    queue: &str,
    change: AdmissionChange,
    by: Option<HumanId>,
) -> Result<Option<Budget>> {
    let (paused, set_max, max, set_hour, hour) = change_binds(change);
    let row: Option<BudgetRow> = statement
        .query()
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<Text, _>(queue)
        .bind::<Nullable<Bool>, _>(paused)
        .bind::<Bool, _>(set_max)
        .bind::<Nullable<Int4>, _>(max)
        .bind::<Bool, _>(set_hour)
        .bind::<Nullable<Int4>, _>(hour)
        .bind::<Nullable<SqlUuid>, _>(by.map(|h| h.0))
        .one_row(conn)
        .await
        .optional()?;
    Ok(row.map(Budget::from))
}

impl Store {
    /// Applies `change` to the budget of `endpoint`'s `queue` (validated by the service)
    /// and returns the budget after it. The row is locked while it changes (claims under
    /// it wait, see [`crate::store`]); a budget that no longer restricts anything is
    /// deleted, and one that would restrict nothing is never created.
    pub async fn set_admission(
        &self,
        endpoint: EndpointId,
        queue: &str,
        change: AdmissionChange,
        by: Option<HumanId>,
    ) -> Result<Budget> {
        let after = self.write_admission(endpoint, queue, change, by).await?;
        // Whatever changed, agents waiting on the queue look once: a pause lifted or a cap
        // raised admits work that was held back (a tightened budget finds them deferred).
        self.emitter().claimable(endpoint, queue, Arrived::Any);
        Ok(after)
    }

    /// [`Self::set_admission`]'s transaction.
    async fn write_admission(
        &self,
        endpoint: EndpointId,
        queue: &str,
        change: AdmissionChange,
        by: Option<HumanId>,
    ) -> Result<Budget> {
        let mut conn = self.conn().await?;
        let queue = queue.to_owned();
        conn.transaction::<_, Error, _>(async move |conn| {
            let after = match write(conn, &UPDATE, endpoint, &queue, change, by).await? {
                Some(after) => after,
                None if !Budget::default().changed(change).restricts() => return Ok(Budget::default()),
                None => write(conn, &CREATE, endpoint, &queue, change, by)
                    .await?
                    .ok_or_else(|| Error::internal("creating a budget returned no row"))?,
            };
            if !after.restricts() {
                DELETE.query().bind::<SqlUuid, _>(endpoint.0).bind::<Text, _>(&queue).execute(conn).await?;
            }
            Ok(after)
        })
        .await
    }

    /// The budgets of `endpoint`'s queues, by queue.
    pub async fn admission_of(&self, endpoint: EndpointId) -> Result<Vec<AdmissionRow>> {
        let mut conn = self.conn().await?;
        Ok(OF_ENDPOINT.query().bind::<SqlUuid, _>(endpoint.0).load(&mut conn).await?)
    }

    /// The budgets of every endpoint in `scopes`, by endpoint slug and queue.
    pub async fn admission_in(&self, scopes: &[ScopeId]) -> Result<Vec<AdmissionRow>> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        Ok(IN_SCOPES.query().bind::<Array<SqlUuid>, _>(ids).load(&mut conn).await?)
    }
}
