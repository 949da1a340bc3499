//! Claiming: `claim_next` (oldest pending, `FOR UPDATE SKIP LOCKED`) and `claim` by id.
//! One statement moves the todo to `claimed`, counts the attempt and opens it in the
//! history, so a crash can never leave a claim without its attempt.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Bool, Bytea, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::{Caller, explain_miss, todo_query};
use crate::db::models::{AttemptRow, TodoRow};
use crate::db::prepared::Prepared;
use crate::db::schema::todo_attempts;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::text::{QUARANTINE_QUEUE, claimant_label, is_relay_claimant, valid_queue_name};
use crate::domain::tokens::mint_lease_token;
use crate::domain::transitions::{LEASE_SECONDS_RANGE, lease_seconds, within};
use crate::error::{Error, Result};

/// What a claim asks for.
#[derive(Debug, Clone, Default)]
pub struct ClaimRequest {
    /// Only this queue (claim_next).
    pub queue: Option<String>,
    /// Lease length for this claim (1–86 400 s).
    pub lease_ttl_seconds: Option<i32>,
    /// Free-form label of who claimed (≤128 bytes, control characters removed).
    pub claimant: Option<String>,
    /// Marks the attempt as a relay attempt.
    pub relay: bool,
    /// The endpoint's default lease.
    pub endpoint_default_lease: Option<i32>,
}

/// What every form of claim binds after its own two parameters.
struct ClaimParams {
    token: String,
    hash: [u8; 32],
    lease: i32,
    claimant: Option<String>,
    relay: bool,
}

impl ClaimParams {
    /// Binds `$3`–`$6` of [`CLAIM_TAIL`].
    fn bind_tail<'f>(&'f self, q: BoxedSqlQuery<'f, Pg, SqlQuery>) -> BoxedSqlQuery<'f, Pg, SqlQuery> {
        q.bind::<Int4, _>(self.lease)
            .bind::<Bytea, _>(self.hash.as_slice())
            .bind::<Nullable<Text>, _>(self.claimant.as_deref())
            .bind::<Bool, _>(self.relay)
    }
}

impl ClaimRequest {
    /// Validates, mints the lease token and resolves lease, label and relay flag.
    fn params(&self) -> Result<ClaimParams> {
        self.validate()?;
        let (token, hash) = mint_lease_token();
        let claimant = self.claimant.as_deref().and_then(claimant_label);
        let relay = self.relay || claimant.as_deref().is_some_and(is_relay_claimant);
        Ok(ClaimParams {
            token,
            hash,
            lease: lease_seconds(self.lease_ttl_seconds, self.endpoint_default_lease),
            claimant,
            relay,
        })
    }

    fn validate(&self) -> Result<()> {
        if let Some(l) = self.lease_ttl_seconds
            && !within(l, LEASE_SECONDS_RANGE)
        {
            return Err(Error::invalid("lease_ttl_seconds", "must be between 1 and 86400"));
        }
        if let Some(q) = &self.queue
            && (!valid_queue_name(q) || q == QUARANTINE_QUEUE)
        {
            return Err(Error::invalid("queue", "not a drainable queue name"));
        }
        Ok(())
    }
}

/// A successful claim. Its Debug form leaves out the lease token.
#[derive(Clone)]
pub struct Claimed {
    /// The todo, now `claimed`.
    pub todo: TodoRow,
    /// The lease token (fencing); shown only here.
    pub lease_token: String,
    /// The attempt's sequence number.
    pub attempt_seq: i32,
    /// Up to five earlier attempts, newest first.
    pub prior_attempts: Vec<AttemptRow>,
}

impl std::fmt::Debug for Claimed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claimed")
            .field("todo", &self.todo.id)
            .field("attempt_seq", &self.attempt_seq)
            .finish_non_exhaustive()
    }
}

/// The part of every claim statement after the candidate is chosen (CTE `candidate`).
const CLAIM_TAIL: &str = "\
    claimed AS ( \
      UPDATE todos t SET state = 'claimed', attempt = t.attempt + 1, attempts_total = t.attempts_total + 1, \
        claimed_by = t.endpoint_id, lease_expires_at = now() + $3 * interval '1 second', lease_token_hash = $4, \
        claimed_at = now(), updated_at = now(), next_retry_at = NULL \
      FROM candidate c WHERE t.id = c.id \
      RETURNING t.*), \
    opened AS ( \
      INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, relay, claimed_at, lease_expires_at) \
      SELECT id, attempts_total, endpoint_id, $5, $6, now(), lease_expires_at FROM claimed) \
    SELECT * FROM claimed";

impl Store {
    /// Claims the oldest pending todo of the endpoint (optionally on one queue).
    /// `None` when there is nothing to claim.
    pub async fn claim_next(&self, endpoint: EndpointId, req: ClaimRequest) -> Result<Option<Claimed>> {
        let params = req.params()?;
        let candidate = if req.queue.is_some() {
            "SELECT id FROM todos WHERE endpoint_id = $1 AND state = 'pending' AND queue = $2 \
             ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED"
        } else {
            // $2 is bound but unused so that both forms share one parameter list.
            "SELECT id FROM todos WHERE endpoint_id = $1 AND state = 'pending' AND queue <> 'quarantine' \
             AND $2::text IS NULL ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED"
        };
        let head = diesel::sql_query(format!("WITH candidate AS ({candidate}), {CLAIM_TAIL}"))
            .into_boxed::<Pg>()
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Nullable<Text>, _>(req.queue.as_deref());
        let mut conn = self.conn().await?;
        let row: Option<TodoRow> = Prepared(params.bind_tail(head)).get_result(&mut conn).await.optional()?;
        match row {
            None => Ok(None),
            Some(todo) => Ok(Some(self.finish_claim(&mut conn, todo, params.token).await?)),
        }
    }

    /// Claims one todo by id: a pending todo, or a failed one whose retry is due.
    pub async fn claim(&self, endpoint: EndpointId, id: TodoId, req: ClaimRequest) -> Result<Claimed> {
        let params = req.params()?;
        let sql = format!(
            "WITH candidate AS (SELECT t.id FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2 \
               AND t.queue <> 'quarantine' \
               AND (t.state = 'pending' OR (t.state = 'failed' AND t.next_retry_at <= now())) FOR UPDATE), \
             {CLAIM_TAIL}"
        );
        let mut conn = self.conn().await?;
        let head = todo_query(sql, id).bind::<SqlUuid, _>(endpoint.0);
        let row: Option<TodoRow> = Prepared(params.bind_tail(head)).get_result(&mut conn).await.optional()?;
        match row {
            Some(todo) => self.finish_claim(&mut conn, todo, params.token).await,
            None => Err(explain_miss(
                &mut conn,
                &Caller::Endpoint(endpoint),
                id,
                None,
                "pending (or failed with its retry due)",
            )
            .await),
        }
    }

    async fn finish_claim(
        &self,
        conn: &mut diesel_async::AsyncPgConnection,
        todo: TodoRow,
        lease_token: String,
    ) -> Result<Claimed> {
        let attempt_seq = todo.attempts_total;
        // Only a todo that ran before has history worth a second round trip.
        let prior_attempts = if attempt_seq > 1 {
            todo_attempts::table
                .filter(todo_attempts::todo_id.eq(todo.id.0))
                .filter(todo_attempts::seq.lt(attempt_seq))
                .order(todo_attempts::seq.desc())
                .limit(5)
                .select(AttemptRow::as_select())
                .load(conn)
                .await?
        } else {
            Vec::new()
        };
        Ok(Claimed { todo, lease_token, attempt_seq, prior_attempts })
    }
}
