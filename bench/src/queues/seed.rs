//! The Queues benchmark's data: one owner (the viewer) with 20 endpoints of 10 queues
//! each (200 queues), and todos in a service's proportions written with
//! `INSERT … SELECT generate_series`, every one of them the viewer's.
//!
//! Todo `g` lives on queue `g % 200`; its bucket `(g / 200) % 100` decides its state:
//! 30 % pending, 5 % claimed (one in five of those with its lease lapsed: stalled), 2 %
//! waiting for input, 3 % failed with a retry scheduled, 5 % dead letters (each with
//! the attempt that closed it, inserted as the product does, so the failed-attempt log
//! fills), 55 % done. Everything happened within the last 48 hours (a golden-ratio
//! spread), so the census's first pass has a full day of completions to count.

use switchboard::domain::grants::Verb;
use switchboard::domain::ids::ScopeId;
use switchboard::domain::passwords::hash_password;
use switchboard::store::endpoints::VendEndpoint;

use crate::BenchResult;
use crate::database::BenchDb;

/// Endpoints of the viewer.
pub const ENDPOINTS: usize = 20;
/// Queues per endpoint.
pub const QUEUES_PER_ENDPOINT: usize = 10;
/// The viewer, who signs in to the Board.
pub const VIEWER_EMAIL: &str = "viewer@queues.bench";
/// The viewer's password (a database of its own, dropped after the run).
pub const VIEWER_PASSWORD: &str = "queues bench viewer password";

/// The viewer's scope and operator token.
pub struct Viewer {
    /// Their scope: every endpoint is in it.
    pub scope: ScopeId,
    /// Their `sbo_…` token, for the API.
    pub token: String,
}

/// Creates the viewer and their endpoints `queues-00` … `queues-19`.
pub async fn viewer(db: &BenchDb) -> BenchResult<Viewer> {
    let store = db.store(2)?;
    let hash = hash_password(VIEWER_PASSWORD).map_err(|e| e.to_string())?;
    let human = store.create_human(VIEWER_EMAIL, "Viewer", Some(hash)).await.map_err(|e| e.to_string())?;
    for n in 0..ENDPOINTS {
        store
            .vend_endpoint(VendEndpoint {
                scope: human.scope,
                slug: format!("queues-{n:02}"),
                grants: Verb::ALL.to_vec(),
                default_lease_seconds: None,
                expires_at: None,
            })
            .await
            .map_err(|e| format!("vending queues-{n:02}: {e}"))?;
    }
    Ok(Viewer { scope: human.scope, token: human.token })
}

/// Writes todos `1 ..= n` and the closing attempt of each dead letter among them.
pub async fn todos(db: &BenchDb, n: u64) -> BenchResult<()> {
    let queues = ENDPOINTS * QUEUES_PER_ENDPOINT;
    let sql = format!(
        "WITH eps AS ( \
           SELECT id, scope_id, (row_number() OVER (ORDER BY slug) - 1)::int AS n FROM endpoints \
           WHERE slug LIKE 'queues-%'), \
         src AS ( \
           SELECT g, ((g / {queues}) % 100)::int AS bucket, (g % {queues})::int AS q, \
             now() - interval '48 hours' * ((g * 0.6180339887498949) - floor(g * 0.6180339887498949)) AS at \
           FROM generate_series(1::bigint, {n}::bigint) g) \
         INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, max_attempts, \
           attempts_total, lease_expires_at, interrupt_expires_at, interrupt_wait_seconds, next_retry_at, \
           dead_reason, dead_lettered_at, dead_letter_count, created_at, updated_at, claimed_at, completed_at) \
         SELECT gen_random_uuid(), eps.id, eps.scope_id, 'queue-' || (src.q % {per}), 'bench #' || g, \
           CASE WHEN bucket < 30 THEN 'pending' WHEN bucket < 35 THEN 'claimed' WHEN bucket < 37 THEN 'input_required' \
                WHEN bucket < 45 THEN 'failed' ELSE 'done' END, \
           CASE WHEN bucket < 30 THEN 0 WHEN bucket < 40 THEN 1 WHEN bucket < 45 THEN 5 ELSE 1 END, 5, \
           CASE WHEN bucket < 30 THEN 0 WHEN bucket < 40 THEN 1 WHEN bucket < 45 THEN 5 ELSE 1 END, \
           CASE WHEN bucket = 30 THEN now() - interval '1 minute' WHEN bucket BETWEEN 31 AND 34 THEN now() + interval '5 minutes' END, \
           CASE WHEN bucket BETWEEN 35 AND 36 THEN now() + interval '1 hour' END, \
           CASE WHEN bucket BETWEEN 35 AND 36 THEN 3600 END, \
           CASE WHEN bucket BETWEEN 37 AND 39 THEN now() + interval '2 minutes' END, \
           CASE WHEN bucket BETWEEN 40 AND 44 THEN 'attempts_exhausted' END, \
           CASE WHEN bucket BETWEEN 40 AND 44 THEN at END, \
           CASE WHEN bucket BETWEEN 40 AND 44 THEN 1 ELSE 0 END, \
           at, at, CASE WHEN bucket BETWEEN 30 AND 36 OR bucket >= 45 THEN at END, CASE WHEN bucket >= 45 THEN at END \
         FROM src JOIN eps ON eps.n = src.q / {per}",
        per = QUEUES_PER_ENDPOINT
    );
    db.client().batch_execute(&sql).await.map_err(|e| format!("seeding {n} todos: {e}"))?;
    let attempts = "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, claimed_at, \
           lease_expires_at, ended_at, outcome, disposition, summary) \
         SELECT t.id, 5, t.endpoint_id, 'bench/agent', t.dead_lettered_at - interval '5 minutes', \
           t.dead_lettered_at, t.dead_lettered_at, 'failed', 'dead_lettered', 'exit status 1' \
         FROM todos t WHERE t.state = 'failed' AND t.next_retry_at IS NULL";
    db.client().batch_execute(attempts).await.map_err(|e| format!("seeding attempts: {e}"))?;
    for sql in ["VACUUM (ANALYZE) todos", "VACUUM (ANALYZE) todo_attempts"] {
        db.client().batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }
    Ok(())
}
