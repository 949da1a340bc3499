//! The digest benchmark (issue 13): building one digest for an owner with 200 queues
//! over 100 000 and over 1 000 000 todos, on a database of its own and without a
//! server (the library is called directly, as the `DigestScheduler` calls it). Tenfold
//! data may at most double the median build time, and no section's plan may read a
//! table that grows with work sequentially (`plan::BIG_TABLES`).

pub mod doc;
pub mod plan;
pub mod run;
pub mod seed;

use std::time::{Duration, Instant};

use chrono::Utc;
use diesel::sql_types::{Array, Double, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::RunQueryDsl;
use switchboard::db::statement::Statement;
use switchboard::digests::service::compose::{Composed, DigestSettings, compose};
use switchboard::store::Store;

use crate::database::BenchDb;
use crate::machine::{CpuSpent, Machine, Probe};
use crate::{Args, BenchResult, progress};
use plan::{Binds, SECTIONS};
use run::{DigestRun, Found, Stage, median_ms};

pub use seed::ACK_SECONDS;

/// The digest benchmark's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct DigestArgs {
    /// Run only the digest measurement (one digest built over two table sizes); it
    /// rewrites only its own section of `--doc`.
    #[arg(long, conflicts_with_all = ["only_board", "only_intake", "only_hooks"])]
    pub only_digest: bool,
    /// Todos (all owners) in the digest measurement's first table.
    #[arg(long, default_value_t = 100_000)]
    pub digest_small: u64,
    /// Todos in its second table (the first, grown in the same proportions).
    #[arg(long, default_value_t = 1_000_000)]
    pub digest_large: u64,
    /// Measured digest builds per table size.
    #[arg(long, default_value_t = 30)]
    pub digest_builds: usize,
    /// Unmeasured builds before them.
    #[arg(long, default_value_t = 3)]
    pub digest_warmups: usize,
    /// Keep the digest measurement's database after the run, renamed `sb_kept_digest`
    /// (to look at its plans by hand; drop it by hand after).
    #[arg(long)]
    pub digest_keep_db: bool,
}

/// Runs the digest part, prints its summary, writes its section of `--doc`, and fails
/// when a section's plan reads a big table sequentially.
pub async fn run_part(args: &Args) -> BenchResult<()> {
    let d = &args.digest;
    if d.digest_small == 0 || d.digest_large <= d.digest_small || d.digest_builds == 0 {
        return Err("--digest-small must be positive, --digest-large larger, --digest-builds positive".into());
    }
    let run = run(args).await?;
    println!("{}", doc::table(&run));
    if !args.no_doc {
        doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the digest section of {}", args.doc.display()));
    }
    let scans = run.seq_scans();
    if scans.is_empty() {
        Ok(())
    } else {
        let which: Vec<String> = scans.iter().map(|(n, s, t)| format!("{s} on {n} todos reads {t}")).collect();
        Err(format!("sequential scan in a digest section: {}", which.join("; ")))
    }
}

/// Creates and migrates a database of its own, seeds and measures both sizes, and
/// always drops the database.
async fn run(args: &Args) -> BenchResult<DigestRun> {
    let started = Instant::now();
    let db = BenchDb::create(&args.admin_url).await?;
    progress(&format!("digest: created database {}", db.name()));
    let outcome = match switchboard::db::run_migrations(&db.url).await {
        Ok(_) => stages(args, &db).await,
        Err(e) => Err(format!("migrating {}: {e}", db.name())),
    };
    let pg = db.settings().await;
    let dropped = if args.digest.digest_keep_db { keep(&args.admin_url, db).await } else { db.drop_database().await };
    let (created_deferrals, stages) = outcome?;
    dropped?;
    Ok(DigestRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: pg?,
        revision: args.revision.clone(),
        builds: args.digest.digest_builds,
        warmups: args.digest.digest_warmups,
        created_deferrals,
        stages,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The name a kept database gets (other bench runs drop `sb_bench_*` databases whose
/// process is gone).
const KEPT: &str = "sb_kept_digest";

/// Renames the benchmark database to [`KEPT`] (replacing an older one) instead of
/// dropping it.
async fn keep(admin_url: &str, db: BenchDb) -> BenchResult<()> {
    let name = db.name().to_owned();
    drop(db);
    let admin = testkit::db::connect(admin_url).await?;
    let steps = [
        format!("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"),
        format!("DROP DATABASE IF EXISTS {KEPT} WITH (FORCE)"),
        format!("ALTER DATABASE {name} RENAME TO {KEPT}"),
    ];
    for step in steps {
        admin.batch_execute(&step).await.map_err(|e| format!("{step}: {e}"))?;
    }
    progress(&format!("digest: kept the database as {KEPT} (drop it by hand)"));
    Ok(())
}

/// Seeds the smaller table and measures, grows it to the larger one and measures.
async fn stages(args: &Args, db: &BenchDb) -> BenchResult<(bool, Vec<Stage>)> {
    let tenancy = seed::tenancy(db).await?;
    if tenancy.created_deferrals {
        progress("digest: queue_deferrals is not in this tree's migrations; created it with migration 000017's shape");
    }
    let store = db.store(2)?;
    let probe = Probe { server_pid: 0, database: db.name().to_owned(), threads: Vec::new() };
    let mut stages = Vec::new();
    let mut seeded = 0u64;
    for size in [args.digest.digest_small, args.digest.digest_large] {
        let t = Instant::now();
        seed::todos(db, seeded + 1, size).await?;
        seeded = size;
        let seed_seconds = t.elapsed().as_secs_f64();
        progress(&format!("digest: seeded {size} todos ({seed_seconds:.0} s)"));
        let mut stage = measure(&args.digest, &store, &tenancy.digest, &probe).await?;
        stage.todos = size;
        stage.seed_seconds = seed_seconds;
        let until = Utc::now();
        let binds = Binds {
            scope: tenancy.scope,
            since: until - switchboard::digests::service::compose::FIRST_DIGEST_COVERS,
            until,
            ack_seconds: ACK_SECONDS,
        };
        stage.plans = plan::explain(db, &binds).await?;
        stage.census = seed::census(db, tenancy.scope).await?;
        let slowest = stage
            .sections
            .iter()
            .map(|(s, v)| (*s, median_ms(v)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap_or(("none", 0.0));
        progress(&format!(
            "digest: {size} todos: build median {:.1} ms, p95 {:.1} ms; slowest section {} {:.1} ms; plans with a \
             big-table seq scan: {}",
            median_ms(&stage.builds),
            crate::board::p95_ms(&stage.builds),
            slowest.0,
            slowest.1,
            stage.plans.iter().filter(|p| !p.big_seq_scans().is_empty()).count()
        ));
        stages.push(stage);
    }
    Ok((tenancy.created_deferrals, stages))
}

/// The instance settings the scheduler would build with (defaults).
fn settings() -> DigestSettings {
    DigestSettings {
        base_url: "http://127.0.0.1:8080".into(),
        doorbell_ack_seconds: ACK_SECONDS,
        section_timeout_ms: 5_000,
    }
}

/// Builds the digest `warmups` times unmeasured, then `builds` times measured, each
/// followed by every section's SQL alone (same binds), timed.
async fn measure(
    a: &DigestArgs,
    store: &Store,
    digest: &switchboard::digests::statements::DigestRow,
    probe: &Probe,
) -> BenchResult<Stage> {
    let s = settings();
    let mut builds = Vec::new();
    let mut sections: Vec<(&'static str, Vec<Duration>)> = SECTIONS.iter().map(|(n, _)| (*n, Vec::new())).collect();
    let mut section_rows = Vec::new();
    let mut last = None;
    let mut cpu = CpuSpent::default();
    for i in 0..a.digest_warmups + a.digest_builds {
        let until = Utc::now();
        let (before, t) = (probe.sample(), Instant::now());
        let composed = compose(store, digest, &s, until).await.map_err(|e| format!("building the digest: {e}"))?;
        let build = t.elapsed();
        let binds = Binds {
            scope: digest.scope_id,
            since: until - switchboard::digests::service::compose::FIRST_DIGEST_COVERS,
            until,
            ack_seconds: ACK_SECONDS,
        };
        let mut rows = Vec::new();
        let mut times = Vec::new();
        for &(name, statement) in &SECTIONS {
            let (elapsed, n) =
                time_section(store, statement, &binds).await.map_err(|e| format!("section {name}: {e}"))?;
            times.push(elapsed);
            rows.push((name, n));
        }
        if i >= a.digest_warmups {
            cpu.add(&CpuSpent::between(before, probe.sample()));
            builds.push(build);
            for ((_, v), e) in sections.iter_mut().zip(times) {
                v.push(e);
            }
            section_rows = rows;
        }
        last = Some(composed);
    }
    let found = found(last.as_ref().ok_or("no digest was built")?);
    if !found.unavailable.is_empty() {
        let why: Vec<String> = found.unavailable.iter().map(|(s, w)| format!("{s}: {w}")).collect();
        return Err(format!("the digest could not measure every section ({})", why.join("; ")));
    }
    Ok(Stage {
        todos: 0,
        census: Vec::new(),
        seed_seconds: 0.0,
        builds,
        sections,
        section_rows,
        found,
        cpu,
        plans: Vec::new(),
    })
}

/// One section's SQL with the binds the store sends (same types, same order), timed
/// on a pooled connection; answers the time and the rows.
async fn time_section(store: &Store, statement: &'static Statement, b: &Binds) -> BenchResult<(Duration, usize)> {
    let mut conn = store.conn().await.map_err(|e| e.to_string())?;
    let mut q = statement
        .query()
        .into_boxed()
        .bind::<SqlUuid, _>(b.scope)
        .bind::<Array<Text>, _>(Vec::<String>::new())
        .bind::<Timestamptz, _>(b.since)
        .bind::<Timestamptz, _>(b.until);
    if statement.text().contains("$5") {
        q = q.bind::<Double, _>(b.ack_seconds as f64);
    }
    let t = Instant::now();
    let n = q.execute(&mut conn).await.map_err(|e| e.to_string())?;
    Ok((t.elapsed(), n))
}

/// What a built digest says, summed.
fn found(c: &Composed) -> Found {
    let r = &c.report;
    let sum = |v: Option<i64>| v.unwrap_or(0);
    Found {
        pending: r.pending.ok().map(|l| (l.len(), l.iter().map(|x| x.pending).sum())).unwrap_or((0, 0)),
        claimed: r
            .claimed
            .ok()
            .map(|l| (l.iter().map(|x| x.claimed).sum(), l.iter().map(|x| x.stalled).sum()))
            .unwrap_or((0, 0)),
        dead: sum(r.dead.ok().map(|l| l.iter().map(|x| x.dead_letters).sum())),
        quarantined: sum(r.quarantined.ok().map(|l| l.iter().map(|x| x.quarantined).sum())),
        unheard: sum(r.unheard.ok().map(|l| l.iter().map(|x| x.unheard).sum())),
        clocked_out: r.clocked_out.ok().map_or(0, Vec::len),
        deferred: sum(r.deferred.ok().map(|l| l.iter().map(|x| x.deferred).sum())),
        undeliverable: sum(r.undeliverable.ok().map(|l| l.iter().map(|x| x.undeliverable).sum())),
        unavailable: r.unavailable().into_iter().map(|(s, w)| (s.to_owned(), w.to_owned())).collect(),
        body_bytes: c.body.len(),
        quiet: c.quiet,
    }
}
