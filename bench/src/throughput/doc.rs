//! The throughput benchmark's section of `docs/benchmarks.md` (between the
//! `bench:throughput` markers; how to read it is written above them), its rows of the
//! headline table at the top of that file, and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::agents::quantile;
use super::ceiling::Cost;
use super::series::Series;
use super::targets::{self, cpu_cells, wal_cells};
use super::{ThroughputRun, graphile, pgqueuer, wal};
use crate::BenchResult;
use crate::report::{group, minutes, pct};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:throughput:start -->";
const END: &str = "<!-- bench:throughput:end -->";
/// What marks a headline row as this benchmark's.
const HEADLINE_TAG: &str = "(`throughput`)";
/// River's published figure, cited as context (it cannot run here: no Go toolchain).
const RIVER: &str = "River (Go) was not run: this machine has no Go toolchain to build it. Its own documentation \
    (<https://riverqueue.com/docs/benchmarks>) reports about 46 000 jobs/s for `river bench` burning down 1 000 000 \
    no-op jobs with 2 000 worker goroutines on an 8-core 2022 M2 MacBook Air: another machine (four times the \
    cores, another disk) and another workload, so context only, never a ratio.";

/// Writes the run's section and its headline rows into `path`.
pub fn write_doc(path: &Path, run: &ThroughputRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let updated = replace_headline_rows(&text, &headline_rows(run));
    std::fs::write(path, updated).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The terminal summary: the targets.
pub fn table(run: &ThroughputRun) -> String {
    let mut out = String::from("throughput (medians)\n");
    for s in &run.single {
        let _ = writeln!(
            out,
            "  {:>3} clients: ceiling {:>7} cycles/s, REST {:>7}, lean {:>7}",
            s.clients,
            group(s.ceiling.rate()),
            group(s.rest.rate()),
            if s.lean.is_empty() { "-".into() } else { group(s.lean.rate()) }
        );
    }
    for t in targets::targets(run) {
        let _ = writeln!(out, "  {}: {} / {} → {}", t.what, t.figure, t.reference, t.verdict.text());
    }
    out
}

/// The headline table's rows of this benchmark.
fn headline_rows(run: &ThroughputRun) -> Vec<String> {
    let when = format!("{}, `{}`", run.date.get(4..10).unwrap_or(&run.date).trim().replace("  ", " "), run.revision);
    let t = targets::targets(run);
    let verdict = |i: usize| t.get(i).map_or("-".into(), |t| t.verdict.text());
    let mut rows = Vec::new();
    if let Some(top) = run.top() {
        let gw = run.graphile.as_ref().and_then(|g| g.best());
        let lean =
            if top.lean.is_empty() { String::new() } else { format!(" (lean answer {})", group(top.lean.rate())) };
        rows.push(format!(
            "| single-row REST cycle at {n} agents, medians of {r} {HEADLINE_TAG} | {} cycles/s{lean} | bare-SQL cycle {}/s; Graphile Worker {} best {} jobs/s | {} (≥ 65 %: {}) · {} Graphile (≥ 1.0×: {}) | {when} |",
            group(top.rest.rate()),
            group(top.ceiling.rate()),
            graphile::VERSION,
            gw.map_or("-".into(), |p| group(p.drains.rate())),
            pct(ratio(top.rest.rate(), top.ceiling.rate())),
            verdict(0),
            gw.map_or("-".into(), |p| format!("{:.2}×", ratio(top.rest.rate(), p.drains.rate()))),
            verdict(2),
            n = top.clients,
            r = run.rounds,
        ));
    }
    if let Some((agents, s)) = run.best_batched(false) {
        let pgq = run.pgqueuer.as_ref().and_then(|p| p.best());
        let py = run.python.as_ref().filter(|p| !p.batch_lean.is_empty()).map(|p| p.batch_lean.rate());
        rows.push(format!(
            "| batched drain, claim {l} → complete {l} {HEADLINE_TAG} | compiled agents {} todos/s ({agents} agents); Python `requests` lean {} | PGQueuer {} best point {} jobs/s ({}) | {} (≥ 2×: {}) · Python {} (≥ 1.2×: {}) | {when} |",
            group(s.rate()),
            py.map_or("not run".into(), group),
            pgqueuer::VERSION,
            pgq.map_or("-".into(), |p| group(p.drains.rate())),
            pgq.map_or("-".into(), |p| format!("{} consumers, batches of {}", p.consumers, p.batch)),
            pgq.map_or("-".into(), |p| format!("{:.2}×", ratio(s.rate(), p.drains.rate()))),
            verdict(4),
            match (py, pgq) {
                (Some(py), Some(p)) => format!("{:.2}×", ratio(py, p.drains.rate())),
                _ => "-".into(),
            },
            verdict(6),
            l = run.args.batch_limit,
        ));
    }
    if let Some(st) = &run.stability {
        rows.push(format!(
            "| batched drain right after a burst of {} creates, statistics from a small table {HEADLINE_TAG} | {} todos/s | after VACUUM (ANALYZE) {} todos/s | {:.2} (≥ 0.85: {}) | {when} |",
            group(st.burst as f64),
            group(st.stale.rate()),
            group(st.analyzed.rate()),
            st.ratio(),
            t.iter().find(|t| t.what.starts_with("plan stability")).map_or("-".into(), |t| t.verdict.text()),
        ));
    }
    if let (Some(top), Some(one)) = (run.top(), run.bottom()) {
        let wal = t.iter().find(|t| t.what.starts_with("WAL bytes"));
        rows.push(format!(
            "| WAL per single-row cycle without full-page images; one agent's cycle {HEADLINE_TAG} | {} bytes; {} cycles/s | ceiling {} bytes; ceiling at 1 client {}/s | {} (≤ 1.3×); {} (≥ 50 %: {}) | {when} |",
            top.rest.median_of(Cost::wal_without_fpi_per_unit).map_or("unavailable".into(), group),
            group(one.rest.rate()),
            top.ceiling.median_of(Cost::wal_without_fpi_per_unit).map_or("unavailable".into(), group),
            group(one.ceiling.rate()),
            wal.map_or("-".into(), |w| format!("{}: {}", w.reference.rsplit("→ ").next().unwrap_or("-"), w.verdict.text())),
            pct(ratio(one.rest.rate(), one.ceiling.rate())),
            t.iter().find(|t| t.what.contains("of the ceiling at") && t.what.ends_with("(full answer)")).map_or("-".into(), |t| t.verdict.text()),
        ));
    }
    let p99 = quantile(&run.wake.after_create_ms, 0.99);
    rows.push(format!(
        "| long-poll wake-up p99 at idle {HEADLINE_TAG} | {p99:.1} ms | limit 50 ms | {} | {when} |",
        if p99 < targets::WAKE_P99_MS { "PASS" } else { "MISS" }
    ));
    rows
}

/// `text` with the headline table's rows tagged `(`throughput`)` replaced by `rows`, at
/// the place of the first of them (or at the table's end when there was none).
fn replace_headline_rows(text: &str, rows: &[String]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(head) = lines.iter().position(|l| l.starts_with("## Headline figures")) else { return text.to_owned() };
    let table_start = lines[head..].iter().position(|l| l.starts_with('|')).map(|i| i + head);
    let Some(table_start) = table_start else { return text.to_owned() };
    let table_end =
        lines[table_start..].iter().position(|l| !l.starts_with('|')).map_or(lines.len(), |i| i + table_start);
    let ours = |l: &str| l.split('|').nth(1).is_some_and(|c| c.contains(HEADLINE_TAG));
    let at = (table_start..table_end).find(|&i| ours(lines[i])).unwrap_or(table_end);
    let mut out: Vec<String> = Vec::with_capacity(lines.len() + rows.len());
    for (i, l) in lines.iter().enumerate() {
        if i == at {
            out.extend(rows.iter().cloned());
        }
        if (table_start..table_end).contains(&i) && ours(l) {
            continue;
        }
        out.push((*l).to_owned());
    }
    if at == lines.len() {
        out.extend(rows.iter().cloned());
    }
    let mut joined = out.join("\n");
    if text.ends_with('\n') {
        joined.push('\n');
    }
    joined
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// "rounds: a / b / c".
fn rounds(s: &Series) -> String {
    if s.is_empty() { "not run".into() } else { s.rates_text(group) }
}

fn section(run: &ThroughputRun) -> String {
    let t = &run.args;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", run.machine.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let noise = noise(run);
    let _ = writeln!(
        d,
        "- Noise: other processes (outside the server, this run's PostgreSQL processes and the agents) took at most {} of all cores in a \
         measured span; the per-figure columns below say where.",
        pct(noise)
    );
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} rounds (every part once per round; figures are medians of the rounds); {} s windows after {} s \
         of warm-up; the product's queue topped up to {} pending todos over {} done ones and vacuumed (ANALYZE) \
         before every window; the ceiling's table rebuilt with {} pending rows; every window and drain starts after \
         a `CHECKPOINT`; every todo and job carries a {}-byte payload.",
        run.rounds,
        run.seconds,
        run.warmup,
        group(f64::from(run.table.1)),
        group(f64::from(run.table.0)),
        group(t.ceiling_rows as f64),
        t.throughput_payload_bytes,
    );
    let _ = writeln!(
        d,
        "- Lean answer (`claim-next?answer=lean`, and `complete?answer=lean` in the lean batched drains): {}.",
        if run.lean_served {
            "served by this build; measured beside the full answer"
        } else {
            "not served by this build (it ignores `?answer=lean`), so no lean figure was measured"
        }
    );
    let _ = writeln!(
        d,
        "- WAL without full-page images: {}.\n",
        match wal::unreadable_reason() {
            None => "`pg_waldump --stats` over each span's LSNs (record bytes; full-page image bytes apart)".to_owned(),
            Some(why) => format!("unavailable ({why})"),
        }
    );

    let _ = writeln!(d, "#### Targets (issue 41)\n");
    let _ = writeln!(d, "| target | figure | same-run reference → ratio | result |");
    let _ = writeln!(d, "|---|---|---|---|");
    for x in targets::targets(run) {
        let _ = writeln!(d, "| {} | {} | {} | **{}** |", x.what, x.figure, x.reference, x.verdict.text());
    }
    let _ = writeln!(
        d,
        "| every batch equivalent to the singles | property test `batches::equivalence::the_same_operations_batched_or_not_leave_the_same_rows_attempts_outbox_records_and_signals` (tests/it) | - | see `scripts/test` |\n"
    );

    let _ = writeln!(d, "#### Budget: what each target costs on these {} cores\n", run.machine.cores);
    let _ = writeln!(
        d,
        "CPU per unit at the target's rate if every core did nothing else, beside today's medians (µs per unit: \
         server · PostgreSQL cluster · agents = total; WAL bytes per unit, without full-page images in brackets).\n"
    );
    let _ =
        writeln!(d, "| target | implies | CPU budget | today | today's WAL | the reference spends | the difference |");
    let _ = writeln!(d, "|---|---|---|---|---|---|---|");
    for b in targets::budgets(run) {
        let _ = writeln!(
            d,
            "| {} | {} | {} | {} | {} | {} | {} |",
            b.target, b.implied, b.budget, b.today, b.wal, b.reference, b.gap
        );
    }
    let _ = writeln!(d);

    single_tables(&mut d, run);
    drain_table(&mut d, run);
    pgqueuer_grid(&mut d, run);
    stability(&mut d, run);
    creation_and_wake(&mut d, run);
    let _ = writeln!(d, "#### River\n\n{RIVER}");
    let _ = writeln!(d, "{END}");
    d
}

/// The highest share of the cores other processes took in any measured span.
fn noise(run: &ThroughputRun) -> f64 {
    let mut all: Vec<&Series> = Vec::new();
    for s in &run.single {
        all.extend([&s.ceiling, &s.rest, &s.lean]);
    }
    for b in &run.batched {
        all.extend([&b.full, &b.lean]);
    }
    if let Some(py) = &run.python {
        all.extend([&py.single, &py.single_lean, &py.batch, &py.batch_lean]);
    }
    if let Some(p) = &run.pgqueuer {
        all.extend(p.points.iter().map(|p| &p.drains));
    }
    if let Some(g) = &run.graphile {
        all.extend(g.points.iter().map(|p| &p.drains));
    }
    if let Some(st) = &run.stability {
        all.extend([&st.stale, &st.analyzed]);
    }
    all.iter().map(|s| s.worst_noise()).fold(0.0, f64::max)
}

fn single_tables(d: &mut String, run: &ThroughputRun) {
    let _ = writeln!(d, "#### Single-row cycles: compiled agents over REST beside the bare-SQL ceiling\n");
    let _ = writeln!(
        d,
        "| clients | ceiling cycles/s (rounds) | REST, full answer (rounds) | / ceiling | REST, lean answer (rounds) | / ceiling | ceiling mean ms | REST p50 / p99 ms (full · lean) |"
    );
    let _ = writeln!(d, "|--:|--:|--:|--:|--:|--:|--:|--:|");
    for s in &run.single {
        let c = s.ceiling.rate();
        let _ = writeln!(
            d,
            "| {} | {} ({}) | {} ({}) | {} | {} ({}) | {} | {:.1} | {:.1} / {:.1} · {} |",
            s.clients,
            group(c),
            rounds(&s.ceiling),
            group(s.rest.rate()),
            rounds(&s.rest),
            pct(ratio(s.rest.rate(), c)),
            if s.lean.is_empty() { "-".into() } else { group(s.lean.rate()) },
            rounds(&s.lean),
            if s.lean.is_empty() { "-".into() } else { pct(ratio(s.lean.rate(), c)) },
            s.ceiling.median(|r| r.p50_ms),
            s.rest.median(|r| r.p50_ms),
            s.rest.median(|r| r.p99_ms),
            if s.lean.is_empty() {
                "-".into()
            } else {
                format!("{:.1} / {:.1}", s.lean.median(|r| r.p50_ms), s.lean.median(|r| r.p99_ms))
            },
        );
    }
    let _ = writeln!(d, "\nTheir cost per cycle (medians of the rounds):\n");
    let _ = writeln!(
        d,
        "| clients | side | CPU µs per cycle: server · postgres · agents = total | WAL bytes per cycle (without FPI) | full-page images per cycle | FPI bytes per cycle | cores busy | of which other processes |"
    );
    let _ = writeln!(d, "|--:|---|--:|--:|--:|--:|--:|--:|");
    for s in &run.single {
        for (side, x) in
            [("ceiling (pgbench)", &s.ceiling), ("REST, full answer", &s.rest), ("REST, lean answer", &s.lean)]
        {
            if x.is_empty() {
                continue;
            }
            cost_row(d, &format!("{} | {side}", s.clients), x);
        }
    }
    if let Some(b) = &run.before {
        let now = run.top().map(|s| (s.rest.rate(), s.rest.pooled()));
        let (now_rate, now) = now.unwrap_or_default();
        let _ = writeln!(
            d,
            "\nBefore and after, single-row REST at {} agents: baseline `{}` {} cycles/s, CPU µs per cycle server · \
             postgres {:.0} · {:.0}, WAL {} bytes per cycle; this build {} cycles/s, {:.0} · {:.0}, WAL {} bytes per cycle.",
            b.agents,
            b.revision,
            group(b.rate),
            b.cost.server_us(),
            b.cost.postgres_us(),
            group(b.cost.wal_per_unit()),
            group(now_rate),
            now.server_us(),
            now.postgres_us(),
            group(now.wal_per_unit()),
        );
    }
    let _ = writeln!(d);
}

/// One cost row: `lead` cells, then the series' medians and shares.
fn cost_row(d: &mut String, lead: &str, s: &Series) {
    let pooled = s.pooled();
    let _ = writeln!(
        d,
        "| {lead} | {} | {} | {:.2} | {} | {} | {} |",
        cpu_cells(s),
        wal_cells(s),
        s.cost_median(Cost::fpi_per_unit),
        s.median_of(Cost::fpi_bytes_per_unit).map_or("unavailable".into(), group),
        pct(pooled.cpu.busy_share()),
        pct(s.worst_noise()),
    );
}

fn drain_table(d: &mut String, run: &ThroughputRun) {
    let best = run.pgqueuer.as_ref().and_then(|p| p.best()).map_or(0.0, |p| p.drains.rate());
    let _ = writeln!(d, "#### Drains and the references, todos (jobs) per second\n");
    let _ = writeln!(
        d,
        "Every side below drains the same way: claim (dequeue, fetch) → a handler that does nothing → complete; \
         \"× PGQueuer\" is against PGQueuer's best point of the grid. The agents' CPU is this bench's own process for \
         compiled agents, the Python or Node process for the others (PGQueuer's consumers, Graphile's worker).\n"
    );
    let _ = writeln!(
        d,
        "| side and set-up | median (rounds) | × PGQueuer best | round trip p50 / p99 ms | CPU µs per unit: server · postgres · agents = total | WAL bytes per unit (without FPI) | full-page images per unit | FPI bytes per unit | cores busy | of which other processes |"
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let row = |d: &mut String, what: String, s: &Series| {
        if s.is_empty() {
            return;
        }
        let lat = if s.median(|r| r.p50_ms) > 0.0 {
            format!("{:.1} / {:.1}", s.median(|r| r.p50_ms), s.median(|r| r.p99_ms))
        } else {
            "-".into()
        };
        let x = if best > 0.0 { format!("{:.2}×", s.rate() / best) } else { "-".into() };
        cost_row(d, &format!("{what} | {} ({}) | {x} | {lat}", group(s.rate()), rounds(s)), s);
    };
    let l = run.args.batch_limit;
    for b in &run.batched {
        row(
            d,
            format!("Switchboard REST, compiled agents ×{}, claim {l} → complete {l}, full answer", b.agents),
            &b.full,
        );
        row(
            d,
            format!("Switchboard REST, compiled agents ×{}, claim {l} → complete {l}, lean answer", b.agents),
            &b.lean,
        );
    }
    if let Some(py) = &run.python {
        let n = py.threads;
        row(
            d,
            format!("Switchboard REST, Python `requests` ×{n} threads, claim {l} → complete {l}, full answer"),
            &py.batch,
        );
        row(
            d,
            format!("Switchboard REST, Python `requests` ×{n} threads, claim {l} → complete {l}, lean answer"),
            &py.batch_lean,
        );
        row(d, format!("Switchboard REST, Python `requests` ×{n} threads, single-row cycles, full answer"), &py.single);
        row(
            d,
            format!("Switchboard REST, Python `requests` ×{n} threads, single-row cycles, lean answer"),
            &py.single_lean,
        );
    }
    if let Some(top) = run.top() {
        row(
            d,
            format!("Switchboard REST, compiled agents ×{}, single-row cycles, full answer", top.clients),
            &top.rest,
        );
    }
    if let Some(p) = &run.pgqueuer {
        let best_point = p.best().map(|b| (b.consumers, b.batch));
        for pt in &p.points {
            let mark = if Some((pt.consumers, pt.batch)) == best_point { " **(best)**" } else { "" };
            row(
                d,
                format!(
                    "PGQueuer {}, {} consumers, dequeue batches of {}, {} jobs per drain{mark}",
                    pgqueuer::VERSION,
                    pt.consumers,
                    pt.batch,
                    group(p.jobs as f64)
                ),
                &pt.drains,
            );
        }
    }
    if let Some(g) = &run.graphile {
        let best_c = g.best().map(|b| b.concurrency);
        for pt in &g.points {
            let mark = if Some(pt.concurrency) == best_c { " **(best)**" } else { "" };
            row(
                d,
                format!(
                    "Graphile Worker {} (Node {}), one `run()` at concurrency {}, {} jobs per drain{mark}",
                    graphile::VERSION,
                    g.node,
                    pt.concurrency,
                    group(g.jobs as f64)
                ),
                &pt.drains,
            );
        }
    }
    let _ = writeln!(d);
}

fn pgqueuer_grid(d: &mut String, run: &ThroughputRun) {
    let Some(p) = &run.pgqueuer else {
        let _ = writeln!(d, "#### PGQueuer's grid\n\nNot run (`--throughput-product-only`).\n");
        return;
    };
    let mut batches: Vec<u64> = p.points.iter().map(|x| x.batch).collect();
    batches.dedup();
    batches.sort_unstable();
    batches.dedup();
    let mut consumers: Vec<usize> = p.points.iter().map(|x| x.consumers).collect();
    consumers.sort_unstable();
    consumers.dedup();
    let _ = writeln!(
        d,
        "#### PGQueuer's grid (jobs/s, medians)\n\nPGQueuer {} with asyncpg, {} jobs enqueued per drain in batches of {} \
         over one connection (median {} jobs/s), its tables `VACUUM (ANALYZE)`d and the cluster checkpointed, then \
         drained by QueueManagers (one connection each, opened before the clock) with a handler that only counts; a \
         drain ends when the queue table holds none of the jobs.\n",
        pgqueuer::VERSION,
        group(p.jobs as f64),
        pgqueuer::ENQUEUE_BATCH,
        group(p.enqueue_rate())
    );
    let head: Vec<String> = batches.iter().map(|b| format!("batches of {b}")).collect();
    let _ = writeln!(d, "| consumers | {} |", head.join(" | "));
    let _ = writeln!(d, "|--:|{}", "--:|".repeat(batches.len()));
    for c in &consumers {
        let cells: Vec<String> = batches
            .iter()
            .map(|b| {
                p.points
                    .iter()
                    .find(|x| x.consumers == *c && x.batch == *b)
                    .map_or("-".into(), |x| group(x.drains.rate()))
            })
            .collect();
        let _ = writeln!(d, "| {c} | {} |", cells.join(" | "));
    }
    let _ = writeln!(d);
}

fn stability(d: &mut String, run: &ThroughputRun) {
    let _ = writeln!(d, "#### Plan stability: a burst drained before and after ANALYZE\n");
    let Some(st) = &run.stability else {
        let _ = writeln!(d, "Not run (`--throughput-product-only`).\n");
        return;
    };
    let _ = writeln!(
        d,
        "On a server and database of their own, per round and side: `todos` truncated, {} pending todos and \
         `VACUUM (ANALYZE)` (statistics of a small table), then a burst of {} todos created over REST (`POST \
         /api/v1/agent/todos/batch`, {} agents at once, batches of {}: median {} todos/s). The first side then \
         checkpoints and drains at once (no VACUUM, no ANALYZE); the second runs `VACUUM (ANALYZE)` first. Each drain \
         is the whole backlog, by {} compiled agents claiming {} at a time with the full answer, from the first claim \
         to the last agent finding the queue empty. The cluster's `autovacuum` is {}{}.\n",
        group(f64::from(st.small)),
        group(st.burst as f64),
        st.creators,
        run.args.create_batch,
        group(super::series::median(st.burst_rates.clone())),
        st.agents,
        st.limit,
        st.autovacuum.0,
        if st.autovacuum.1 { " (so the bench turned it off on `todos` for this part)" } else { "" },
    );
    let _ = writeln!(
        d,
        "| side | todos/s, median (rounds) | CPU µs per todo: server · postgres · agents = total | WAL bytes per todo (without FPI) | full-page images per todo | FPI bytes per todo | cores busy | of which other processes |"
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|--:|--:|");
    cost_row(
        d,
        &format!("statistics of the small table | {} ({})", group(st.stale.rate()), rounds(&st.stale)),
        &st.stale,
    );
    cost_row(
        d,
        &format!("after VACUUM (ANALYZE) | {} ({})", group(st.analyzed.rate()), rounds(&st.analyzed)),
        &st.analyzed,
    );
    let _ = writeln!(d, "\nRatio of the medians: **{:.2}** (gate ≥ {}).\n", st.ratio(), targets::STABILITY);
}

fn creation_and_wake(d: &mut String, run: &ThroughputRun) {
    let _ = writeln!(d, "#### Batched creation beside the references' bulk enqueue\n");
    let creates = run.create_rates.iter().map(|r| group(*r)).collect::<Vec<_>>().join(" / ");
    let pgq = run.pgqueuer.as_ref().map_or("not run".into(), |p| {
        format!(
            "PGQueuer's enqueue of {} jobs in batches of {} over one connection: **{} jobs/s**",
            group(p.jobs as f64),
            pgqueuer::ENQUEUE_BATCH,
            group(p.enqueue_rate())
        )
    });
    let gw = run.graphile.as_ref().map_or("not run".into(), |g| {
        format!(
            "Graphile Worker's `add_jobs` of {} jobs, {} per call: **{} jobs/s**",
            group(g.jobs as f64),
            graphile::ADD_BATCH,
            group(g.add_rate())
        )
    });
    let _ = writeln!(
        d,
        "One agent over REST creates {} todos in batches of {} (`POST /api/v1/agent/todos/batch`): **{} todos/s** \
         (median of {creates}). {pgq}. {gw} (medians over every drain).\n",
        group(run.args.pgqueuer_jobs as f64),
        run.args.create_batch,
        group(run.create_rate()),
    );
    let _ = writeln!(d, "#### Long-poll wake-up at idle\n");
    let w = &run.wake;
    let _ = writeln!(
        d,
        "An agent waits in `claim-next` with `wait_seconds: 30` on an empty queue; 50 ms later another creates a todo \
         there over REST. From the create's answer to the waiting claim's answer with that todo: **p50 {:.1} ms, p99 \
         {:.1} ms** (max {:.1} ms) over {} wake-ups; {} answered before the create's own answer was read (counted as 0). \
         From the create's request: p50 {:.1} ms, p99 {:.1} ms.\n",
        quantile(&w.after_create_ms, 0.5),
        quantile(&w.after_create_ms, 0.99),
        w.after_create_ms.last().copied().unwrap_or(0.0),
        w.after_create_ms.len(),
        w.before_create_answer,
        quantile(&w.after_send_ms, 0.5),
        quantile(&w.after_send_ms, 0.99),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headline_rows_of_this_benchmark_are_replaced_in_place_and_others_kept() {
        let text = "# B\n\n## Headline figures\n\n| a | b |\n|---|---|\n| other (`board`) | 1 |\n\
                    | old one (`throughput`) | 2 |\n| old two (`throughput`) | 3 |\n| last (`mcp`) | 4 |\n\nafter\n";
        let out = replace_headline_rows(text, &["| new (`throughput`) | 9 |".to_owned()]);
        assert_eq!(
            out,
            "# B\n\n## Headline figures\n\n| a | b |\n|---|---|\n| other (`board`) | 1 |\n\
             | new (`throughput`) | 9 |\n| last (`mcp`) | 4 |\n\nafter\n"
        );
    }

    #[test]
    fn headline_rows_are_appended_to_the_table_when_none_was_there() {
        let text = "## Headline figures\n\n| a |\n|---|\n| x (`board`) |\n\nafter\n";
        let out = replace_headline_rows(text, &["| y (`throughput`) |".to_owned()]);
        assert_eq!(out, "## Headline figures\n\n| a |\n|---|\n| x (`board`) |\n| y (`throughput`) |\n\nafter\n");
    }
}
