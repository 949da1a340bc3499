//! What a ring reads and writes: the hooks a ready or dead todo matches, the same
//! conditions re-checked for one hook before every retry, the health each ring leaves
//! behind, and the sweep that forgets expired previous secrets.

use crate::db::one_row::OneRow;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, HookId};
use crate::error::Result;
use crate::hooks::rules::health::HookHealthUpdate;
use crate::hooks::rules::hook::{FAILURES_BEFORE_DISABLE, redact_url};
use crate::store::Store;

/// A hook to ring, with what signing needs. Its Debug form shows neither the
/// URL's query nor the (sealed) secrets.
#[derive(Clone, QueryableByName)]
pub struct HookTarget {
    /// The hook.
    #[diesel(sql_type = SqlUuid)]
    pub hook_id: HookId,
    /// Its endpoint.
    #[diesel(sql_type = SqlUuid)]
    pub endpoint_id: EndpointId,
    /// Where to post.
    #[diesel(sql_type = Text)]
    pub url: String,
    /// The current signing secret, sealed (open it with the vault).
    #[diesel(sql_type = Text)]
    pub sealed_secret: String,
    /// The secret before the last rotation, sealed; only while its 24 h last.
    #[diesel(sql_type = Nullable<Text>)]
    pub sealed_previous_secret: Option<String>,
    /// Until when the previous secret still signs (with it, or none).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub previous_valid_until: Option<chrono::DateTime<chrono::Utc>>,
    /// When the hook's endpoint expires, if ever: a cached match is not used past it
    /// (expiry is a time, not a change the database announces).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub endpoint_expires_at: Option<chrono::DateTime<chrono::Utc>>,
}

impl std::fmt::Debug for HookTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookTarget")
            .field("hook_id", &self.hook_id)
            .field("endpoint_id", &self.endpoint_id)
            .field("url", &redact_url(&self.url))
            .field("dual_signing", &self.sealed_previous_secret.is_some())
            .finish_non_exhaustive()
    }
}

/// Columns of [`HookTarget`] over `notify_hooks h` (the previous secret only while valid).
const TARGET_COLUMNS: &str = "h.id AS hook_id, h.endpoint_id, h.url, h.secret AS sealed_secret, \
     CASE WHEN h.previous_valid_until > now() THEN h.previous_secret END AS sealed_previous_secret, \
     CASE WHEN h.previous_valid_until > now() THEN h.previous_valid_until END AS previous_valid_until, \
     e.expires_at AS endpoint_expires_at";

/// When a hook may be told about a todo on the queue `queue` (an SQL expression): the
/// hook is enabled, its endpoint active and unexpired, its filter empty or naming the
/// queue, and the queue not the reserved `quarantine` (held deliveries never announce).
fn matches(queue: &str) -> String {
    format!(
        "h.enabled AND e.state = 'active' AND (e.expires_at IS NULL OR e.expires_at > now()) \
         AND {queue} <> 'quarantine' AND (cardinality(h.queues) = 0 OR {queue} = ANY(h.queues))"
    )
}

statement! {
    static TARGETS_OF_ENDPOINT = format!(
        "SELECT {TARGET_COLUMNS} FROM notify_hooks h JOIN endpoints e ON e.id = h.endpoint_id \
        WHERE h.endpoint_id = $1 AND {} ORDER BY h.created_at, h.id",
        matches("$2")
    );
    static TARGETS_OF_HOOK = format!(
        "SELECT {TARGET_COLUMNS} FROM notify_hooks h JOIN endpoints e ON e.id = h.endpoint_id \
        WHERE h.id = $1 AND {}",
        matches("$2")
    );
    static RECORD_HEALTH = "UPDATE notify_hooks h SET \
        consecutive_failures = CASE WHEN $2 THEN 0 ELSE h.consecutive_failures + 1 END, \
        enabled = h.enabled AND ($2 OR h.consecutive_failures + 1 < $5), \
        disabled_reason = CASE WHEN h.enabled AND NOT $2 AND h.consecutive_failures + 1 >= $5 \
        THEN 'consecutive_failures' ELSE h.disabled_reason END, \
        last_status = $3, last_error = $4, last_attempt_at = now(), updated_at = now() \
        FROM (SELECT id, enabled FROM notify_hooks WHERE id = $1 FOR UPDATE) old \
        WHERE h.id = old.id \
        RETURNING old.enabled AND NOT h.enabled AS disabled_now";
    static FORGET_PREVIOUS_SECRET = "UPDATE notify_hooks SET previous_secret = NULL, previous_valid_until = NULL \
        WHERE previous_valid_until <= now()";
}

impl Store {
    /// The hooks a todo on `queue` of `endpoint` should be announced to, oldest first.
    pub async fn matching_hooks(&self, endpoint: EndpointId, queue: &str) -> Result<Vec<HookTarget>> {
        let mut conn = self.conn().await?;
        Ok(TARGETS_OF_ENDPOINT.query().bind::<SqlUuid, _>(endpoint).bind::<Text, _>(queue).load(&mut conn).await?)
    }

    /// The same conditions as [`Store::matching_hooks`] for one hook, with its current
    /// secrets: run before every retry, so a hook deleted, disabled, re-filtered or
    /// rotated, or an endpoint revoked, since the last attempt is honoured.
    pub async fn recheck_hook(&self, hook: HookId, queue: &str) -> Result<Option<HookTarget>> {
        let mut conn = self.conn().await?;
        Ok(TARGETS_OF_HOOK
            .query()
            .bind::<SqlUuid, _>(hook)
            .bind::<Text, _>(queue)
            .one_row(&mut conn)
            .await
            .optional()?)
    }

    /// Records a ring's outcome in one UPDATE: a success resets the failure count;
    /// the 10th failure in a row disables the hook (`consecutive_failures`). Returns
    /// whether this outcome disabled it, or `None` when the hook is gone. A hook an
    /// operator disabled keeps that reason.
    pub async fn record_hook_outcome(&self, hook: HookId, update: HookHealthUpdate) -> Result<Option<bool>> {
        #[derive(QueryableByName)]
        struct Disabled {
            #[diesel(sql_type = Bool)]
            disabled_now: bool,
        }
        let mut conn = self.conn().await?;
        // The joined `old` row is the hook before this statement (the SET expressions
        // also see old values), so "disabled now" means a transition, not a state.
        let row: Option<Disabled> = RECORD_HEALTH
            .query()
            .bind::<SqlUuid, _>(hook)
            .bind::<Bool, _>(update.succeeded)
            .bind::<Nullable<Int4>, _>(update.last_status)
            .bind::<Nullable<Text>, _>(update.last_error)
            .bind::<Int4, _>(FAILURES_BEFORE_DISABLE)
            .one_row(&mut conn)
            .await
            .optional()?;
        Ok(row.map(|r| r.disabled_now))
    }

    /// Forgets previous secrets whose 24 hours are over; returns how many.
    pub async fn clear_expired_previous_secrets(&self) -> Result<usize> {
        let mut conn = self.conn().await?;
        Ok(FORGET_PREVIOUS_SECRET.query().execute(&mut conn).await?)
    }
}
