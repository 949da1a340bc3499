//! The Board benchmark's data: five owners (four humans and a team), ten endpoints
//! each, and todos in the proportions of a service that has run for 90 days, written
//! with `INSERT … SELECT generate_series` (tenancy through the library's `Store`).
//!
//! Todo `g` (1, 2, …) lives on endpoint `(g / 100) % 50`, so every endpoint and owner
//! gets the same mix; its bucket `g % 100` decides its state: 10 % dead letters (each
//! with the attempt that closed it), 5 % failed with a retry scheduled, 20 % pending
//! (one in twenty of those held in quarantine), 5 % claimed, 2 % waiting for input,
//! 2 % canceled, 56 % done. Creation times spread evenly over the last 90 days (a
//! golden-ratio sequence, so every prefix of `g` is as evenly spread as the whole and
//! growing the table keeps its shape); a dead letter died 20 minutes after it was
//! created. Five queues, four sources and kinds, titles `bench <queue> #<g>`.

use switchboard::domain::grants::Verb;
use switchboard::domain::ids::ScopeId;
use switchboard::domain::passwords::hash_password;
use switchboard::store::endpoints::VendEndpoint;

use crate::BenchResult;
use crate::database::BenchDb;

/// Owners; the viewer (the first human) also belongs to the team, the fifth.
pub const OWNERS: usize = 5;
/// Endpoints per owner.
pub const ENDPOINTS_PER_OWNER: usize = 10;

/// The viewer's email: the first human, who signs in to the Board over HTTP.
pub const VIEWER_EMAIL: &str = "owner1@board.bench";
/// The viewer's password (a benchmark database of its own, dropped after the run).
pub const VIEWER_PASSWORD: &str = "board bench viewer password";

/// Who the Board is measured for.
#[derive(Debug, Clone)]
pub struct Tenancy {
    /// The viewing human's scopes: their own and the team's (two owners of five).
    pub viewer_scopes: Vec<ScopeId>,
}

/// Creates the owners and their endpoints (`board-00` … `board-49`, endpoint `n`
/// owned by owner `n / 10`). The viewer ([`VIEWER_EMAIL`]) may sign in with
/// [`VIEWER_PASSWORD`].
pub async fn tenancy(db: &BenchDb) -> BenchResult<Tenancy> {
    let store = db.store(2)?;
    let mut humans = Vec::new();
    for i in 1..OWNERS {
        let email = format!("owner{i}@board.bench");
        let password =
            if email == VIEWER_EMAIL { Some(hash_password(VIEWER_PASSWORD).map_err(|e| e.to_string())?) } else { None };
        humans.push(store.create_human(&email, &format!("Owner {i}"), password).await.map_err(|e| e.to_string())?);
    }
    let (_, _, team_scope) = store.create_team("board-bench", VIEWER_EMAIL).await.map_err(|e| e.to_string())?;
    let mut all_scopes: Vec<ScopeId> = humans.iter().map(|h| h.scope).collect();
    all_scopes.push(team_scope);
    for n in 0..OWNERS * ENDPOINTS_PER_OWNER {
        store
            .vend_endpoint(VendEndpoint {
                scope: all_scopes[n / ENDPOINTS_PER_OWNER],
                slug: format!("board-{n:02}"),
                grants: Verb::ALL.to_vec(),
                default_lease_seconds: None,
                expires_at: None,
            })
            .await
            .map_err(|e| format!("vending board-{n:02}: {e}"))?;
    }
    Ok(Tenancy { viewer_scopes: vec![all_scopes[0], team_scope] })
}

/// Writes todos `from ..= to` (and the closing attempt of each dead letter among them).
pub async fn todos(db: &BenchDb, from: u64, to: u64) -> BenchResult<()> {
    let endpoints = OWNERS * ENDPOINTS_PER_OWNER;
    let sql = format!(
        "WITH eps AS ( \
           SELECT id, scope_id, (row_number() OVER (ORDER BY slug) - 1)::int AS n FROM endpoints \
           WHERE slug LIKE 'board-%'), \
         src AS ( \
           SELECT g, (g % 100)::int AS bucket, ((g / 100) % {endpoints})::int AS ep, \
             now() - interval '90 days' * ((g * 0.6180339887498949) - floor(g * 0.6180339887498949)) AS at, \
             (ARRAY['builds', 'deploys', 'triage', 'reviews', 'alerts'])[1 + (g / 7) % 5] AS queue \
           FROM generate_series({from}::bigint, {to}::bigint) g) \
         INSERT INTO todos (id, endpoint_id, scope_id, queue, source, kind, title, state, attempt, max_attempts, \
           attempts_total, lease_expires_at, interrupt_expires_at, interrupt_wait_seconds, next_retry_at, \
           dead_reason, dead_lettered_at, dead_letter_count, created_at, updated_at, claimed_at, completed_at, \
           quarantine_reason) \
         SELECT gen_random_uuid(), eps.id, eps.scope_id, \
           CASE WHEN bucket = 15 THEN 'quarantine' ELSE queue END, \
           (ARRAY['github', 'stripe', 'agent', 'gitea'])[1 + g % 4], \
           (ARRAY['push', 'invoice.paid', 'task', 'pull_request'])[1 + g % 4], \
           'bench ' || queue || ' #' || g, \
           CASE WHEN bucket < 15 THEN 'failed' WHEN bucket < 35 THEN 'pending' WHEN bucket < 40 THEN 'claimed' \
                WHEN bucket < 42 THEN 'input_required' WHEN bucket < 44 THEN 'canceled' ELSE 'done' END, \
           CASE WHEN bucket < 10 THEN 5 WHEN bucket < 15 THEN 2 WHEN bucket < 35 THEN 0 ELSE 1 END, 5, \
           CASE WHEN bucket < 10 THEN 5 WHEN bucket < 15 THEN 2 WHEN bucket < 35 THEN 0 ELSE 1 END, \
           CASE WHEN bucket BETWEEN 35 AND 39 THEN now() + interval '5 minutes' END, \
           CASE WHEN bucket BETWEEN 40 AND 41 THEN now() + interval '1 hour' END, \
           CASE WHEN bucket BETWEEN 40 AND 41 THEN 3600 END, \
           CASE WHEN bucket BETWEEN 10 AND 14 THEN now() + interval '2 minutes' END, \
           CASE WHEN bucket < 10 THEN (ARRAY['attempts_exhausted', 'lease_expired', 'interrupt_expired', \
             'endpoint_revoked'])[1 + (g / 3) % 4] END, \
           CASE WHEN bucket < 10 THEN least(at + interval '20 minutes', now()) END, \
           CASE WHEN bucket < 10 THEN 1 ELSE 0 END, \
           at, at, CASE WHEN bucket >= 35 THEN at END, CASE WHEN bucket >= 44 THEN at END, \
           CASE WHEN bucket = 15 THEN 'untrusted_actor' END \
         FROM src JOIN eps ON eps.n = src.ep"
    );
    db.client().batch_execute(&sql).await.map_err(|e| format!("seeding todos {from}–{to}: {e}"))?;
    // The attempt each new dead letter's death closed, with what the agent said.
    let attempts = String::from(
        "INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, claimed_at, lease_expires_at, \
           ended_at, outcome, disposition, summary) \
         SELECT t.id, 5, t.endpoint_id, 'bench/agent', t.dead_lettered_at - interval '5 minutes', \
           t.dead_lettered_at, t.dead_lettered_at, \
           CASE t.dead_reason WHEN 'attempts_exhausted' THEN 'failed' WHEN 'lease_expired' THEN 'lease_expired' \
             WHEN 'interrupt_expired' THEN 'interrupt_expired' ELSE 'revoked' END, \
           'dead_lettered', 'step 3 of 4 failed: exit status 1 (' || t.title || ')' \
         FROM todos t \
         WHERE t.state = 'failed' AND t.next_retry_at IS NULL \
           AND NOT EXISTS (SELECT 1 FROM todo_attempts a WHERE a.todo_id = t.id)",
    );
    db.client().batch_execute(&attempts).await.map_err(|e| format!("seeding attempts {from}–{to}: {e}"))?;
    for sql in ["VACUUM (ANALYZE) todos", "VACUUM (ANALYZE) todo_attempts"] {
        db.client().batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }
    Ok(())
}

/// Rows by state (dead letters apart), quarantine apart: what the figures ran on.
pub async fn census(db: &BenchDb) -> BenchResult<Vec<(String, i64)>> {
    let rows = db
        .client()
        .query(
            "SELECT CASE WHEN queue = 'quarantine' THEN 'quarantine' \
                         WHEN state = 'failed' AND next_retry_at IS NULL THEN 'dead letter' \
                         WHEN state = 'failed' THEN 'failed, retry scheduled' ELSE state END, count(*) \
             FROM todos GROUP BY 1 ORDER BY 2 DESC",
            &[],
        )
        .await
        .map_err(|e| format!("counting todos: {e}"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}
