//! The Queues benchmark's section of `docs/benchmarks.md` (between the `bench:queues`
//! markers), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::{P95_TARGET_MS, QueuesRun, ms};
use crate::BenchResult;
use crate::board::{p95_ms, percentile_ms};
use crate::report::{group, minutes, pass};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:queues:start -->";
const END: &str = "<!-- bench:queues:end -->";

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &QueuesRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

fn cell(v: &[std::time::Duration]) -> String {
    format!("{:.1} ({:.1})", p95_ms(v), percentile_ms(v, 0.5))
}

/// The verdict rows: (target, figure, verdict).
fn verdicts(run: &QueuesRun) -> Vec<[String; 3]> {
    let todos = group(run.todos as f64);
    let reads = run.reads_todos();
    vec![
        [
            format!("`GET /api/v1/queues` p95 under {P95_TARGET_MS:.0} ms on {todos} todos, 200 queues"),
            format!("{:.1} ms", p95_ms(&run.api)),
            pass(p95_ms(&run.api) < P95_TARGET_MS).to_string(),
        ],
        [
            format!("Board `/queues` p95 under {P95_TARGET_MS:.0} ms on {todos} todos, 200 queues"),
            format!("{:.1} ms", p95_ms(&run.page)),
            pass(p95_ms(&run.page) < P95_TARGET_MS).to_string(),
        ],
        [
            "no sequential scan of `todos` in their plans".into(),
            if reads.is_empty() {
                format!("0 of {} plans read `todos` at all", run.plans.len())
            } else {
                reads.join("; ")
            },
            pass(reads.is_empty()).to_string(),
        ],
    ]
}

/// The terminal summary.
pub fn table(run: &QueuesRun) -> String {
    let mut d = String::new();
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(d, "{target}: {figure} ({verdict})");
    }
    let _ = writeln!(d, "census: first pass {:.0} ms, steady p95 {:.0} ms", ms(run.first_census), p95_ms(&run.census));
    d
}

fn section(run: &QueuesRun) -> String {
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "## Queues overview (`switchboard-bench --only-queues`)\n");
    let _ = writeln!(
        d,
        "**What it measures.** The Queues overview as its two readers get it, one request at a time: \
         `GET /api/v1/queues` (the viewer's operator token; all 200 queues in one page) and the Board's `/queues` \
         (signed in through the sign-in form; 200 rows with their sparklines, rendered), each timed to the last \
         byte, beside `GET /healthz` through the same server (what HTTP alone costs). Each figure is the p95 (p50) \
         of {} requests after 5 unmeasured, the kinds interleaved. The census that feeds both \
         (`queues/statements/census.rs`) is timed from the bench process: its first pass, which counts the last \
         day's completions and dead letters off `todos_retention_idx`, and five steady passes after it (the server's \
         own census is switched off for the run, so these are the only ones). Plans: the two reads under \
         `EXPLAIN (ANALYZE, BUFFERS)` with the viewer's values, custom plans, in a rolled-back transaction.\n",
        run.requests
    );
    let _ = writeln!(
        d,
        "**The data.** One owner, the viewer: 20 endpoints of 10 queues each (200 queues), {} todos written with \
         `INSERT … SELECT generate_series`: 30 % pending, 5 % claimed (one in five of those with a lapsed lease), \
         2 % waiting for input, 3 % failed with a retry scheduled, 5 % dead letters (each with its closing attempt, \
         inserted as the product inserts it, so the failed-attempt log fills), 55 % done, all within the last 48 \
         hours; `VACUUM (ANALYZE)` after seeding.\n",
        group(run.todos as f64)
    );
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}; shared with other work.", run.machine.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.\n", run.revision, minutes(run.total_seconds));
    let _ = writeln!(d, "#### Targets\n\n| target | figure | result |\n|---|---|---|");
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(d, "| {target} | {figure} | **{verdict}** |");
    }
    let _ = writeln!(
        d,
        "\n#### p95 (p50) in ms\n\n| todos | queues | **`GET /api/v1/queues`** | **Board `/queues`** | `GET /healthz` \
         (ceiling) | census, first pass | census, steady | seeding |\n|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let _ = writeln!(
        d,
        "| {} | {} | **{}** | **{}** | {} | {:.0} | {} | {:.0} s |",
        group(run.todos as f64),
        run.queues,
        cell(&run.api),
        cell(&run.page),
        cell(&run.healthz),
        ms(run.first_census),
        cell(&run.census),
        run.seed_seconds
    );
    let _ = writeln!(
        d,
        "\nWhy it holds: both reads take the viewer's rows of `queue_census` (200 rows, by scope) and, for the \
         page, each queue's last hour of `queue_minutes` by its primary key; neither reads `todos`. The cost moves \
         to the census, which runs once per interval on one instance whatever the number of viewers: its live \
         counts are walks of the partial indexes the claim already keeps (the pending count stops at 10 000 \
         per queue), and its completions are read off the retention index from where the last pass \
         stopped, so a steady pass costs what happened since the last one."
    );
    for (what, plan) in &run.plans {
        let _ = writeln!(d, "\n**{what}**\n\n```text\n{}\n```", plan.trim_end());
    }
    let _ = writeln!(d, "{END}");
    d
}
