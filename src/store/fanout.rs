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

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::Store;
use super::tenancy::OwnerRef;
use crate::db::statement::{Statement, statement};
use crate::domain::ids::{EndpointId, HumanId, ScopeId};
use crate::error::{Error, Result};

/// How a grant's reference is stored and resolved: its kind (`grantee_kind`), the name
/// it keys on, and the statements of its grant by scope, if the account exists.
fn reference(owner: &OwnerRef) -> (&'static str, &str, &'static ByScope) {
    match owner {
        OwnerRef::Human(email) => ("human", email, &HUMAN),
        OwnerRef::Team(team) => ("team", team, &TEAM),
    }
}

/// The owner scope of the human whose email is `$2`, if there is one.
const HUMAN_SCOPE: &str =
    "SELECT s.id FROM humans h JOIN owner_scopes s ON s.human_id = h.id WHERE lower(h.email) = lower($2)";

/// The owner scope of the team named `$2`, if there is one.
const TEAM_SCOPE: &str =
    "SELECT s.id FROM teams t JOIN owner_scopes s ON s.team_id = t.id WHERE lower(t.name) = lower($2)";

/// The grant by scope to a kind of reference (`$1` endpoint, `$2` the name): made
/// (`$3` by whom) and withdrawn (`$3` the endpoint's scope).
struct ByScope {
    grant: &'static Statement,
    revoke: &'static Statement,
}

/// Grants by scope to a human.
static HUMAN: ByScope = ByScope { grant: &GRANT_TO_HUMAN, revoke: &REVOKE_FROM_HUMAN };

/// Grants by scope to a team.
static TEAM: ByScope = ByScope { grant: &GRANT_TO_TEAM, revoke: &REVOKE_FROM_TEAM };

/// The grant by scope to the owner scope `resolve` finds.
fn grant_sql(resolve: &str) -> String {
    format!(
        "INSERT INTO fanout_grants (endpoint_id, grantee_scope_id, granted_by) \
         SELECT $1, r.id, $3 FROM ({resolve}) r ON CONFLICT (endpoint_id, grantee_scope_id) DO NOTHING"
    )
}

/// The withdrawal of the grant by scope to the owner scope `resolve` finds.
fn revoke_sql(resolve: &str) -> String {
    format!(
        "DELETE FROM fanout_grants g USING endpoints e \
         WHERE g.endpoint_id = $1 AND e.id = g.endpoint_id AND e.scope_id = $3 AND g.grantee_scope_id IN ({resolve})"
    )
}

statement! {
    static GRANT_TO_HUMAN = built(|| grant_sql(HUMAN_SCOPE));
    static GRANT_TO_TEAM = built(|| grant_sql(TEAM_SCOPE));
    static REVOKE_FROM_HUMAN = built(|| revoke_sql(HUMAN_SCOPE));
    static REVOKE_FROM_TEAM = built(|| revoke_sql(TEAM_SCOPE));
    static GRANT_REF = "INSERT INTO fanout_grant_refs (endpoint_id, grantee_kind, grantee_key, granted_by) \
        SELECT e.id, $2, lower($3), $4 FROM endpoints e WHERE e.id = $1 AND e.scope_id = $5 \
        ON CONFLICT (endpoint_id, grantee_kind, grantee_key) \
        DO UPDATE SET granted_by = fanout_grant_refs.granted_by";
    static REVOKE_GRANT_REFS = "DELETE FROM fanout_grant_refs r USING endpoints e \
        WHERE r.endpoint_id = $1 AND e.id = r.endpoint_id AND e.scope_id = $4 \
        AND r.grantee_kind = $2 AND r.grantee_key = lower($3)";
    static FANOUT_TARGET_LIVE = "SELECT EXISTS (SELECT 1 FROM endpoints ep WHERE ep.id = $2 AND ep.state = 'active' \
        AND (ep.expires_at IS NULL OR ep.expires_at > now()) \
        AND (ep.scope_id = $1 \
        OR EXISTS (SELECT 1 FROM fanout_grants g WHERE g.endpoint_id = ep.id AND g.grantee_scope_id = $1) \
        OR EXISTS (SELECT 1 FROM fanout_grant_refs r JOIN owner_scopes s ON s.id = $1 \
        LEFT JOIN humans h ON h.id = s.human_id LEFT JOIN teams t ON t.id = s.team_id \
        WHERE r.endpoint_id = ep.id \
        AND ((r.grantee_kind = 'human' AND r.grantee_key = lower(h.email)) \
        OR (r.grantee_kind = 'team' AND r.grantee_key = lower(t.name)))))) AS ok";
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
        let (kind, name, by_scope) = reference(owner);
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let n = GRANT_REF
                .query()
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
            by_scope
                .grant
                .query()
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
        let (kind, name, by_scope) = reference(owner);
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            REVOKE_GRANT_REFS
                .query()
                .bind::<SqlUuid, _>(endpoint.0)
                .bind::<Text, _>(kind)
                .bind::<Text, _>(name)
                .bind::<SqlUuid, _>(scope.0)
                .execute(conn)
                .await?;
            by_scope
                .revoke
                .query()
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
        let row: Row = FANOUT_TARGET_LIVE
            .query()
            .bind::<SqlUuid, _>(scope.0)
            .bind::<SqlUuid, _>(endpoint.0)
            .one_row(&mut conn)
            .await?;
        Ok(row.ok)
    }
}
