//! The Board's Dead view under data: the real page, `GET /todos?filter=dead` (pill
//! counts, the 100 newest dead letters and the 14-day chart, rendered), through the
//! server as the signed-in viewer, on 100 000 todos and then on 1 000 000 (a tenth of
//! them dead letters, across 50 endpoints and 5 owners), 50 requests each, beside the
//! same run's `GET /healthz`; then each statement's `EXPLAIN (ANALYZE, BUFFERS)`, which
//! must show no sequential scan over `todos`.
//!
//! Beside the page, the three store calls it makes are timed one by one from the bench
//! process (no HTTP), so a slow page says which read made it slow. The statements
//! explained are captured from the library as it sends them (as for claim_next), never
//! copied; the other pills' lists are explained beside them (not timed).

pub mod doc;
pub mod http;
pub mod seed;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use diesel_async::AsyncConnection;
use switchboard::board::todos::paths;
use switchboard::domain::ids::ScopeId;
use switchboard::domain::pills::{COUNT_CAP, Pill};
use switchboard::store::Store;
use switchboard::store::board::{CHART_DAYS, CHART_QUEUES, SEARCH_WINDOW};

use crate::database::BenchDb;
use crate::machine::Machine;
use crate::plan::recorder;
use crate::server::Server;
use crate::{Args, BenchResult, progress};
use seed::{Tenancy, VIEWER_EMAIL, VIEWER_PASSWORD};

use http::Browser;

/// Dead letters listed per page (the Board's default).
const PAGE: i64 = 100;
/// A search most dead letters' queue answers (a fifth of them).
pub const COMMON_SEARCH: &str = "deploys";
/// A search only a handful of titles answer.
pub const RARE_SEARCH: &str = "#4203";

/// What a Dead view page holds when it lists dead letters (the list's table).
const DEAD_TABLE: &str = "sb-stack sb-dead";

/// Request timings of one table size, in the order taken.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// The Dead view: `GET /todos?filter=dead` through the server, signed in (pill
    /// counts, list and chart, rendered), to the last byte.
    pub view: Vec<Duration>,
    /// The page's reads one by one from the bench process (no HTTP):
    /// `list_dead_letters(viewer, none, 100)`.
    pub list: Vec<Duration>,
    /// `pill_counts(viewer)`.
    pub counts: Vec<Duration>,
    /// `dead_letters_per_day(viewer)`.
    pub chart: Vec<Duration>,
    /// The Dead view searched for [`COMMON_SEARCH`] through the server (the page also
    /// counts the matches, for bulk retry).
    pub search_common: Vec<Duration>,
    /// The same for [`RARE_SEARCH`].
    pub search_rare: Vec<Duration>,
    /// `GET /healthz` through the server.
    pub healthz: Vec<Duration>,
}

/// The 95th percentile (nearest rank), in milliseconds.
pub fn p95_ms(samples: &[Duration]) -> f64 {
    percentile_ms(samples, 0.95)
}

/// The `q` percentile (nearest rank), in milliseconds; 0 for no samples.
pub fn percentile_ms(samples: &[Duration], q: f64) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1000.0
}

/// One explained statement.
#[derive(Debug, Clone)]
pub struct BoardPlan {
    /// What it is.
    pub query: &'static str,
    /// `EXPLAIN (ANALYZE, BUFFERS)` output.
    pub text: String,
}

impl BoardPlan {
    /// Whether any node scans `todos` sequentially.
    pub fn seq_scan_on_todos(&self) -> bool {
        self.text.lines().any(|l| l.contains("Seq Scan on todos"))
    }
}

/// One table size's figures.
#[derive(Debug, Clone)]
pub struct Stage {
    /// Todos in the table.
    pub todos: u64,
    /// What the table held, by kind.
    pub census: Vec<(String, i64)>,
    /// Todos and dead letters the viewer's scopes hold (quarantine excluded).
    pub viewer_todos: i64,
    /// Dead letters the viewer's scopes hold.
    pub viewer_dead: i64,
    /// Seconds spent seeding this stage (inserts, attempts, vacuum).
    pub seed_seconds: f64,
    /// The timings.
    pub timings: Timings,
    /// The explained statements.
    pub plans: Vec<BoardPlan>,
}

/// The whole Board benchmark.
#[derive(Debug, Clone)]
pub struct BoardRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and the settings that matter.
    pub pg: (String, String),
    /// Source revision.
    pub revision: String,
    /// Requests per measurement.
    pub requests: usize,
    /// The stages, smaller first.
    pub stages: Vec<Stage>,
    /// Whole run, seconds.
    pub total_seconds: f64,
}

impl BoardRun {
    /// Dead view p95 on the larger table ÷ on the smaller one.
    pub fn growth(&self) -> Option<f64> {
        match self.stages.as_slice() {
            [small, .., large] => {
                let (a, b) = (p95_ms(&small.timings.view), p95_ms(&large.timings.view));
                (a > 0.0).then(|| b / a)
            }
            _ => None,
        }
    }

    /// Every plan of every stage that scans `todos` sequentially.
    pub fn seq_scans(&self) -> Vec<(u64, &'static str)> {
        self.stages
            .iter()
            .flat_map(|s| s.plans.iter().filter(|p| p.seq_scan_on_todos()).map(move |p| (s.todos, p.query)))
            .collect()
    }
}

/// Runs the Board benchmark on a database of its own, with a server of its own for the
/// pages and `/healthz`; always stops the server and drops the database.
pub async fn run(args: &Args, server_bin: &std::path::Path) -> BenchResult<BoardRun> {
    let started = Instant::now();
    let db = BenchDb::create(&args.admin_url).await?;
    progress(&format!("board: created database {}", db.name()));
    let outcome = match Server::start(server_bin, &db.url, args.pool_size).await {
        Ok(mut server) => {
            let measured = match server.wait_ready(Duration::from_secs(60)).await {
                Ok(()) => stages(args, &db, &server).await,
                Err(e) => Err(e),
            };
            let stopped = server.stop().await;
            measured.and_then(|m| stopped.map(|()| m))
        }
        Err(e) => Err(e),
    };
    let pg = db.settings().await;
    let dropped = db.drop_database().await;
    let stages = outcome?;
    dropped?;
    Ok(BoardRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: pg?,
        revision: args.revision.clone(),
        requests: args.board_requests,
        stages,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// Seeds the smaller table and measures, grows it to the larger one and measures.
async fn stages(args: &Args, db: &BenchDb, server: &Server) -> BenchResult<Vec<Stage>> {
    let tenancy = seed::tenancy(db).await?;
    let store = db.store(4)?;
    let mut stages = Vec::new();
    let mut seeded = 0u64;
    for size in [args.board_small, args.board_large] {
        let t = Instant::now();
        seed::todos(db, seeded + 1, size).await?;
        seeded = size;
        let seed_seconds = t.elapsed().as_secs_f64();
        progress(&format!("board: seeded {size} todos ({seed_seconds:.0} s)"));
        let timings = measure(args.board_requests, &store, server, &tenancy.viewer_scopes).await?;
        let plans = explain(db, &tenancy).await?;
        let (viewer_todos, viewer_dead) = viewer_holds(db, &tenancy.viewer_scopes).await?;
        progress(&format!(
            "board: {size} todos: Dead view page p95 {:.1} ms (store: list {:.1}, counts {:.1}, chart {:.1}); \
             /healthz p95 {:.1} ms",
            p95_ms(&timings.view),
            p95_ms(&timings.list),
            p95_ms(&timings.counts),
            p95_ms(&timings.chart),
            p95_ms(&timings.healthz)
        ));
        stages.push(Stage {
            todos: size,
            census: seed::census(db).await?,
            viewer_todos,
            viewer_dead,
            seed_seconds,
            timings,
            plans,
        });
    }
    Ok(stages)
}

/// How many todos and dead letters the viewer's scopes hold (quarantine excluded).
async fn viewer_holds(db: &BenchDb, scopes: &[ScopeId]) -> BenchResult<(i64, i64)> {
    let ids: Vec<String> = scopes.iter().map(|s| s.0.to_string()).collect();
    let row = db
        .client()
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE state = 'failed' AND next_retry_at IS NULL) FROM todos \
             WHERE scope_id = ANY($1::text[]::uuid[]) AND queue <> 'quarantine'",
            &[&ids],
        )
        .await
        .map_err(|e| format!("counting the viewer's todos: {e}"))?;
    Ok((row.get(0), row.get(1)))
}

/// Signs the viewer in, then times `n` Dead view pages, searched pages, the page's
/// store reads and `/healthz` requests, interleaved so that the machine's drift touches
/// all alike, after a few of each unmeasured.
async fn measure(n: usize, store: &Store, server: &Server, scopes: &[ScopeId]) -> BenchResult<Timings> {
    let browser = Browser::sign_in(server.base(), VIEWER_EMAIL, VIEWER_PASSWORD).await?;
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let healthz = format!("{}/healthz", server.base());
    let dead_view = paths::list(Pill::Dead, "");
    let (common_view, rare_view) = (paths::list(Pill::Dead, COMMON_SEARCH), paths::list(Pill::Dead, RARE_SEARCH));
    let mut t = Timings::default();
    let warm_up = 5;
    for i in 0..warm_up + n {
        let measured = i >= warm_up;
        let view = browser.page(&dead_view, DEAD_TABLE).await?;
        let (list, counts, chart) = store_reads(store, scopes).await?;
        let common = browser.page(&common_view, DEAD_TABLE).await?;
        let rare = browser.page(&rare_view, DEAD_TABLE).await?;
        let started = Instant::now();
        let mut resp = client.get(&healthz).send().await.map_err(|e| format!("/healthz: {e}"))?;
        resp.body().await.map_err(|e| format!("/healthz body: {e}"))?;
        let health = started.elapsed();
        if !resp.status().is_success() {
            return Err(format!("/healthz answered {}", resp.status()));
        }
        if measured {
            t.view.push(view);
            t.list.push(list);
            t.counts.push(counts);
            t.chart.push(chart);
            t.search_common.push(common);
            t.search_rare.push(rare);
            t.healthz.push(health);
        }
    }
    Ok(t)
}

/// The Dead view's three store reads, each timed.
async fn store_reads(store: &Store, scopes: &[ScopeId]) -> BenchResult<(Duration, Duration, Duration)> {
    let t0 = Instant::now();
    let rows = store.list_dead_letters(scopes, None, PAGE).await.map_err(|e| format!("list_dead_letters: {e}"))?;
    let t1 = Instant::now();
    let counts = store.pill_counts(scopes).await.map_err(|e| format!("pill_counts: {e}"))?;
    let t2 = Instant::now();
    let chart = store.dead_letters_per_day(scopes).await.map_err(|e| format!("dead_letters_per_day: {e}"))?;
    let t3 = Instant::now();
    if rows.is_empty() || counts.dead.is_zero() || chart.rows.is_empty() {
        return Err(format!(
            "the Dead view came back thin: {} rows, {} dead, {} chart rows",
            rows.len(),
            counts.dead,
            chart.rows.len()
        ));
    }
    Ok((t1 - t0, t2 - t1, t3 - t2))
}

/// The statements the Dead view sends, how to bind them, and what to call them.
struct Captured {
    query: &'static str,
    sql: String,
    types: &'static str,
    values: String,
}

/// Captures the Dead view's statements as the library sends them, then explains each
/// (custom plan, inside a rolled-back transaction).
async fn explain(db: &BenchDb, tenancy: &Tenancy) -> BenchResult<Vec<BoardPlan>> {
    let store: Store = db.store(1)?;
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    {
        let mut conn = store.conn().await.map_err(|e| e.to_string())?;
        conn.set_instrumentation(recorder(seen.clone()));
    }
    let scopes = &tenancy.viewer_scopes;
    let e = |what: &'static str| move |err: switchboard::error::Error| format!("{what}: {err}");
    store.list_dead_letters(scopes, None, PAGE).await.map_err(e("list"))?;
    store.pill_counts(scopes).await.map_err(e("counts"))?;
    store.dead_letters_per_day(scopes).await.map_err(e("chart"))?;
    store.list_dead_letters(scopes, Some(COMMON_SEARCH), PAGE).await.map_err(e("search"))?;
    store.count_dead_letters(scopes, Some(COMMON_SEARCH)).await.map_err(e("count search"))?;
    store.list_dead_letters(scopes, Some(RARE_SEARCH), PAGE).await.map_err(e("search"))?;
    // The other pills' lists, explained too (not timed): the same rule holds for them.
    store.list_todos_for(scopes, Pill::All, None, PAGE).await.map_err(e("All"))?;
    store.list_todos_for(scopes, Pill::Failed, None, PAGE).await.map_err(e("Failed"))?;
    store.list_todos_for(scopes, Pill::Done, Some(COMMON_SEARCH), PAGE).await.map_err(e("Done searched"))?;
    let seen = seen.lock().map_err(|_| "statement recorder poisoned")?.clone();
    let statements: Vec<String> = seen.into_iter().filter(|s| s.contains("todos t")).collect();
    let [list, counts, chart, common, count_common, rare, all, failed, done_searched] = statements.as_slice() else {
        return Err(format!("expected the Todos view's 9 statements, saw {}", statements.len()));
    };
    let array = format!("'{{{}}}'", scopes.iter().map(|s| s.0.to_string()).collect::<Vec<_>>().join(","));
    let since = (Utc::now().date_naive() - chrono::Duration::days(i64::from(CHART_DAYS) - 1))
        .format("%Y-%m-%d 00:00:00+00")
        .to_string();
    let pattern = |q: &str| format!("'%{q}%'");
    let captured = [
        Captured {
            query: "Dead list (100 newest)",
            sql: list.clone(),
            types: "uuid[], int8",
            values: format!("{array}, {PAGE}"),
        },
        Captured {
            query: "pill counts (six capped counts)",
            sql: counts.clone(),
            types: "uuid[], int8",
            values: format!("{array}, {}", COUNT_CAP + 1),
        },
        Captured {
            query: "dead letters per day per queue (chart)",
            sql: chart.clone(),
            types: "uuid[], timestamptz, int8",
            values: format!("{array}, '{since}', {CHART_QUEUES}"),
        },
        Captured {
            query: "Dead list searched for a common word",
            sql: common.clone(),
            types: "uuid[], int8, text",
            values: format!("{array}, {PAGE}, {}", pattern(COMMON_SEARCH)),
        },
        Captured {
            query: "matches of a common word (bulk retry's count)",
            sql: count_common.clone(),
            types: "uuid[], int8, text",
            values: format!("{array}, {}, {}", COUNT_CAP + 1, pattern(COMMON_SEARCH)),
        },
        Captured {
            query: "Dead list searched for a rare word",
            sql: rare.clone(),
            types: "uuid[], int8, text",
            values: format!("{array}, {PAGE}, {}", pattern(RARE_SEARCH)),
        },
        Captured {
            query: "All pill list (100 newest, merged per state)",
            sql: all.clone(),
            types: "uuid[], int8, int8",
            values: format!("{array}, {PAGE}, {PAGE}"),
        },
        Captured {
            query: "Failed pill list (retry scheduled)",
            sql: failed.clone(),
            types: "uuid[], int8, int8",
            values: format!("{array}, {PAGE}, {PAGE}"),
        },
        Captured {
            query: "Done pill searched for a common word (newest 5 000 looked through)",
            sql: done_searched.clone(),
            types: "uuid[], int8, int8, text",
            values: format!("{array}, {SEARCH_WINDOW}, {PAGE}, {}", pattern(COMMON_SEARCH)),
        },
    ];
    let mut plans = Vec::new();
    for c in captured {
        plans.push(BoardPlan { query: c.query, text: explain_one(db, &c).await? });
    }
    Ok(plans)
}

/// `EXPLAIN (ANALYZE, BUFFERS)` of one captured statement with a custom plan (the
/// store does not keep these statements prepared, so each runs planned for its values).
async fn explain_one(db: &BenchDb, c: &Captured) -> BenchResult<String> {
    crate::plan::explain_prepared(db, "bench_board", c.types, &c.sql, "custom", &c.values)
        .await
        .map_err(|e| format!("{e} ({})", c.query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_95th_percentile_is_the_nearest_rank() {
        let ms = |v: u64| Duration::from_millis(v);
        let samples: Vec<Duration> = (1..=50).map(ms).collect();
        assert_eq!(p95_ms(&samples), 48.0);
        assert_eq!(p95_ms(&[ms(7)]), 7.0);
        assert_eq!(p95_ms(&[]), 0.0);
        assert_eq!(percentile_ms(&[ms(3), ms(1), ms(2)], 0.5), 2.0);
    }

    #[test]
    fn a_plan_scanning_todos_is_caught_and_one_scanning_endpoints_is_not() {
        let plan = |text: &str| BoardPlan { query: "q", text: text.into() };
        assert!(plan("Limit\n  ->  Seq Scan on todos t  (cost=…)").seq_scan_on_todos());
        assert!(!plan("Hash\n  ->  Seq Scan on endpoints ep").seq_scan_on_todos());
        assert!(!plan("Index Only Scan using todos_dead_letters_idx on todos t").seq_scan_on_todos());
    }
}
