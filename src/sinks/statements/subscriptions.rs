//! A sink's subscriptions: which events it is told about, filtered by queue, endpoint
//! and webhook, from a minimum severity, with or without an excerpt of the subject.

use crate::db::one_row::OneRow;
use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Bool, Int4, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId, SinkId, WebhookId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::{Severity, SinkEvent};
use crate::store::Store;

/// One subscription as stored.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct SubscriptionRow {
    /// Its place in the sink's list.
    #[diesel(sql_type = Int4)]
    pub position: i32,
    /// The events it matches.
    #[diesel(sql_type = Array<Text>)]
    pub events: Vec<SinkEvent>,
    /// Only these queues (empty: any).
    #[diesel(sql_type = Array<Text>)]
    pub queues: Vec<String>,
    /// Only these endpoints (empty: any).
    #[diesel(sql_type = Array<SqlUuid>)]
    pub endpoint_ids: Vec<EndpointId>,
    /// Only these webhooks (empty: any).
    #[diesel(sql_type = Array<SqlUuid>)]
    pub webhook_ids: Vec<WebhookId>,
    /// Events below this severity are not sent.
    #[diesel(sql_type = Text)]
    pub min_severity: Severity,
    /// Whether messages carry up to 280 characters of the subject's body.
    #[diesel(sql_type = Bool)]
    pub include_excerpt: bool,
}

/// A subscription to store (validated by the service).
#[derive(Debug, Clone, PartialEq)]
pub struct NewSubscription {
    /// The events it matches (at least one).
    pub events: Vec<SinkEvent>,
    /// Only these queues.
    pub queues: Vec<String>,
    /// Only these endpoints (of the sink's scope).
    pub endpoint_ids: Vec<EndpointId>,
    /// Only these webhooks (of the sink's scope).
    pub webhook_ids: Vec<WebhookId>,
    /// The minimum severity.
    pub min_severity: Severity,
    /// Whether to include an excerpt.
    pub include_excerpt: bool,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

statement! {
    static LOCK_SINK = "SELECT id FROM sinks WHERE id = $1 AND scope_id = $2 FOR NO KEY UPDATE";
    static COUNT_ENDPOINTS = "SELECT count(*) AS n FROM endpoints WHERE id = ANY($1) AND scope_id = $2";
    static COUNT_WEBHOOKS = "SELECT count(*) AS n FROM webhooks WHERE id = ANY($1) AND scope_id = $2";
    static CLEAR_SUBSCRIPTIONS = "DELETE FROM sink_subscriptions WHERE sink_id = $1";
    static INSERT_SUBSCRIPTION = "INSERT INTO sink_subscriptions (id, sink_id, position, events, queues, endpoint_ids, webhook_ids, \
        min_severity, include_excerpt) VALUES (gen_random_uuid(), $1, $2, $3, $4, $5, $6, $7, $8) \
        RETURNING position, events, queues, endpoint_ids, webhook_ids, min_severity, include_excerpt";
    static SUBSCRIPTIONS_OF = "SELECT s.position, s.events, s.queues, s.endpoint_ids, s.webhook_ids, s.min_severity, s.include_excerpt \
        FROM sink_subscriptions s JOIN sinks k ON k.id = s.sink_id \
        WHERE s.sink_id = $1 AND k.scope_id = ANY($2) ORDER BY s.position";
    static SUBSCRIPTION_COUNTS = "SELECT k.id AS sink_id, count(s.id) AS n \
        FROM sinks k LEFT JOIN sink_subscriptions s ON s.sink_id = k.id \
        WHERE k.scope_id = ANY($1) GROUP BY k.id";
}

impl Store {
    /// Replaces the subscriptions of `sink`, a sink of `scope` (else not found), in one
    /// transaction. Every endpoint and webhook a filter names must belong to `scope`,
    /// else `reference_out_of_scope` and nothing changes.
    pub async fn set_subscriptions(
        &self,
        scope: ScopeId,
        sink: SinkId,
        subs: Vec<NewSubscription>,
    ) -> Result<Vec<SubscriptionRow>> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            // The sink row orders concurrent replacements of the same list.
            let found = LOCK_SINK.query().bind::<SqlUuid, _>(sink).bind::<SqlUuid, _>(scope).execute(conn).await?;
            if found == 0 {
                return Err(Error::NotFound);
            }
            write_subscriptions(conn, scope, sink, subs).await
        })
        .await
    }

    /// How many subscriptions each sink in `scopes` holds (a sink with none hears
    /// nothing: the Board marks it).
    pub async fn subscription_counts(&self, scopes: &[ScopeId]) -> Result<std::collections::HashMap<SinkId, i64>> {
        #[derive(QueryableByName)]
        struct PerSink {
            #[diesel(sql_type = SqlUuid)]
            sink_id: SinkId,
            #[diesel(sql_type = BigInt)]
            n: i64,
        }
        let mut conn = self.conn().await?;
        let rows: Vec<PerSink> = SUBSCRIPTION_COUNTS.query().bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?;
        Ok(rows.into_iter().map(|r| (r.sink_id, r.n)).collect())
    }

    /// The subscriptions of `sink`, a sink in `scopes` (else not found), in order.
    pub async fn subscriptions_of(&self, scopes: &[ScopeId], sink: SinkId) -> Result<Vec<SubscriptionRow>> {
        let mut conn = self.conn().await?;
        let rows: Vec<SubscriptionRow> =
            SUBSCRIPTIONS_OF.query().bind::<SqlUuid, _>(sink).bind::<Array<SqlUuid>, _>(scopes).load(&mut conn).await?;
        Ok(rows)
    }
}

/// Writes `subs` as the whole subscription list of `sink`, a sink of `scope` whose row
/// the caller holds in this transaction: every endpoint and webhook a filter names must
/// be `scope`'s, else `reference_out_of_scope` (and the caller's transaction rolls back).
pub(super) async fn write_subscriptions(
    conn: &mut AsyncPgConnection,
    scope: ScopeId,
    sink: SinkId,
    subs: Vec<NewSubscription>,
) -> Result<Vec<SubscriptionRow>> {
    let mut endpoints: Vec<EndpointId> = subs.iter().flat_map(|s| s.endpoint_ids.iter().copied()).collect();
    endpoints.sort();
    endpoints.dedup();
    let mut webhooks: Vec<WebhookId> = subs.iter().flat_map(|s| s.webhook_ids.iter().copied()).collect();
    webhooks.sort();
    webhooks.dedup();
    let own_endpoints: Count =
        COUNT_ENDPOINTS.query().bind::<Array<SqlUuid>, _>(&endpoints).bind::<SqlUuid, _>(scope).one_row(conn).await?;
    let own_webhooks: Count =
        COUNT_WEBHOOKS.query().bind::<Array<SqlUuid>, _>(&webhooks).bind::<SqlUuid, _>(scope).one_row(conn).await?;
    if own_endpoints.n != endpoints.len() as i64 || own_webhooks.n != webhooks.len() as i64 {
        return Err(Error::ReferenceOutOfScope(
            "reference_out_of_scope: a filter names an endpoint or webhook that is unknown or another owner's".into(),
        ));
    }
    CLEAR_SUBSCRIPTIONS.query().bind::<SqlUuid, _>(sink).execute(conn).await?;
    let mut out = Vec::with_capacity(subs.len());
    for (position, s) in subs.into_iter().enumerate() {
        let row: SubscriptionRow = INSERT_SUBSCRIPTION
            .query()
            .bind::<SqlUuid, _>(sink)
            .bind::<Int4, _>(i32::try_from(position).unwrap_or(i32::MAX))
            .bind::<Array<Text>, _>(&s.events)
            .bind::<Array<Text>, _>(&s.queues)
            .bind::<Array<SqlUuid>, _>(&s.endpoint_ids)
            .bind::<Array<SqlUuid>, _>(&s.webhook_ids)
            .bind::<Text, _>(s.min_severity)
            .bind::<Bool, _>(s.include_excerpt)
            .one_row(conn)
            .await?;
        out.push(row);
    }
    Ok(out)
}
