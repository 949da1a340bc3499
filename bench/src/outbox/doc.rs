//! The outbox benchmark's section of `docs/benchmarks.md` (between the `bench:outbox`
//! markers; how to read it is written above them), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::cost::CostSide;
use super::latency::PAUSE;
use crate::BenchResult;
use crate::load::Window;
use crate::machine::CpuSpent;
use crate::outbox::{IN_FLIGHT_PER_INSTANCE, INSTANCES, OutboxRun};
use crate::report::{group, minutes, pass, pct};
use crate::results_doc::write_section;
use crate::waits::SessionTally;

const START: &str = "<!-- bench:outbox:start -->";
const END: &str = "<!-- bench:outbox:end -->";

/// Outbox messages per second must reach this share of plain POSTs at the same
/// concurrency.
pub const THROUGHPUT_TARGET: f64 = 0.40;
/// The five-sink fail-at-cap rate must reach this share of the no-sink rate.
pub const COST_TARGET: f64 = 0.75;
/// p99 dead letter → message may be at most this, ms: a twentieth of the default
/// 2 000 ms poll. A message the poll found would take 0–2 000 ms (p99 near 2 000 ms);
/// only the NOTIFY wake-up lands all of the slowest percent under 100 ms.
pub const LATENCY_P99_MS: f64 = 100.0;

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &OutboxRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// The largest share of all cores other processes took in any measured span.
fn worst_noise(run: &OutboxRun) -> f64 {
    let mut spans: Vec<&CpuSpent> = run.drains.iter().map(|d| &d.cpu).collect();
    spans.push(&run.ceiling.cpu);
    spans.push(&run.latency.rtt.cpu);
    spans.extend(run.cost.sides.iter().map(|s| &s.side.window.cpu));
    spans.iter().map(|c| c.other_share()).fold(0.0, f64::max)
}

/// The verdict rows: (target, figure, ceiling or limit, verdict).
fn verdicts(run: &OutboxRun) -> Vec<[String; 4]> {
    let (lost, dup) = run.lost_and_duplicated();
    let unexpected: u64 = run.drains.iter().map(|d| d.tally.unexpected).sum();
    let other: f64 = run.drains.iter().map(|d| d.other_outcomes).sum();
    let not_sent = run.not_sent();
    let cost = &run.cost;
    let mismatch: i64 = cost.sides.iter().map(CostSide::row_mismatch).sum();
    let cd = &run.cost_delivery;
    let (cost_lost, cost_dup) = (cd.one.lost + cd.five.lost, cd.one.duplicates + cd.five.duplicates);
    let rate = |sinks: usize| cost.side(sinks).map_or(0.0, |s| s.side.window.rate());
    let l = &run.latency;
    vec![
        [
            format!(
                "outbox throughput with {INSTANCES} servers ≥ {:.0} % of plain POSTs at the same concurrency; \
                 0 duplicates, 0 lost",
                THROUGHPUT_TARGET * 100.0
            ),
            format!(
                "{} messages/s; lost {lost}, duplicates {dup}, rows not `sent` {not_sent}",
                group(run.drain_rate())
            ),
            format!(
                "{} POSTs/s at {} concurrent → {:.1} %",
                group(run.ceiling.rate()),
                run.concurrency(),
                run.ratio() * 100.0
            ),
            pass(
                !run.drains.is_empty()
                    && run.ratio() >= THROUGHPUT_TARGET
                    && lost == 0
                    && dup == 0
                    && unexpected == 0
                    && not_sent == 0
                    && other == 0.0,
            ),
        ],
        [
            format!(
                "fail-at-cap with 5 subscribed sinks ≥ {:.0} % of the rate with none; rows = dead letters × sinks",
                COST_TARGET * 100.0
            ),
            format!(
                "{} dead letters/s with 5 sinks ({} with 1); rows off by {mismatch}; delivered: lost {cost_lost}, \
                 duplicates {cost_dup}",
                group(rate(5)),
                group(rate(1))
            ),
            format!("{} dead letters/s with none → {:.1} %", group(rate(0)), cost.ratio() * 100.0),
            pass(cost.ratio() >= COST_TARGET && mismatch == 0 && cost_lost == 0 && cost_dup == 0),
        ],
        [
            format!("p99 dead letter → sink message at idle ≤ {LATENCY_P99_MS:.0} ms (poll 2 000 ms)"),
            format!("p99 {:.1} ms (p50 {:.1} ms) over {} dead letters", l.ms(0.99), l.ms(0.5), l.latency_us.len()),
            format!(
                "plain POST round trip p99 {:.2} ms (p50 {:.2} ms); limit {LATENCY_P99_MS:.0} ms",
                l.rtt.latency_ms(0.99),
                l.rtt.latency_ms(0.5)
            ),
            pass(!l.latency_us.is_empty() && l.ms(0.99) <= LATENCY_P99_MS),
        ],
    ]
}

/// CPU µs per unit, or "-".
fn us(cpu_s: f64, units: u64) -> String {
    if units == 0 || cpu_s <= 0.0 { "-".into() } else { format!("{:.0}", cpu_s * 1e6 / units as f64) }
}

fn ms(w: &Window) -> String {
    format!("{:.2} / {:.2}", w.latency_ms(0.5), w.latency_ms(0.99))
}

fn section(run: &OutboxRun) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", m.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let _ = writeln!(
        d,
        "- Noise: other processes took at most {} of all cores in any measured span (see the \"other processes\" \
         columns).",
        pct(worst_noise(run))
    );
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} rounds; windows of {} s after {} s of warm-up; backlogs of {} rows; {} servers with a pool \
         of {} each, `SWITCHBOARD_OUTBOX_POLL_MS` at its default (2 000); each server's worker has up to {} deliveries in \
         flight, so the ceiling posts at {} concurrent.\n",
        run.rounds,
        run.seconds,
        run.warmup,
        group(run.drains.first().map_or(0.0, |x| x.rows as f64)),
        INSTANCES,
        run.pool_size,
        IN_FLIGHT_PER_INSTANCE,
        run.concurrency()
    );
    let _ = writeln!(d, "#### Targets\n\n| target | figure | same-run ceiling or limit | result |\n|---|---|---|---|");
    for [target, figure, against, verdict] in verdicts(run) {
        let _ = writeln!(d, "| {target} | {figure} | {against} | **{verdict}** |");
    }
    throughput(&mut d, run);
    cost(&mut d, run);
    latency(&mut d, run);
    let _ = writeln!(d, "{END}");
    d
}

fn throughput(d: &mut String, run: &OutboxRun) {
    let _ = writeln!(
        d,
        "\n#### Outbox throughput: {INSTANCES} servers draining one backlog, beside plain POSTs\n\n\
         Messages are {}-byte Gotify bodies (`Dead letter · deploys`, the summary, the Board link). **{} messages/s \
         against {} POSTs/s: {:.1} %.**\n",
        run.body_bytes,
        group(run.drain_rate()),
        group(run.ceiling.rate()),
        run.ratio() * 100.0
    );
    let _ = writeln!(
        d,
        "| side | per second | first → last message s | spawn → last message s | sent by each server | CPU µs per \
         message: servers · postgres · bench | cores busy | of which other processes | lost · duplicates · \
         unexpected |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for (i, x) in run.drains.iter().enumerate() {
        let n = x.rows.saturating_sub(1);
        let by: Vec<String> = x.sent_by.iter().map(|s| group(*s)).collect();
        let _ = writeln!(
            d,
            "| drain {} ({} rows) | {} | {:.2} | {:.2} | {} | {} · {} · {} | {} | {} | {} · {} · {} |",
            i + 1,
            group(x.rows as f64),
            group(x.rate()),
            x.first_to_last.as_secs_f64(),
            x.spawn_to_last.as_secs_f64(),
            by.join(" / "),
            us(x.cpu.server_s, n),
            us(x.cpu.postgres_s, n),
            us(x.cpu.bench_s, n),
            pct(x.cpu.busy_share()),
            pct(x.cpu.other_share()),
            x.tally.lost,
            x.tally.duplicates,
            x.tally.unexpected
        );
    }
    let c = &run.ceiling;
    let _ = writeln!(
        d,
        "| ceiling: plain POSTs at {} concurrent (ms p50 / p99: {}) | {} | {:.0} s in all | - | - | - · - · {} | {} | \
         {} | errors {} |",
        run.concurrency(),
        ms(c),
        group(c.rate()),
        c.seconds,
        us(c.cpu.bench_s, c.cycles),
        pct(c.cpu.busy_share()),
        pct(c.cpu.other_share()),
        c.errors
    );
    let statuses: Vec<String> = run.statuses.iter().map(|(s, n)| format!("{s} {}", group(*n as f64))).collect();
    let other: f64 = run.drains.iter().map(|x| x.other_outcomes).sum();
    let (rejected, first) = &run.rejected;
    let _ = writeln!(
        d,
        "\nThe drain sink's outbox rows at the end of the run (backlogs, the set-up's check and the latency phase): \
         {}. Outcomes other than `sent` the servers counted during the drains (held, coalesced, retried, partial, \
         undeliverable): {}. POSTs the receiver refused, besides the set-up's wrong-token check: {}{}.",
        statuses.join(", "),
        group(other),
        rejected.saturating_sub(1),
        first.as_ref().filter(|_| *rejected > 1).map(|r| format!(" (first: {r})")).unwrap_or_default()
    );
    let mut tally = SessionTally::default();
    for x in &run.drains {
        tally.add(&x.sessions);
    }
    sessions(d, "during the drains (from the servers' spawn to the last message)", &[("sessions", &tally)]);
}

fn cost(d: &mut String, run: &OutboxRun) {
    let c = &run.cost;
    let _ = writeln!(
        d,
        "\n#### The outbox's cost on the dead-letter transaction\n\n\
         {} tasks call `Store::fail` on claimed todos with an attempt cap of 1 through one pool of {} connections; \
         {} claimed todos are written before each window. No server runs. **{} dead letters/s with 5 sinks against \
         {} with none: {:.1} %.**\n",
        c.tasks,
        run.pool_size,
        group(c.supply as f64),
        group(c.side(5).map_or(0.0, |s| s.side.window.rate())),
        group(c.side(0).map_or(0.0, |s| s.side.window.rate())),
        c.ratio() * 100.0
    );
    let _ = writeln!(
        d,
        "| subscribed sinks | fail-at-cap per second | of the rate with none | p50 / p99 ms | CPU µs each: postgres · \
         bench | WAL bytes each | DB sessions busy (mean) | cores busy | of which other processes | dead letters \
         | outbox rows per sink | rows off |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    let base = c.side(0).map_or(0.0, |s| s.side.window.rate());
    for s in &c.sides {
        let w = &s.side.window;
        let rows: Vec<String> = s.rows_per_sink.iter().map(|r| group(*r as f64)).collect();
        let _ = writeln!(
            d,
            "| {} | {} | {} | {} | {} · {} | {} | {:.1} | {} | {} | {} | {} | {} |",
            s.sinks,
            group(w.rate()),
            if base > 0.0 { format!("{:.1} %", w.rate() / base * 100.0) } else { "-".into() },
            ms(w),
            us(w.cpu.postgres_s, w.cycles),
            us(w.cpu.bench_s, w.cycles),
            s.side.wal_per_op().map_or_else(|| "-".into(), group),
            s.side.sessions.mean_busy(),
            pct(w.cpu.busy_share()),
            pct(w.cpu.other_share()),
            group(s.dead_letters as f64),
            if rows.is_empty() { "-".into() } else { rows.join(" / ") },
            s.row_mismatch()
        );
    }
    let cd = &run.cost_delivery;
    let statuses: Vec<String> = cd.statuses.iter().map(|(s, n)| format!("{s} {}", group(*n as f64))).collect();
    let _ = writeln!(
        d,
        "\nThose rows, delivered afterwards by {INSTANCES} servers: {} messages due (one per dead letter of the \
         one-sink owner, five per dead letter of the five-sink owner); the receiver held them all {:.1} s after the \
         servers were spawned. One-sink owner: {} of {} todos complete, lost {}, duplicates {}; five-sink owner: {} \
         of {} complete, lost {}, duplicates {}. Their rows afterwards: {}.",
        group(cd.due as f64),
        cd.seconds,
        group(cd.one.arrived as f64),
        group(c.side(1).map_or(0.0, |s| s.dead_letters as f64)),
        cd.one.lost,
        cd.one.duplicates,
        group(cd.five.arrived as f64),
        group(c.side(5).map_or(0.0, |s| s.dead_letters as f64)),
        cd.five.lost,
        cd.five.duplicates,
        statuses.join(", ")
    );
    let tallies: Vec<(String, &SessionTally)> =
        c.sides.iter().map(|s| (format!("{} sink(s)", s.sinks), &s.side.sessions)).collect();
    let named: Vec<(&str, &SessionTally)> = tallies.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    sessions(d, "during the fail windows", &named);
}

fn latency(d: &mut String, run: &OutboxRun) {
    let l = &run.latency;
    let _ = writeln!(
        d,
        "\n#### Dead letter → sink message at idle\n\n\
         {} dead letters, one at a time with {} ms between them, both servers running: **p50 {:.1} ms, p99 {:.1} ms** \
         (max {:.1} ms; {} over {LATENCY_P99_MS:.0} ms; {} arrived before the `fail` answer was read, counted as 0). \
         Ceiling: plain POSTs of the {}-byte body at 1 concurrent for {:.0} s: round trip **p50 {:.2} ms, p99 {:.2} \
         ms**; CPU µs each: bench {}; cores busy {}, of which other processes {}.",
        l.latency_us.len(),
        PAUSE.as_millis(),
        l.ms(0.5),
        l.ms(0.99),
        l.ms(1.0),
        l.over(LATENCY_P99_MS),
        l.early,
        l.body_bytes,
        l.rtt.seconds,
        l.rtt.latency_ms(0.5),
        l.rtt.latency_ms(0.99),
        us(l.rtt.cpu.bench_s, l.rtt.cycles),
        pct(l.rtt.cpu.busy_share()),
        pct(l.rtt.cpu.other_share())
    );
}

/// A table of what the database sessions were doing, one column per tally.
fn sessions(d: &mut String, when: &str, tallies: &[(&str, &SessionTally)]) {
    let samples: Vec<String> = tallies.iter().map(|(n, t)| format!("{} {n}", t.samples)).collect();
    let _ = writeln!(
        d,
        "\nWhat the database sessions were doing {when} (`pg_stat_activity` every 20 ms; mean sessions per sample \
         in each state, by the statement running or last run; samples: {}):\n",
        samples.join(", ")
    );
    let names: Vec<&str> = tallies.iter().map(|(n, _)| *n).collect();
    let _ = writeln!(d, "| state · statement | {} |", names.join(" | "));
    let _ = writeln!(d, "|---|{}", "--:|".repeat(tallies.len()));
    let mut keys: Vec<&String> = tallies.iter().flat_map(|(_, t)| t.seen.keys()).collect();
    keys.sort();
    keys.dedup();
    let top = |k: &String| tallies.iter().map(|(_, t)| t.mean(k)).fold(0.0, f64::max);
    keys.sort_by(|a, b| top(b).total_cmp(&top(a)));
    for k in keys.into_iter().filter(|k| top(k) >= 0.05) {
        let cells: Vec<String> = tallies.iter().map(|(_, t)| format!("{:.2}", t.mean(k))).collect();
        let _ = writeln!(d, "| {k} | {} |", cells.join(" | "));
    }
}

/// The summary printed on the terminal.
pub fn table(run: &OutboxRun) -> String {
    let mut t = String::from("\nOutbox\n");
    for [target, figure, against, verdict] in verdicts(run) {
        let _ = writeln!(t, "  {verdict}  {target}: {figure} ({against})");
    }
    let _ = writeln!(t, "  noise: other processes took at most {} of all cores", pct(worst_noise(run)));
    let _ = writeln!(t, "  whole outbox run: {}", minutes(run.total_seconds));
    t
}
