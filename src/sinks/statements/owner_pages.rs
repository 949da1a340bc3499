//! An agent pages its owner (`notify_owner`): one transaction that holds the endpoint
//! row, checks the todo the page names (the endpoint's own, else not found), counts the
//! endpoint's calls of the last hour (table `agent_notify_calls`, so the limit holds
//! across instances), records the call and queues one `agent.notify` outbox row per
//! enabled sink of the endpoint's owner scope whose subscriptions match. A refusal
//! (not found, rate limited) queues nothing and records nothing.

use crate::db::one_row::OneRow;
use diesel::QueryableByName;
use diesel::sql_types::{Array, BigInt, Bool, Double, Int4, Jsonb, Nullable, Text, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

use crate::db::statement::statement;
use crate::domain::ids::{EndpointId, ScopeId, TodoId, WebhookId};
use crate::domain::text::QUARANTINE_QUEUE;
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::Severity;
use crate::store::Store;

/// One page, as the service checked it.
#[derive(Debug, Clone)]
pub struct OwnerPage {
    /// The endpoint's owner scope (whose sinks are told).
    pub scope: ScopeId,
    /// The endpoint that pages.
    pub endpoint: EndpointId,
    /// Its slug, for the message.
    pub slug: String,
    /// The agent's text, already neutralised and cut (agent-written).
    pub title: String,
    /// How loud the page is.
    pub severity: Severity,
    /// A todo of the endpoint's the page is about.
    pub todo: Option<TodoId>,
}

/// What a page came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paged {
    /// Queued for this many sinks (0: no sink subscribes).
    Enqueued(u32),
    /// The hour's pages are spent; the next is possible after this wait.
    RateLimited(std::time::Duration),
}

/// The todo a page names: its queue and the webhook it came from (the subscription
/// filters match on them).
#[derive(QueryableByName)]
struct Subject {
    #[diesel(sql_type = Text)]
    queue: String,
    #[diesel(sql_type = Nullable<SqlUuid>)]
    webhook_id: Option<WebhookId>,
}

statement! {
    static QUEUE_PAGE = "INSERT INTO outbox (sink_id, scope_id, event, severity, dedup_key, todo_id, endpoint_id, facts) \
        SELECT DISTINCT ON (k.id) k.id, k.scope_id, 'agent.notify', $3, 'agent_notify:' || $4::text, \
        $5, $2, $6 \
        FROM sinks k JOIN sink_subscriptions s ON s.sink_id = k.id \
        WHERE k.scope_id = $1 AND k.enabled \
        AND 'agent.notify' = ANY (s.events) \
        AND s.min_severity = ANY ($7) \
        AND (cardinality(s.endpoint_ids) = 0 OR $2 = ANY (s.endpoint_ids)) \
        AND (cardinality(s.queues) = 0 OR $8 = ANY (s.queues)) \
        AND (cardinality(s.webhook_ids) = 0 OR $9 = ANY (s.webhook_ids)) \
        ORDER BY k.id";
    static RECORD_CALL = "INSERT INTO agent_notify_calls (id, endpoint_id, enqueued) VALUES ($1, $2, $3)";
}

impl Store {
    /// Queues `page` for the owner's subscribed sinks unless the endpoint has made
    /// `per_hour` pages in the last hour. The todo, when named, must be the endpoint's
    /// own and not a held delivery (else not found); a revoked or expired endpoint is
    /// unauthenticated. Subscriptions match on the event (`agent.notify`), the minimum
    /// severity, the endpoint filter, and the queue and webhook filters against the
    /// named todo (a filtered subscription hears no page that names no todo). The dedup
    /// key is fresh per call, so two pages never fold into one row.
    pub async fn page_owner(&self, page: &OwnerPage, per_hour: u32) -> Result<Paged> {
        let mut conn = self.conn().await?;
        conn.transaction::<_, Error, _>(async move |conn| {
            lock_live_endpoint(conn, page.scope, page.endpoint).await?;
            let subject = match page.todo {
                Some(todo) => Some(subject(conn, page.endpoint, todo).await?),
                None => None,
            };
            if let Some(wait) = spent(conn, page.endpoint, per_hour).await? {
                return Ok(Paged::RateLimited(wait));
            }
            let call = uuid::Uuid::new_v4();
            let allowed: Vec<Severity> =
                Severity::ALL.iter().copied().filter(|min| page.severity.meets(*min)).collect();
            let facts = serde_json::json!({
                "slug": page.slug,
                "title": page.title,
                "queue": subject.as_ref().map(|s| s.queue.as_str()),
            });
            let queued = QUEUE_PAGE
                .query()
                .bind::<SqlUuid, _>(page.scope)
                .bind::<SqlUuid, _>(page.endpoint)
                .bind::<Text, _>(page.severity)
                .bind::<SqlUuid, _>(call)
                .bind::<Nullable<SqlUuid>, _>(page.todo)
                .bind::<Jsonb, _>(facts)
                .bind::<Array<Text>, _>(&allowed)
                .bind::<Nullable<Text>, _>(subject.as_ref().map(|s| s.queue.as_str()))
                .bind::<Nullable<SqlUuid>, _>(subject.as_ref().and_then(|s| s.webhook_id))
                .execute(conn)
                .await?;
            let queued = u32::try_from(queued).unwrap_or(u32::MAX);
            RECORD_CALL
                .query()
                .bind::<SqlUuid, _>(call)
                .bind::<SqlUuid, _>(page.endpoint)
                .bind::<Int4, _>(i32::try_from(queued).unwrap_or(i32::MAX))
                .execute(conn)
                .await?;
            Ok(Paged::Enqueued(queued))
        })
        .await
    }
}

statement! {
    static LOCK_ENDPOINT = "SELECT state = 'active' AND (expires_at IS NULL OR expires_at > now()) AS live \
        FROM endpoints WHERE id = $1 AND scope_id = $2 FOR NO KEY UPDATE";
}

/// Holds the endpoint row (its calls are counted one at a time): not found outside
/// `scope`, unauthenticated once revoked or expired.
async fn lock_live_endpoint(conn: &mut AsyncPgConnection, scope: ScopeId, endpoint: EndpointId) -> Result<()> {
    #[derive(QueryableByName)]
    struct Locked {
        #[diesel(sql_type = Bool)]
        live: bool,
    }
    let locked: Locked =
        LOCK_ENDPOINT.query().bind::<SqlUuid, _>(endpoint).bind::<SqlUuid, _>(scope).one_row(conn).await?;
    if locked.live { Ok(()) } else { Err(Error::Unauthenticated) }
}

statement! {
    static PAGED_TODO = "SELECT t.queue, e.webhook_id FROM todos t LEFT JOIN events e ON e.id = t.event_id \
        WHERE t.id = $1 AND t.endpoint_id = $2 AND t.queue <> $3";
}

/// The todo `todo` of `endpoint` (not a held delivery), else not found.
async fn subject(conn: &mut AsyncPgConnection, endpoint: EndpointId, todo: TodoId) -> Result<Subject> {
    Ok(PAGED_TODO
        .query()
        .bind::<SqlUuid, _>(todo)
        .bind::<SqlUuid, _>(endpoint)
        .bind::<Text, _>(QUARANTINE_QUEUE)
        .one_row(conn)
        .await?)
}

statement! {
    static FORGET_OLD_CALLS = "DELETE FROM agent_notify_calls WHERE endpoint_id = $1 AND created_at <= now() - interval '1 hour'";
    static CALL_WINDOW = "SELECT count(*) AS calls, \
        COALESCE(GREATEST(0, EXTRACT(EPOCH FROM min(created_at) + interval '1 hour' - now())), 0)::float8 \
        AS left_secs \
        FROM agent_notify_calls WHERE endpoint_id = $1";
}

/// Prunes the endpoint's calls older than an hour and, when `per_hour` remain, answers
/// how long until the oldest of them leaves the window.
async fn spent(
    conn: &mut AsyncPgConnection,
    endpoint: EndpointId,
    per_hour: u32,
) -> Result<Option<std::time::Duration>> {
    #[derive(QueryableByName)]
    struct Window {
        #[diesel(sql_type = BigInt)]
        calls: i64,
        #[diesel(sql_type = Double)]
        left_secs: f64,
    }
    FORGET_OLD_CALLS.query().bind::<SqlUuid, _>(endpoint).execute(conn).await?;
    let w: Window = CALL_WINDOW.query().bind::<SqlUuid, _>(endpoint).one_row(conn).await?;
    Ok((w.calls >= i64::from(per_hour)).then(|| std::time::Duration::from_secs_f64(w.left_secs)))
}
