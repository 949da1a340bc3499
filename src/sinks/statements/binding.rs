//! The upgrade's part done by the application (issue 37): connections an earlier release
//! stored are bound to their destination (or left unbound, their sinks' messages held),
//! and fingerprints an earlier release wrote (unsalted SHA-256 prefixes) are recomputed
//! as keyed HMACs. Not a migration: the README's rules forbid a backfill there, and the
//! fingerprints need the master key.
//!
//! Idempotent and safe with several instances: each batch locks the rows it decides with
//! `FOR UPDATE SKIP LOCKED` and decides only rows still undecided (`bound IS NULL`, a
//! fingerprint not yet keyed), so two instances never decide one row twice and a second
//! pass finds nothing. It runs at start-up and then every few minutes, which picks up
//! rows instances of the previous release write during a rolling upgrade.

use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::connections::opened;
use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, ScopeId};
use crate::error::{Error, Result};
use crate::sinks::rules::destination::{Binding, SinkHistory, binding};
use crate::sinks::rules::vocabulary::ConnectionKind;
use crate::store::Store;
use crate::vault::{Vault, VaultError};

/// Rows one batch decides at most.
const BATCH: i64 = 100;

/// What one run of the pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BindingReport {
    /// Connections bound to a destination.
    pub bound: usize,
    /// Connections left unbound (their sinks' messages held).
    pub unbound: usize,
    /// Fingerprints recomputed (connections and webhook signing secrets).
    pub fingerprints: usize,
}

impl BindingReport {
    /// Rows the pass changed.
    pub fn changed(&self) -> usize {
        self.bound + self.unbound + self.fingerprints
    }
}

#[derive(QueryableByName)]
struct Undecided {
    #[diesel(sql_type = SqlUuid)]
    id: ConnectionId,
    #[diesel(sql_type = SqlUuid)]
    scope_id: ScopeId,
    #[diesel(sql_type = Text)]
    kind: ConnectionKind,
    #[diesel(sql_type = Nullable<Text>)]
    base_url: Option<String>,
    #[diesel(sql_type = Text)]
    secret: String,
    #[diesel(sql_type = Nullable<Bool>)]
    bound: Option<bool>,
    #[diesel(sql_type = Bool)]
    fingerprint_keyed: bool,
}

#[derive(QueryableByName)]
struct SinkOf {
    #[diesel(sql_type = SqlUuid)]
    connection_id: ConnectionId,
    #[diesel(sql_type = Text)]
    base_url: String,
    #[diesel(sql_type = Bool)]
    created_by_human: bool,
    #[diesel(sql_type = Nullable<Bool>)]
    changed_by_agent: Option<bool>,
}

statement! {
    static UNDECIDED_CONNECTIONS = "SELECT id, scope_id, kind, base_url, secret, bound, fingerprint_keyed FROM connections \
        WHERE (bound IS NULL OR NOT fingerprint_keyed) AND id > $1 \
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED";
    static WEBHOOK_SECRETS = "SELECT id, signing_secret FROM webhooks \
        WHERE signing_secret IS NOT NULL AND NOT secret_fingerprint_keyed AND id > $1 \
        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED";
    static SET_WEBHOOK_FINGERPRINT = "UPDATE webhooks SET secret_fingerprint = $2, secret_fingerprint_keyed = true WHERE id = $1";
}

impl Store {
    /// Binds or leaves unbound every connection an earlier release stored, and keys every
    /// fingerprint an earlier release wrote, in batches until none is left.
    pub async fn bind_earlier_connections(&self, vault: &Vault) -> Result<BindingReport> {
        let mut report = BindingReport::default();
        let mut after = uuid::Uuid::nil();
        loop {
            let (batch, last) = self.bind_batch(vault, after).await?;
            report.bound += batch.bound;
            report.unbound += batch.unbound;
            report.fingerprints += batch.fingerprints;
            match last {
                Some(last) => after = last,
                None => break,
            }
        }
        let mut after = uuid::Uuid::nil();
        while let Some((keyed, last)) = self.key_webhook_fingerprints(vault, after).await? {
            report.fingerprints += keyed;
            after = last;
        }
        Ok(report)
    }

    /// One batch of connections past `after` (by id); the last id it looked at, none when
    /// there was nothing left.
    async fn bind_batch(&self, vault: &Vault, after: uuid::Uuid) -> Result<(BindingReport, Option<uuid::Uuid>)> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let rows: Vec<Undecided> = UNDECIDED_CONNECTIONS
                .query()
                .bind::<SqlUuid, _>(after)
                .bind::<diesel::sql_types::BigInt, _>(BATCH)
                .load(conn)
                .await?;
            let Some(last) = rows.last().map(|r| r.id.0) else { return Ok((BindingReport::default(), None)) };
            let sinks = sinks_of(conn, &rows).await?;
            let agent_scopes = scopes_with_agent_writers(conn, &rows).await?;
            let mut report = BindingReport::default();
            for row in rows.iter().filter(|r| r.bound.is_none()) {
                let outcome = match (row.kind, &row.base_url) {
                    // A cairn connection always had its own destination, set by a human.
                    (ConnectionKind::Cairn, Some(url)) => Binding::Bound(url.clone()),
                    (ConnectionKind::Cairn, None) => Binding::Unbound("no_destination"),
                    _ => {
                        let history: Vec<SinkHistory> = sinks
                            .iter()
                            .filter(|s| s.connection_id == row.id)
                            .map(|s| SinkHistory {
                                base_url: s.base_url.clone(),
                                created_by_human: s.created_by_human,
                                changed_by_agent: s.changed_by_agent,
                            })
                            .collect();
                        binding(&history, agent_scopes.contains(&row.scope_id))
                    }
                };
                match outcome {
                    Binding::Bound(destination) => {
                        set_binding(conn, row.id, Some(&destination)).await?;
                        report.bound += 1;
                    }
                    Binding::Unbound(reason) => {
                        tracing::warn!(
                            connection = %row.id,
                            reason,
                            "connection left unbound: its sinks' messages are held until an admin rotates it \
                             with a base_url"
                        );
                        set_binding(conn, row.id, None).await?;
                        report.unbound += 1;
                    }
                }
            }
            for row in rows.iter().filter(|r| !r.fingerprint_keyed) {
                if key_connection_fingerprint(conn, vault, row).await? {
                    report.fingerprints += 1;
                }
            }
            Ok((report, Some(last)))
        })
        .await
    }

    /// Keys one batch of webhook signing-secret fingerprints past `after`; how many and the
    /// last id looked at, none when there was nothing left.
    async fn key_webhook_fingerprints(&self, vault: &Vault, after: uuid::Uuid) -> Result<Option<(usize, uuid::Uuid)>> {
        #[derive(QueryableByName)]
        struct Signed {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
            #[diesel(sql_type = Text)]
            signing_secret: String,
        }
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let rows: Vec<Signed> = WEBHOOK_SECRETS
                .query()
                .bind::<SqlUuid, _>(after)
                .bind::<diesel::sql_types::BigInt, _>(BATCH)
                .load(conn)
                .await?;
            let Some(last) = rows.last().map(|r| r.id) else { return Ok(None) };
            let mut keyed = 0;
            for row in &rows {
                let Some(print) = keyed_fingerprint(vault, &row.signing_secret, "webhook", row.id)? else {
                    continue;
                };
                SET_WEBHOOK_FINGERPRINT
                    .query()
                    .bind::<SqlUuid, _>(row.id)
                    .bind::<Text, _>(&print)
                    .execute(conn)
                    .await?;
                keyed += 1;
            }
            Ok(Some((keyed, last)))
        })
        .await
    }
}

statement! {
    static SINK_BINDING = "SELECT connection_id, base_url, created_by IS NOT NULL AS created_by_human, changed_by_agent FROM sinks \
        WHERE connection_id = ANY($1) ORDER BY id FOR SHARE";
}

/// The sinks of `rows`' connections, locked against a change while the batch decides.
async fn sinks_of(conn: &mut AsyncPgConnection, rows: &[Undecided]) -> Result<Vec<SinkOf>> {
    let ids: Vec<ConnectionId> = rows.iter().filter(|r| r.bound.is_none()).map(|r| r.id).collect();
    Ok(SINK_BINDING.query().bind::<Array<SqlUuid>, _>(&ids).load(conn).await?)
}

statement! {
    static NOTIFYING_SCOPES = "SELECT DISTINCT scope_id FROM endpoints WHERE scope_id = ANY($1) AND 'notifications' = ANY(grants)";
}

/// The scopes of `rows` one of whose endpoints holds the `notifications` grant: a sink an
/// earlier release wrote there may have been changed by an agent, and nothing recorded it.
async fn scopes_with_agent_writers(conn: &mut AsyncPgConnection, rows: &[Undecided]) -> Result<Vec<ScopeId>> {
    #[derive(QueryableByName)]
    struct Scope {
        #[diesel(sql_type = SqlUuid)]
        scope_id: ScopeId,
    }
    let scopes: Vec<ScopeId> = rows.iter().filter(|r| r.bound.is_none()).map(|r| r.scope_id).collect();
    let found: Vec<Scope> = NOTIFYING_SCOPES.query().bind::<Array<SqlUuid>, _>(&scopes).load(conn).await?;
    Ok(found.into_iter().map(|s| s.scope_id).collect())
}

statement! {
    static SET_BOUND = "UPDATE connections SET bound = $2::text IS NOT NULL, base_url = COALESCE($2, base_url) WHERE id = $1";
}

/// Binds `id` to `destination`, or marks it unbound (none).
async fn set_binding(conn: &mut AsyncPgConnection, id: ConnectionId, destination: Option<&str>) -> Result<()> {
    SET_BOUND.query().bind::<SqlUuid, _>(id).bind::<Nullable<Text>, _>(destination).execute(conn).await?;
    Ok(())
}

statement! {
    static SET_FINGERPRINT = "UPDATE connections SET fingerprint = $2, fingerprint_keyed = true WHERE id = $1";
}

/// Keys `row`'s fingerprint; whether it did (not without the master key, or when the
/// secret does not open under it: logged, left as it was).
async fn key_connection_fingerprint(conn: &mut AsyncPgConnection, vault: &Vault, row: &Undecided) -> Result<bool> {
    let Some(print) = keyed_fingerprint(vault, &row.secret, "connection", row.id.0)? else { return Ok(false) };
    SET_FINGERPRINT.query().bind::<SqlUuid, _>(row.id).bind::<Text, _>(&print).execute(conn).await?;
    Ok(true)
}

/// The keyed fingerprint of a sealed secret; none (logged) when it cannot be opened.
fn keyed_fingerprint(vault: &Vault, sealed: &str, what: &'static str, id: uuid::Uuid) -> Result<Option<String>> {
    let secret = match opened(vault, sealed) {
        Ok(secret) => secret,
        Err(e) => {
            tracing::warn!(what, %id, error = %e, "a stored secret did not open: its fingerprint stays unkeyed");
            return Ok(None);
        }
    };
    match vault.fingerprint(secret.as_bytes()) {
        Ok(print) => Ok(Some(print)),
        Err(VaultError::EncryptionRequired) => Ok(None),
        Err(e) => Err(Error::internal_from("fingerprinting a stored secret", e)),
    }
}
