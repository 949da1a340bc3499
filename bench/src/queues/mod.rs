//! The Queues overview under data (issue 39): `GET /api/v1/queues` and the Board's
//! `/queues` page, one request at a time, on 1 000 000 todos across 200 queues that all
//! belong to the viewer, beside the same run's `GET /healthz`; the census that feeds
//! them timed from the bench process (its first pass, which counts the last day, and
//! steady passes); and the reads' `EXPLAIN (ANALYZE, BUFFERS)`, which must not scan
//! `todos` (they do not read it at all).
//!
//! The server runs with its own census switched off (an interval of a day) so that the
//! passes timed here are the only ones.

pub mod doc;
pub mod seed;

use std::time::{Duration, Instant};

use chrono::Utc;
use clap::Args as ClapArgs;

use crate::board::http::Browser;
use crate::board::p95_ms;
use crate::database::BenchDb;
use crate::machine::Machine;
use crate::server::Server;
use crate::{Args, BenchResult, progress};
use seed::{VIEWER_EMAIL, VIEWER_PASSWORD};

/// The Queues measurement's flags.
#[derive(Debug, Clone, ClapArgs)]
pub struct QueuesArgs {
    /// Run only the Queues overview measurement; it rewrites only its own section of
    /// `--doc`.
    #[arg(long, conflicts_with_all = ["only_board", "only_intake", "only_hooks"])]
    pub only_queues: bool,
    /// Todos in its table (all the viewer's, across 200 queues).
    #[arg(long, default_value_t = 1_000_000)]
    pub queues_todos: u64,
    /// Measured requests of each kind.
    #[arg(long, default_value_t = 50)]
    pub queues_requests: usize,
}

/// The p95 each read must stay under (issue 39).
pub const P95_TARGET_MS: f64 = 50.0;
/// What the Board page holds when it lists queues.
const QUEUES_TABLE: &str = "sb-queues";

/// One run's figures.
#[derive(Debug, Clone)]
pub struct QueuesRun {
    /// When it ran.
    pub date: String,
    /// Where.
    pub machine: Machine,
    /// PostgreSQL's version and settings.
    pub pg: (String, String),
    /// The revision measured.
    pub revision: String,
    /// Measured requests of each kind.
    pub requests: usize,
    /// Todos in the table.
    pub todos: u64,
    /// Queues the census found for the viewer.
    pub queues: usize,
    /// Seeding time, in seconds.
    pub seed_seconds: f64,
    /// The census's first pass (counting the last day).
    pub first_census: Duration,
    /// Steady passes after it.
    pub census: Vec<Duration>,
    /// `GET /api/v1/queues` (all 200 in one page).
    pub api: Vec<Duration>,
    /// The Board's `/queues` page.
    pub page: Vec<Duration>,
    /// `GET /healthz`.
    pub healthz: Vec<Duration>,
    /// The reads' plans: (what, EXPLAIN text).
    pub plans: Vec<(&'static str, String)>,
    /// The whole run, in seconds.
    pub total_seconds: f64,
}

impl QueuesRun {
    /// Plans that scan `todos` (or read it at all).
    pub fn reads_todos(&self) -> Vec<&'static str> {
        self.plans.iter().filter(|(_, p)| p.contains(" on todos")).map(|(q, _)| *q).collect()
    }

    /// Whether every target holds.
    pub fn holds(&self) -> bool {
        p95_ms(&self.api) < P95_TARGET_MS && p95_ms(&self.page) < P95_TARGET_MS && self.reads_todos().is_empty()
    }
}

/// Runs the measurement, prints its summary, writes its section of `--doc`, and fails
/// when a target does not hold.
pub async fn run_part(args: &Args, server_bin: &std::path::Path) -> BenchResult<()> {
    let run = run(args, server_bin).await?;
    println!("{}", doc::table(&run));
    if !args.no_doc {
        doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the Queues section of {}", args.doc.display()));
    }
    if run.holds() { Ok(()) } else { Err("a Queues overview target does not hold (see the table)".into()) }
}

async fn run(args: &Args, server_bin: &std::path::Path) -> BenchResult<QueuesRun> {
    let started = Instant::now();
    let db = BenchDb::create(&args.admin_url).await?;
    progress(&format!("queues: created database {}", db.name()));
    let off = [("SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS", (24 * 3600 * 1000).to_string())];
    let outcome = match Server::start_with(server_bin, &db.url, args.pool_size, rand::random(), &off).await {
        Ok(mut server) => {
            let measured = match server.wait_ready(Duration::from_secs(60)).await {
                Ok(()) => measure(args, &db, &server).await,
                Err(e) => Err(e),
            };
            let stopped = server.stop().await;
            measured.and_then(|m| stopped.map(|()| m))
        }
        Err(e) => Err(e),
    };
    let pg = db.settings().await;
    let dropped = db.drop_database().await;
    let mut run = outcome?;
    dropped?;
    run.pg = pg?;
    run.total_seconds = started.elapsed().as_secs_f64();
    Ok(run)
}

async fn measure(args: &Args, db: &BenchDb, server: &Server) -> BenchResult<QueuesRun> {
    let q = &args.queues;
    let viewer = seed::viewer(db).await?;
    let t = Instant::now();
    seed::todos(db, q.queues_todos).await?;
    let seed_seconds = t.elapsed().as_secs_f64();
    progress(&format!("queues: seeded {} todos ({seed_seconds:.0} s)", q.queues_todos));
    let store = db.store(2)?;
    let timed = |store: switchboard::store::Store| async move {
        let t = Instant::now();
        store.take_queue_census().await.map_err(|e| format!("census: {e}"))?.ok_or("the census lock was taken")?;
        BenchResult::Ok(t.elapsed())
    };
    let first_census = timed(store.clone()).await?;
    let mut census = Vec::new();
    for _ in 0..5 {
        census.push(timed(store.clone()).await?);
    }
    progress(&format!("queues: census first pass {:.0} ms, steady p95 {:.0} ms", ms(first_census), p95_ms(&census)));

    let browser = Browser::sign_in(server.base(), VIEWER_EMAIL, VIEWER_PASSWORD).await?;
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let api_url = format!("{}/api/v1/queues", server.base());
    let health_url = format!("{}/healthz", server.base());
    let (mut api, mut page, mut healthz) = (Vec::new(), Vec::new(), Vec::new());
    let mut queues = 0;
    for i in 0..5 + q.queues_requests {
        let t = Instant::now();
        let mut resp = client
            .get(&api_url)
            .insert_header(("authorization", format!("Bearer {}", viewer.token)))
            .send()
            .await
            .map_err(|e| format!("GET /api/v1/queues: {e}"))?;
        let body = resp.body().limit(16 * 1024 * 1024).await.map_err(|e| format!("queues body: {e}"))?;
        let took = t.elapsed();
        if !resp.status().is_success() {
            return Err(format!("GET /api/v1/queues answered {}", resp.status()));
        }
        let answer: serde_json::Value = serde_json::from_slice(&body).map_err(|e| format!("queues JSON: {e}"))?;
        queues = answer["queues"].as_array().map_or(0, Vec::len);
        let shown = browser.page("/queues", QUEUES_TABLE).await?;
        let t = Instant::now();
        let mut resp = client.get(&health_url).send().await.map_err(|e| format!("/healthz: {e}"))?;
        resp.body().await.map_err(|e| format!("/healthz body: {e}"))?;
        let health = t.elapsed();
        if i >= 5 {
            api.push(took);
            page.push(shown);
            healthz.push(health);
        }
    }
    if queues != seed::ENDPOINTS * seed::QUEUES_PER_ENDPOINT {
        return Err(format!("the overview listed {queues} queues, not 200"));
    }
    progress(&format!(
        "queues: API p95 {:.1} ms, page p95 {:.1} ms, /healthz p95 {:.1} ms",
        p95_ms(&api),
        p95_ms(&page),
        p95_ms(&healthz)
    ));
    let plans = explain(db, &viewer).await?;
    Ok(QueuesRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: (String::new(), String::new()),
        revision: args.revision.clone(),
        requests: q.queues_requests,
        todos: q.queues_todos,
        queues,
        seed_seconds,
        first_census,
        census,
        api,
        page,
        healthz,
        plans,
        total_seconds: 0.0,
    })
}

/// Milliseconds of `d`.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The overview's reads, explained with the viewer's values (custom plans).
async fn explain(db: &BenchDb, viewer: &seed::Viewer) -> BenchResult<Vec<(&'static str, String)>> {
    let text = |name: &str| {
        switchboard::db::statement::by_name(name).map(|s| s.text().to_owned()).ok_or(format!("no statement {name}"))
    };
    let page = text("switchboard::queues::statements::overview::PAGE")?;
    let minutes = text("switchboard::queues::statements::overview::MINUTES")?;
    let scopes = format!("'{{{}}}'", viewer.scope.0);
    let row = db
        .client()
        .query_one(
            &format!(
                "SELECT array_agg(endpoint_id)::text, array_agg(queue)::text FROM queue_census WHERE scope_id = '{}'",
                viewer.scope.0
            ),
            &[],
        )
        .await
        .map_err(|e| format!("census keys: {e}"))?;
    let (endpoints, names): (String, String) = (row.get(0), row.get(1));
    let mut plans = Vec::new();
    plans.push((
        "overview page (200 queues, trouble first)",
        crate::plan::explain_prepared(
            db,
            "bench_queues_page",
            "uuid[], bool, int8, int8, timestamptz, text, text, uuid, int8",
            &page,
            "custom",
            &format!("{scopes}, false, 0, 0, NULL, '', '', '00000000-0000-0000-0000-000000000000', 201"),
        )
        .await?,
    ));
    plans.push((
        "sparklines (each queue's last hour per minute)",
        crate::plan::explain_prepared(
            db,
            "bench_queues_minutes",
            "uuid[], text[], timestamptz",
            &minutes,
            "custom",
            &format!("'{endpoints}', '{names}', now() - interval '1 hour'"),
        )
        .await?,
    ));
    Ok(plans)
}
