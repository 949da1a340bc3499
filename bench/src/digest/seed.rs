//! The digest benchmark's data: three owners of 20 endpoints × 10 queues each (the
//! digest is built for the first; the other two hold as much, so the scope filter
//! matters), and 30 days of a service's history written with
//! `INSERT … SELECT generate_series` (tenancy, webhooks, presence and the digest itself
//! through the library's `Store`).
//!
//! Todo `g` (1, 2, …) lives on endpoint `g % 60` and queue `(g / 60) % 10`, so every
//! queue of every owner gets the same mix. A hash of `g` draws its kind (per mille):
//! 10 dead letters, 3 failed with a retry scheduled, 8 pending, 3 held in quarantine,
//! 4 claimed, 2 waiting for input, 10 canceled, 960 done. Terminal todos (and the
//! quarantine) are created evenly over the 30 days the default retention keeps
//! (a golden-ratio sequence, so every prefix of `g` is as evenly spread as the whole and
//! growing the table keeps its shape); live ones are recent (pending: the last 6 hours;
//! claimed: 20 to 60 minutes ago). A second hash draws what varies within a kind:
//! 5 % of done todos were claimed 30 minutes after their doorbell (unheard), 10 % of
//! leases have lapsed (stalled), 10 % of notifications were undeliverable, 3 % of
//! todos also cost a claim deferred by an admission budget (counted per queue and hour).
//!
//! Every table is written in time order, as a live service appends its rows (so one
//! day's rows sit together on disk, not spread over the whole table); growing the
//! data appends the new rows, again in time order.
//!
//! Beside each todo: its attempts (one per claim: done, dead letters, retries, open
//! claims), a webhook delivery (`events`, three sources of four; quarantined ones
//! `quarantined`), one dropped delivery per twenty todos, a `todo.ready` doorbell ring
//! for every drainable todo on the even endpoints (those with a notify hook), and an
//! outbox row per dead letter and per quarantined delivery. No sink exists (so the
//! outbox triggers add nothing): the rows are written as the outbox worker leaves them,
//! with `sink_id` NULL as for a deleted sink.

use switchboard::digests::rules::schedule::Schedule;
use switchboard::digests::statements::{DigestRow, DigestSpec};
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::ScopeId;
use switchboard::domain::todo_state::Presence;
use switchboard::intake::verify::SourceType;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::webhooks::NewWebhook;
use switchboard::vault::Vault;

use crate::BenchResult;
use crate::database::BenchDb;

/// Owners; the digest is built for the first.
pub const OWNERS: usize = 3;
/// Endpoints per owner.
pub const ENDPOINTS_PER_OWNER: usize = 20;
/// Queues per endpoint (all ten used on every endpoint).
pub const QUEUES: [&str; 10] =
    ["builds", "deploys", "triage", "reviews", "alerts", "billing", "support", "docs", "security", "releases"];
/// Days of history (the default retention).
pub const HISTORY_DAYS: u32 = 30;
/// Every seventh endpoint (`n % 7 == 3`) has clocked out; the others are clocked in.
pub const CLOCKED_OUT_EVERY: usize = 7;

/// The shape `queue_deferrals` has on the branch that adds it (migration 000017),
/// created only where that migration has not run.
const QUEUE_DEFERRALS: &str = "CREATE TABLE IF NOT EXISTS queue_deferrals ( \
       endpoint_id uuid NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE, \
       queue text NOT NULL, \
       hour timestamptz NOT NULL, \
       reason text NOT NULL, \
       count integer NOT NULL, \
       PRIMARY KEY (endpoint_id, queue, hour, reason))";

/// Who the digest is built for.
#[derive(Debug, Clone)]
pub struct Tenancy {
    /// The digest's owner scope.
    pub scope: ScopeId,
    /// The digest (every queue, first send: covers the day before).
    pub digest: DigestRow,
    /// Whether the bench created `queue_deferrals` (absent from this tree's migrations).
    pub created_deferrals: bool,
}

/// Creates `queue_deferrals` if no migration made it; answers whether it did.
pub async fn ensure_deferrals(db: &BenchDb) -> BenchResult<bool> {
    let row = db
        .client()
        .query_one("SELECT to_regclass('queue_deferrals') IS NULL", &[])
        .await
        .map_err(|e| format!("looking for queue_deferrals: {e}"))?;
    let absent: bool = row.get(0);
    if absent {
        db.client().batch_execute(QUEUE_DEFERRALS).await.map_err(|e| format!("creating queue_deferrals: {e}"))?;
    }
    Ok(absent)
}

/// Creates the owners, their endpoints (`digest-00` … `digest-59`, endpoint `n` owned
/// by owner `n / 20`), a generic webhook on each, everyone's presence, and the digest.
pub async fn tenancy(db: &BenchDb) -> BenchResult<Tenancy> {
    let created_deferrals = ensure_deferrals(db).await?;
    let store = db.store(2)?;
    let vault = Vault::new(None);
    let mut humans = Vec::new();
    for i in 1..=OWNERS {
        let email = format!("owner{i}@digest.bench");
        humans.push(store.create_human(&email, &format!("Owner {i}"), None).await.map_err(|e| e.to_string())?);
    }
    for n in 0..OWNERS * ENDPOINTS_PER_OWNER {
        let scope = humans[n / ENDPOINTS_PER_OWNER].scope;
        let slug = format!("digest-{n:02}");
        let vended = store
            .vend_endpoint(VendEndpoint {
                scope,
                slug: slug.clone(),
                grants: Verb::ALL.to_vec(),
                default_lease_seconds: None,
                expires_at: None,
            })
            .await
            .map_err(|e| format!("vending {slug}: {e}"))?;
        let id = vended.endpoint.id;
        store
            .create_webhook(
                &vault,
                NewWebhook {
                    scope,
                    endpoint_id: id,
                    source_type: SourceType::Generic,
                    queue: QUEUES[0].into(),
                    max_attempts: None,
                    trusted_actors: None,
                    secret: None,
                    unverified: false,
                },
            )
            .await
            .map_err(|e| format!("a webhook for {slug}: {e}"))?;
        let presence = if n % CLOCKED_OUT_EVERY == 3 { Presence::Out } else { Presence::In };
        store.set_presence(scope, id, presence).await.map_err(|e| format!("presence of {slug}: {e}"))?;
    }
    let owner = &humans[0];
    let schedule = Schedule::parse("Mon-Sun 09:00").map_err(|e| e.to_string())?;
    let digest = store
        .create_digest(
            owner.scope,
            DigestSpec {
                name: "Morning".into(),
                schedule: schedule.to_string(),
                queues: Vec::new(),
                sink_ids: Vec::new(),
                skip_when_quiet: true,
                age_threshold_seconds: 3600,
                cairn_connection_id: None,
                cairn_ttl_seconds: 604_800,
                next_send_at: schedule.next_after(chrono::Utc::now()),
            },
            owner.human.id,
        )
        .await
        .map_err(|e| format!("creating the digest: {e}"))?;
    Ok(Tenancy { scope: owner.scope, digest, created_deferrals })
}

/// The staging table of todos `from ..= to`: everything the inserts below derive from
/// (ids are md5 of `g`, so a row's delivery, attempts and ring name it without a join).
fn staging(from: u64, to: u64) -> String {
    let endpoints = OWNERS * ENDPOINTS_PER_OWNER;
    let queues = QUEUES.map(|q| format!("'{q}'")).join(", ");
    format!(
        "CREATE TEMP TABLE seed ON COMMIT DROP AS \
         WITH eps AS ( \
           SELECT id, scope_id, (row_number() OVER (ORDER BY slug) - 1)::int AS n FROM endpoints \
           WHERE slug LIKE 'digest-%'), \
         src AS ( \
           SELECT g, ((hashint8(g)::int8 % 1000 + 1000) % 1000)::int AS b, \
             ((hashint8(g * 7 + 3)::int8 % 100 + 100) % 100)::int AS r, \
             (g % {endpoints})::int AS ep, (ARRAY[{queues}])[1 + (g / {endpoints}) % 10] AS queue, \
             (g * 0.6180339887498949) - floor(g * 0.6180339887498949) AS f \
           FROM generate_series({from}::bigint, {to}::bigint) g), \
         kinds AS ( \
           SELECT src.*, CASE WHEN b < 10 THEN 'dead' WHEN b < 13 THEN 'retry' WHEN b < 21 THEN 'pending' \
             WHEN b < 24 THEN 'quarantine' WHEN b < 28 THEN 'claimed' WHEN b < 30 THEN 'input' \
             WHEN b < 40 THEN 'canceled' ELSE 'done' END AS kind FROM src) \
         SELECT k.g, k.r, k.kind, k.ep, eps.id AS endpoint_id, eps.scope_id, \
           CASE WHEN k.kind = 'quarantine' THEN 'quarantine' ELSE k.queue END AS queue, \
           md5('digest-todo-' || k.g)::uuid AS todo_id, \
           CASE WHEN k.g % 4 <> 2 OR k.kind = 'quarantine' THEN md5('digest-event-' || k.g)::uuid END AS event_id, \
           (ARRAY['github', 'stripe', 'agent', 'gitea'])[1 + k.g % 4] AS source, \
           CASE k.kind WHEN 'retry' THEN now() - interval '1 hour' * k.f \
             WHEN 'pending' THEN now() - interval '6 hours' * k.f \
             WHEN 'claimed' THEN now() - interval '20 minutes' - interval '40 minutes' * k.f \
             WHEN 'input' THEN now() - interval '1 day' * k.f \
             ELSE now() - interval '{HISTORY_DAYS} days' * k.f END AS at \
         FROM kinds k JOIN eps ON eps.n = k.ep"
    )
}

/// The todos themselves, from the staging table.
const TODOS: &str = "INSERT INTO todos (id, endpoint_id, scope_id, queue, source, kind, title, event_id, state, \
       attempt, max_attempts, attempts_total, claimed_by, lease_expires_at, interrupt_reason, interrupt_expires_at, \
       interrupt_wait_seconds, next_retry_at, dead_reason, dead_lettered_at, dead_letter_count, created_at, \
       updated_at, claimed_at, completed_at, quarantine_reason) \
     SELECT todo_id, endpoint_id, scope_id, queue, source, \
       (ARRAY['push', 'invoice.paid', 'task', 'pull_request'])[1 + g % 4], 'bench ' || queue || ' #' || g, event_id, \
       CASE kind WHEN 'dead' THEN 'failed' WHEN 'retry' THEN 'failed' WHEN 'quarantine' THEN 'pending' \
         WHEN 'input' THEN 'input_required' ELSE kind END, \
       CASE WHEN kind IN ('pending', 'quarantine', 'canceled') THEN 0 ELSE 1 END, \
       CASE kind WHEN 'dead' THEN 1 ELSE 5 END, \
       CASE WHEN kind IN ('pending', 'quarantine', 'canceled') THEN 0 ELSE 1 END, \
       CASE WHEN kind IN ('claimed', 'input', 'done', 'dead', 'retry') THEN endpoint_id END, \
       CASE WHEN kind = 'claimed' THEN \
         CASE WHEN r < 10 THEN now() - interval '5 minutes' ELSE now() + interval '10 minutes' END END, \
       CASE WHEN kind = 'input' THEN 'which environment?' END, \
       CASE WHEN kind = 'input' THEN now() + interval '1 hour' END, \
       CASE WHEN kind = 'input' THEN 86400 END, \
       CASE WHEN kind = 'retry' THEN now() + interval '2 minutes' END, \
       CASE WHEN kind = 'dead' THEN \
         CASE WHEN r % 2 = 0 THEN 'attempts_exhausted' ELSE 'lease_expired' END END, \
       CASE WHEN kind = 'dead' THEN least(at + interval '20 minutes', now()) END, \
       CASE WHEN kind = 'dead' THEN 1 ELSE 0 END, \
       at, at, \
       CASE WHEN kind IN ('claimed', 'input', 'done', 'dead', 'retry') THEN at + interval '30 seconds' END, \
       CASE WHEN kind = 'done' THEN at + interval '90 seconds' END, \
       CASE WHEN kind = 'quarantine' THEN 'untrusted_actor' END \
     FROM seed ORDER BY at";

/// One delivery per webhook-sourced todo (written first: todos reference them), and
/// one dropped delivery per twenty todos.
const EVENTS: &str = "INSERT INTO events (id, scope_id, endpoint_id, webhook_id, source, event_type, external_id, \
       trust_mode, verified, payload_size, disposition, received_at) \
     SELECT CASE WHEN d.dropped THEN gen_random_uuid() ELSE s.event_id END, s.scope_id, s.endpoint_id, w.id, s.source, 'push', \
       CASE WHEN d.dropped THEN 'drop-' ELSE 'delivery-' END || s.g, 'token', false, 512, \
       CASE WHEN d.dropped THEN 'dropped' WHEN s.kind = 'quarantine' THEN 'quarantined' ELSE 'routed' END, s.at \
     FROM seed s JOIN webhooks w ON w.endpoint_id = s.endpoint_id \
     CROSS JOIN LATERAL (VALUES (false), (true)) d(dropped) \
     WHERE (NOT d.dropped AND s.event_id IS NOT NULL) OR (d.dropped AND s.g % 20 = 7) ORDER BY s.at";

/// The attempts: a finished one for done todos (5 % claimed 30 minutes after their
/// doorbell), dead letters and retries, an open one for each claim.
const ATTEMPTS: &str = "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, claimed_at, \
       lease_expires_at, ended_at, outcome, disposition, summary) \
     SELECT todo_id, 1, endpoint_id, 'bench/agent', c.at, \
       CASE WHEN kind = 'claimed' THEN \
         CASE WHEN r < 10 THEN now() - interval '5 minutes' ELSE now() + interval '10 minutes' END \
         ELSE c.at + interval '10 minutes' END, \
       CASE kind WHEN 'claimed' THEN NULL WHEN 'dead' THEN least(s.at + interval '20 minutes', now()) \
         ELSE c.at + interval '1 minute' END, \
       CASE kind WHEN 'claimed' THEN NULL WHEN 'done' THEN 'completed' \
         WHEN 'dead' THEN CASE WHEN r % 2 = 0 THEN 'failed' ELSE 'lease_expired' END ELSE 'failed' END, \
       CASE kind WHEN 'claimed' THEN NULL WHEN 'done' THEN 'done' WHEN 'dead' THEN 'dead_lettered' \
         ELSE 'retry_scheduled' END, \
       CASE WHEN kind IN ('dead', 'retry') THEN 'step 3 of 4 failed: exit status 1' END \
     FROM seed s CROSS JOIN LATERAL (SELECT s.at + CASE WHEN s.kind = 'done' AND s.r < 5 \
       THEN interval '30 minutes' ELSE interval '30 seconds' END AS at) c \
     WHERE kind IN ('done', 'dead', 'retry', 'claimed') ORDER BY c.at";

/// A `todo.ready` ring, a second after creation, for every drainable todo on the
/// endpoints with a notify hook (the even ones).
const RINGS: &str = "INSERT INTO doorbell_rings (todo_id, endpoint_id, queue, rung_at) \
     SELECT todo_id, endpoint_id, queue, at + interval '1 second' FROM seed \
     WHERE ep % 2 = 0 AND kind <> 'quarantine' ORDER BY at";

/// What the sinks were told about each dead letter and quarantined delivery, as the
/// worker leaves it: sent, or (10 %) undeliverable after five attempts.
const OUTBOX: &str = "INSERT INTO outbox (scope_id, event, severity, dedup_key, todo_id, endpoint_id, status, \
       attempts, next_attempt_at, last_error, created_at, sent_at) \
     SELECT scope_id, CASE kind WHEN 'dead' THEN 'todo.dead_lettered' ELSE 'delivery.quarantined' END, \
       CASE kind WHEN 'dead' THEN 'high' ELSE 'normal' END, kind || ':' || todo_id, todo_id, endpoint_id, \
       CASE WHEN r >= 90 THEN 'undeliverable' ELSE 'sent' END, CASE WHEN r >= 90 THEN 5 ELSE 1 END, \
       least(t.at + CASE WHEN r >= 90 THEN interval '40 minutes' ELSE interval '1 second' END, now()), \
       CASE WHEN r >= 90 THEN 'http_status_500' END, t.at, \
       CASE WHEN r < 90 THEN t.at + interval '1 second' END \
     FROM seed s CROSS JOIN LATERAL (SELECT CASE s.kind WHEN 'dead' \
       THEN least(s.at + interval '20 minutes', now()) ELSE s.at END AS at) t \
     WHERE kind IN ('dead', 'quarantine') ORDER BY t.at";

/// Claims refused by admission budgets, per queue, hour and reason.
const DEFERRALS: &str = "INSERT INTO queue_deferrals (endpoint_id, queue, hour, reason, count) \
     SELECT endpoint_id, queue, date_trunc('hour', at), \
       (ARRAY['paused', 'in_flight_full', 'window_exhausted'])[1 + g % 3], count(*) \
     FROM seed WHERE r BETWEEN 50 AND 52 AND kind <> 'quarantine' GROUP BY 1, 2, 3, 4 ORDER BY 3 \
     ON CONFLICT (endpoint_id, queue, hour, reason) DO UPDATE SET count = queue_deferrals.count + EXCLUDED.count";

/// The doorbell acknowledgement window the digest is built with, and its rings are
/// decided with (the server's default).
pub const ACK_SECONDS: i64 = 900;

/// The tables the data lives in, vacuumed and analyzed after each seeding.
pub const TABLES: [&str; 8] =
    ["todos", "todo_attempts", "events", "doorbell_rings", "outbox", "queue_deferrals", "endpoints", "webhooks"];

/// Writes todos `from ..= to` and everything beside them, in one transaction (one
/// `now()`), then `VACUUM (ANALYZE)`s every table.
pub async fn todos(db: &BenchDb, from: u64, to: u64) -> BenchResult<()> {
    let script = ["BEGIN", &staging(from, to), EVENTS, TODOS, ATTEMPTS, RINGS, OUTBOX, DEFERRALS, "COMMIT"].join(";\n");
    if let Err(e) = db.client().batch_execute(&script).await {
        let _ = db.client().batch_execute("ROLLBACK").await;
        return Err(format!("seeding todos {from}–{to}: {e}"));
    }
    // The rings past their window decided as the digest scheduler decides them each
    // tick (heard: deleted; unheard: marked), through the library's own statement.
    let store = db.store(2)?;
    while store.decide_doorbells(ACK_SECONDS, 10_000).await.map_err(|e| e.to_string())? > 0 {}
    for table in TABLES {
        let sql = format!("VACUUM (ANALYZE) {table}");
        db.client().batch_execute(&sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }
    Ok(())
}

/// Rows by kind, everyone's and the digest owner's: what the figures ran on.
pub async fn census(db: &BenchDb, scope: ScopeId) -> BenchResult<Vec<(String, i64, i64)>> {
    let rows = db
        .client()
        .query(
            "SELECT k, n, o FROM ( \
               SELECT CASE WHEN queue = 'quarantine' THEN 'todos: quarantine' \
                           WHEN state = 'failed' AND next_retry_at IS NULL THEN 'todos: dead letter' \
                           WHEN state = 'failed' THEN 'todos: failed, retry scheduled' \
                           WHEN state = 'claimed' AND lease_expires_at < now() THEN 'todos: claimed, lease lapsed' \
                           ELSE 'todos: ' || state END AS k, \
                 count(*) AS n, count(*) FILTER (WHERE scope_id = $1::text::uuid) AS o, 0 AS t \
               FROM todos GROUP BY 1 \
               UNION ALL SELECT 'todo_attempts', count(*), count(*) FILTER (WHERE e.scope_id = $1::text::uuid), 1 \
                 FROM todo_attempts a JOIN endpoints e ON e.id = a.claimer_endpoint_id \
               UNION ALL SELECT 'events (' || disposition || ')', count(*), \
                 count(*) FILTER (WHERE scope_id = $1::text::uuid), 2 FROM events GROUP BY disposition \
               UNION ALL SELECT 'doorbell_rings', count(*), count(*) FILTER (WHERE e.scope_id = $1::text::uuid), 3 \
                 FROM doorbell_rings r JOIN endpoints e ON e.id = r.endpoint_id \
               UNION ALL SELECT 'outbox (' || status || ')', count(*), \
                 count(*) FILTER (WHERE scope_id = $1::text::uuid), 4 FROM outbox GROUP BY status \
               UNION ALL SELECT 'queue_deferrals', count(*), count(*) FILTER (WHERE e.scope_id = $1::text::uuid), 5 \
                 FROM queue_deferrals d JOIN endpoints e ON e.id = d.endpoint_id) c \
             ORDER BY t, n DESC, k",
            &[&scope.0.to_string()],
        )
        .await
        .map_err(|e| format!("counting the seeded rows: {e}"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
}
