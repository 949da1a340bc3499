//! The benchmark database: created fresh on the admin server, seeded in bulk, kept in
//! the same shape before every window, and dropped at the end.
//!
//! Seeding writes rows with `INSERT … SELECT generate_series` straight into the tables
//! (columns as in `migrations/*/up.sql`): going through the API would take minutes
//! for half a million todos and measure nothing we report. Tenancy (the human and the
//! endpoints, whose tokens are hashed) goes through the library's `Store`.

use switchboard::domain::grants::Verb;
use switchboard::domain::ids::{EndpointId, ScopeId};
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::signals::Emitter;
use testkit::db::{connect, drop_database, drop_orphans, url_for};
use tokio_postgres::Client;

use crate::{Args, BenchResult};

/// The one queue everything is on, as in the issue ("one queue holding everything").
pub const QUEUE: &str = "work";
/// SQL for a todo id made at the time `ts` as the product makes them (`TodoId::new`, a
/// UUIDv7: 48 bits of Unix milliseconds, the version, then random bits with the variant);
/// PostgreSQL 15 has no `uuidv7()`. Seeded with random ids instead, every claim's and
/// completion's primary-key entry would land on a random page, which the product's own
/// todos do not do.
pub fn todo_id_at(ts: &str) -> String {
    format!(
        "(lpad(to_hex((extract(epoch FROM {ts}) * 1000)::bigint), 12, '0') || '7' \
           || substr(md5(random()::text), 1, 3) || to_hex(8 + floor(random() * 4)::int) \
           || substr(md5(random()::text), 1, 15))::uuid"
    )
}

/// Prefix of benchmark database names; the suffix is the bench's pid.
const DB_PREFIX: &str = "sb_bench_";

/// What seeding created.
#[derive(Debug, Clone)]
pub struct Seeded {
    /// Owner scope of every endpoint.
    pub scope: ScopeId,
    /// The owner's operator token (`sbo_…`), for the operator API.
    pub owner_token: String,
    /// The endpoint whose queue the agents drain (REST and raw SQL alike).
    pub cycles: EndpointId,
    /// Its bearer token.
    pub cycles_token: String,
    /// Its slug (its MCP URL is `/mcp/<slug>`).
    pub cycles_slug: String,
    /// The endpoint holding the expired leases the reaper sweeps.
    pub reaped: EndpointId,
}

/// The fresh database and a connection to it for seeding and inspection.
pub struct BenchDb {
    admin_url: String,
    name: String,
    /// Connection URL of the benchmark database.
    pub url: String,
    client: Client,
}

impl BenchDb {
    /// Creates `sb_bench_<pid>` on the server in `admin_url`, first dropping databases
    /// left by benchmark runs whose process is gone (an interrupted run).
    pub async fn create(admin_url: &str) -> BenchResult<BenchDb> {
        Self::create_tagged(admin_url, None).await
    }

    /// [`BenchDb::create`], named `sb_bench_<pid>_<tag>` when tagged: for a part that
    /// keeps several databases at once.
    pub async fn create_tagged(admin_url: &str, tag: Option<&str>) -> BenchResult<BenchDb> {
        let admin = connect(admin_url).await?;
        // `sb_bench_<pid>` or `sb_bench_<pid>_<tag>`.
        drop_orphans(&admin, DB_PREFIX).await?;
        let name = match tag {
            Some(tag) => format!("{DB_PREFIX}{}_{tag}", std::process::id()),
            None => format!("{DB_PREFIX}{}", std::process::id()),
        };
        drop_database(&admin, &name).await.map_err(|e| format!("{e} (an old one)"))?;
        admin.batch_execute(&format!("CREATE DATABASE {name}")).await.map_err(|e| format!("creating {name}: {e}"))?;
        let url = url_for(admin_url, &name);
        let client = connect(&url).await?;
        Ok(BenchDb { admin_url: admin_url.to_owned(), name, url, client })
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Drops the database (forcing out the server's and pools' connections).
    pub async fn drop_database(self) -> BenchResult<()> {
        drop(self.client);
        let admin = connect(&self.admin_url).await?;
        drop_database(&admin, &self.name).await
    }

    /// A store over the benchmark database with its own pool of `size` connections.
    pub fn store(&self, size: u32) -> BenchResult<Store> {
        let pool = switchboard::db::pool(&self.url, size as usize).map_err(|e| e.to_string())?;
        Ok(Store::new(pool, Emitter::none()))
    }

    /// The seeding and inspection connection.
    pub fn client(&self) -> &Client {
        &self.client
    }

    async fn exec(&self, sql: &str) -> BenchResult<u64> {
        self.client.execute(sql, &[]).await.map_err(|e| format!("{e}; in: {}", opening(sql)))
    }

    /// Runs `sql` (one or more statements, no parameters) as a simple query.
    pub async fn exec_batch(&self, sql: &str) -> BenchResult<()> {
        self.client.batch_execute(sql).await.map_err(|e| format!("{e}; in: {}", opening(sql)))
    }

    /// The one `bigint` a `SELECT count(*) …` answers.
    pub async fn count(&self, sql: &str) -> BenchResult<u64> {
        let row = self.client.query_one(sql, &[]).await.map_err(|e| format!("{e}; in: {}", opening(sql)))?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }

    /// The cluster's WAL insert position (bytes since the start of the WAL) and the
    /// full-page images written so far (`pg_stat_wal.wal_fpi`).
    pub async fn wal_position(&self) -> BenchResult<(u64, u64)> {
        let row = self
            .client
            .query_one(
                "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint, (SELECT wal_fpi FROM pg_stat_wal)",
                &[],
            )
            .await
            .map_err(|e| format!("reading the WAL position: {e}"))?;
        let (lsn, fpi): (i64, i64) = (row.get(0), row.get(1));
        Ok((u64::try_from(lsn).unwrap_or(0), u64::try_from(fpi).unwrap_or(0)))
    }

    /// One setting's current value (`SHOW`).
    pub async fn settings_value(&self, name: &str) -> BenchResult<String> {
        let row = self
            .client
            .query_one("SELECT current_setting($1)", &[&name])
            .await
            .map_err(|e| format!("reading {name}: {e}"))?;
        Ok(row.get(0))
    }

    /// The PostgreSQL version, and the settings that move a queue's throughput
    /// (`name=value, …`): commits wait for the WAL flush, and with autovacuum off dead
    /// rows pile up until someone vacuums.
    pub async fn settings(&self) -> BenchResult<(String, String)> {
        let row = self
            .client
            .query_one(
                "SELECT current_setting('server_version'), string_agg(n || '=' || current_setting(n), ', ' ORDER BY n) \
                 FROM unnest(ARRAY['autovacuum', 'fsync', 'synchronous_commit', 'shared_buffers', 'max_connections']) n",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok((row.get(0), row.get(1)))
    }

    /// Creates the owner and both endpoints (every verb granted), then the todos: done
    /// and pending ones on the drained queue, and expired leases on the reaped
    /// endpoint. The server must have migrated the database already.
    pub async fn seed(&self, args: &Args) -> BenchResult<Seeded> {
        let store = self.store(2)?;
        let human =
            store.create_human("bench@switchboard.local", "Benchmark", None).await.map_err(|e| e.to_string())?;
        let vend = |slug: &str| VendEndpoint {
            scope: human.scope,
            slug: slug.into(),
            grants: Verb::ALL.to_vec(),
            default_lease_seconds: None,
            expires_at: None,
        };
        let cycles = store.vend_endpoint(vend("bench-agents")).await.map_err(|e| e.to_string())?;
        let reaped = store.vend_endpoint(vend("bench-lapsed")).await.map_err(|e| e.to_string())?;
        let seeded = Seeded {
            scope: human.scope,
            owner_token: human.token,
            cycles: cycles.endpoint.id,
            cycles_token: cycles.token,
            cycles_slug: cycles.endpoint.slug.clone(),
            reaped: reaped.endpoint.id,
        };

        // Done rows are older than any pending one, as on a queue that has run for a
        // while: the claim index must skip them, not walk past them.
        self.exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, state, attempt, attempts_total, \
               created_at, updated_at, claimed_at, completed_at) \
             SELECT {id}, '{ep}', '{scope}', '{QUEUE}', 'bench done ' || g, 'done', 1, 1, \
               at, now(), now(), now() \
             FROM generate_series(1, {n}) g, LATERAL (SELECT now() - interval '30 days' + g * interval '1 millisecond' AS at) t",
            id = todo_id_at("at"),
            ep = seeded.cycles.0,
            scope = seeded.scope.0,
            n = args.done,
        ))
        .await?;
        self.add_pending(&seeded, seeded.cycles, args.pending, args.todo_payload_bytes).await?;
        self.add_pending(&seeded, seeded.reaped, args.expired, 0).await?;
        let lapsed = self.lapse_leases(&seeded).await?;
        if lapsed != u64::from(args.expired) {
            return Err(format!("seeded {lapsed} expired leases, expected {}", args.expired));
        }
        self.vacuum().await?;
        Ok(seeded)
    }

    /// Appends `n` pending todos to `endpoint`'s queue, newer than any already there,
    /// each with a payload `{"body": "xx…"}` of `payload_bytes` x's when not 0 (its
    /// `payload_size` as the product counts it: the JSON text's length).
    pub async fn add_pending(
        &self,
        seeded: &Seeded,
        endpoint: EndpointId,
        n: u32,
        payload_bytes: u32,
    ) -> BenchResult<u64> {
        let (payload, size) = if payload_bytes == 0 {
            ("NULL".to_owned(), 0)
        } else {
            let text = format!(r#"{{"body":"{}"}}"#, "x".repeat(payload_bytes as usize));
            (format!("'{text}'::jsonb"), text.len())
        };
        self.exec(&format!(
            "INSERT INTO todos (id, endpoint_id, scope_id, queue, title, payload, payload_size, state, created_at, \
               updated_at) \
             SELECT {id}, '{ep}', '{scope}', '{QUEUE}', 'bench ' || g, {payload}, {size}, 'pending', at, now() \
             FROM generate_series(1, {n}) g, LATERAL (SELECT now() + g * interval '1 microsecond' AS at) t",
            id = todo_id_at("at"),
            ep = endpoint.0,
            scope = seeded.scope.0,
        ))
        .await
    }

    /// Turns every pending todo of the reaped endpoint into a claim whose agent died:
    /// claimed, with its attempt open, and its lease lapsed five minutes ago. This is
    /// what a claim statement leaves behind, written in bulk. Returns how many.
    pub async fn lapse_leases(&self, seeded: &Seeded) -> BenchResult<u64> {
        self.exec(&format!(
            "WITH claimed AS ( \
               UPDATE todos t SET state = 'claimed', attempt = 1, attempts_total = t.attempts_total + 1, \
                 claimed_by = t.endpoint_id, claimed_at = now() - interval '10 minutes', \
                 lease_expires_at = now() - interval '5 minutes', updated_at = now() \
               WHERE t.endpoint_id = '{ep}' AND t.state = 'pending' \
               RETURNING t.id, t.attempts_total, t.endpoint_id, t.claimed_at, t.lease_expires_at) \
             INSERT INTO todo_attempts (todo_id, seq, claimer_endpoint_id, claimant, claimed_at, lease_expires_at) \
             SELECT id, attempts_total, endpoint_id, 'bench/lost-agent', claimed_at, lease_expires_at FROM claimed",
            ep = seeded.reaped.0,
        ))
        .await
    }

    /// Brings the drained queue back to `--pending` todos and vacuums, so every window
    /// starts from the same table. Returns how many cycles the window may run: never
    /// more than there are pending todos, so the queue cannot run dry mid-window.
    pub async fn prepare_window(&self, args: &Args, seeded: &Seeded) -> BenchResult<u64> {
        let pending = self.pending(seeded.cycles).await?;
        if pending < u64::from(args.pending) {
            self.add_pending(seeded, seeded.cycles, args.pending - pending as u32, args.todo_payload_bytes).await?;
        }
        self.vacuum().await?;
        Ok(self.pending(seeded.cycles).await?.saturating_sub(100))
    }

    /// Pending todos of `endpoint`.
    pub async fn pending(&self, endpoint: EndpointId) -> BenchResult<u64> {
        let sql = format!("SELECT count(*) FROM todos WHERE endpoint_id = '{}' AND state = 'pending'", endpoint.0);
        let row = self.client.query_one(&sql, &[]).await.map_err(|e| e.to_string())?;
        Ok(row.get::<_, i64>(0) as u64)
    }

    /// What autovacuum would eventually do, done now so that no window pays for the
    /// previous window's dead rows (and the planner has fresh statistics).
    pub async fn vacuum(&self) -> BenchResult<()> {
        // VACUUM refuses to run inside a transaction block: one statement per call.
        for sql in ["VACUUM (ANALYZE) todos", "VACUUM (ANALYZE) todo_attempts"] {
            self.client.batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
        }
        Ok(())
    }

    /// Rows per (endpoint, state), and the attempt history's size: the table the plan
    /// was taken on.
    pub async fn state_counts(&self) -> BenchResult<Vec<(String, String, i64)>> {
        let rows = self
            .client
            .query(
                "SELECT e.slug, t.state, count(*) FROM todos t JOIN endpoints e ON e.id = t.endpoint_id \
                 GROUP BY 1, 2 UNION ALL SELECT 'todo_attempts', 'rows', count(*) FROM todo_attempts ORDER BY 1, 2",
                &[],
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect())
    }
}

/// The start of a statement, to say which one failed without dumping all of it.
fn opening(sql: &str) -> String {
    sql.trim().chars().take(80).collect()
}
