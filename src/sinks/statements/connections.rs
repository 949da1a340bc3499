//! Connections: an owner's credential for Gotify, Apprise or Cairn, sealed with a data
//! key of its own (`enc:v2`) and never read back by any route, and bound to the
//! destination it is for: the secret is only ever read together with that destination
//! ([`Store::bound_credential`]). Only its fingerprint (a keyed HMAC) is shown.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::{still_referenced, unique_violation};
use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, HumanId, ScopeId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::ConnectionKind;
use crate::store::Store;
use crate::vault::{Vault, VaultError};

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
    /// Where its secret may be sent (normalised); none for a connection an earlier
    /// release stored that could not be bound.
    #[diesel(sql_type = Nullable<Text>)]
    pub base_url: Option<String>,
    /// Whether it is bound to `base_url` (false: its sinks' messages are held until an
    /// admin rotates it with a destination).
    #[diesel(sql_type = Bool)]
    pub bound: bool,
    /// First 12 hex characters of a keyed HMAC of the secret ([`Vault::fingerprint`]).
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
    /// Where its secret may be sent (normalised).
    pub base_url: String,
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

const COLUMNS: &str =
    "id, scope_id, name, kind, base_url, COALESCE(bound, false) AS bound, fingerprint, created_at, rotated_at";

/// A connection's secret with the one destination it may be sent to. Its Debug form
/// hides the secret.
pub struct Credential {
    /// The connection's bound destination (normalised base URL).
    pub destination: String,
    /// The opened secret.
    pub secret: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential").field("destination", &self.destination).finish_non_exhaustive()
    }
}

/// Seals a connection secret and fingerprints it; without a vault key nothing is stored.
fn sealed(vault: &Vault, secret: &str) -> Result<(String, String)> {
    let refused = |what: &'static str| {
        move |e| match e {
            VaultError::EncryptionRequired => Error::EncryptionRequired,
            other => Error::internal_from(what, other),
        }
    };
    let stored = vault.seal_enveloped(secret.as_bytes()).map_err(refused("sealing a connection secret"))?;
    let print = vault.fingerprint(secret.as_bytes()).map_err(refused("fingerprinting a connection secret"))?;
    Ok((stored, print))
}

/// Opens a stored secret as text.
pub(crate) fn opened(vault: &Vault, stored: &str) -> Result<String> {
    let opened = vault.open(stored).map_err(|e| match e {
        VaultError::EncryptionRequired => Error::EncryptionRequired,
        other => Error::internal_from("opening a connection secret", other),
    })?;
    String::from_utf8(opened).map_err(|e| Error::internal_from("a connection secret is not text", e))
}

statement! {
    static INSERT_CONNECTION = format!(
        "INSERT INTO connections (id, scope_id, name, kind, base_url, secret, fingerprint, created_by, \
        bound, fingerprint_keyed) \
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, true, true) RETURNING {COLUMNS}"
    );
    static CONNECTIONS_IN = format!("SELECT {COLUMNS} FROM connections WHERE scope_id = ANY($1) ORDER BY name, id");
    static SCOPED_CONNECTION = format!("SELECT {COLUMNS} FROM connections WHERE id = $1 AND scope_id = ANY($2)");
    static UPDATE_CONNECTION = format!(
        "UPDATE connections SET secret = $3, fingerprint = $4, fingerprint_keyed = true, rotated_at = now(), \
        base_url = COALESCE($5, base_url), bound = CASE WHEN $5 IS NULL THEN bound ELSE true END \
        WHERE id = $1 AND scope_id = $2 RETURNING {COLUMNS}"
    );
    static REPOINT_SINKS = "UPDATE sinks SET base_url = $2 WHERE connection_id = $1";
    static DELETE_CONNECTION = "DELETE FROM connections WHERE id = $1 AND scope_id = $2";
    static SEALED_SECRET = "SELECT secret FROM connections WHERE id = $1 AND scope_id = $2";
    static BOUND_SECRET = "SELECT secret, CASE WHEN bound THEN base_url END AS destination FROM connections \
        WHERE id = $1 AND scope_id = $2";
}

impl Store {
    /// Stores a connection, its secret sealed by `vault` (refused without a key, and
    /// nothing stored). A name already used in the scope is a conflict.
    pub async fn create_connection(&self, vault: &Vault, new: NewConnection) -> Result<ConnectionRow> {
        let (secret, print) = sealed(vault, &new.secret)?;
        let mut conn = self.conn().await?;
        let row = INSERT_CONNECTION
            .query()
            .bind::<SqlUuid, _>(ConnectionId::new())
            .bind::<SqlUuid, _>(new.scope)
            .bind::<Text, _>(&new.name)
            .bind::<Text, _>(new.kind)
            .bind::<Text, _>(&new.base_url)
            .bind::<Text, _>(&secret)
            .bind::<Text, _>(&print)
            .bind::<SqlUuid, _>(new.by)
            .one_row(&mut conn)
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
        Ok(CONNECTIONS_IN.query().bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?)
    }

    /// One connection in `scopes`, else not found.
    pub async fn connection_in(&self, scopes: &[ScopeId], id: ConnectionId) -> Result<ConnectionRow> {
        let mut conn = self.conn().await?;
        Ok(SCOPED_CONNECTION
            .query()
            .bind::<SqlUuid, _>(id)
            .bind::<Array<SqlUuid>, _>(scopes)
            .one_row(&mut conn)
            .await?)
    }

    /// Replaces the secret of `id`, a connection of `scope` (else not found), and with
    /// `destination` also where it may be sent: the connection is bound to it and its
    /// sinks' rows follow, in one transaction (their held messages then go out there).
    pub async fn rotate_connection(
        &self,
        vault: &Vault,
        scope: ScopeId,
        id: ConnectionId,
        secret: &str,
        destination: Option<&str>,
    ) -> Result<ConnectionRow> {
        let (stored, print) = sealed(vault, secret)?;
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let row: ConnectionRow = UPDATE_CONNECTION
                .query()
                .bind::<SqlUuid, _>(id)
                .bind::<SqlUuid, _>(scope)
                .bind::<Text, _>(&stored)
                .bind::<Text, _>(&print)
                .bind::<Nullable<Text>, _>(destination)
                .one_row(conn)
                .await?;
            if let Some(destination) = destination {
                REPOINT_SINKS.query().bind::<SqlUuid, _>(id).bind::<Text, _>(destination).execute(conn).await?;
            }
            Ok(row)
        })
        .await
    }

    /// Deletes `id`, a connection of `scope` (else not found); refused (conflict)
    /// while a sink uses it.
    pub async fn delete_connection(&self, scope: ScopeId, id: ConnectionId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = DELETE_CONNECTION.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).execute(&mut conn).await;
        match n {
            Err(e) if still_referenced(&e) => {
                Err(Error::Conflict("a sink uses this connection: delete or change the sink first".into()))
            }
            Ok(0) => Err(Error::NotFound),
            other => other.map(drop).map_err(Error::from),
        }
    }

    /// The opened secret of `id`, a connection of `scope`, for a check of what it holds
    /// (Apprise URLs against the scheme allowlist) or a cairn connection's own calls;
    /// never for an answer, and never to send anywhere but its bound destination (a
    /// sink's sends take [`Store::bound_credential`]).
    pub async fn connection_secret(&self, vault: &Vault, scope: ScopeId, id: ConnectionId) -> Result<String> {
        #[derive(QueryableByName)]
        struct Sealed {
            #[diesel(sql_type = Text)]
            secret: String,
        }
        let mut conn = self.conn().await?;
        let row: Sealed =
            SEALED_SECRET.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).one_row(&mut conn).await?;
        opened(vault, &row.secret)
    }

    /// The secret of `id`, a connection of `scope`, with the destination it is bound to,
    /// read in one statement: none while it is not bound (its messages wait). Whoever
    /// sends with a connection's secret takes it from here and dials only the
    /// destination that comes with it, so no sink, request or agent can pair it with
    /// another host.
    pub async fn bound_credential(
        &self,
        vault: &Vault,
        scope: ScopeId,
        id: ConnectionId,
    ) -> Result<Option<Credential>> {
        #[derive(QueryableByName)]
        struct Bound {
            #[diesel(sql_type = Text)]
            secret: String,
            #[diesel(sql_type = Nullable<Text>)]
            destination: Option<String>,
        }
        let mut conn = self.conn().await?;
        let row: Bound =
            BOUND_SECRET.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).one_row(&mut conn).await?;
        let Some(destination) = row.destination else { return Ok(None) };
        Ok(Some(Credential { destination, secret: opened(vault, &row.secret)? }))
    }
}
