//! Webhooks: creation (ingest token and signing secret shown once), lookup by ingest
//! token for intake, the refused-delivery counter, and rules storage.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::Store;
use crate::db::schema::webhooks;
use crate::domain::ids::{EndpointId, ScopeId, WebhookId};
use crate::domain::text::{QUARANTINE_QUEUE, valid_queue_name};
use crate::domain::tokens::{self, INGEST_TOKEN_PREFIX};
use crate::domain::transitions::{DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_RANGE, within};
use crate::error::{Error, Result};
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::vault::{Vault, VaultError};

/// A webhook as stored (the ingest token hash and sealed secret stay in the store).
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = webhooks, check_for_backend(diesel::pg::Pg))]
pub struct WebhookRow {
    /// Primary key (`wh_…` in the API).
    pub id: WebhookId,
    /// The owner scope.
    pub scope_id: ScopeId,
    /// The endpoint whose queues receive its todos.
    pub endpoint_id: EndpointId,
    /// The provider scheme: how deliveries are verified and read.
    pub source_type: SourceType,
    /// Default queue for its deliveries (a routing rule may send them elsewhere).
    pub queue: String,
    /// Attempt cap of the todos it creates (1–100).
    pub max_attempts: i32,
    /// The ingest token's first characters (`sbw_` and 6 more), to recognise it in a
    /// listing.
    pub ingest_token_prefix: String,
    /// First 12 hex characters of the signing secret's keyed HMAC (`Vault::fingerprint`),
    /// to tell secrets apart;
    /// none without a secret (generic and unverified webhooks).
    pub secret_fingerprint: Option<String>,
    /// A signed source type that does not check signatures: deliveries are taken in
    /// trust mode `open` and never ring or announce.
    pub unverified: bool,
    /// Which senders may put work on its queues (`{"logins": [...]}` or
    /// `{"allow_all": true}`), for sources that name one (GitHub, Gitea); none trusts
    /// no one, so their deliveries go to quarantine.
    pub trusted_actors: Option<serde_json::Value>,
    /// Routing rules as stored (`{"rules": [...]}`), evaluated in order; the first match
    /// wins.
    pub rules: serde_json::Value,
    /// Deliveries refused (bad or missing signature, stale timestamp): all that is
    /// kept of them.
    pub refused_deliveries: i64,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// What creating a webhook needs. The caller has checked that `scope` owns `endpoint_id`.
#[derive(Clone)]
pub struct NewWebhook {
    /// Owner scope.
    pub scope: ScopeId,
    /// The endpoint whose queues receive its todos.
    pub endpoint_id: EndpointId,
    /// The provider scheme.
    pub source_type: SourceType,
    /// Default queue.
    pub queue: String,
    /// Attempt cap of its todos (default 5).
    pub max_attempts: Option<i32>,
    /// Trusted actors (`{"logins": [...]}` / `{"allow_all": true}`); none trusts no one.
    pub trusted_actors: Option<serde_json::Value>,
    /// A secret the provider supplied; none: Switchboard generates one.
    pub secret: Option<String>,
    /// A signed source type that cannot sign: deliveries are accepted in trust mode
    /// `open` and never ring or announce.
    pub unverified: bool,
}

/// A created webhook with its credentials, shown once (never in the Debug form).
pub struct CreatedWebhook {
    /// The webhook.
    pub webhook: WebhookRow,
    /// The ingest token (the last segment of its URL).
    pub ingest_token: String,
    /// The signing secret, when Switchboard generated it or the caller supplied one.
    pub signing_secret: Option<String>,
}

impl std::fmt::Debug for CreatedWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedWebhook").field("webhook", &self.webhook).finish_non_exhaustive()
    }
}

impl CreatedWebhook {
    /// Where the provider posts deliveries: `{base_url}/webhooks/w/{ingest_token}`.
    pub fn ingest_url(&self, base_url: &str) -> String {
        format!("{}/webhooks/w/{}", base_url.trim_end_matches('/'), self.ingest_token)
    }
}

/// The stored form of a trusted-actor policy ([`NewWebhook::trusted_actors`]), checked
/// first. The operator API and `switchboard admin create-webhook` both go through here.
pub fn trusted_actors_json(policy: Option<&TrustedActors>) -> Result<Option<serde_json::Value>> {
    let Some(policy) = policy else { return Ok(None) };
    policy.validate().map_err(|why| Error::invalid("trusted_actors", why))?;
    Ok(Some(policy.to_json()))
}

/// What intake needs of a webhook found by its ingest token.
#[derive(Debug, Clone)]
pub struct IngestTarget {
    /// The webhook.
    pub webhook: WebhookRow,
    /// Its sealed signing secret, if any.
    pub sealed_secret: Option<String>,
}

/// Longest secret a provider may supply.
const SECRET_MAX_BYTES: usize = 512;

impl Store {
    /// Creates a webhook; the signing secret is sealed by `vault` (refused without a key).
    pub async fn create_webhook(&self, vault: &Vault, new: NewWebhook) -> Result<CreatedWebhook> {
        if !valid_queue_name(&new.queue) || new.queue == QUARANTINE_QUEUE {
            return Err(Error::invalid("queue", "not a drainable queue name"));
        }
        if let Some(m) = new.max_attempts
            && !within(m, MAX_ATTEMPTS_RANGE)
        {
            return Err(Error::invalid("max_attempts", "must be between 1 and 100"));
        }
        if new.secret.as_ref().is_some_and(|s| s.is_empty() || s.len() > SECRET_MAX_BYTES || s.contains('\0')) {
            return Err(Error::invalid("secret", "must be 1–512 bytes"));
        }
        if !new.source_type.is_signed() && (new.secret.is_some() || new.unverified) {
            return Err(Error::invalid("source_type", "a generic webhook takes neither a secret nor `unverified`"));
        }
        if new.unverified && new.secret.is_some() {
            return Err(Error::invalid("secret", "an unverified webhook has no secret"));
        }
        let signing_secret = (new.source_type.is_signed() && !new.unverified)
            .then(|| new.secret.clone().unwrap_or_else(tokens::mint_signing_secret));
        let (sealed, fingerprint) = match &signing_secret {
            Some(secret) => {
                let sealed = vault.seal(secret.as_bytes()).map_err(|e| match e {
                    VaultError::EncryptionRequired => Error::EncryptionRequired,
                    other => Error::internal_from("sealing a webhook secret", other),
                })?;
                let print = vault.fingerprint(secret.as_bytes()).map_err(|e| match e {
                    VaultError::EncryptionRequired => Error::EncryptionRequired,
                    other => Error::internal_from("fingerprinting a webhook secret", other),
                })?;
                (Some(sealed), Some(print))
            }
            None => (None, None),
        };
        let ingest = tokens::mint(INGEST_TOKEN_PREFIX);
        let mut conn = self.conn().await?;
        // Deliveries to a revoked or expired endpoint could never become work.
        let active: bool = diesel::select(diesel::dsl::exists(
            crate::db::schema::endpoints::table
                .filter(crate::db::schema::endpoints::id.eq(new.endpoint_id.0))
                .filter(crate::db::schema::endpoints::state.eq(crate::domain::todo_state::EndpointState::Active))
                .filter(
                    crate::db::schema::endpoints::expires_at
                        .is_null()
                        .or(crate::db::schema::endpoints::expires_at.gt(diesel::dsl::now)),
                ),
        ))
        .one_row(&mut conn)
        .await?;
        if !active {
            return Err(Error::Conflict("the endpoint is revoked or expired".into()));
        }
        let webhook = diesel::insert_into(webhooks::table)
            .values((
                webhooks::id.eq(WebhookId::new().0),
                webhooks::scope_id.eq(new.scope.0),
                webhooks::endpoint_id.eq(new.endpoint_id.0),
                webhooks::source_type.eq(new.source_type),
                webhooks::queue.eq(&new.queue),
                webhooks::max_attempts.eq(new.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS)),
                webhooks::ingest_token_hash.eq(ingest.hash.as_slice()),
                webhooks::ingest_token_prefix.eq(&ingest.display_prefix),
                webhooks::signing_secret.eq(sealed),
                webhooks::secret_fingerprint.eq(fingerprint),
                webhooks::secret_fingerprint_keyed.eq(true),
                webhooks::unverified.eq(new.unverified),
                webhooks::trusted_actors.eq(&new.trusted_actors),
            ))
            .returning(WebhookRow::as_returning())
            .one_row(&mut conn)
            .await?;
        Ok(CreatedWebhook { webhook, ingest_token: ingest.plaintext, signing_secret })
    }

    /// Webhooks in any of `scopes`, newest first.
    pub async fn list_webhooks(&self, scopes: &[ScopeId]) -> Result<Vec<WebhookRow>> {
        self.load_webhooks(Some(scopes)).await
    }

    /// Every webhook of the instance, newest first (for the CLI, which acts as the
    /// instance's operator).
    pub async fn list_all_webhooks(&self) -> Result<Vec<WebhookRow>> {
        self.load_webhooks(None).await
    }

    /// Webhooks in any of `scopes` (all of them for `None`), newest first.
    async fn load_webhooks(&self, scopes: Option<&[ScopeId]>) -> Result<Vec<WebhookRow>> {
        let mut query = webhooks::table
            .order((webhooks::created_at.desc(), webhooks::id.desc()))
            .select(WebhookRow::as_select())
            .into_boxed();
        if let Some(scopes) = scopes {
            let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
            query = query.filter(webhooks::scope_id.eq_any(ids));
        }
        let mut conn = self.conn().await?;
        Ok(query.load(&mut conn).await?)
    }

    /// One webhook, if it is in one of `scopes`.
    pub async fn webhook_in(&self, scopes: &[ScopeId], id: WebhookId) -> Result<WebhookRow> {
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        webhooks::table
            .filter(webhooks::id.eq(id.0).and(webhooks::scope_id.eq_any(ids)))
            .select(WebhookRow::as_select())
            .first(&mut conn)
            .await
            .optional()?
            .ok_or(Error::NotFound)
    }

    /// The webhook behind an ingest token, with its sealed secret.
    pub async fn webhook_by_ingest_token(&self, token: &str) -> Result<Option<IngestTarget>> {
        let hash = tokens::sha256(token.as_bytes());
        let mut conn = self.conn().await?;
        let found: Option<(WebhookRow, Option<String>)> = webhooks::table
            .filter(webhooks::ingest_token_hash.eq(hash.as_slice()))
            .select((WebhookRow::as_select(), webhooks::signing_secret))
            .first(&mut conn)
            .await
            .optional()?;
        Ok(found.map(|(webhook, sealed_secret)| IngestTarget { webhook, sealed_secret }))
    }

    /// Counts a refused delivery (bad signature, expired): the only thing kept of it.
    pub async fn count_refused_delivery(&self, id: WebhookId) -> Result<()> {
        let mut conn = self.conn().await?;
        diesel::update(webhooks::table.filter(webhooks::id.eq(id.0)))
            .set(webhooks::refused_deliveries.eq(webhooks::refused_deliveries + 1))
            .execute(&mut conn)
            .await?;
        Ok(())
    }

    /// Replaces a webhook's rules (validated by the caller).
    pub async fn set_webhook_rules(
        &self,
        scopes: &[ScopeId],
        id: WebhookId,
        rules: serde_json::Value,
    ) -> Result<WebhookRow> {
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        let mut conn = self.conn().await?;
        diesel::update(webhooks::table.filter(webhooks::id.eq(id.0).and(webhooks::scope_id.eq_any(ids))))
            .set(webhooks::rules.eq(rules))
            .returning(WebhookRow::as_returning())
            .one_row(&mut conn)
            .await
            .optional()?
            .ok_or(Error::NotFound)
    }
}
