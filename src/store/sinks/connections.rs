//! Connections: an owner's credential for Gotify, Apprise or Cairn, sealed with a data
//! key of its own (`enc:v2`) and never read back by any route. Only its fingerprint
//! (first 12 hex of SHA-256) is shown.

use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use super::super::Store;
use super::{still_referenced, unique_violation};
use crate::domain::ids::{ConnectionId, HumanId, ScopeId};
use crate::domain::sinks::ConnectionKind;
use crate::error::{Error, Result};
use crate::vault::{Vault, VaultError, fingerprint};

/// A connection as listed: never its secret.
#[derive(Debug, Clone, QueryableByName)]
pub struct ConnectionRow {
    /// The connection.
    #[diesel(sql_type = SqlUuid)]
    pub id: ConnectionId,
    /// Its owner scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// Its name, unique in the scope.
    #[diesel(sql_type = Text)]
    pub name: String,
    /// What it is a credential for.
    #[diesel(sql_type = Text)]
    pub kind: ConnectionKind,
    /// Where a cairn connection publishes (none for gotify and apprise).
    #[diesel(sql_type = Nullable<Text>)]
    pub base_url: Option<String>,
    /// First 12 hex characters of SHA-256 of the secret.
    #[diesel(sql_type = Text)]
    pub fingerprint: String,
    /// When it was made.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    /// When its secret was last replaced.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub rotated_at: Option<DateTime<Utc>>,
}

/// What a new connection is to be. Its Debug form hides the secret.
pub struct NewConnection {
    /// The owner scope.
    pub scope: ScopeId,
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: ConnectionKind,
    /// The secret (a Gotify application token, an Apprise config key or URLs, a Cairn token).
    pub secret: String,
    /// Required for cairn.
    pub base_url: Option<String>,
    /// Who made it.
    pub by: HumanId,
}

impl std::fmt::Debug for NewConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewConnection")
            .field("scope", &self.scope)
            .field("name", &self.name)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

const COLUMNS: &str = "id, scope_id, name, kind, base_url, fingerprint, created_at, rotated_at";

/// Seals a connection secret; without a vault key nothing is stored.
fn sealed(vault: &Vault, secret: &str) -> Result<(String, String)> {
    let stored = vault.seal_enveloped(secret.as_bytes()).map_err(|e| match e {
        VaultError::EncryptionRequired => Error::EncryptionRequired,
        other => Error::internal_from("sealing a connection secret", other),
    })?;
    Ok((stored, fingerprint(secret.as_bytes())))
}

impl Store {
    /// Stores a connection, its secret sealed by `vault` (refused without a key, and
    /// nothing stored). A name already used in the scope is a conflict.
    pub async fn create_connection(&self, vault: &Vault, new: NewConnection) -> Result<ConnectionRow> {
        let (secret, print) = sealed(vault, &new.secret)?;
        let mut conn = self.conn().await?;
        let row = diesel::sql_query(format!(
            "INSERT INTO connections (id, scope_id, name, kind, base_url, secret, fingerprint, created_by) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING {COLUMNS}"
        ))
        .bind::<SqlUuid, _>(ConnectionId::new())
        .bind::<SqlUuid, _>(new.scope)
        .bind::<Text, _>(&new.name)
        .bind::<Text, _>(new.kind)
        .bind::<Nullable<Text>, _>(new.base_url.as_deref())
        .bind::<Text, _>(&secret)
        .bind::<Text, _>(&print)
        .bind::<SqlUuid, _>(new.by)
        .get_result(&mut conn)
        .await;
        match row {
            Err(e) if unique_violation(&e) => {
                Err(Error::Conflict(format!("a connection named {:?} already exists for this owner", new.name)))
            }
            other => Ok(other?),
        }
    }

    /// The connections in `scopes`, by name.
    pub async fn list_connections(&self, scopes: &[ScopeId]) -> Result<Vec<ConnectionRow>> {
        let mut conn = self.conn().await?;
        Ok(diesel::sql_query(format!("SELECT {COLUMNS} FROM connections WHERE scope_id = ANY($1) ORDER BY name, id"))
            .bind::<Array<SqlUuid>, _>(scopes)
            .load(&mut conn)
            .await?)
    }

    /// One connection in `scopes`, else not found.
    pub async fn connection_in(&self, scopes: &[ScopeId], id: ConnectionId) -> Result<ConnectionRow> {
        let mut conn = self.conn().await?;
        Ok(diesel::sql_query(format!("SELECT {COLUMNS} FROM connections WHERE id = $1 AND scope_id = ANY($2)"))
            .bind::<SqlUuid, _>(id)
            .bind::<Array<SqlUuid>, _>(scopes)
            .get_result(&mut conn)
            .await?)
    }

    /// Replaces the secret of `id`, a connection of `scope` (else not found).
    pub async fn rotate_connection(
        &self,
        vault: &Vault,
        scope: ScopeId,
        id: ConnectionId,
        secret: &str,
    ) -> Result<ConnectionRow> {
        let (stored, print) = sealed(vault, secret)?;
        let mut conn = self.conn().await?;
        Ok(diesel::sql_query(format!(
            "UPDATE connections SET secret = $3, fingerprint = $4, rotated_at = now() \
             WHERE id = $1 AND scope_id = $2 RETURNING {COLUMNS}"
        ))
        .bind::<SqlUuid, _>(id)
        .bind::<SqlUuid, _>(scope)
        .bind::<Text, _>(&stored)
        .bind::<Text, _>(&print)
        .get_result(&mut conn)
        .await?)
    }

    /// Deletes `id`, a connection of `scope` (else not found); refused (conflict)
    /// while a sink uses it.
    pub async fn delete_connection(&self, scope: ScopeId, id: ConnectionId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = diesel::sql_query("DELETE FROM connections WHERE id = $1 AND scope_id = $2")
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(scope)
            .execute(&mut conn)
            .await;
        match n {
            Err(e) if still_referenced(&e) => {
                Err(Error::Conflict("a sink uses this connection: delete or change the sink first".into()))
            }
            Ok(0) => Err(Error::NotFound),
            other => other.map(drop).map_err(Error::from),
        }
    }

    /// The sealed secret of `id`, a connection of `scope` (for the outbound call that
    /// needs it; never for an answer).
    pub async fn connection_secret(&self, vault: &Vault, scope: ScopeId, id: ConnectionId) -> Result<String> {
        #[derive(QueryableByName)]
        struct Sealed {
            #[diesel(sql_type = Text)]
            secret: String,
        }
        let mut conn = self.conn().await?;
        let row: Sealed = diesel::sql_query("SELECT secret FROM connections WHERE id = $1 AND scope_id = $2")
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(scope)
            .get_result(&mut conn)
            .await?;
        let opened = vault.open(&row.secret).map_err(|e| match e {
            VaultError::EncryptionRequired => Error::EncryptionRequired,
            other => Error::internal_from("opening a connection secret", other),
        })?;
        String::from_utf8(opened).map_err(|e| Error::internal_from("a connection secret is not text", e))
    }
}
