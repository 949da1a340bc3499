//! Reading the census for a human's reach: one page of queues in trouble-first order,
//! one queue, and the per-minute buckets behind their sparklines. Each reads
//! `queue_census` by scope (or key) and `queue_minutes` by key; none reads `todos`.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::error::Result;
use crate::queues::rules::order::TroubleKey;
use crate::queues::rules::series::Slot;
use crate::store::Store;

/// One queue as the census last saw it, with its budget and its endpoint's presence as
/// they are now.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct QueueStanding {
    /// The endpoint.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// Its slug.
    #[diesel(sql_type = Text)]
    pub endpoint_slug: String,
    /// Its owner scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// The queue.
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// Pending todos, counted up to 10 000.
    #[diesel(sql_type = BigInt)]
    pub pending: i64,
    /// Whether more than `pending` wait (the count stopped at 10 000).
    #[diesel(sql_type = Bool)]
    pub pending_capped: bool,
    /// When the oldest pending todo was created.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub oldest_pending_at: Option<DateTime<Utc>>,
    /// Claimed todos.
    #[diesel(sql_type = BigInt)]
    pub claimed: i64,
    /// Claimed todos whose lease had lapsed, not yet reaped.
    #[diesel(sql_type = BigInt)]
    pub stalled: i64,
    /// Todos waiting on input or authorisation.
    #[diesel(sql_type = BigInt)]
    pub interrupted: i64,
    /// Failed todos with a retry scheduled.
    #[diesel(sql_type = BigInt)]
    pub retrying: i64,
    /// Completions in the last hour.
    #[diesel(sql_type = BigInt)]
    pub done_last_hour: i64,
    /// Failed attempts in the last hour.
    #[diesel(sql_type = BigInt)]
    pub failed_attempts_last_hour: i64,
    /// Dead letters in the last 24 hours.
    #[diesel(sql_type = BigInt)]
    pub dead_last_24h: i64,
    /// When the census measured it.
    #[diesel(sql_type = Timestamptz)]
    pub measured_at: DateTime<Utc>,
    /// Whether the queue has an admission budget now.
    #[diesel(sql_type = Bool)]
    pub budgeted: bool,
    /// Whether it is paused now.
    #[diesel(sql_type = Bool)]
    pub paused: bool,
    /// Most todos claimed at once, now.
    #[diesel(sql_type = Nullable<Int4>)]
    pub max_in_flight: Option<i32>,
    /// Most claims per clock hour, now.
    #[diesel(sql_type = Nullable<Int4>)]
    pub per_hour: Option<i32>,
    /// Whether the endpoint is clocked in now.
    #[diesel(sql_type = Bool)]
    pub clocked_in: bool,
}

impl QueueStanding {
    /// Where it sorts.
    pub fn key(&self) -> TroubleKey {
        TroubleKey {
            dead: self.dead_last_24h,
            stalled: self.stalled,
            oldest_pending_at: self.oldest_pending_at,
            endpoint_slug: self.endpoint_slug.clone(),
            queue: self.queue.clone(),
            endpoint_id: self.endpoint_id.0,
        }
    }

    /// The oldest pending todo's age in whole seconds when measured (0 with none).
    pub fn oldest_pending_seconds(&self) -> i64 {
        self.oldest_pending_at.map(|at| (self.measured_at - at).num_seconds().max(0)).unwrap_or(0)
    }
}

/// One stored minute of one queue.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct MinuteRow {
    /// The endpoint.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// The queue.
    #[diesel(sql_type = Text)]
    pub queue: String,
    /// The minute's start.
    #[diesel(sql_type = Timestamptz)]
    pub minute: DateTime<Utc>,
    /// Completions in it.
    #[diesel(sql_type = BigInt)]
    pub done: i64,
    /// Failed attempts in it.
    #[diesel(sql_type = BigInt)]
    pub failed_attempts: i64,
    /// Dead letters in it.
    #[diesel(sql_type = BigInt)]
    pub dead: i64,
}

impl MinuteRow {
    /// Its counts.
    pub fn slot(&self) -> Slot {
        Slot { done: self.done, failed_attempts: self.failed_attempts, dead: self.dead }
    }
}

/// The order, as SQL: every term ascending, so a cursor compares as one row value.
macro_rules! trouble_order {
    () => {
        "(-c.dead_last_24h, -c.stalled, coalesce(c.oldest_pending_at, 'infinity'::timestamptz), e.slug COLLATE \"C\", \
          c.queue COLLATE \"C\", c.endpoint_id)"
    };
}

/// The columns of a [`QueueStanding`] over `queue_census c JOIN endpoints e LEFT JOIN
/// queue_admission a`.
macro_rules! standing_from {
    () => {
        "SELECT c.endpoint_id, e.slug AS endpoint_slug, c.scope_id, c.queue, c.pending, c.pending_capped, c.oldest_pending_at, c.claimed, \
           c.stalled, c.interrupted, c.retrying, c.done_last_hour, c.failed_attempts_last_hour, c.dead_last_24h, \
           c.measured_at, a.endpoint_id IS NOT NULL AS budgeted, coalesce(a.paused, false) AS paused, a.max_in_flight, \
           a.per_hour, e.presence = 'in' AS clocked_in \
         FROM queue_census c JOIN endpoints e ON e.id = c.endpoint_id \
         LEFT JOIN queue_admission a ON a.endpoint_id = c.endpoint_id AND a.queue = c.queue "
    };
}

statement! {
    /// One page of the queues of scopes `$1`, trouble first, after the key `$3`–`$8`
    /// when `$2`; at most `$9`.
    static PAGE = concat!(
        standing_from!(),
        "WHERE c.scope_id = ANY($1) AND (NOT $2 OR ",
        trouble_order!(),
        " > (-$3::int8, -$4::int8, coalesce($5, 'infinity'::timestamptz), $6::text COLLATE \"C\", $7::text COLLATE \"C\", $8::uuid)) \
         ORDER BY ",
        trouble_order!(),
        " LIMIT $9"
    );

    /// Endpoint `$1`'s queue `$2`, when its scope is one of `$3`.
    static ONE = concat!(standing_from!(), "WHERE c.endpoint_id = $1 AND c.queue = $2 AND c.scope_id = ANY($3)");

    /// The stored minutes since `$3` of the queues `($1[i], $2[i])`, oldest first.
    static MINUTES = "SELECT m.endpoint_id, m.queue, m.minute, m.done, m.failed_attempts, m.dead \
         FROM unnest($1::uuid[], $2::text[]) AS k(endpoint_id, queue) \
         JOIN queue_minutes m ON m.endpoint_id = k.endpoint_id AND m.queue = k.queue AND m.minute >= $3 \
         ORDER BY m.endpoint_id, m.queue, m.minute";
}

impl Store {
    /// Up to `limit` queues of `scopes` as the census last saw them, trouble first,
    /// after `after` when given.
    pub async fn queue_standings(
        &self,
        scopes: &[ScopeId],
        after: Option<&TroubleKey>,
        limit: i64,
    ) -> Result<Vec<QueueStanding>> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let (dead, stalled, oldest, slug, queue, endpoint) = match after {
            Some(k) => {
                (k.dead, k.stalled, k.oldest_pending_at, k.endpoint_slug.as_str(), k.queue.as_str(), k.endpoint_id)
            }
            None => (0, 0, None, "", "", uuid::Uuid::nil()),
        };
        Ok(PAGE
            .query()
            .bind::<Array<SqlUuid>, _>(ids)
            .bind::<Bool, _>(after.is_some())
            .bind::<BigInt, _>(dead)
            .bind::<BigInt, _>(stalled)
            .bind::<Nullable<Timestamptz>, _>(oldest)
            .bind::<Text, _>(slug)
            .bind::<Text, _>(queue)
            .bind::<SqlUuid, _>(endpoint)
            .bind::<BigInt, _>(limit)
            .load(&mut conn)
            .await?)
    }

    /// Endpoint `endpoint`'s queue `queue` as the census last saw it, when it is in
    /// `scopes` and was measured.
    pub async fn queue_standing(
        &self,
        scopes: &[ScopeId],
        endpoint: EndpointId,
        queue: &str,
    ) -> Result<Option<QueueStanding>> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut rows: Vec<QueueStanding> = ONE
            .query()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Text, _>(queue)
            .bind::<Array<SqlUuid>, _>(ids)
            .load(&mut conn)
            .await?;
        Ok(rows.pop())
    }

    /// The stored minutes since `since` of each of `queues`, oldest first.
    pub async fn queue_minutes(&self, queues: &[(EndpointId, String)], since: DateTime<Utc>) -> Result<Vec<MinuteRow>> {
        let mut conn = self.conn().await?;
        let endpoints: Vec<uuid::Uuid> = queues.iter().map(|(e, _)| e.0).collect();
        let names: Vec<&str> = queues.iter().map(|(_, q)| q.as_str()).collect();
        Ok(MINUTES
            .query()
            .bind::<Array<SqlUuid>, _>(endpoints)
            .bind::<Array<Text>, _>(names)
            .bind::<Timestamptz, _>(since)
            .load(&mut conn)
            .await?)
    }
}
