//! Digest definitions: what an owner scope asked to be told, when, and where.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::QueryableByName;
use diesel::sql_types::{Array, Bool, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, RunQueryDsl};

use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, DigestId, HumanId, ScopeId, SinkId};
use crate::error::{Error, Result};
use crate::store::Store;

/// Most digests one owner scope holds.
pub const MAX_DIGESTS: i64 = 5;

/// A digest as stored.
#[derive(Debug, Clone, QueryableByName)]
pub struct DigestRow {
    /// The digest.
    #[diesel(sql_type = SqlUuid)]
    pub id: DigestId,
    /// Its owner scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// Unique in the scope.
    #[diesel(sql_type = Text)]
    pub name: String,
    /// The schedule, in its canonical form.
    #[diesel(sql_type = Text)]
    pub schedule: String,
    /// The queues it covers (empty: every queue the scope owns).
    #[diesel(sql_type = Array<Text>)]
    pub queues: Vec<String>,
    /// Where it goes.
    #[diesel(sql_type = Array<SqlUuid>)]
    pub sink_ids: Vec<SinkId>,
    /// Whether a quiet digest is skipped.
    #[diesel(sql_type = Bool)]
    pub skip_when_quiet: bool,
    /// Pending older than this needs attention.
    #[diesel(sql_type = Int4)]
    pub age_threshold_seconds: i32,
    /// Publishes the digest to Cairn through this connection, when set.
    #[diesel(sql_type = Nullable<SqlUuid>)]
    pub cairn_connection_id: Option<ConnectionId>,
    /// The Cairn artifact's time to live.
    #[diesel(sql_type = Int4)]
    pub cairn_ttl_seconds: i32,
    /// The next send time.
    #[diesel(sql_type = Timestamptz)]
    pub next_send_at: DateTime<Utc>,
    /// The last send time evaluated (sent or skipped as quiet).
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub covered_until: Option<DateTime<Utc>>,
    /// When it was made.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
}

/// What a digest is to be (the service has parsed the schedule and checked every
/// reference's scope; the store checks them again in the statement).
#[derive(Debug, Clone)]
pub struct DigestSpec {
    /// Its name.
    pub name: String,
    /// The schedule's canonical form.
    pub schedule: String,
    /// Covered queues.
    pub queues: Vec<String>,
    /// Its sinks (of the same scope).
    pub sink_ids: Vec<SinkId>,
    /// Skip quiet digests.
    pub skip_when_quiet: bool,
    /// Seconds.
    pub age_threshold_seconds: i32,
    /// A `cairn` connection of the same scope.
    pub cairn_connection_id: Option<ConnectionId>,
    /// Seconds.
    pub cairn_ttl_seconds: i32,
    /// The first send time from now.
    pub next_send_at: DateTime<Utc>,
}

const COLUMNS: &str = "id, scope_id, name, schedule, queues, sink_ids, skip_when_quiet, age_threshold_seconds, \
                       cairn_connection_id, cairn_ttl_seconds, next_send_at, covered_until, created_at";

/// The statement's check that every sink and the Cairn connection are `$2`'s
/// (`$6`: sink ids, `$9`: the connection).
const REFERENCES_IN_SCOPE: &str = "(SELECT count(*) FROM sinks s WHERE s.id = ANY($6) AND s.scope_id = $2) \
       = cardinality(ARRAY(SELECT DISTINCT unnest($6::uuid[]))) \
     AND ($9::uuid IS NULL OR EXISTS (SELECT 1 FROM connections c WHERE c.id = $9 AND c.scope_id = $2 \
                                      AND c.kind = 'cairn'))";

fn out_of_scope() -> Error {
    Error::ReferenceOutOfScope(
        "reference_out_of_scope: a sink or the Cairn connection is unknown, another owner's, or (for Cairn) \
         not a cairn connection"
            .into(),
    )
}

fn name_taken(name: &str) -> impl Fn(diesel::result::Error) -> Error + '_ {
    move |e| match e {
        diesel::result::Error::NotFound => out_of_scope(),
        diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::UniqueViolation, _) => {
            Error::Conflict(format!("a digest named {name:?} already exists for this owner"))
        }
        other => other.into(),
    }
}

statement! {
    static LOCK_SCOPE = "SELECT id FROM owner_scopes WHERE id = $1 FOR NO KEY UPDATE";
    static COUNT_DIGESTS = "SELECT count(*) AS n FROM digests WHERE scope_id = $1";
    static INSERT_DIGEST = format!(
        "INSERT INTO digests (id, scope_id, name, schedule, queues, sink_ids, skip_when_quiet, \
        age_threshold_seconds, cairn_connection_id, cairn_ttl_seconds, next_send_at, created_by) \
        SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 WHERE {REFERENCES_IN_SCOPE} \
        RETURNING {COLUMNS}"
    );
    static UPDATE_DIGEST = format!(
        "UPDATE digests SET name = $3, schedule = $4, queues = $5, sink_ids = $6, skip_when_quiet = $7, \
        age_threshold_seconds = $8, cairn_connection_id = $9, cairn_ttl_seconds = $10, next_send_at = $11, \
        updated_at = now() \
        WHERE id = $1 AND scope_id = $2 AND {REFERENCES_IN_SCOPE} RETURNING {COLUMNS}"
    );
    static DIGESTS_IN = format!("SELECT {COLUMNS} FROM digests WHERE scope_id = ANY($1) ORDER BY name, id");
    static SCOPED_DIGEST = format!("SELECT {COLUMNS} FROM digests WHERE id = $1 AND scope_id = ANY($2)");
    static DIGEST_BY_ID = format!("SELECT {COLUMNS} FROM digests WHERE id = $1");
    static DELETE_DIGEST = "DELETE FROM digests WHERE id = $1 AND scope_id = $2";
    static DUE_DIGESTS = format!(
        "SELECT {COLUMNS} FROM digests WHERE next_send_at <= now() ORDER BY next_send_at LIMIT $1"
    );
}

impl Store {
    /// Stores a digest for `scope`, unless it already holds [`MAX_DIGESTS`] (the scope
    /// row is locked while counting, so racing creates never pass the cap together).
    /// A sink or connection outside `scope` answers `reference_out_of_scope`.
    pub async fn create_digest(&self, scope: ScopeId, spec: DigestSpec, by: HumanId) -> Result<DigestRow> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            #[derive(QueryableByName)]
            struct Count {
                #[diesel(sql_type = diesel::sql_types::BigInt)]
                n: i64,
            }
            LOCK_SCOPE.query().bind::<SqlUuid, _>(scope).execute(conn).await?;
            let held: Count = COUNT_DIGESTS.query().bind::<SqlUuid, _>(scope).one_row(conn).await?;
            if held.n >= MAX_DIGESTS {
                return Err(Error::Conflict(format!("this owner already has {MAX_DIGESTS} digests")));
            }
            INSERT_DIGEST
                .query()
                .bind::<SqlUuid, _>(DigestId::new())
                .bind::<SqlUuid, _>(scope)
                .bind::<Text, _>(&spec.name)
                .bind::<Text, _>(&spec.schedule)
                .bind::<Array<Text>, _>(&spec.queues)
                .bind::<Array<SqlUuid>, _>(&spec.sink_ids)
                .bind::<Bool, _>(spec.skip_when_quiet)
                .bind::<Int4, _>(spec.age_threshold_seconds)
                .bind::<Nullable<SqlUuid>, _>(spec.cairn_connection_id)
                .bind::<Int4, _>(spec.cairn_ttl_seconds)
                .bind::<Timestamptz, _>(spec.next_send_at)
                .bind::<SqlUuid, _>(by)
                .one_row::<DigestRow>(conn)
                .await
                .map_err(name_taken(&spec.name))
        })
        .await
    }

    /// Replaces digest `id` of `scope` (else not found) with `spec`; what it already
    /// covered is kept.
    pub async fn replace_digest(&self, scope: ScopeId, id: DigestId, spec: DigestSpec) -> Result<DigestRow> {
        let mut conn = self.conn().await?;
        // Not found and out of scope look alike to the statement; tell them apart first.
        self.digest_in(&[scope], id).await?;
        UPDATE_DIGEST
            .query()
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(scope)
            .bind::<Text, _>(&spec.name)
            .bind::<Text, _>(&spec.schedule)
            .bind::<Array<Text>, _>(&spec.queues)
            .bind::<Array<SqlUuid>, _>(&spec.sink_ids)
            .bind::<Bool, _>(spec.skip_when_quiet)
            .bind::<Int4, _>(spec.age_threshold_seconds)
            .bind::<Nullable<SqlUuid>, _>(spec.cairn_connection_id)
            .bind::<Int4, _>(spec.cairn_ttl_seconds)
            .bind::<Timestamptz, _>(spec.next_send_at)
            .one_row::<DigestRow>(&mut conn)
            .await
            .map_err(name_taken(&spec.name))
    }

    /// The digests of `scopes`, by name.
    pub async fn list_digests(&self, scopes: &[ScopeId]) -> Result<Vec<DigestRow>> {
        let mut conn = self.conn().await?;
        Ok(DIGESTS_IN.query().bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?)
    }

    /// One digest of `scopes`, else not found.
    pub async fn digest_in(&self, scopes: &[ScopeId], id: DigestId) -> Result<DigestRow> {
        let mut conn = self.conn().await?;
        Ok(SCOPED_DIGEST.query().bind::<SqlUuid, _>(id).bind::<Array<SqlUuid>, _>(scopes).one_row(&mut conn).await?)
    }

    /// One digest by id, whatever its scope: for the operator CLI, which has no caller.
    pub async fn digest_by_id(&self, id: DigestId) -> Result<DigestRow> {
        let mut conn = self.conn().await?;
        Ok(DIGEST_BY_ID.query().bind::<SqlUuid, _>(id).one_row(&mut conn).await?)
    }

    /// Deletes digest `id` of `scope` (else not found) with its history.
    pub async fn delete_digest(&self, scope: ScopeId, id: DigestId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = DELETE_DIGEST.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).execute(&mut conn).await?;
        if n == 0 { Err(Error::NotFound) } else { Ok(()) }
    }

    /// Digests whose next send time has come, the most overdue first.
    pub async fn due_digests(&self, limit: i64) -> Result<Vec<DigestRow>> {
        let mut conn = self.conn().await?;
        Ok(DUE_DIGESTS.query().bind::<diesel::sql_types::BigInt, _>(limit).load(&mut conn).await?)
    }
}
