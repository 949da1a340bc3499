//! Fan-out grants: which endpoints a webhook's owner may route deliveries onto. An
//! endpoint in the webhook's own scope always; another owner's endpoint only when its
//! owner has granted the webhook's scope.
//!
//! A grant names its grantee by reference (an email or `team:<name>`) and is kept
//! under that reference, lower-cased as the unique indexes on humans and teams compare
//! (`fanout_grant_refs`), whether or not the account exists: routing resolves it on
//! every delivery, so a grant to an address with no account takes effect once the
//! account exists. Granting and withdrawing run the same statements whether the grantee
//! exists or not and answer alike, so the route tells nobody who has an account. A
//! grantee that exists also gets the grant by scope (`fanout_grants`, which the
//! previous release routes by and where grants made before the references live).

use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::Store;
use super::tenancy::OwnerRef;
use crate::domain::ids::{EndpointId, HumanId, ScopeId};
use crate::error::{Error, Result};

/// How a grant's reference is stored and resolved: its kind (`grantee_kind`), the name
/// it keys on, and the statement that finds the owner scope it names (`$2` is the
/// name), if the account exists.
fn reference(owner: &OwnerRef) -> (&'static str, &str, &'static str) {
    match owner {
        OwnerRef::Human(email) => (
            "human",
            email,
            "SELECT s.id FROM humans h JOIN owner_scopes s ON s.human_id = h.id WHERE lower(h.email) = lower($2)",
        ),
        OwnerRef::Team(team) => (
            "team",
            team,
            "SELECT s.id FROM teams t JOIN owner_scopes s ON s.team_id = t.id WHERE lower(t.name) = lower($2)",
        ),
    }
}

impl Store {
    /// Lets webhooks of whoever `owner` names route onto `endpoint`, an endpoint of
    /// `scope` (idempotent), now if the account exists and else once it does; an
    /// endpoint outside `scope` is not found. The same two statements run whether or
    /// not the grantee exists.
    pub async fn grant_fanout(
        &self,
        scope: ScopeId,
        endpoint: EndpointId,
        owner: &OwnerRef,
        by: HumanId,
    ) -> Result<()> {
        let (kind, name, resolve) = reference(owner);
        let by_scope = format!(
            "INSERT INTO fanout_grants (endpoint_id, grantee_scope_id, granted_by) \
             SELECT $1, r.id, $3 FROM ({resolve}) r ON CONFLICT (endpoint_id, grantee_scope_id) DO NOTHING"
        );
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let n = diesel::sql_query(
                "INSERT INTO fanout_grant_refs (endpoint_id, grantee_kind, grantee_key, granted_by) \
                 SELECT e.id, $2, lower($3), $4 FROM endpoints e WHERE e.id = $1 AND e.scope_id = $5 \
                 ON CONFLICT (endpoint_id, grantee_kind, grantee_key) \
                 DO UPDATE SET granted_by = fanout_grant_refs.granted_by",
            )
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Text, _>(kind)
            .bind::<Text, _>(name)
            .bind::<SqlUuid, _>(by.0)
            .bind::<SqlUuid, _>(scope.0)
            .execute(conn)
            .await?;
            if n == 0 {
                return Err(Error::NotFound);
            }
            diesel::sql_query(by_scope)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Text, _>(name)
                .bind::<SqlUuid, _>(by.0)
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
    }

    /// Withdraws the grant on `endpoint`, an endpoint of `scope`, to whoever `owner`
    /// names: its reference and, if the account exists, its grant by scope. Withdrawing
    /// a grant that was never made is done, as is one to an account that does not
    /// exist; the same two statements run either way.
    pub async fn revoke_fanout(&self, scope: ScopeId, endpoint: EndpointId, owner: &OwnerRef) -> Result<()> {
        let (kind, name, resolve) = reference(owner);
        let by_scope = format!(
            "DELETE FROM fanout_grants g USING endpoints e \
             WHERE g.endpoint_id = $1 AND e.id = g.endpoint_id AND e.scope_id = $3 AND g.grantee_scope_id IN ({resolve})"
        );
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            diesel::sql_query(
                "DELETE FROM fanout_grant_refs r USING endpoints e \
                 WHERE r.endpoint_id = $1 AND e.id = r.endpoint_id AND e.scope_id = $4 \
                   AND r.grantee_kind = $2 AND r.grantee_key = lower($3)",
            )
            .bind::<SqlUuid, _>(endpoint.0)
            .bind::<Text, _>(kind)
            .bind::<Text, _>(name)
            .bind::<SqlUuid, _>(scope.0)
            .execute(conn)
            .await?;
            diesel::sql_query(by_scope)
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Text, _>(name)
                .bind::<SqlUuid, _>(scope.0)
                .execute(conn)
                .await?;
            Ok(())
        })
        .await
    }

    /// Whether a webhook owned by `scope` may put work on `endpoint` now: the endpoint
    /// is active and unexpired, and in `scope` or granted to it, by scope or by a
    /// reference that names `scope`'s human or team today. Checked when rules are saved
    /// and again on every delivery.
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
               AND (ep.scope_id = $1 \
                    OR EXISTS (SELECT 1 FROM fanout_grants g WHERE g.endpoint_id = ep.id AND g.grantee_scope_id = $1) \
                    OR EXISTS (SELECT 1 FROM fanout_grant_refs r JOIN owner_scopes s ON s.id = $1 \
                               LEFT JOIN humans h ON h.id = s.human_id LEFT JOIN teams t ON t.id = s.team_id \
                               WHERE r.endpoint_id = ep.id \
                                 AND ((r.grantee_kind = 'human' AND r.grantee_key = lower(h.email)) \
                                   OR (r.grantee_kind = 'team' AND r.grantee_key = lower(t.name)))))) AS ok",
        )
        .bind::<SqlUuid, _>(scope.0)
        .bind::<SqlUuid, _>(endpoint.0)
        .get_result(&mut conn)
        .await?;
        Ok(row.ok)
    }
}
