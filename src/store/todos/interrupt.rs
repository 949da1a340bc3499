//! Interrupts: a claimed todo waits on a human or an outside event under an interrupt
//! lease that its holder must renew (heartbeat) or end (resume) before it lapses. A
//! resume puts the todo back in flight, so its queue's admission budget judges it as it
//! judges a claim.

use crate::db::one_row::OneRow;
use diesel::sql_types::{Bytea, Int4, Nullable, Text, Uuid as SqlUuid};

use super::super::Store;
use super::admitted::{Admitted, admit_resume};
use super::claim::FastRow;
use super::claim_parts::RESUMABLE;
use super::{Caller, agent_transition, explain_miss, todo_query};
use crate::db::models::TodoRow;
use crate::db::prepared::Prepared;
use crate::db::statement::statement;
use crate::domain::admission::Deferral;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::text::{INTERRUPT_REASON_MAX_BYTES, strip_controls, truncate_bytes};
use crate::domain::todo_state::{InterruptState, TodoState};
use crate::domain::tokens::sha256;
use crate::domain::transitions::{
    DEFAULT_INTERRUPT_SECONDS, INTERRUPT_SECONDS_RANGE, LEASE_SECONDS_RANGE, lease_seconds, within,
};
use crate::error::{Error, Result};

impl Store {
    /// Moves a claimed todo to `input_required` / `auth_required`. The attempt stays
    /// open; its lease becomes the interrupt lease (default 3 600 s, at most 7 days).
    pub async fn interrupt(
        &self,
        endpoint: EndpointId,
        id: TodoId,
        state: InterruptState,
        wait_seconds: Option<i32>,
        reason: Option<&str>,
        lease_token: Option<&str>,
    ) -> Result<TodoRow> {
        let wait = wait_seconds.unwrap_or(DEFAULT_INTERRUPT_SECONDS);
        if !within(wait, INTERRUPT_SECONDS_RANGE) {
            return Err(Error::invalid("wait_seconds", "must be between 1 and 604800"));
        }
        let reason = reason.map(|r| truncate_bytes(&strip_controls(r), INTERRUPT_REASON_MAX_BYTES).0);
        let token_hash = lease_token.map(|t| sha256(t.as_bytes()));
        let mut conn = self.conn().await?;
        let todo: TodoRow = agent_transition(
            &mut conn,
            todo_query(&INTERRUPT, id)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Text, _>(TodoState::from(state))
                .bind::<Int4, _>(wait)
                .bind::<Nullable<Text>, _>(reason)
                .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec())),
            endpoint,
            id,
            token_hash,
            "claimed",
        )
        .await?;
        Ok(todo)
    }

    /// Resumes an interrupted todo: back to `claimed` with a fresh lease, same attempt,
    /// unless its queue's admission budget refuses to put it back in flight (see
    /// [`super::admitted`]): then it stays interrupted under its interrupt lease and the
    /// refusal is counted as a deferral.
    ///
    /// An unbudgeted queue's todo is resumed by one statement, which also looks up
    /// whether the queue has a budget; a budgeted one is left as it was by that statement
    /// and resumed under the budget's lock.
    pub async fn resume(
        &self,
        endpoint: EndpointId,
        endpoint_default_lease: Option<i32>,
        id: TodoId,
        lease_ttl_seconds: Option<i32>,
        lease_token: Option<&str>,
    ) -> Result<ResumeOutcome> {
        if let Some(l) = lease_ttl_seconds
            && !within(l, LEASE_SECONDS_RANGE)
        {
            return Err(Error::invalid("lease_ttl_seconds", "must be between 1 and 86400"));
        }
        let lease = lease_seconds(lease_ttl_seconds, endpoint_default_lease);
        let token_hash = lease_token.map(|t| sha256(t.as_bytes()));
        let mut conn = self.conn().await?;
        let q = todo_query(&RESUME_UNBUDGETED, id)
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Int4, _>(lease)
            .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec()));
        let row: FastRow = Prepared(q).one_row(&mut conn).await?;
        let admitted = match (row.budgeted, row.todo) {
            (_, Some(todo)) => Admitted::Claimed(Box::new(todo)),
            (false, None) => Admitted::Nothing,
            (true, None) => admit_resume(&mut conn, endpoint, id, lease, token_hash).await?,
        };
        match admitted {
            Admitted::Claimed(todo) => Ok(ResumeOutcome::Resumed(todo)),
            Admitted::Deferred(why) => Ok(ResumeOutcome::Deferred(why)),
            Admitted::Nothing => Err(explain_miss(
                &mut conn,
                &Caller::Endpoint(endpoint),
                id,
                token_hash.as_ref().map(|h| h.as_slice()),
                "interrupted",
            )
            .await),
        }
    }
}

/// What a resume came to.
#[derive(Debug)]
pub enum ResumeOutcome {
    /// The todo is claimed again under a fresh lease; the same attempt goes on.
    Resumed(Box<TodoRow>),
    /// Its queue's admission budget did not admit it back in flight: it stays
    /// interrupted under its interrupt lease, and the refusal is counted in
    /// `queue_deferrals`.
    Deferred(Deferral),
}

statement! {
    /// Interrupt (`$1` todo, `$2` endpoint, `$3` the interrupted state, `$4` wait seconds,
    /// `$5` reason, `$6` the lease token's hash or null).
    static INTERRUPT = "WITH moved AS ( \
               UPDATE todos t SET state = $3, lease_expires_at = NULL, \
                 interrupt_expires_at = now() + $4 * interval '1 second', interrupt_wait_seconds = $4, \
                 interrupt_reason = $5, updated_at = now() \
               WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' COLLATE \"C\" \
                 AND ($6::bytea IS NULL OR t.lease_token_hash = $6) \
               RETURNING t.*) \
             SELECT * FROM moved";

    /// Resume (`$1` todo, `$2` endpoint, `$3` lease seconds, `$4` the lease token's hash or
    /// null) of a todo whose queue has no budget; one that has is locked, looked at and left
    /// as it was (`budgeted`), for [`admit_resume`].
    static RESUME_UNBUDGETED = format!(
        "WITH target AS (SELECT t.id, EXISTS (SELECT 1 FROM queue_admission a \
             WHERE a.endpoint_id = t.endpoint_id AND a.queue = t.queue) AS budgeted \
           FROM todos t WHERE t.id = $1 AND t.endpoint_id = $2 AND {RESUMABLE} FOR UPDATE OF t), \
         moved AS ( \
           UPDATE todos t SET state = 'claimed', lease_expires_at = now() + $3 * interval '1 second', \
             interrupt_expires_at = NULL, interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
             attempt_heartbeat_at = now(), updated_at = now() \
           FROM target g WHERE t.id = g.id AND NOT g.budgeted \
           RETURNING t.*) \
         SELECT coalesce((SELECT budgeted FROM target), false) AS budgeted, m.* \
         FROM (SELECT 1) one LEFT JOIN moved m ON true"
    );
}
