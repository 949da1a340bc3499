//! The Board benchmark's section of `docs/benchmarks.md` (between the `bench:board`
//! markers), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::board::{BoardRun, COMMON_SEARCH, RARE_SEARCH, Stage, p95_ms, percentile_ms};
use crate::report::{group, minutes, pass};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:board:start -->";
const END: &str = "<!-- bench:board:end -->";

/// Growing the table tenfold may at most double the Dead view's p95.
pub const GROWTH_TARGET: f64 = 2.0;

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &BoardRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

fn ms(v: f64) -> String {
    format!("{v:.1}")
}

/// The verdict rows: (target, figure, verdict).
fn verdicts(run: &BoardRun) -> Vec<[String; 3]> {
    let mut rows = Vec::new();
    if let (Some(growth), [small, .., large]) = (run.growth(), run.stages.as_slice()) {
        rows.push([
            format!(
                "Dead view page p95 on {} todos at most {GROWTH_TARGET:.0}× its p95 on {}",
                group(large.todos as f64),
                group(small.todos as f64)
            ),
            format!("{} ms vs {} ms: {growth:.2}×", ms(p95_ms(&large.timings.view)), ms(p95_ms(&small.timings.view))),
            pass(growth <= GROWTH_TARGET),
        ]);
    }
    let plans: usize = run.stages.iter().map(|s| s.plans.len()).sum();
    let scans = run.seq_scans();
    rows.push([
        "no sequential scan over `todos` in any Todos view statement".into(),
        if scans.is_empty() {
            format!("0 of {plans} plans")
        } else {
            let which: Vec<String> = scans.iter().map(|(n, q)| format!("{q} on {}", group(*n as f64))).collect();
            format!("{} of {plans} plans: {}", scans.len(), which.join("; "))
        },
        pass(plans > 0 && scans.is_empty()),
    ]);
    rows
}

fn section(run: &BoardRun) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "## Board benchmark: the Dead view (`switchboard-bench --only-board`)\n");
    let _ = writeln!(
        d,
        "**What it measures.** The Board's Todos view on its Dead pill as a browser gets it: \
         `GET /todos?filter=dead` through the real server, signed in as the viewer (session cookie from the \
         sign-in form), timed to the last byte of the page. The page makes three reads, concurrently on its own \
         pooled connections, and renders them: `pill_counts` (All, Pending, Claimed, Done, Failed, Dead: each exact \
         up to 10 000, then `10 000+`), `list_dead_letters` (the 100 newest dead letters) and \
         `dead_letters_per_day` (the 14-day chart, as inline SVG). Beside it: the same page searched for a common \
         word (`{COMMON_SEARCH}`, a queue name: a fifth of all dead letters) and a rare one (`{RARE_SEARCH}`, a few \
         titles), where the page also counts the matches for bulk retry; the three reads timed one by one from the \
         bench process through a pool of 4 connections (no HTTP: which read costs what); and `GET /healthz` \
         through the same server, what HTTP alone costs. Each figure is the p95 of {} requests, after 5 \
         unmeasured, the kinds interleaved so that drift touches all alike.\n",
        run.requests
    );
    let _ = writeln!(
        d,
        "**The data.** Five owners (four humans and a team), ten endpoints each; the viewer is the first human, \
         also a member of the team, so they see two owners of five. The table is seeded with \
         `INSERT … SELECT generate_series` in a service's proportions (10 % dead letters, each with the attempt \
         that closed it; 5 % failed with a retry scheduled; 20 % pending, one in twenty of those in quarantine; \
         5 % claimed; 2 % waiting for input; 2 % canceled; 56 % done), created evenly over 90 days, then grown \
         tenfold in the same proportions and measured again. `VACUUM (ANALYZE)` after each seeding (what \
         autovacuum does; this server runs with autovacuum off). Plans: each statement captured from the library \
         as it is sent and run under `EXPLAIN (ANALYZE, BUFFERS)` with a custom plan (the store does not keep \
         these statements prepared), in a rolled-back transaction.\n"
    );
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(
        d,
        "- Machine: {}; shared with other work, so single slow requests \
         happen (see p50 beside p95).",
        m.summary()
    );
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.\n", run.revision, minutes(run.total_seconds));

    let _ = writeln!(d, "#### Targets\n\n| target | figure | result |\n|---|---|---|");
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(d, "| {target} | {figure} | **{verdict}** |");
    }

    let _ = writeln!(
        d,
        "\n#### p95 (p50) in ms\n\n| todos | dead letters | the viewer's todos / dead letters | **Dead view page** \
         | store: list | store: counts | store: chart | page searched `{COMMON_SEARCH}` | page searched \
         `{RARE_SEARCH}` | `GET /healthz` | seeding |"
    );
    let _ = writeln!(d, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for s in &run.stages {
        let dead: i64 = s.census.iter().filter(|(k, _)| k == "dead letter").map(|(_, n)| n).sum();
        let cell = |v: &[std::time::Duration]| format!("{} ({})", ms(p95_ms(v)), ms(percentile_ms(v, 0.5)));
        let t = &s.timings;
        let _ = writeln!(
            d,
            "| {} | {} | {} / {} | **{}** | {} | {} | {} | {} | {} | {} | {:.0} s |",
            group(s.todos as f64),
            group(dead as f64),
            group(s.viewer_todos as f64),
            group(s.viewer_dead as f64),
            cell(&t.view),
            cell(&t.list),
            cell(&t.counts),
            cell(&t.chart),
            cell(&t.search_common),
            cell(&t.search_rare),
            cell(&t.healthz),
            s.seed_seconds
        );
    }
    let _ = writeln!(
        d,
        "\nWhy it holds: every read walks a partial index per scope (migration 000009) and stops at what it shows. \
         The list takes each scope's 100 newest off `todos_dead_letters_idx` and merges them; each count reads at \
         most 10 001 entries of its index, index-only; the chart reads only the last 14 days' dead letters, \
         index-only (the index carries the queue). So the counts grow until their buckets pass the cap and then \
         stop, and the chart grows with recent dead letters, not with the table. A text search reads at most the \
         viewer's dead letters (the trigram index `todos_dead_letters_search_idx`, made where `pg_trgm` is \
         available, lets the planner go straight to a rare word's rows); it is shown, not targeted."
    );

    for s in &run.stages {
        census(&mut d, s);
    }
    for s in &run.stages {
        for p in &s.plans {
            let verdict =
                if p.seq_scan_on_todos() { "sequential scan over todos: FAIL" } else { "no seq scan on todos" };
            let _ = writeln!(d, "\n**{}, {} todos** ({verdict})\n", p.query, group(s.todos as f64));
            let _ = writeln!(d, "```text\n{}\n```", p.text.trim_end());
        }
    }
    let _ = writeln!(d, "{END}");
    d
}

fn census(d: &mut String, s: &Stage) {
    let _ = writeln!(d, "\n**The table at {} todos**\n\n| kind | rows |\n|---|--:|", group(s.todos as f64));
    for (kind, n) in &s.census {
        let _ = writeln!(d, "| {kind} | {} |", group(*n as f64));
    }
}

/// The summary printed on the terminal.
pub fn table(run: &BoardRun) -> String {
    let mut t =
        String::from("\nBoard: Dead view page (GET /todos?filter=dead, signed in) p95, ms; its store reads apart\n");
    for s in &run.stages {
        let _ = writeln!(
            t,
            "  {:>9} todos: page {:>6.1}  list {:>6.1}  counts {:>6.1}  chart {:>6.1}  searched {:>6.1} / {:>6.1}  /healthz {:>5.1}",
            s.todos,
            p95_ms(&s.timings.view),
            p95_ms(&s.timings.list),
            p95_ms(&s.timings.counts),
            p95_ms(&s.timings.chart),
            p95_ms(&s.timings.search_common),
            p95_ms(&s.timings.search_rare),
            p95_ms(&s.timings.healthz)
        );
    }
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(t, "  {verdict}  {target}: {figure}");
    }
    t
}
