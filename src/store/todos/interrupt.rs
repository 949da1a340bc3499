//! Interrupts: a claimed todo waits on a human or an outside event under an interrupt
//! lease that its holder must renew (heartbeat) or end (resume) before it lapses.

use diesel::sql_types::{Bytea, Int4, Nullable, Text, Uuid as SqlUuid};

use super::super::Store;
use super::{agent_transition, todo_query};
use crate::db::models::TodoRow;
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
        let sql = "WITH moved AS ( \
               UPDATE todos t SET state = $3, lease_expires_at = NULL, \
                 interrupt_expires_at = now() + $4 * interval '1 second', interrupt_wait_seconds = $4, \
                 interrupt_reason = $5, updated_at = now() \
               WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' AND t.state = 'claimed' \
                 AND ($6::bytea IS NULL OR t.lease_token_hash = $6) \
               RETURNING t.*), \
             att AS ( \
               UPDATE todo_attempts a SET lease_expires_at = moved.interrupt_expires_at \
               FROM moved WHERE a.todo_id = moved.id AND a.ended_at IS NULL) \
             SELECT * FROM moved";
        let mut conn = self.conn().await?;
        let todo: TodoRow = agent_transition(
            &mut conn,
            todo_query(sql.to_owned(), id)
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

    /// Resumes an interrupted todo: back to `claimed` with a fresh lease, same attempt.
    pub async fn resume(
        &self,
        endpoint: EndpointId,
        endpoint_default_lease: Option<i32>,
        id: TodoId,
        lease_ttl_seconds: Option<i32>,
        lease_token: Option<&str>,
    ) -> Result<TodoRow> {
        if let Some(l) = lease_ttl_seconds
            && !within(l, LEASE_SECONDS_RANGE)
        {
            return Err(Error::invalid("lease_ttl_seconds", "must be between 1 and 86400"));
        }
        let lease = lease_seconds(lease_ttl_seconds, endpoint_default_lease);
        let token_hash = lease_token.map(|t| sha256(t.as_bytes()));
        let sql = "WITH moved AS ( \
               UPDATE todos t SET state = 'claimed', lease_expires_at = now() + $3 * interval '1 second', \
                 interrupt_expires_at = NULL, interrupt_wait_seconds = NULL, interrupt_reason = NULL, \
                 updated_at = now() \
               WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' \
                 AND t.state IN ('input_required', 'auth_required') \
                 AND ($4::bytea IS NULL OR t.lease_token_hash = $4) \
               RETURNING t.*), \
             att AS ( \
               UPDATE todo_attempts a SET lease_expires_at = moved.lease_expires_at, last_heartbeat_at = now() \
               FROM moved WHERE a.todo_id = moved.id AND a.ended_at IS NULL) \
             SELECT * FROM moved";
        let mut conn = self.conn().await?;
        let todo: TodoRow = agent_transition(
            &mut conn,
            todo_query(sql.to_owned(), id)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Int4, _>(lease)
                .bind::<Nullable<Bytea>, _>(token_hash.map(|h| h.to_vec())),
            endpoint,
            id,
            token_hash,
            "interrupted",
        )
        .await?;
        Ok(todo)
    }
}
