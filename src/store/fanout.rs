//! Fan-out grants: which endpoints a webhook's owner may route deliveries onto. An
//! endpoint in the webhook's own scope always; another owner's endpoint only when its
//! owner has granted the webhook's scope.

use diesel::prelude::*;
use diesel::sql_types::{Bool, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use crate::domain::ids::{EndpointId, HumanId, ScopeId};
use crate::error::{Error, Result};

impl Store {
    /// Lets webhooks of `grantee` route onto `endpoint` (idempotent).
    pub async fn grant_fanout(&self, endpoint: EndpointId, grantee: ScopeId, by: HumanId) -> Result<()> {
        let mut conn = self.conn().await?;
        diesel::sql_query(
            "INSERT INTO fanout_grants (endpoint_id, grantee_scope_id, granted_by) VALUES ($1, $2, $3) \
             ON CONFLICT (endpoint_id, grantee_scope_id) DO NOTHING",
        )
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<SqlUuid, _>(grantee.0)
        .bind::<SqlUuid, _>(by.0)
        .execute(&mut conn)
        .await?;
        Ok(())
    }

    /// Withdraws a grant; unknown grants are not found.
    pub async fn revoke_fanout(&self, endpoint: EndpointId, grantee: ScopeId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = diesel::sql_query("DELETE FROM fanout_grants WHERE endpoint_id = $1 AND grantee_scope_id = $2")
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<SqlUuid, _>(grantee.0)
            .execute(&mut conn)
            .await?;
        if n == 0 { Err(Error::NotFound) } else { Ok(()) }
    }

    /// Whether a webhook owned by `scope` may put work on `endpoint` now: the endpoint
    /// is active and unexpired, and in `scope` or granted to it. Checked when rules are
    /// saved and again on every delivery.
    pub async fn may_fan_out(&self, scope: ScopeId, endpoint: EndpointId) -> Result<bool> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = Bool)]
            ok: bool,
        }
        let mut conn = self.conn().await?;
        let row: Row = diesel::sql_query(
            "SELECT EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = $2 AND ep.state = 'active' \
               AND (ep.expires_at IS NULL OR ep.expires_at > now()) \
               AND (ep.scope_id = $1 OR EXISTS (SELECT 1 FROM fanout_grants g \
                                                 WHERE g.endpoint_id = ep.id AND g.grantee_scope_id = $1))) AS ok",
        )
        .bind::<SqlUuid, _>(scope.0)
        .bind::<SqlUuid, _>(endpoint.0)
        .get_result(&mut conn)
        .await?;
        Ok(row.ok)
    }
}
