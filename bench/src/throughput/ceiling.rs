//! The bare-SQL ceiling of a claim cycle: the two statements of the reference pgbench
//! cycle (`../shared/bench/pgbench/`: claim the oldest pending row with `FOR UPDATE SKIP
//! LOCKED` and commit, then mark it done and commit) on the reference table (a primary
//! key and the partial claim index, no history), run by `pgbench` itself in prepared
//! mode. The table lives in a schema of its own (`ceiling`) in the benchmark database,
//! beside the product's tables, so both are measured on the same server, the same
//! settings and the same disk in the same run.
//!
//! Beside the cycles per second: the PostgreSQL cluster's CPU and the WAL written per
//! cycle, measured the same way as for the product's cycles (`ClusterMark`).

use std::path::Path;
use tokio::process::Command;

use super::wal::{self, WalSplit};
use crate::BenchResult;
use crate::database::BenchDb;
use crate::machine::{self, CpuSample, CpuSpent, Probe};

/// The schema holding the reference table.
const SCHEMA: &str = "ceiling";

/// The reference table, its claim index and `rows` pending rows (the statements of
/// `todos_schema.sql`, in their own schema).
fn table_sql(rows: u64) -> String {
    format!(
        "DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA}; \
         CREATE TABLE {SCHEMA}.todos (id bigserial PRIMARY KEY, queue text NOT NULL, status text NOT NULL, \
           lease_expires_at timestamptz, attempts int NOT NULL DEFAULT 0, payload jsonb NOT NULL, \
           created_at timestamptz NOT NULL DEFAULT now()); \
         CREATE INDEX todos_claim_idx ON {SCHEMA}.todos (queue, created_at, id) WHERE status = 'pending'; \
         INSERT INTO {SCHEMA}.todos (queue, status, payload) \
           SELECT 'default', 'pending', jsonb_build_object('seq', g, 'kind', 'bench', 'body', repeat('x', 200)) \
           FROM generate_series(1, {rows}) AS g;"
    )
}

/// One cycle as two transactions (`claim_complete_2tx.sql`): the claim commits, then
/// the completion commits. Unqualified names: pgbench runs with `search_path=ceiling`.
const CYCLE_2TX: &str = "\
UPDATE todos
   SET status = 'running',
       lease_expires_at = now() + interval '30 seconds',
       attempts = attempts + 1
 WHERE id = (SELECT id FROM todos
              WHERE queue = 'default' AND status = 'pending'
              ORDER BY created_at, id
              LIMIT 1
              FOR UPDATE SKIP LOCKED)
RETURNING id AS claimed_id \\gset
UPDATE todos
   SET status = 'done', lease_expires_at = NULL
 WHERE id = :claimed_id AND status = 'running';
";

/// What one pgbench window measured.
#[derive(Debug, Clone, Default)]
pub struct CeilingWindow {
    /// Cycles per second (pgbench's tps, without connection time).
    pub rate: f64,
    /// Cycles done.
    pub cycles: u64,
    /// Mean latency of a cycle, ms.
    pub latency_ms: f64,
    /// The span's CPU (`postgres_s` is the whole cluster's) and WAL.
    pub cost: Cost,
}

/// CPU and WAL spent in a span, with the work done in it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cost {
    /// CPU by component; `postgres_s` is the PostgreSQL cluster's for this run (its
    /// writers, the bench database's backends, reaped ones included; not the live
    /// backends of other databases); `bench_s` is the agents' (this process, pgbench,
    /// and the agents' own process when they run in one: Python, Node).
    pub cpu: CpuSpent,
    /// WAL bytes inserted in the span (the whole cluster's).
    pub wal_bytes: u64,
    /// Full-page images written in the span (`pg_stat_wal.wal_fpi`, the cluster's).
    pub wal_fpi: u64,
    /// The spans' WAL split into records and full-page images (`pg_waldump`), summed
    /// over the spans that could be read ([`Cost::split_spans`]).
    pub split: WalSplit,
    /// Spans added up in this cost.
    pub spans: u32,
    /// Of them, spans whose WAL `pg_waldump` read.
    pub split_spans: u32,
    /// Units of work done in the span (cycles, todos).
    pub units: u64,
}

impl Cost {
    /// PostgreSQL CPU µs per unit.
    pub fn postgres_us(&self) -> f64 {
        self.per_unit(self.cpu.postgres_s * 1e6)
    }

    /// Server CPU µs per unit.
    pub fn server_us(&self) -> f64 {
        self.per_unit(self.cpu.server_s * 1e6)
    }

    /// The agents' CPU µs per unit.
    pub fn agents_us(&self) -> f64 {
        self.per_unit(self.cpu.bench_s * 1e6)
    }

    /// WAL bytes per unit.
    pub fn wal_per_unit(&self) -> f64 {
        self.per_unit(self.wal_bytes as f64)
    }

    /// Full-page images per unit.
    pub fn fpi_per_unit(&self) -> f64 {
        self.per_unit(self.wal_fpi as f64)
    }

    /// WAL record bytes per unit without full-page images, when every span was read.
    pub fn wal_without_fpi_per_unit(&self) -> Option<f64> {
        self.split_read().then(|| self.per_unit(self.split.record_bytes as f64))
    }

    /// Full-page image bytes per unit, when every span was read.
    pub fn fpi_bytes_per_unit(&self) -> Option<f64> {
        self.split_read().then(|| self.per_unit(self.split.fpi_bytes as f64))
    }

    fn split_read(&self) -> bool {
        self.spans > 0 && self.split_spans == self.spans
    }

    fn per_unit(&self, x: f64) -> f64 {
        if self.units > 0 { x / self.units as f64 } else { 0.0 }
    }

    /// Adds another span's cost.
    pub fn add(&mut self, o: &Cost) {
        self.cpu.add(&o.cpu);
        self.wal_bytes += o.wal_bytes;
        self.wal_fpi += o.wal_fpi;
        self.split.record_bytes += o.split.record_bytes;
        self.split.fpi_bytes += o.split.fpi_bytes;
        self.spans += o.spans;
        self.split_spans += o.split_spans;
        self.units += o.units;
    }
}

/// A point from which a span's cost is measured: CPU counters with the PostgreSQL
/// cluster as the `postgres` component, the WAL insert position and the full-page
/// images written so far.
#[derive(Debug, Clone, Copy)]
pub struct ClusterMark {
    cpu: CpuSample,
    wal: u64,
    fpi: u64,
}

impl ClusterMark {
    /// Marks a span's start: the WAL from here on stays until the span is split
    /// ([`ClusterMark::cost_until`]).
    pub async fn start(db: &BenchDb, probe: &Probe) -> BenchResult<ClusterMark> {
        wal::hold_from_here(db).await;
        ClusterMark::now(db, probe).await
    }

    /// Marks now (a span's end).
    pub async fn now(db: &BenchDb, probe: &Probe) -> BenchResult<ClusterMark> {
        let (wal, fpi) = db.wal_position().await?;
        let mut cpu = probe.sample();
        cpu.postgres = machine::cluster_ticks(&probe.database);
        Ok(ClusterMark { cpu, wal, fpi })
    }

    /// This mark with the CPU of the agents' own process `pid` counted as the agents'
    /// (beside this process's).
    pub fn with_agents(mut self, pid: Option<u32>) -> ClusterMark {
        if let Some(pid) = pid {
            self.cpu.bench += machine::pid_ticks(pid);
        }
        self
    }

    /// This mark with the CPU of this process's reaped children counted as the agents'
    /// (pgbench's clients, once it has exited).
    pub fn with_reaped_children(mut self) -> ClusterMark {
        self.cpu.bench += machine::reaped_children_ticks();
        self
    }

    /// This mark with the cluster's CPU read again now: for the end of a span whose
    /// clients left at its end, once the postmaster has reaped their backends (their CPU
    /// is in its children's counters only then), with the span itself still ending at
    /// this mark.
    pub fn with_cluster_cpu_now(mut self, probe: &Probe) -> ClusterMark {
        self.cpu.postgres = machine::cluster_ticks(&probe.database);
        self
    }

    /// The cost from `self` to `to`, for `units` of work, without the WAL's split.
    pub fn until(&self, to: &ClusterMark, units: u64) -> Cost {
        Cost {
            cpu: CpuSpent::between(self.cpu, to.cpu),
            wal_bytes: to.wal.saturating_sub(self.wal),
            wal_fpi: to.fpi.saturating_sub(self.fpi),
            spans: 1,
            units,
            ..Cost::default()
        }
    }

    /// [`ClusterMark::until`] with the WAL split into records and full-page images by
    /// `pg_waldump` (left unread, and said once, when it cannot be).
    pub async fn cost_until(&self, db: &BenchDb, to: &ClusterMark, units: u64) -> Cost {
        let mut cost = self.until(to, units);
        match wal::split(db, self.wal, to.wal).await {
            Ok(split) => {
                cost.split = split;
                cost.split_spans = 1;
            }
            Err(e) => wal::unreadable(&e),
        }
        wal::release_until(db, to.wal).await;
        cost
    }
}

/// Rebuilds the reference table with `rows` pending rows, vacuumed and checkpointed.
pub async fn prepare(db: &BenchDb, rows: u64) -> BenchResult<()> {
    db.exec_batch(&table_sql(rows)).await?;
    db.exec_batch(&format!("VACUUM (ANALYZE) {SCHEMA}.todos")).await?;
    db.exec_batch("CHECKPOINT").await
}

/// Rows of the reference table still pending.
pub async fn pending(db: &BenchDb) -> BenchResult<u64> {
    db.count(&format!("SELECT count(*) FROM {SCHEMA}.todos WHERE status = 'pending'")).await
}

/// Runs pgbench with `clients` for `seconds` on a freshly prepared table.
pub async fn window(
    db: &BenchDb,
    probe: &Probe,
    clients: usize,
    seconds: u64,
    rows: u64,
    scratch: &Path,
) -> BenchResult<CeilingWindow> {
    prepare(db, rows).await?;
    let script = scratch.join("claim_complete_2tx.sql");
    std::fs::write(&script, CYCLE_2TX).map_err(|e| format!("writing {}: {e}", script.display()))?;
    let threads = clients.min(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let from = ClusterMark::start(db, probe).await?.with_reaped_children();
    let out = Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-c", &clients.to_string(), "-j", &threads.to_string()])
        .args(["-T", &seconds.to_string(), "-f"])
        .arg(&script)
        .arg(db.url.as_str())
        .env("PGOPTIONS", format!("-c search_path={SCHEMA}"))
        .output()
        .await
        .map_err(|e| format!("cannot run pgbench (apt-get install postgresql-client): {e}"))?;
    let ended = ClusterMark::now(db, probe).await?;
    // pgbench's backends have exited by now; the postmaster reaps them within moments,
    // and only then is their CPU in its children's counters.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let to = ended.with_cluster_cpu_now(probe).with_reaped_children();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!("pgbench failed: {}{}", text, String::from_utf8_lossy(&out.stderr)));
    }
    let parsed = parse(&text).ok_or_else(|| format!("cannot read pgbench's output: {text}"))?;
    if pending(db).await? == 0 {
        return Err(format!("the ceiling's table ran dry at {clients} clients; raise --throughput-rows"));
    }
    let cost = from.cost_until(db, &to, parsed.cycles).await;
    Ok(CeilingWindow { rate: parsed.rate, cycles: parsed.cycles, latency_ms: parsed.latency_ms, cost })
}

/// What pgbench printed that the bench uses.
#[derive(Debug, PartialEq)]
struct Parsed {
    rate: f64,
    cycles: u64,
    latency_ms: f64,
}

/// Reads `number of transactions actually processed: N`, `latency average = X ms` and
/// `tps = X (without initial connection time)` from pgbench's report.
fn parse(text: &str) -> Option<Parsed> {
    let after = |prefix: &str| {
        text.lines().find_map(|l| l.strip_prefix(prefix)).and_then(|r| r.split_whitespace().next()).map(str::to_owned)
    };
    let cycles = after("number of transactions actually processed: ")?.split('/').next()?.parse().ok()?;
    let latency_ms = after("latency average = ")?.parse().ok()?;
    let rate = text
        .lines()
        .filter(|l| l.starts_with("tps = "))
        .find(|l| l.contains("without initial connection time"))
        .and_then(|l| l.strip_prefix("tps = "))
        .and_then(|r| r.split_whitespace().next())
        .and_then(|v| v.parse().ok())?;
    Some(Parsed { rate, cycles, latency_ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_report_is_read() {
        let text = "transaction type: x.sql\nnumber of clients: 16\nnumber of transactions actually processed: \
                    78812\nnumber of failed transactions: 0 (0.000%)\nlatency average = 4.061 ms\ninitial \
                    connection time = 21.402 ms\ntps = 3940.123456 (without initial connection time)\n";
        assert_eq!(parse(text), Some(Parsed { rate: 3940.123456, cycles: 78812, latency_ms: 4.061 }));
    }

    #[test]
    fn a_report_without_tps_is_refused() {
        assert_eq!(parse("number of transactions actually processed: 1\nlatency average = 1 ms\n"), None);
    }
}
