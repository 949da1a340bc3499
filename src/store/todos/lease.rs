//! Heartbeats: extend a claim's lease, or renew an interrupted todo's interrupt lease.

use diesel::sql_types::{Bytea, Int4, Nullable, Uuid as SqlUuid};

use super::super::Store;
use super::{agent_transition, todo_query};
use crate::db::models::TodoRow;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, TodoId};
use crate::domain::tokens::sha256;
use crate::domain::transitions::{LEASE_SECONDS_RANGE, lease_seconds, within};
use crate::error::{Error, Result};

impl Store {
    /// Extends the lease of a claimed todo (per-call ttl, else the endpoint default,
    /// else 300 s), or renews an interrupted todo's interrupt lease (per-call ttl, else
    /// the wait it was interrupted with). The attempt records the heartbeat.
    pub async fn heartbeat(
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
        let mut conn = self.conn().await?;
        let todo: TodoRow = agent_transition(
            &mut conn,
            todo_query(&HEARTBEAT, id)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Int4, _>(lease)
                .bind::<Nullable<Int4>, _>(lease_ttl_seconds)
                .bind::<Nullable<Bytea>, _>(token_hash.as_ref().map(|h| h.as_slice())),
            endpoint,
            id,
            token_hash,
            "claimed or interrupted",
        )
        .await?;
        Ok(todo)
    }
}

statement! {
    /// A heartbeat (`$1` todo, `$2` endpoint, `$3` lease seconds, `$4` the per-call ttl or
    /// null, `$5` the lease token's hash or null): a claim's lease, or an interrupt lease.
    static HEARTBEAT = "WITH hb AS ( \
               UPDATE todos t SET \
                 lease_expires_at = CASE WHEN t.state = 'claimed' THEN now() + $3 * interval '1 second' END, \
                 interrupt_expires_at = CASE WHEN t.state <> 'claimed' \
                   THEN now() + COALESCE($4, t.interrupt_wait_seconds) * interval '1 second' END, \
                 attempt_heartbeat_at = now(), updated_at = now() \
               WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> 'quarantine' \
                 AND t.state COLLATE \"C\" IN ('claimed', 'input_required', 'auth_required') \
                 AND ($5::bytea IS NULL OR t.lease_token_hash = $5) \
               RETURNING t.*) \
             SELECT * FROM hb";
}
