//! The run's section of `docs/benchmarks.md`: every figure beside its same-run ceiling
//! or limit, the verdicts, and the claim plans. A new run replaces the previous
//! section between the `bench:foundation` markers and leaves the rest of the file
//! (its header, other benchmarks' sections) alone.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::report::{Run, group, minutes, pass, pct, plan_summary, us};
use crate::waits::WaitTally;

const START: &str = "<!-- bench:foundation:start -->";
const END: &str = "<!-- bench:foundation:end -->";

/// The file's opening when it does not exist yet (docs/benchmarks.md normally keeps
/// its own, fuller header; only the marked section is ever rewritten).
const NEW_FILE_HEADER: &str = "# Benchmarks\n\nRun `scripts/bench` from the repository root; \
see `switchboard-bench --help`. Each benchmark owns the section between its markers.\n";

/// The marked section of docs/benchmarks.md for this run.
fn section(run: &Run) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", m.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg_version, run.pg_settings);
    let _ = writeln!(
        d,
        "- Noise: other processes took at most {} of all cores in any measured span (see the \
         \"other processes\" columns).",
        pct(run.worst_noise())
    );
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} rounds of {} s windows per side and concurrency, each after {} s of warm-up; \
         a pool of {} connections for the server and one for raw SQL; server HTTP workers: default (one per core); \
         the queue topped up to {} pending todos over {} done ones, and vacuumed, before every window.\n",
        run.rounds,
        run.seconds,
        run.warmup,
        run.pool_size,
        group(run.pending as f64),
        group(run.done as f64)
    );

    let _ = writeln!(d, "#### Targets\n");
    let _ = writeln!(d, "| target | figure | same-run ceiling or limit | result |\n|---|---|---|---|");
    for [target, figure, against, verdict] in run.verdicts() {
        let _ = writeln!(d, "| {target} | {figure} | {against} | **{verdict}** |");
    }

    let _ = writeln!(d, "\n#### claim_next → complete cycles, REST beside the raw SQL ceiling\n");
    let _ = writeln!(
        d,
        "| clients | REST cycles/s | raw SQL cycles/s | REST/raw | p50 / p99 ms REST | p50 / p99 ms raw \
         | CPU µs/cycle REST: server · postgres · bench | CPU µs/cycle raw: postgres · bench \
         | cores busy REST / raw | of which other processes REST / raw |"
    );
    let _ = writeln!(d, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for p in &run.cycles {
        let (r, w) = (&p.rest, &p.raw);
        let _ = writeln!(
            d,
            "| {} | {} | {} | **{:.1} %** | {:.1} / {:.1} | {:.1} / {:.1} | {} · {} · {} | {} · {} | {} / {} | {} / {} |",
            p.clients,
            group(r.rate()),
            group(w.rate()),
            p.ratio() * 100.0,
            r.latency_ms(0.5),
            r.latency_ms(0.99),
            w.latency_ms(0.5),
            w.latency_ms(0.99),
            us(r, r.cpu.server_s),
            us(r, r.cpu.postgres_s),
            us(r, r.cpu.bench_s),
            us(w, w.cpu.postgres_s),
            us(w, w.cpu.bench_s),
            pct(r.cpu.busy_share()),
            pct(w.cpu.busy_share()),
            pct(r.cpu.other_share()),
            pct(w.cpu.other_share()),
        );
    }

    let s = &run.sweep;
    let _ = writeln!(d, "\n#### Lease reaper sweep over {} expired leases\n", group(s.expired as f64));
    let _ = writeln!(
        d,
        "{} REST clients cycling on another endpoint's queue. Baseline (same load, no sweep, {} s): **{} cycles/s**. \
         One sweep is much shorter than a window, so {} sweeps were timed (the leases lapsed again between them, \
         outside the timed spans) and the throughput during them is pooled over {:.2} s of sweeping: \
         **{} cycles/s, a {:.1} % drop**. Median sweep: **{:.0} ms**.\n",
        run.sweep_clients,
        run.seconds,
        group(s.baseline.rate()),
        s.sweeps.len(),
        s.swept_seconds(),
        group(s.during_rate()),
        s.drop_pct(),
        s.median_sweep_ms()
    );
    let _ = writeln!(
        d,
        "| sweep | duration ms | requeued | dead-lettered | REST cycles during | cycles/s during \
         | CPU s: server · postgres · bench | cores busy | of which other processes |"
    );
    let _ = writeln!(d, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let b = &s.baseline;
    let _ = writeln!(
        d,
        "| baseline | {:.0} | - | - | {} | {} | {:.2} · {:.2} · {:.2} | {} | {} |",
        b.seconds * 1000.0,
        b.cycles,
        group(b.rate()),
        b.cpu.server_s,
        b.cpu.postgres_s,
        b.cpu.bench_s,
        pct(b.cpu.busy_share()),
        pct(b.cpu.other_share())
    );
    for (i, t) in s.sweeps.iter().enumerate() {
        let secs = t.duration.as_secs_f64();
        let _ = writeln!(
            d,
            "| {} | {:.0} | {} | {} | {} | {} | {:.2} · {:.2} · {:.2} | {} | {} |",
            i + 1,
            secs * 1000.0,
            group(t.requeued as f64),
            t.dead_lettered,
            t.cycles,
            group(if secs > 0.0 { t.cycles as f64 / secs } else { 0.0 }),
            t.cpu.server_s,
            t.cpu.postgres_s,
            t.cpu.bench_s,
            pct(t.cpu.busy_share()),
            pct(t.cpu.other_share())
        );
    }

    let (quiet, sweeping) = (&s.waits.quiet, &s.waits.sweeping);
    if !quiet.is_empty() || !sweeping.is_empty() {
        let _ = writeln!(
            d,
            "\nWhat the agents' database sessions were doing (`pg_stat_activity` sampled every 20 ms; share of \
             active agent-session samples; {} samples without a sweep, {} during sweeps):\n",
            quiet.values().sum::<u64>(),
            sweeping.values().sum::<u64>()
        );
        let _ = writeln!(d, "| session state | without a sweep | during sweeps |\n|---|--:|--:|");
        let share = |side: &std::collections::BTreeMap<String, u64>, k: &str| {
            let total: u64 = side.values().sum();
            if total == 0 { 0.0 } else { side.get(k).copied().unwrap_or(0) as f64 / total as f64 }
        };
        let mut states: Vec<String> = WaitTally::top(sweeping, 6).into_iter().map(|(k, _)| k).collect();
        for (k, _) in WaitTally::top(quiet, 6) {
            if !states.contains(&k) {
                states.push(k);
            }
        }
        for k in states {
            let _ = writeln!(d, "| {k} | {} | {} |", pct(share(quiet, &k)), pct(share(sweeping, &k)));
        }
    }

    let p = &run.prune;
    if p.measured() {
        let _ = writeln!(d, "\n#### Retention prune of {} old terminal todos\n", group(f64::from(p.seeded)));
        let _ = writeln!(
            d,
            "The same {} REST clients, on the same queue. One retention pass at the default 30 days (what the \
             `Retention` actor runs) deleted {} todos last changed 31 days ago (two in three done, one in three \
             dead letters), their {} attempts and {} events, in batches of 500 with the sweeps' pause between \
             them: **{:.1} s**. Baseline (same load, no prune, {} s, just before): **{} cycles/s**; during the \
             prune: **{} cycles/s, a {:.1} % drop** (the lease sweep's figure above is the one to compare). \
             CPU s during the prune: server {:.2} · postgres {:.2} · bench {:.2}; cores busy {}, of which other \
             processes {}.",
            run.sweep_clients,
            group(p.report.todos as f64),
            group(p.report.todos as f64),
            group(p.report.events as f64),
            p.duration.as_secs_f64(),
            run.seconds,
            group(p.baseline.rate()),
            group(p.during_rate()),
            p.drop_pct(),
            p.cpu.server_s,
            p.cpu.postgres_s,
            p.cpu.bench_s,
            pct(p.cpu.busy_share()),
            pct(p.cpu.other_share())
        );
    }

    if run.intake.senders > 0 {
        intake_section(&mut d, run);
    }
    crate::hooks::doc::section(&mut d, run);

    let _ = writeln!(d, "\n#### Server memory\n");
    let _ = writeln!(
        d,
        "Peak RSS (VmHWM of the `switchboard serve` process, read at the end of the run): **{:.1} MiB**; \
         RSS at the end: {:.1} MiB.",
        run.peak_rss_mib(),
        run.end_rss_kib as f64 / 1024.0
    );

    let _ = writeln!(d, "\n#### claim_next plan on the seeded table\n");
    let _ = writeln!(d, "Taken after the run, on this table:\n\n| endpoint | state | rows |\n|---|---|--:|");
    for (slug, state, n) in &run.table_counts {
        let _ = writeln!(d, "| {slug} | {state} | {} |", group(*n as f64));
    }
    for p in &run.plans {
        let _ = writeln!(d, "\n**{}, {} plan**: {}. **{}**\n", p.form, p.mode, plan_summary(p), pass(p.passes()));
        let _ = writeln!(d, "```text\n{}\n```", p.text.trim_end());
    }
    if run.plans.iter().any(|p| p.claim_index_used().is_some_and(|i| i != p.designed_index)) {
        let _ = writeln!(
            d,
            "\nNote: where the queue form's custom plan picks `todos_claim_any_idx`, that is the planner \
             weighing two equivalent paths: with every pending todo on one queue, the smaller any-queue index \
             yields rows in the same (created_at, id) order and its `queue = …` filter rejects nothing, so the \
             first live entry is the claim. On an endpoint with several busy queues the same choice would step \
             over other queues' pending rows. The custom plan is the one that runs today: the store sends these \
             statements through diesel's `sql_query`, which diesel never keeps as a prepared statement, so each \
             execution is parsed and planned afresh. The generic plan shows what a prepared statement would \
             settle on (`todos_claim_queue_idx`, the queue in the index condition)."
        );
    }
    let _ = writeln!(d, "{END}");
    d
}

/// Intake beside plain todo creation: the figures, where the deliveries went, and
/// what the database sessions were doing on each side.
fn intake_section(d: &mut String, run: &Run) {
    let i = &run.intake;
    let _ = writeln!(d, "\n#### Signed intake beside plain todo creation\n");
    let _ = writeln!(
        d,
        "{} senders, each on its own keep-alive connection, post a {}-byte GitHub `push` delivery (a fresh commit \
         id and `X-GitHub-Delivery` each, `X-Hub-Signature-256` over the body) to a `github` webhook's ingest URL \
         (trusted actors: allow all; rules: `ping` → drop, `push*` → queue `{}`); a 202 that routed one new todo \
         counts. Ceiling: {} tasks in the bench process calling `Store::create_todo` for the todo such a delivery \
         becomes (same title, kind, source and payload; queue `{}`) through one pool of {} connections, no HTTP. \
         {} rounds of {} s per side, alternating which goes first, each after a `CHECKPOINT` and {} s of warm-up. \
         **{} deliveries/s against {} todos/s: {:.1} %.**\n",
        i.senders,
        group(i.body_bytes as f64),
        crate::intake::ROUTED_QUEUE,
        i.senders,
        crate::intake::DEFAULT_QUEUE,
        run.pool_size,
        run.rounds,
        run.seconds,
        run.warmup,
        group(i.intake.window.rate()),
        group(i.ceiling.window.rate()),
        i.ratio() * 100.0
    );
    let _ = writeln!(
        d,
        "| side | per second | p50 / p99 ms | CPU µs each: server · postgres · bench | WAL bytes each \
         | DB sessions busy (mean) | cores busy | of which other processes | errors |"
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    // The server idles while the ceiling runs: its CPU then is nobody's work.
    for (label, side, via_server) in
        [("intake: signed deliveries", &i.intake, true), ("ceiling: `create_todo`", &i.ceiling, false)]
    {
        let w = &side.window;
        let server = if via_server { us(w, w.cpu.server_s) } else { "-".to_owned() };
        let _ = writeln!(
            d,
            "| {label} | {} | {:.1} / {:.1} | {server} · {} · {} | {} | {:.1} | {} | {} | {} |",
            group(w.rate()),
            w.latency_ms(0.5),
            w.latency_ms(0.99),
            us(w, w.cpu.postgres_s),
            us(w, w.cpu.bench_s),
            side.wal_per_op().map_or_else(|| "-".into(), group),
            side.sessions.mean_busy(),
            pct(w.cpu.busy_share()),
            pct(w.cpu.other_share()),
            match &w.first_error {
                Some(e) if w.errors > 0 => format!("{} (first: {})", w.errors, e.replace('|', "/")),
                _ => w.errors.to_string(),
            },
        );
    }

    let _ = writeln!(
        d,
        "\nWhere they went (the webhook's events and the endpoint's todos after the run; warm-ups and {} \
         sanity-check deliveries, one refused, included):\n",
        i.probes
    );
    let _ = writeln!(d, "| events: disposition · trust mode · verified | rows |\n|---|--:|");
    for (disposition, trust, verified, n) in &i.events {
        let _ = writeln!(d, "| {disposition} · {trust} · {verified} | {} |", group(*n as f64));
    }
    let _ = writeln!(d, "\n| todos: queue | rows |\n|---|--:|");
    for (queue, n) in &i.todos {
        let _ = writeln!(d, "| {queue} | {} |", group(*n as f64));
    }

    let (a, b) = (&i.intake.sessions, &i.ceiling.sessions);
    let _ = writeln!(
        d,
        "\nWhat the database sessions were doing (`pg_stat_activity` every 20 ms, all sessions on the benchmark \
         database; mean sessions per sample in each state, by the statement running or last run; {} samples \
         during intake, {} during the ceiling):\n",
        a.samples, b.samples
    );
    let _ = writeln!(d, "| state · statement | intake | ceiling |\n|---|--:|--:|");
    let mut keys: Vec<&String> = a.seen.keys().chain(b.seen.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.sort_by(|x, y| (a.mean(y) + b.mean(y)).total_cmp(&(a.mean(x) + b.mean(x))));
    for k in keys.into_iter().filter(|k| a.mean(k) >= 0.05 || b.mean(k) >= 0.05) {
        let _ = writeln!(d, "| {k} | {:.2} | {:.2} |", a.mean(k), b.mean(k));
    }
}

/// Writes this run's section into `path`, replacing the previous one.
pub fn write_doc(path: &Path, run: &Run) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// Writes `section` (which starts with `start` and ends with `end`) into `path`,
/// replacing the previous section between those markers and leaving the rest alone.
pub(crate) fn write_section(path: &Path, start: &str, end: &str, section: &str) -> BenchResult<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => NEW_FILE_HEADER.to_owned(),
        Err(e) => return Err(format!("reading {}: {e}", path.display())),
    };
    let updated = splice_between(&existing, start, end, section)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, updated).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// `doc` with its marked section replaced by `section` (or `section` appended when the
/// markers are absent). Refuses a file with a start marker but no end marker rather
/// than guess what belongs to the section.
#[cfg(test)]
fn splice(doc: &str, section: &str) -> BenchResult<String> {
    splice_between(doc, START, END, section)
}

/// [`splice`] for the section between any pair of markers.
fn splice_between(doc: &str, start: &str, end: &str, section: &str) -> BenchResult<String> {
    match (doc.find(start), doc.find(end)) {
        (Some(s), Some(e)) if s < e => Ok(format!("{}{}{}", &doc[..s], section.trim_end(), &doc[e + end.len()..])),
        (None, None) => Ok(format!("{}\n{}", doc.trim_end_matches('\n').to_owned() + "\n", section)),
        _ => Err(format!("the results file has a broken {start} … {end} pair; fix it by hand")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_run_replaces_only_its_own_section() {
        let doc = format!("# B\n\nintro\n\n{START}\nold\n{END}\n\n## other\nkept\n");
        let out = splice(&doc, &format!("{START}\nnew\n{END}\n")).unwrap();
        assert_eq!(out, format!("# B\n\nintro\n\n{START}\nnew\n{END}\n\n## other\nkept\n"));
    }

    #[test]
    fn a_file_without_markers_gets_the_section_appended() {
        let out = splice("# B\n", &format!("{START}\nnew\n{END}\n")).unwrap();
        assert_eq!(out, format!("# B\n\n{START}\nnew\n{END}\n"));
    }
}
