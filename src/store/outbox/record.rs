//! Recording what sinks answered: many rows in one statement, so a backlog costs one
//! commit per batch of answers instead of one per message.
//!
//! Each record is fenced by the attempt count its claim gave the row and by the claim
//! itself: a row whose claim lapsed and that another worker claimed again (its count
//! moved on), or that was ended meanwhile (every end clears `claimed_until`), is left
//! alone, so a late answer never overwrites a newer attempt's.
//!
//! The statement names no `status`: a condition on it would let the planner walk a
//! partial index on `status` (every pending row) instead of looking each row up by id,
//! which with stale statistics it did, once per batch, over 290 000 pending rows.

use std::time::Duration;

use diesel::sql_types::{Array, Bool, Int4, Int8, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use crate::domain::sinks::OutboxStatus;
use crate::error::Result;
use crate::store::Store;

/// How a claimed row's attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A final status (`sent`, `partial`, `undeliverable`) and the attempt's error class.
    Done(OutboxStatus, Option<&'static str>),
    /// Pending again after the wait, with the attempt's error class.
    RetryAfter(Duration, &'static str),
    /// Never attempted (its claim had too little time left for one attempt): pending
    /// again at once, the claim's attempt uncounted.
    GivenBack,
}

/// One claimed row's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The row.
    pub id: uuid::Uuid,
    /// Its attempt count as the claim left it (the fence).
    pub attempts: i32,
    /// How it ended.
    pub outcome: Outcome,
}

impl Store {
    /// Records `records` in one statement; how many were recorded (fewer when a lapsed
    /// claim's row was claimed again, or ended, meanwhile).
    pub async fn record_outbox(&self, records: &[Record]) -> Result<usize> {
        if records.is_empty() {
            return Ok(0);
        }
        let mut sorted = records.to_vec();
        sorted.sort_by_key(|r| r.id);
        let mut ids = Vec::with_capacity(sorted.len());
        let mut attempts = Vec::with_capacity(sorted.len());
        let mut statuses = Vec::with_capacity(sorted.len());
        let mut errors: Vec<Option<&str>> = Vec::with_capacity(sorted.len());
        let mut retry_ms: Vec<Option<i64>> = Vec::with_capacity(sorted.len());
        let mut given_back = Vec::with_capacity(sorted.len());
        for record in &sorted {
            ids.push(record.id);
            attempts.push(record.attempts);
            let (status, error, retry, back) = match record.outcome {
                Outcome::Done(status, error) => (status, error, None, false),
                Outcome::RetryAfter(wait, error) => (
                    OutboxStatus::Pending,
                    Some(error),
                    Some(i64::try_from(wait.as_millis()).unwrap_or(i64::MAX)),
                    false,
                ),
                Outcome::GivenBack => (OutboxStatus::Pending, None, None, true),
            };
            statuses.push(status.as_str());
            errors.push(error);
            retry_ms.push(retry);
            given_back.push(back);
        }
        let mut conn = self.conn().await?;
        let recorded = diesel::sql_query(
            "UPDATE outbox o SET status = r.status, claimed_until = NULL, \
               last_error = CASE WHEN r.given_back THEN o.last_error ELSE r.error END, \
               attempts = o.attempts - CASE WHEN r.given_back THEN 1 ELSE 0 END, \
               next_attempt_at = CASE WHEN r.retry_ms IS NULL THEN o.next_attempt_at \
                                      ELSE now() + make_interval(secs => r.retry_ms / 1000.0) END, \
               sent_at = CASE WHEN r.status IN ('sent', 'coalesced', 'partial') THEN now() ELSE o.sent_at END \
             FROM unnest($1::uuid[], $2::int4[], $3::text[], $4::text[], $5::int8[], $6::bool[]) \
                  AS r(id, attempts, status, error, retry_ms, given_back) \
             WHERE o.id = r.id AND o.attempts = r.attempts AND o.claimed_until IS NOT NULL",
        )
        .bind::<Array<SqlUuid>, _>(&ids)
        .bind::<Array<Int4>, _>(&attempts)
        .bind::<Array<Text>, _>(&statuses)
        .bind::<Array<Nullable<Text>>, _>(&errors)
        .bind::<Array<Nullable<Int8>>, _>(&retry_ms)
        .bind::<Array<Bool>, _>(&given_back)
        .execute(&mut conn)
        .await?;
        Ok(recorded)
    }
}
