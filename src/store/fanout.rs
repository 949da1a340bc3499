//! Fan-out grants: which endpoints a webhook's owner may route deliveries onto. An
//! endpoint in the webhook's own scope always; another owner's endpoint only when its
//! owner has granted the webhook's scope.
//!
//! A grant names its grantee by email or `team:<name>`, and the admin granting may only
//! name principals they already share a team with (or who already hold a grant on the
//! endpoint, so it can be withdrawn): anyone else, existing or not, is not found, by
//! the same statement, so the route tells nobody who has an account.

use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::Store;
use super::tenancy::OwnerRef;
use crate::domain::ids::{EndpointId, HumanId, ScopeId};
use crate::error::{Error, Result};

/// A human by email who is `$2` or shares a team with `$2`, or already holds a grant
/// on endpoint `$3`.
const SHARED_HUMAN: &str = "SELECT s.id FROM owner_scopes s JOIN humans h ON h.id = s.human_id \
     WHERE lower(h.email) = lower($1) \
       AND (h.id = $2 \
            OR EXISTS (SELECT 1 FROM team_members mine JOIN team_members theirs ON theirs.team_id = mine.team_id \
                       WHERE mine.human_id = $2 AND theirs.human_id = h.id) \
            OR EXISTS (SELECT 1 FROM fanout_grants g WHERE g.endpoint_id = $3 AND g.grantee_scope_id = s.id))";

/// A team by name that `$2` belongs to, or that already holds a grant on endpoint `$3`.
const SHARED_TEAM: &str = "SELECT s.id FROM owner_scopes s JOIN teams t ON t.id = s.team_id \
     WHERE lower(t.name) = lower($1) \
       AND (EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = t.id AND m.human_id = $2) \
            OR EXISTS (SELECT 1 FROM fanout_grants g WHERE g.endpoint_id = $3 AND g.grantee_scope_id = s.id))";

impl Store {
    /// The scope `owner` names, if `caller` may name it in a grant on `endpoint`: the
    /// caller themselves, a human in one of the caller's teams, one of the caller's
    /// teams, or a grantee the endpoint already has. `None` alike for a principal that
    /// does not exist and for one the caller shares nothing with.
    pub async fn fanout_grantee(
        &self,
        owner: &OwnerRef,
        caller: HumanId,
        endpoint: EndpointId,
    ) -> Result<Option<ScopeId>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
        }
        let (sql, name) = match owner {
            OwnerRef::Human(email) => (SHARED_HUMAN, email),
            OwnerRef::Team(team) => (SHARED_TEAM, team),
        };
        let mut conn = self.conn().await?;
        let row: Option<Row> = diesel::sql_query(sql)
            .bind::<Text, _>(name)
            .bind::<SqlUuid, _>(caller.0)
            .bind::<SqlUuid, _>(endpoint.0)
            .get_result(&mut conn)
            .await
            .optional()?;
        Ok(row.map(|r| ScopeId(r.id)))
    }

    /// Lets webhooks of `grantee` route onto `endpoint`, an endpoint of `scope`
    /// (idempotent); an endpoint outside `scope` is not found.
    pub async fn grant_fanout(
        &self,
        scope: ScopeId,
        endpoint: EndpointId,
        grantee: ScopeId,
        by: HumanId,
    ) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = diesel::sql_query(
            "INSERT INTO fanout_grants (endpoint_id, grantee_scope_id, granted_by) \
             SELECT e.id, $2, $3 FROM endpoints e WHERE e.id = $1 AND e.scope_id = $4 \
             ON CONFLICT (endpoint_id, grantee_scope_id) DO UPDATE SET granted_by = fanout_grants.granted_by",
        )
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<SqlUuid, _>(grantee.0)
        .bind::<SqlUuid, _>(by.0)
        .bind::<SqlUuid, _>(scope.0)
        .execute(&mut conn)
        .await?;
        if n == 0 { Err(Error::NotFound) } else { Ok(()) }
    }

    /// Withdraws a grant on `endpoint`, an endpoint of `scope`; an unknown grant, or
    /// an endpoint outside `scope`, is not found.
    pub async fn revoke_fanout(&self, scope: ScopeId, endpoint: EndpointId, grantee: ScopeId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = diesel::sql_query(
            "DELETE FROM fanout_grants g USING endpoints e \
             WHERE g.endpoint_id = $1 AND g.grantee_scope_id = $2 AND e.id = g.endpoint_id AND e.scope_id = $3",
        )
        .bind::<SqlUuid, _>(endpoint.0)
        .bind::<SqlUuid, _>(grantee.0)
        .bind::<SqlUuid, _>(scope.0)
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
