//! Endpoints: vending (token shown once), authentication, presence, and revocation
//! or expiry with its silent dead-letter cascade.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::Store;
use crate::db::models::EndpointRow;
use crate::db::schema::endpoints;
use crate::db::statement::statement;
use crate::domain::grants::{self, Verb};
use crate::domain::ids::{EndpointId, ScopeId};
use crate::domain::text::valid_slug;
use crate::domain::todo_state::{DeadReason, EndpointState, Presence};
use crate::domain::tokens::{self, ENDPOINT_TOKEN_PREFIX};
use crate::domain::transitions::{ENDPOINT_LEASE_SECONDS_RANGE, within};
use crate::error::{Error, Result};

/// What vending an endpoint needs.
#[derive(Debug, Clone)]
pub struct VendEndpoint {
    /// Owner scope.
    pub scope: ScopeId,
    /// Unique slug.
    pub slug: String,
    /// Requested grants (empty: the drain family).
    pub grants: Vec<Verb>,
    /// Default lease for claims that name none (60–86 400 s).
    pub default_lease_seconds: Option<i32>,
    /// When the endpoint stops authenticating and its work is dead-lettered.
    pub expires_at: Option<DateTime<Utc>>,
}

/// A vended endpoint and its token (shown once; never in its Debug form).
pub struct VendedEndpoint {
    /// The endpoint.
    pub endpoint: EndpointRow,
    /// Token plaintext.
    pub token: String,
}

impl std::fmt::Debug for VendedEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VendedEndpoint").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

/// An authenticated agent: what a request may do and on whose behalf.
#[derive(Debug, Clone)]
pub struct AgentPrincipal {
    /// The endpoint.
    pub endpoint_id: EndpointId,
    /// Its owner scope.
    pub scope_id: ScopeId,
    /// Its slug.
    pub slug: String,
    /// Its grants.
    pub grants: Vec<Verb>,
    /// Its default lease.
    pub default_lease_seconds: Option<i32>,
    /// When it expires, if ever.
    pub expires_at: Option<DateTime<Utc>>,
}

impl AgentPrincipal {
    /// Whether the endpoint holds `verb`.
    pub fn may(&self, verb: Verb) -> bool {
        self.grants.contains(&verb)
    }
}

/// Outcome of a revocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revoked {
    /// The endpoint.
    pub endpoint_id: EndpointId,
    /// How many live todos became dead letters (`endpoint_revoked`).
    pub dead_lettered: i64,
}

/// Columns of [`EndpointRow`] (everything but the token hash).
type EndpointColumns = diesel::dsl::AsSelect<EndpointRow, diesel::pg::Pg>;

fn endpoint_columns() -> EndpointColumns {
    EndpointRow::as_select()
}

impl Store {
    /// Vends an endpoint; its token is returned once and only its hash is kept.
    pub async fn vend_endpoint(&self, req: VendEndpoint) -> Result<VendedEndpoint> {
        if !valid_slug(&req.slug) {
            return Err(Error::invalid(
                "slug",
                "must be 1–63 of a-z, 0-9, '_' or '-', starting with a letter or digit",
            ));
        }
        if let Some(l) = req.default_lease_seconds
            && !within(l, ENDPOINT_LEASE_SECONDS_RANGE)
        {
            return Err(Error::invalid("default_lease_seconds", "must be between 60 and 86400"));
        }
        let grants: Vec<String> = grants::normalise(&req.grants).iter().map(|v| v.as_str().to_owned()).collect();
        let minted = tokens::mint(ENDPOINT_TOKEN_PREFIX);
        let mut conn = self.conn().await?;
        let inserted = diesel::insert_into(endpoints::table)
            .values((
                endpoints::id.eq(EndpointId::new().0),
                endpoints::scope_id.eq(req.scope.0),
                endpoints::slug.eq(&req.slug),
                endpoints::token_hash.eq(minted.hash.as_slice()),
                endpoints::token_prefix.eq(&minted.display_prefix),
                endpoints::grants.eq(&grants),
                endpoints::default_lease_seconds.eq(req.default_lease_seconds),
                endpoints::expires_at.eq(req.expires_at),
            ))
            .returning(endpoint_columns())
            .one_row(&mut conn)
            .await;
        match inserted {
            Ok(endpoint) => Ok(VendedEndpoint { endpoint, token: minted.plaintext }),
            Err(diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _)) => {
                Err(Error::Conflict("an endpoint with this slug already exists".into()))
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Endpoints in any of `scopes`, newest first.
    pub async fn list_endpoints(&self, scopes: &[ScopeId]) -> Result<Vec<EndpointRow>> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        Ok(endpoints::table
            .filter(endpoints::scope_id.eq_any(ids))
            .order((endpoints::created_at.desc(), endpoints::id.desc()))
            .select(endpoint_columns())
            .load(&mut conn)
            .await?)
    }

    /// One endpoint, if it is in one of `scopes`.
    pub async fn endpoint_in(&self, scopes: &[ScopeId], id: EndpointId) -> Result<EndpointRow> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        endpoints::table
            .filter(endpoints::id.eq(id.0).and(endpoints::scope_id.eq_any(ids)))
            .select(endpoint_columns())
            .first(&mut conn)
            .await
            .optional()?
            .ok_or(Error::NotFound)
    }

    /// One endpoint by slug (for the CLI, which acts as the instance's operator).
    pub async fn endpoint_by_slug(&self, slug: &str) -> Result<EndpointRow> {
        let mut conn = self.conn().await?;
        endpoints::table
            .filter(endpoints::slug.eq(slug))
            .select(endpoint_columns())
            .first(&mut conn)
            .await
            .optional()?
            .ok_or(Error::NotFound)
    }

    /// The active, unexpired endpoint holding `token`, if any.
    pub async fn authenticate_endpoint(&self, token: &str) -> Result<Option<AgentPrincipal>> {
        let hash = tokens::sha256(token.as_bytes());
        let mut conn = self.conn().await?;
        let row: Option<EndpointRow> = endpoints::table
            .filter(endpoints::token_hash.eq(hash.as_slice()))
            .filter(endpoints::state.eq(EndpointState::Active))
            .filter(endpoints::expires_at.is_null().or(endpoints::expires_at.gt(diesel::dsl::now)))
            .select(endpoint_columns())
            .first(&mut conn)
            .await
            .optional()?;
        Ok(row.map(|e| AgentPrincipal {
            endpoint_id: e.id,
            scope_id: e.scope_id,
            grants: e.verbs(),
            slug: e.slug,
            default_lease_seconds: e.default_lease_seconds,
            expires_at: e.expires_at,
        }))
    }

    /// Records the presence of `endpoint`, an endpoint of `scope` (else not found).
    pub async fn set_presence(&self, scope: ScopeId, endpoint: EndpointId, presence: Presence) -> Result<EndpointRow> {
        let mut conn = self.conn().await?;
        Ok(diesel::update(
            endpoints::table.filter(endpoints::id.eq(endpoint.0)).filter(endpoints::scope_id.eq(scope.0)),
        )
        .set((endpoints::presence.eq(presence), endpoints::presence_changed_at.eq(diesel::dsl::now)))
        .returning(endpoint_columns())
        .one_row(&mut conn)
        .await?)
    }

    /// Revokes an endpoint in one of `scopes` and dead-letters everything it still held,
    /// in one transaction, silently (no signal: a cascade is a batch, not news).
    pub async fn revoke_endpoint(&self, scopes: &[ScopeId], id: EndpointId) -> Result<Revoked> {
        let mut conn = self.conn().await?;
        let ids: Vec<uuid::Uuid> = scopes.iter().map(|s| s.0).collect();
        conn.transaction::<_, Error, _>(async move |conn| {
            // Lock first, so that unknown (404), already revoked (409) and this
            // revocation are told apart on one row in one transaction. NO KEY UPDATE,
            // not UPDATE: claims in flight hold their todo rows and then take a key-share
            // lock on this row for their foreign keys (see the lock order in `store`).
            let state: EndpointState = endpoints::table
                .filter(endpoints::id.eq(id.0).and(endpoints::scope_id.eq_any(ids)))
                .select(endpoints::state)
                .for_no_key_update()
                .first(conn)
                .await
                .optional()?
                .ok_or(Error::NotFound)?;
            if state == EndpointState::Revoked {
                return Err(Error::Conflict("endpoint is already revoked".into()));
            }
            diesel::update(endpoints::table.filter(endpoints::id.eq(id.0)))
                .set((endpoints::state.eq(EndpointState::Revoked), endpoints::revoked_at.eq(diesel::dsl::now)))
                .execute(conn)
                .await?;
            let dead = dead_letter_endpoint_todos(conn, id, Cascade::Revoked).await?;
            Ok(Revoked { endpoint_id: id, dead_lettered: dead })
        })
        .await
        .inspect(|revoked| self.emitter().cascaded(DeadReason::EndpointRevoked, count(revoked.dead_lettered)))
    }

    /// Revokes every endpoint whose expiry has passed, each with its silent cascade.
    /// Returns what it revoked. Racing instances revoke each endpoint once.
    pub async fn expire_endpoints(&self) -> Result<Vec<Revoked>> {
        let mut all = Vec::new();
        loop {
            let batch = self.expire_endpoint_batch().await?;
            let short = batch.len() < EXPIRY_BATCH as usize;
            all.extend(batch);
            if short {
                return Ok(all);
            }
        }
    }

    /// One transaction: up to [`EXPIRY_BATCH`] expired endpoints and their cascades.
    async fn expire_endpoint_batch(&self) -> Result<Vec<Revoked>> {
        #[derive(QueryableByName)]
        struct Row {
            #[diesel(sql_type = SqlUuid)]
            id: uuid::Uuid,
        }
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            let expired: Vec<Row> =
                EXPIRE_BATCH.query().bind::<diesel::sql_types::Int8, _>(EXPIRY_BATCH).load(conn).await?;
            let mut out = Vec::with_capacity(expired.len());
            for row in expired {
                let id = EndpointId(row.id);
                let dead = dead_letter_endpoint_todos(conn, id, Cascade::Expired).await?;
                out.push(Revoked { endpoint_id: id, dead_lettered: dead });
            }
            Ok(out)
        })
        .await
        .inspect(|revoked| {
            let dead = revoked.iter().map(|r| count(r.dead_lettered)).sum();
            self.emitter().cascaded(DeadReason::EndpointRevoked, dead);
        })
    }
}

/// A cascade's count of dead letters as the metrics count (never negative).
fn count(dead_lettered: i64) -> u64 {
    u64::try_from(dead_lettered).unwrap_or(0)
}

/// Endpoints expired per transaction (each with its whole cascade).
const EXPIRY_BATCH: i64 = 20;

/// Why an endpoint's work is being dead-lettered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cascade {
    /// An operator revoked it.
    Revoked,
    /// Its expiry passed.
    Expired,
}

/// The todos (alias `t`) of endpoint `$1` a revocation dead-letters: every live one
/// (pending, claimed, interrupted, failed with a retry scheduled), quarantine aside.
const LIVE_OF_ENDPOINT: &str = "t.endpoint_id = $1 AND t.queue <> 'quarantine' \
    AND (t.state IN ('pending', 'claimed', 'input_required', 'auth_required') \
         OR (t.state = 'failed' AND t.next_retry_at IS NOT NULL))";

statement! {
    /// Up to `$1` expired endpoints, revoked (the ids).
    static EXPIRE_BATCH = "UPDATE endpoints SET state = 'revoked', revoked_at = now() \
                 WHERE id IN (SELECT id FROM endpoints WHERE state = 'active' AND expires_at <= now() \
                              ORDER BY expires_at LIMIT $1 FOR NO KEY UPDATE SKIP LOCKED) \
                 RETURNING id";

    /// The cascade's lock of endpoint `$1`'s live todos, in id order.
    static LOCK_LIVE_TODOS = format!("SELECT id FROM todos t WHERE {LIVE_OF_ENDPOINT} ORDER BY id FOR UPDATE");

    /// The cascade's one notice per subscribed sink (`$1` endpoint, `$2` how many died,
    /// `$3` why, `$4` their queues).
    static CASCADE_NOTICE = "INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, endpoint_id, facts) \
             SELECT DISTINCT ON (k.id) k.id, e.scope_id, 'todo.dead_lettered', 'high', \
                    'endpoint_revoked:' || e.id || ':' || extract(epoch FROM e.revoked_at)::bigint, e.id, \
                    jsonb_build_object('dead_lettered', $2::bigint, 'reason', $3::text, 'slug', e.slug) \
             FROM endpoints e \
             JOIN sinks k ON k.scope_id = e.scope_id AND k.enabled \
             JOIN sink_subscriptions s ON s.sink_id = k.id \
             WHERE e.id = $1 AND 'todo.dead_lettered' = ANY (s.events) \
               AND (cardinality(s.endpoint_ids) = 0 OR e.id = ANY (s.endpoint_ids)) \
               AND (cardinality(s.queues) = 0 OR s.queues && $4::text[]) \
             ORDER BY k.id \
             ON CONFLICT (sink_id, dedup_key) WHERE status IN ('pending', 'held') DO NOTHING";

    /// The cascade's move of the todos it locked, closing their open attempts `revoked` /
    /// `dead_lettered`: the ids and queues it moved.
    static REVOKE_TODOS = format!(
        "WITH moved AS ( \
           UPDATE todos t SET state = 'failed', next_retry_at = NULL, lease_expires_at = NULL, \
             lease_token_hash = NULL, interrupt_expires_at = NULL, interrupt_wait_seconds = NULL, \
             interrupt_reason = NULL, \
             claimed_by = NULL, dead_reason = 'endpoint_revoked', dead_lettered_at = now(), \
             dead_letter_count = t.dead_letter_count + 1, updated_at = now() \
           WHERE {LIVE_OF_ENDPOINT} \
           RETURNING t.id, t.queue), \
         {} \
         SELECT COALESCE(array_agg(id), '{{}}') AS ids, COALESCE(array_agg(DISTINCT queue), '{{}}') AS queues \
         FROM moved",
        crate::store::todos::closed_attempts_cte(
            "IN (SELECT id FROM moved)",
            "",
            "'revoked', 'dead_lettered', NULL, false, NULL"
        )
    );
}

/// The cascade: every live todo of the endpoint (pending, claimed, interrupted, failed
/// with a retry scheduled; not quarantine) becomes a dead letter `endpoint_revoked`,
/// and open attempts close `revoked` / `dead_lettered`. Runs inside the caller's
/// transaction and emits no signal (hooks stay silent: a cascade is a batch, not news);
/// the owner's sinks are told once per cascade, not once per todo: one outbox row per
/// subscribed sink naming the endpoint and the count, in this same transaction.
///
/// Two statements, not one: the first locks every live todo of the endpoint (in id
/// order, as batch verbs do), waiting for claims in flight, so that the second
/// statement's snapshot holds the attempts those claims opened. The second moves the
/// todos and writes each open attempt's history row from the row as it was
/// ([`super::todos`]'s attempt close reads it through that snapshot; it cannot change
/// meanwhile, being locked). Read in the moving statement's own starting snapshot, an
/// attempt a claim opened while the statement waited would be missed.
async fn dead_letter_endpoint_todos(conn: &mut AsyncPgConnection, endpoint: EndpointId, why: Cascade) -> Result<i64> {
    #[derive(QueryableByName)]
    struct Dead {
        #[diesel(sql_type = Array<SqlUuid>)]
        ids: Vec<uuid::Uuid>,
        #[diesel(sql_type = Array<Text>)]
        queues: Vec<String>,
    }
    LOCK_LIVE_TODOS.query().bind::<SqlUuid, _>(endpoint).execute(conn).await?;
    let dead: Dead = REVOKE_TODOS.query().bind::<SqlUuid, _>(endpoint).one_row(conn).await?;
    if !dead.ids.is_empty() {
        let reason = match why {
            Cascade::Revoked => "endpoint_revoked",
            Cascade::Expired => "endpoint_expired",
        };
        CASCADE_NOTICE
            .query()
            .bind::<SqlUuid, _>(endpoint)
            .bind::<diesel::sql_types::Int8, _>(dead.ids.len() as i64)
            .bind::<Text, _>(reason)
            .bind::<Array<Text>, _>(&dead.queues)
            .execute(conn)
            .await?;
    }
    Ok(dead.ids.len() as i64)
}

impl Store {
    /// Replaces the token of `id`, an active endpoint of `scope` (else not found): the
    /// old one stops working at once; returns the new token, shown once.
    pub async fn rotate_endpoint_token(&self, scope: ScopeId, id: EndpointId) -> Result<String> {
        let minted = tokens::mint(ENDPOINT_TOKEN_PREFIX);
        let mut conn = self.conn().await?;
        let n = diesel::update(
            endpoints::table
                .filter(endpoints::id.eq(id.0))
                .filter(endpoints::scope_id.eq(scope.0))
                .filter(endpoints::state.eq(EndpointState::Active)),
        )
        .set((endpoints::token_hash.eq(minted.hash.as_slice()), endpoints::token_prefix.eq(&minted.display_prefix)))
        .execute(&mut conn)
        .await?;
        if n == 0 {
            return Err(Error::NotFound);
        }
        Ok(minted.plaintext)
    }
}
