//! Managing hooks: create under the per-endpoint ceiling, list, rotate the signing
//! secret, switch on and off, delete. Each query is limited by a [`HookReach`]; a hook
//! outside it answers like one that does not exist.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Int4, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::{CHANGE_SQL, HOOK_COLUMNS, HookReach, HookRow, REACH_SQL};
use crate::db::schema::notify_hooks;
use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, HookId, ScopeId};
use crate::domain::tokens::mint_signing_secret;
use crate::error::{Error, Result};
use crate::hooks::rules::hook::{HookSpec, PREVIOUS_SECRET_GRACE_HOURS};
use crate::store::Store;
use crate::vault::{Vault, VaultError};

/// A created hook and its signing secret, shown once (never in the Debug form).
pub struct CreatedHook {
    /// The hook.
    pub hook: HookRow,
    /// The `whsec_…` secret receivers verify with.
    pub signing_secret: String,
}

impl std::fmt::Debug for CreatedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedHook").field("hook", &self.hook).finish_non_exhaustive()
    }
}

/// A rotated hook and its new signing secret, shown once (never in the Debug form).
pub struct RotatedHook {
    /// The hook after rotation (re-enabled if failures had disabled it).
    pub hook: HookRow,
    /// The new `whsec_…` secret.
    pub signing_secret: String,
}

impl std::fmt::Debug for RotatedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotatedHook").field("hook", &self.hook).finish_non_exhaustive()
    }
}

/// Mints a signing secret and seals it; without a vault key nothing is stored.
fn minted_secret(vault: &Vault) -> Result<(String, String)> {
    let secret = mint_signing_secret();
    let sealed = vault.seal(secret.as_bytes()).map_err(|e| match e {
        VaultError::EncryptionRequired => Error::EncryptionRequired,
        other => Error::internal_from("sealing a hook secret", other),
    })?;
    Ok((secret, sealed))
}

statement! {
    static LOCK_ENDPOINT = "SELECT state = 'active' AND (expires_at IS NULL OR expires_at > now()) AS live \
        FROM endpoints WHERE id = $1 AND scope_id = $2 FOR NO KEY UPDATE";
    static COUNT_HOOKS = "SELECT count(*) AS n FROM notify_hooks WHERE endpoint_id = $1";
    static ENDPOINT_IN_REACH = "SELECT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = $3 AND e.scope_id = ANY($1) \
        AND ($2::uuid IS NULL OR e.id = $2)) AS found";
    static HOOKS_OF_ENDPOINT = format!(
        "SELECT {HOOK_COLUMNS} FROM notify_hooks WHERE notify_hooks.endpoint_id = $3 AND {REACH_SQL} \
        ORDER BY notify_hooks.created_at, notify_hooks.id"
    );
    static HOOK_IN_REACH = format!(
        "SELECT {HOOK_COLUMNS}, ep.scope_id FROM notify_hooks JOIN endpoints ep ON ep.id = notify_hooks.endpoint_id \
        WHERE notify_hooks.id = $3 AND {REACH_SQL}"
    );
    static ROTATE_HOOK = format!(
        "UPDATE notify_hooks SET previous_secret = secret, \
        previous_valid_until = now() + make_interval(hours => $5), secret = $4, \
        enabled = enabled OR disabled_reason = 'consecutive_failures', \
        consecutive_failures = CASE WHEN disabled_reason = 'consecutive_failures' THEN 0 \
        ELSE consecutive_failures END, \
        disabled_reason = CASE WHEN disabled_reason = 'consecutive_failures' THEN NULL \
        ELSE disabled_reason END, \
        updated_at = now() \
        WHERE notify_hooks.id = $3 AND {CHANGE_SQL} RETURNING {HOOK_COLUMNS}"
    );
    static SET_HOOK_ENABLED = format!(
        "UPDATE notify_hooks SET enabled = $4, \
        disabled_reason = CASE WHEN $4 THEN NULL ELSE 'operator' END, \
        consecutive_failures = CASE WHEN $4 THEN 0 ELSE consecutive_failures END, \
        updated_at = now() \
        WHERE notify_hooks.id = $3 AND {CHANGE_SQL} RETURNING {HOOK_COLUMNS}"
    );
    static DELETE_HOOK = format!("DELETE FROM notify_hooks WHERE notify_hooks.id = $3 AND {CHANGE_SQL}");
}

impl Store {
    /// Creates a hook on `endpoint` (owned by `owner`), unless the endpoint already
    /// holds `max` hooks. The endpoint row is locked while counting, so racing creates
    /// never pass the ceiling together. The secret is sealed by `vault` (refused without
    /// a key) and returned once. `by_agent`: an agent created it through `notify_hooks`
    /// (only such a hook may an agent rotate or delete later).
    pub async fn create_hook(
        &self,
        vault: &Vault,
        owner: ScopeId,
        endpoint: EndpointId,
        spec: &HookSpec,
        max: u32,
        by_agent: bool,
    ) -> Result<CreatedHook> {
        #[derive(QueryableByName)]
        struct Locked {
            #[diesel(sql_type = Bool)]
            live: bool,
        }
        #[derive(QueryableByName)]
        struct Count {
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let (signing_secret, sealed) = minted_secret(vault)?;
        let mut conn = self.conn().await?;
        let hook = conn
            .transaction::<_, Error, _>(async move |conn| {
                let locked: Locked = LOCK_ENDPOINT.query()
                .bind::<SqlUuid, _>(endpoint)
                .bind::<SqlUuid, _>(owner)
                .one_row(conn)
                .await
                .optional()?
                .ok_or(Error::NotFound)?;
                // A revoked or expired endpoint has no work left to announce.
                if !locked.live {
                    return Err(Error::Conflict("the endpoint is revoked or expired".into()));
                }
                let used: Count = COUNT_HOOKS.query()
                    .bind::<SqlUuid, _>(endpoint)
                    .one_row(conn)
                    .await?;
                if used.n >= i64::from(max) {
                    return Err(Error::Conflict(format!(
                        "ceiling_exceeded: an endpoint may hold at most {max} notify hooks (SWITCHBOARD_NOTIFY_HOOK_MAX)"
                    )));
                }
                Ok(diesel::insert_into(notify_hooks::table)
                    .values((
                        notify_hooks::id.eq(HookId::new()),
                        notify_hooks::endpoint_id.eq(endpoint),
                        notify_hooks::url.eq(spec.url()),
                        notify_hooks::queues.eq(spec.queues()),
                        notify_hooks::secret.eq(&sealed),
                        notify_hooks::created_by_agent.eq(Some(by_agent)),
                    ))
                    .returning(HookRow::as_returning())
                    .one_row(conn)
                    .await?)
            })
            .await?;
        Ok(CreatedHook { hook, signing_secret })
    }

    /// The hooks of `endpoint`, oldest first; not found unless the endpoint is in reach.
    pub async fn list_hooks(&self, reach: HookReach<'_>, endpoint: EndpointId) -> Result<Vec<HookRow>> {
        #[derive(QueryableByName)]
        struct Found {
            #[diesel(sql_type = Bool)]
            found: bool,
        }
        let (scopes, only) = reach.binds();
        let mut conn = self.conn().await?;
        let reachable: Found = ENDPOINT_IN_REACH
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(endpoint)
            .one_row(&mut conn)
            .await?;
        if !reachable.found {
            return Err(Error::NotFound);
        }
        Ok(HOOKS_OF_ENDPOINT
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(endpoint)
            .load(&mut conn)
            .await?)
    }

    /// One hook in reach, with the owner scope of its endpoint (for role checks).
    pub async fn hook_in(&self, reach: HookReach<'_>, id: HookId) -> Result<(HookRow, ScopeId)> {
        #[derive(QueryableByName)]
        struct Scoped {
            #[diesel(embed)]
            hook: HookRow,
            #[diesel(sql_type = SqlUuid)]
            scope_id: ScopeId,
        }
        let (scopes, only) = reach.binds();
        let mut conn = self.conn().await?;
        let found: Option<Scoped> = HOOK_IN_REACH
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(id)
            .one_row(&mut conn)
            .await
            .optional()?;
        found.map(|s| (s.hook, s.scope_id)).ok_or(Error::NotFound)
    }

    /// Replaces a hook's signing secret. The old one keeps signing alongside for 24 h
    /// (dual signing), replacing any older previous secret. A hook that failures had
    /// disabled is enabled again with a clean count; one an operator disabled stays off.
    pub async fn rotate_hook(&self, vault: &Vault, reach: HookReach<'_>, id: HookId) -> Result<RotatedHook> {
        let (signing_secret, sealed) = minted_secret(vault)?;
        let (scopes, only) = reach.binds();
        let mut conn = self.conn().await?;
        let hook: Option<HookRow> = ROTATE_HOOK
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(id)
            .bind::<Text, _>(&sealed)
            .bind::<Int4, _>(PREVIOUS_SECRET_GRACE_HOURS)
            .one_row(&mut conn)
            .await
            .optional()?;
        hook.map(|hook| RotatedHook { hook, signing_secret }).ok_or(Error::NotFound)
    }

    /// Switches a hook on (its failure count starts over) or off by hand
    /// (`disabled_reason = operator`, which a rotation does not undo).
    pub async fn set_hook_enabled(&self, reach: HookReach<'_>, id: HookId, enabled: bool) -> Result<HookRow> {
        let (scopes, only) = reach.binds();
        let mut conn = self.conn().await?;
        let hook: Option<HookRow> = SET_HOOK_ENABLED
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(id)
            .bind::<Bool, _>(enabled)
            .one_row(&mut conn)
            .await
            .optional()?;
        hook.ok_or(Error::NotFound)
    }

    /// Deletes a hook; its secrets go with it.
    pub async fn delete_hook(&self, reach: HookReach<'_>, id: HookId) -> Result<()> {
        let (scopes, only) = reach.binds();
        let mut conn = self.conn().await?;
        let n = DELETE_HOOK
            .query()
            .bind::<Array<SqlUuid>, _>(&scopes)
            .bind::<Nullable<SqlUuid>, _>(only)
            .bind::<SqlUuid, _>(id)
            .execute(&mut conn)
            .await?;
        if n == 0 { Err(Error::NotFound) } else { Ok(()) }
    }
}
