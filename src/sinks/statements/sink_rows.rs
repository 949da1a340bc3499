//! Sinks: where an owner's notifications are posted, with which connection, and the
//! token bucket that keeps them from flooding anyone.

use crate::db::one_row::OneRow;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, Bool, Double, Int4, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use super::subscriptions::write_subscriptions;
use super::unique_violation;
use super::{NewSubscription, SubscriptionRow};
use crate::db::statement::statement;
use crate::domain::ids::{ConnectionId, HumanId, ScopeId, SinkId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::{AppriseMode, SinkKind};
use crate::store::Store;

/// A sink as listed.
#[derive(Debug, Clone, QueryableByName)]
pub struct SinkRow {
    /// The sink.
    #[diesel(sql_type = SqlUuid)]
    pub id: SinkId,
    /// Its owner scope.
    #[diesel(sql_type = SqlUuid)]
    pub scope_id: ScopeId,
    /// Its name, unique in the scope.
    #[diesel(sql_type = Text)]
    pub name: String,
    /// Gotify or Apprise.
    #[diesel(sql_type = Text)]
    pub kind: SinkKind,
    /// Its destination: its connection's, copied when the sink is written or the
    /// connection rotated to a new one (what is dialled is always the connection's own).
    #[diesel(sql_type = Text)]
    pub base_url: String,
    /// The credential it posts with (same scope, same kind).
    #[diesel(sql_type = SqlUuid)]
    pub connection_id: ConnectionId,
    /// Apprise only: a config key or stateless URLs.
    #[diesel(sql_type = Nullable<Text>)]
    pub apprise_mode: Option<AppriseMode>,
    /// Whether notifications go out.
    #[diesel(sql_type = Bool)]
    pub enabled: bool,
    /// Messages per hour (the bucket's refill).
    #[diesel(sql_type = Int4)]
    pub budget_per_hour: i32,
    /// Messages at once (the bucket's size).
    #[diesel(sql_type = Int4)]
    pub burst: i32,
    /// Tokens in the bucket at `tokens_at`.
    #[diesel(sql_type = Double)]
    pub tokens: f64,
    /// When `tokens` was counted.
    #[diesel(sql_type = Timestamptz)]
    pub tokens_at: DateTime<Utc>,
    /// When it was made.
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
}

/// What a new sink is to be (the service has checked the connection, URL and mode).
#[derive(Debug, Clone)]
pub struct NewSink {
    /// The owner scope.
    pub scope: ScopeId,
    /// Its name.
    pub name: String,
    /// Gotify or Apprise.
    pub kind: SinkKind,
    /// The connection (same scope and kind, bound): the sink's destination is its.
    pub connection_id: ConnectionId,
    /// Apprise only.
    pub apprise_mode: Option<AppriseMode>,
    /// Whether it starts enabled.
    pub enabled: bool,
    /// Messages per hour.
    pub budget_per_hour: i32,
    /// Messages at once (the bucket starts full).
    pub burst: i32,
    /// Who made it (none: an agent with the `notifications` grant).
    pub by: Option<HumanId>,
}

/// What a sink update changes (none: unchanged).
#[derive(Debug, Clone, Default)]
pub struct SinkChange {
    /// Switch it on or off.
    pub enabled: Option<bool>,
    /// A new refill rate.
    pub budget_per_hour: Option<i32>,
    /// A new bucket size (tokens above it are dropped).
    pub burst: Option<i32>,
}

const COLUMNS: &str = "id, scope_id, name, kind, base_url, connection_id, apprise_mode, enabled, \
                       budget_per_hour, burst, tokens, tokens_at, created_at";

/// [`COLUMNS`] of the sink aliased `k` (a statement that joins connections, whose
/// columns share some of the names).
const K_COLUMNS: &str = "k.id, k.scope_id, k.name, k.kind, k.base_url, k.connection_id, k.apprise_mode, k.enabled, \
                         k.budget_per_hour, k.burst, k.tokens, k.tokens_at, k.created_at";

statement! {
    static LOCK_SINK_NAME = "SELECT id FROM sinks WHERE scope_id = $1 AND name = $2 FOR NO KEY UPDATE";
    static UPDATE_SINK = format!(
        "UPDATE sinks k SET kind = $3, base_url = c.base_url, connection_id = c.id, apprise_mode = $6, \
        enabled = CASE WHEN $7 THEN k.enabled ELSE $8 END, changed_by_agent = $4 \
        FROM connections c \
        WHERE k.id = $1 AND k.scope_id = $2 AND c.id = $5 AND c.scope_id = k.scope_id AND c.kind = $3 \
        AND c.bound AND c.base_url IS NOT NULL \
        RETURNING {K_COLUMNS}"
    );
    static DROP_EXCERPTS = "UPDATE sink_subscriptions SET include_excerpt = false WHERE sink_id = $1";
    static SINKS_IN = format!("SELECT {COLUMNS} FROM sinks WHERE scope_id = ANY($1) ORDER BY name, id");
    static SCOPED_SINK = format!("SELECT {COLUMNS} FROM sinks WHERE id = $1 AND scope_id = ANY($2)");
    static SINK_BY_NAME = format!("SELECT {COLUMNS} FROM sinks WHERE scope_id = $1 AND name = $2");
    static SET_SINK_CONTROLS = format!(
        "UPDATE sinks SET enabled = COALESCE($3, enabled), budget_per_hour = COALESCE($4, budget_per_hour), \
        burst = COALESCE($5, burst), tokens = LEAST(tokens, COALESCE($5, burst)) \
        WHERE id = $1 AND scope_id = $2 RETURNING {COLUMNS}"
    );
    static TEST_WINDOW = "UPDATE sinks SET \
        tests_in_window = CASE WHEN tests_window_at > now() - interval '1 minute' \
        THEN tests_in_window + 1 ELSE 1 END, \
        tests_window_at = CASE WHEN tests_window_at > now() - interval '1 minute' \
        THEN tests_window_at ELSE now() END \
        WHERE id = $1 AND scope_id = $2 \
        RETURNING tests_in_window AS sends, \
        GREATEST(0, EXTRACT(EPOCH FROM tests_window_at + interval '1 minute' - now()))::float8 AS left_secs";
    static DELETE_SINK = "DELETE FROM sinks WHERE id = $1 AND scope_id = $2";
}

impl Store {
    /// Stores a sink with its subscriptions `subs`, unless `scope` already holds `max`
    /// sinks (the scope's row is locked while counting, so racing creates never pass the
    /// cap together). The connection must be `scope`'s and of the sink's kind, and every
    /// endpoint and webhook a filter names `scope`'s, else `reference_out_of_scope`:
    /// the sink and its subscriptions are written in one transaction, so a refusal
    /// stores neither.
    pub async fn create_sink(
        &self,
        new: NewSink,
        max: u32,
        subs: Vec<NewSubscription>,
    ) -> Result<(SinkRow, Vec<SubscriptionRow>)> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            lock_scope(conn, new.scope).await?;
            under_cap(conn, new.scope, max).await?;
            let row = insert_sink(conn, &new).await?;
            let subs = write_subscriptions(conn, new.scope, row.id, subs).await?;
            Ok((row, subs))
        })
        .await
    }

    /// Creates the sink of `new.scope` named `new.name`, or replaces that sink's kind,
    /// base URL, connection and mode (and, unless `keep_enabled`, whether it is
    /// enabled); its budget, tokens and subscriptions stay. Answers the sink and
    /// whether it was created. A creation obeys the cap as [`Store::create_sink`]
    /// does; either way the connection must be the scope's and of the sink's kind, else
    /// `reference_out_of_scope` and nothing changes. `subs` set: the sink's whole
    /// subscription list, written in the same transaction; none: `on_create` for a new
    /// sink, and a replaced sink keeps its own.
    pub async fn put_sink(
        &self,
        new: NewSink,
        keep_enabled: bool,
        max: u32,
        subs: Option<Vec<NewSubscription>>,
        on_create: Vec<NewSubscription>,
    ) -> Result<(SinkRow, bool)> {
        #[derive(QueryableByName)]
        struct Existing {
            #[diesel(sql_type = SqlUuid)]
            id: SinkId,
        }
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            // The scope row orders this against racing creates of the same name.
            lock_scope(conn, new.scope).await?;
            let existing: Option<Existing> = LOCK_SINK_NAME
                .query()
                .bind::<SqlUuid, _>(new.scope)
                .bind::<Text, _>(&new.name)
                .one_row(conn)
                .await
                .optional()?;
            let Some(existing) = existing else {
                under_cap(conn, new.scope, max).await?;
                let row = insert_sink(conn, &new).await?;
                write_subscriptions(conn, new.scope, row.id, subs.unwrap_or(on_create)).await?;
                return Ok((row, true));
            };
            let row = UPDATE_SINK
                .query()
                .bind::<SqlUuid, _>(existing.id)
                .bind::<SqlUuid, _>(new.scope)
                .bind::<Text, _>(new.kind)
                .bind::<Bool, _>(new.by.is_none())
                .bind::<SqlUuid, _>(new.connection_id)
                .bind::<Nullable<Text>, _>(new.apprise_mode)
                .bind::<Bool, _>(keep_enabled)
                .bind::<Bool, _>(new.enabled)
                .one_row::<SinkRow>(conn)
                .await;
            let row = match row {
                Ok(row) => row,
                Err(diesel::result::Error::NotFound) => return Err(out_of_scope(&new)),
                Err(e) => return Err(e.into()),
            };
            if new.by.is_none() {
                // An agent that re-points a sink must not carry the owner's payload
                // excerpts to another destination with it: they are the owner's to turn on.
                DROP_EXCERPTS.query().bind::<SqlUuid, _>(row.id).execute(conn).await?;
            }
            if let Some(subs) = subs {
                write_subscriptions(conn, new.scope, row.id, subs).await?;
            }
            Ok((row, false))
        })
        .await
    }

    /// The sinks in `scopes`, by name.
    pub async fn list_sinks(&self, scopes: &[ScopeId]) -> Result<Vec<SinkRow>> {
        let mut conn = self.conn().await?;
        Ok(SINKS_IN.query().bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?)
    }

    /// One sink in `scopes`, else not found.
    pub async fn sink_in(&self, scopes: &[ScopeId], id: SinkId) -> Result<SinkRow> {
        let mut conn = self.conn().await?;
        Ok(SCOPED_SINK.query().bind::<SqlUuid, _>(id).bind::<Array<SqlUuid>, _>(scopes).one_row(&mut conn).await?)
    }

    /// The sink of `scope` named `name`, if any.
    pub async fn sink_named(&self, scope: ScopeId, name: &str) -> Result<Option<SinkRow>> {
        let mut conn = self.conn().await?;
        Ok(SINK_BY_NAME.query().bind::<SqlUuid, _>(scope).bind::<Text, _>(name).one_row(&mut conn).await.optional()?)
    }

    /// Changes `id`, a sink of `scope` (else not found). A smaller burst drops the
    /// tokens above it.
    pub async fn update_sink(&self, scope: ScopeId, id: SinkId, change: SinkChange) -> Result<SinkRow> {
        let mut conn = self.conn().await?;
        Ok(SET_SINK_CONTROLS
            .query()
            .bind::<SqlUuid, _>(id)
            .bind::<SqlUuid, _>(scope)
            .bind::<Nullable<Bool>, _>(change.enabled)
            .bind::<Nullable<Int4>, _>(change.budget_per_hour)
            .bind::<Nullable<Int4>, _>(change.burst)
            .one_row(&mut conn)
            .await?)
    }

    /// Counts a test send of `id`, a sink of `scope` (else not found), against `per_minute`
    /// (in one statement, so it holds across instances): `Ok(Err(wait))` when the
    /// minute's sends are spent, `wait` being the time until its window closes.
    pub async fn count_sink_test(
        &self,
        scope: ScopeId,
        id: SinkId,
        per_minute: i32,
    ) -> Result<std::result::Result<(), std::time::Duration>> {
        #[derive(QueryableByName)]
        struct Window {
            #[diesel(sql_type = Int4)]
            sends: i32,
            #[diesel(sql_type = Double)]
            left_secs: f64,
        }
        let mut conn = self.conn().await?;
        let w: Window = TEST_WINDOW.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).one_row(&mut conn).await?;
        Ok(if w.sends > per_minute { Err(std::time::Duration::from_secs_f64(w.left_secs)) } else { Ok(()) })
    }

    /// Deletes `id`, a sink of `scope` (else not found), with its subscriptions.
    pub async fn delete_sink(&self, scope: ScopeId, id: SinkId) -> Result<()> {
        let mut conn = self.conn().await?;
        let n = DELETE_SINK.query().bind::<SqlUuid, _>(id).bind::<SqlUuid, _>(scope).execute(&mut conn).await?;
        if n == 0 { Err(Error::NotFound) } else { Ok(()) }
    }
}

statement! {
    static LOCK_SCOPE = "SELECT id FROM owner_scopes WHERE id = $1 FOR NO KEY UPDATE";
}

/// Locks `scope`'s row: creates in one scope take turns.
async fn lock_scope(conn: &mut AsyncPgConnection, scope: ScopeId) -> Result<()> {
    LOCK_SCOPE.query().bind::<SqlUuid, _>(scope).execute(conn).await?;
    Ok(())
}

statement! {
    static COUNT_SINKS = "SELECT count(*) AS n FROM sinks WHERE scope_id = $1";
}

/// Refuses when `scope` already holds `max` sinks (its row locked by [`lock_scope`], so
/// racing creates never pass the cap together).
async fn under_cap(conn: &mut AsyncPgConnection, scope: ScopeId, max: u32) -> Result<()> {
    #[derive(QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let held: Count = COUNT_SINKS.query().bind::<SqlUuid, _>(scope).one_row(conn).await?;
    if held.n >= i64::from(max) {
        return Err(Error::Conflict(format!("this owner already has {max} sinks (SWITCHBOARD_SINK_MAX)")));
    }
    Ok(())
}

statement! {
    static INSERT_SINK = format!(
        "INSERT INTO sinks (id, scope_id, name, kind, base_url, connection_id, apprise_mode, enabled, \
        budget_per_hour, burst, tokens, created_by, changed_by_agent) \
        SELECT $1, $2, $3, $4, c.base_url, c.id, $6, $7, $8, $9::int4, $9, $10::uuid, $10 IS NULL FROM connections c \
        WHERE c.id = $5 AND c.scope_id = $2 AND c.kind = $4 AND c.bound AND c.base_url IS NOT NULL \
        RETURNING {COLUMNS}"
    );
}

/// Inserts `new` with a full bucket, if its connection is the scope's and of its kind.
async fn insert_sink(conn: &mut AsyncPgConnection, new: &NewSink) -> Result<SinkRow> {
    let row = INSERT_SINK
        .query()
        .bind::<SqlUuid, _>(SinkId::new())
        .bind::<SqlUuid, _>(new.scope)
        .bind::<Text, _>(&new.name)
        .bind::<Text, _>(new.kind)
        .bind::<SqlUuid, _>(new.connection_id)
        .bind::<Nullable<Text>, _>(new.apprise_mode)
        .bind::<Bool, _>(new.enabled)
        .bind::<Int4, _>(new.budget_per_hour)
        .bind::<Int4, _>(new.burst)
        .bind::<Nullable<SqlUuid>, _>(new.by)
        .one_row::<SinkRow>(conn)
        .await;
    match row {
        Ok(row) => Ok(row),
        Err(diesel::result::Error::NotFound) => Err(out_of_scope(new)),
        Err(e) if unique_violation(&e) => {
            Err(Error::Conflict(format!("a sink named {:?} already exists for this owner", new.name)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The refusal of a connection that is unknown, another scope's or of another kind.
fn out_of_scope(new: &NewSink) -> Error {
    Error::ReferenceOutOfScope(format!(
        "reference_out_of_scope: connection {} is unknown, another owner's, not a {} connection, \
         or not bound to a destination",
        new.connection_id, new.kind
    ))
}
