//! The digest benchmark's section of `docs/benchmarks.md` (between the `bench:digest`
//! markers), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::plan::BIG_TABLES;
use super::run::{DigestRun, GROWTH_TARGET, Stage, median_ms};
use super::seed::{CLOCKED_OUT_EVERY, ENDPOINTS_PER_OWNER, HISTORY_DAYS, OWNERS, QUEUES};
use crate::BenchResult;
use crate::board::{p95_ms, percentile_ms};
use crate::report::{group, minutes, pass, pct};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:digest:start -->";
const END: &str = "<!-- bench:digest:end -->";

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &DigestRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

fn ms(v: f64) -> String {
    format!("{v:.1}")
}

/// The verdict rows: (target, figure, verdict).
fn verdicts(run: &DigestRun) -> Vec<[String; 3]> {
    let mut rows = Vec::new();
    if let (Some(growth), [small, .., large]) = (run.growth(), run.stages.as_slice()) {
        rows.push([
            format!(
                "median digest build on {} todos at most {GROWTH_TARGET:.0}× the median on {}",
                group(large.todos as f64),
                group(small.todos as f64)
            ),
            format!("{} ms vs {} ms: {growth:.2}×", ms(median_ms(&large.builds)), ms(median_ms(&small.builds))),
            pass(growth <= GROWTH_TARGET),
        ]);
    }
    let plans: usize = run.stages.iter().map(|s| s.plans.len()).sum();
    let scans = run.seq_scans();
    rows.push([
        format!("every section's plan uses an index: no sequential scan on {}", BIG_TABLES.join(", ")),
        if scans.is_empty() {
            format!("0 of {plans} plans")
        } else {
            let which: Vec<String> =
                scans.iter().map(|(n, s, t)| format!("{s} reads {t} at {}", group(*n as f64))).collect();
            format!("{} of {plans} plans: {}", scans.len(), which.join("; "))
        },
        pass(plans > 0 && scans.is_empty()),
    ]);
    rows
}

fn intro(d: &mut String, run: &DigestRun) {
    let _ = writeln!(
        d,
        "**What it measures.** One digest built as the `DigestScheduler` builds it: \
         `switchboard::digests::service::compose::compose` (the store's eight section queries, each in its own transaction \
         with its own statement and lock timeouts, then the rendering), called from the bench process through a pool \
         of 2 connections, no server. The digest covers every queue of its owner (20 endpoints × 10 queues = 200 \
         queues), since its send time minus 24 hours (a first digest). {} measured builds per table size after {} \
         unmeasured; after each build, every section's SQL (`switchboard::digests::statements::sql`) is run alone with \
         the same binds and timed, so each section's cost is shown beside the whole. Each section's SQL is also run \
         under `EXPLAIN (ANALYZE, BUFFERS)` with those binds (custom plans, as the store's unnamed statements get; \
         in a rolled-back transaction).\n",
        run.builds, run.warmups
    );
    let deferrals = if run.created_deferrals {
        " `queue_deferrals` is not among this tree's migrations (another branch adds it as migration 000017): the \
         bench created it in its own database with that migration's shape `(endpoint_id, queue, hour, reason, count)`, \
         primary key `(endpoint_id, queue, hour, reason)`, so the deferred section is measured and explained."
    } else {
        " `queue_deferrals` comes from the tree's own migrations."
    };
    let _ = writeln!(
        d,
        "**The data.** {OWNERS} owners with {ENDPOINTS_PER_OWNER} endpoints × {} queues each; the digest is built \
         for the first, the other two hold as much (the scope filter matters). {HISTORY_DAYS} days of history (the \
         default retention) written with `INSERT … SELECT generate_series`, per mille of todos: 10 dead letters, \
         3 failed with a retry scheduled (the last hour), 8 pending (the last 6 hours: about six hours of \
         arrivals), 3 held in quarantine, 4 claimed (20 to 60 minutes ago; a tenth of the leases lapsed), 2 waiting \
         for input, 10 canceled, 960 done; terminal todos and the quarantine created evenly over the \
         {HISTORY_DAYS} days. Beside them: an attempt per claim (a twentieth of done todos claimed 30 minutes after \
         their doorbell), a webhook delivery for three todos in four (quarantined ones `quarantined`) and a dropped \
         one per twenty todos, a `todo.ready` doorbell ring for every drainable todo on half the endpoints (then decided as the digest \
         scheduler decides rings past their window: heard ones deleted, unheard ones marked), an \
         outbox row per dead letter and quarantined delivery (a tenth undeliverable; no sink exists, so `sink_id` \
         is NULL as for a deleted sink), claims deferred by admission budgets for 3 % of todos (per queue, hour \
         and reason), and every {CLOCKED_OUT_EVERY}th endpoint clocked out. Then grown tenfold in the same \
         proportions and over the same {HISTORY_DAYS} days (a busier service, not a longer history), and measured \
         again. Every table is written in time order, as a live service appends its rows (one day's rows sit \
         together on disk); the growth appends, again in time order. `VACUUM (ANALYZE)` after each \
         seeding.{deferrals}\n",
        QUEUES.len()
    );
}

fn section(run: &DigestRun) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    intro(&mut d, run);
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(
        d,
        "- Machine: {}; shared with other work: the CPU share taken by \
         other processes while the builds ran is in the table (\"others' CPU\").",
        m.summary()
    );
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.\n", run.revision, minutes(run.total_seconds));
    let _ = writeln!(d, "#### Targets\n\n| target | figure | result |\n|---|---|---|");
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(d, "| {target} | {figure} | **{verdict}** |");
    }
    builds(&mut d, run);
    sections(&mut d, run);
    found(&mut d, run);
    for s in &run.stages {
        census(&mut d, s);
    }
    if let Some(large) = run.stages.last() {
        let small = run.small_seq_scans();
        let _ = writeln!(
            d,
            "\n#### Plans at {} todos\n\nSmall tables read whole where the planner prefers it (allowed): {}.",
            group(large.todos as f64),
            if small.is_empty() { "none".to_owned() } else { small.join(", ") }
        );
        for p in &large.plans {
            let big = p.big_seq_scans();
            let verdict = if big.is_empty() {
                "no sequential scan on a big table".to_owned()
            } else {
                format!("sequential scan on {}: FAIL", big.join(", "))
            };
            let _ = writeln!(d, "\n**{}** ({verdict})\n", p.section);
            let _ = writeln!(d, "```text\n{}\n```", p.text.trim_end());
        }
    }
    let _ = writeln!(d, "{END}");
    d
}

fn builds(d: &mut String, run: &DigestRun) {
    let _ = writeln!(
        d,
        "\n#### The build, ms\n\n| todos | **median** | p95 | min | max | sections' SQL alone (sum of medians) \
         | busy CPU / others' CPU | seeding |\n|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for s in &run.stages {
        let alone: f64 = s.sections.iter().map(|(_, v)| median_ms(v)).sum();
        let _ = writeln!(
            d,
            "| {} | **{}** | {} | {} | {} | {} | {} / {} | {:.0} s |",
            group(s.todos as f64),
            ms(median_ms(&s.builds)),
            ms(p95_ms(&s.builds)),
            ms(percentile_ms(&s.builds, 0.0)),
            ms(percentile_ms(&s.builds, 1.0)),
            ms(alone),
            pct(s.cpu.busy_share()),
            pct(s.cpu.other_share()),
            s.seed_seconds
        );
    }
}

fn sections(d: &mut String, run: &DigestRun) {
    let [small, .., large] = run.stages.as_slice() else {
        return;
    };
    let _ = writeln!(
        d,
        "\n#### Each section's SQL alone: median (p95) in ms, rows returned, and the indexes its plan reads at {}\n\n\
         | section | {} todos | {} todos | growth | rows | indexes (table) |\n|---|--:|--:|--:|--:|---|",
        group(large.todos as f64),
        group(small.todos as f64),
        group(large.todos as f64)
    );
    for ((name, a), (_, b)) in small.sections.iter().zip(&large.sections) {
        let rows = large.section_rows.iter().find(|(n, _)| n == name).map_or(0, |(_, r)| *r);
        let indexes = large
            .plans
            .iter()
            .find(|p| p.section == *name)
            .map(|p| p.indexes().iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        let _ = writeln!(
            d,
            "| {name} | {} ({}) | {} ({}) | {} | {rows} | {indexes} |",
            ms(median_ms(a)),
            ms(p95_ms(a)),
            ms(median_ms(b)),
            ms(p95_ms(b)),
            growth(a, b)
        );
    }
    let grown = small
        .sections
        .iter()
        .zip(&large.sections)
        .map(|((name, a), (_, b))| (*name, median_ms(b) - median_ms(a), median_ms(a), median_ms(b)))
        .max_by(|x, y| x.1.total_cmp(&y.1));
    let all = median_ms(&large.builds) - median_ms(&small.builds);
    if let Some((name, added, a, b)) = grown {
        let _ = writeln!(
            d,
            "\nOf the {} ms the median build gained, {name} alone gained {} ms ({} → {} ms). Reading the figures: a \
             section's cost follows the rows it has to look at. `pending` and `claimed` count the owner's backlog \
             (every pending and every claimed todo), `dead_letters`, `quarantined`, `deferred` and `undeliverable` \
             read only the window's rows of their kind, `clocked_out` reads the owner's endpoints; \
             `unheard_doorbells` must look at every doorbell rung in the window and check, per ring, whether an \
             attempt claimed its todo within the acknowledgement window (one probe of `todo_attempts` per ring), \
             so it grows with the rings rung per day, which this data multiplies by ten with everything else. \
             The fixed part (a transaction and two `SET LOCAL`s per section, the rendering) is the build minus the \
             sections' SQL alone.",
            ms(all),
            ms(added),
            ms(a),
            ms(b)
        );
    }
}

/// `b` over `a`, as `3.2×`.
fn growth(a: &[std::time::Duration], b: &[std::time::Duration]) -> String {
    let (a, b) = (median_ms(a), median_ms(b));
    if a > 0.0 { format!("{:.1}×", b / a) } else { "-".into() }
}

fn found(d: &mut String, run: &DigestRun) {
    let _ = writeln!(
        d,
        "\n#### What the digest said\n\n| todos | queues pending (todos) | claimed (stalled) | dead letters | \
         quarantined | unheard doorbells | clocked out | deferred | undeliverable | quiet | text |\n\
         |--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for s in &run.stages {
        let f = &s.found;
        let _ = writeln!(
            d,
            "| {} | {} ({}) | {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} bytes |",
            group(s.todos as f64),
            f.pending.0,
            group(f.pending.1 as f64),
            group(f.claimed.0 as f64),
            group(f.claimed.1 as f64),
            group(f.dead as f64),
            group(f.quarantined as f64),
            group(f.unheard as f64),
            f.clocked_out,
            group(f.deferred as f64),
            group(f.undeliverable as f64),
            if f.quiet { "yes" } else { "no" },
            group(f.body_bytes as f64)
        );
    }
}

fn census(d: &mut String, s: &Stage) {
    let _ = writeln!(
        d,
        "\n**The tables at {} todos**\n\n| rows | all owners | the digest's owner |\n|---|--:|--:|",
        group(s.todos as f64)
    );
    for (kind, all, owner) in &s.census {
        let _ = writeln!(d, "| {kind} | {} | {} |", group(*all as f64), group(*owner as f64));
    }
}

/// The summary printed on the terminal.
pub fn table(run: &DigestRun) -> String {
    let mut t = String::from("\nDigest: one build (compose, 8 sections, 200 queues), ms\n");
    for s in &run.stages {
        let _ = write!(
            t,
            "  {:>9} todos: median {:>6.1}  p95 {:>6.1}  others' CPU {:>4}  sections:",
            s.todos,
            median_ms(&s.builds),
            p95_ms(&s.builds),
            pct(s.cpu.other_share())
        );
        for (name, v) in &s.sections {
            let _ = write!(t, " {name} {:.1}", median_ms(v));
        }
        let _ = writeln!(t);
    }
    for [target, figure, verdict] in verdicts(run) {
        let _ = writeln!(t, "  {verdict}  {target}: {figure}");
    }
    t
}
