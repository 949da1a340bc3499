//! The throughput benchmark's section of `docs/benchmarks.md` (between the
//! `bench:throughput` markers; how to read it is written above them), and its summary on
//! the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::agents::quantile;
use super::ceiling::Cost;
use crate::BenchResult;
use crate::report::{group, minutes, pass, pct};
use crate::results_doc::write_section;
use crate::throughput::ThroughputRun;

const START: &str = "<!-- bench:throughput:start -->";
const END: &str = "<!-- bench:throughput:end -->";

/// The single-row REST cycle at the highest concurrency against the bare-SQL ceiling.
pub const SINGLE_TARGET: f64 = 0.50;
/// The best batched drain against PGQueuer's drain.
pub const BATCH_TARGET: f64 = 2.0;
/// Long-poll wake-up p99 at idle, ms.
pub const WAKE_P99_MS: f64 = 50.0;

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &ThroughputRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// (figure, ceiling, ratio) of each target.
struct Verdicts {
    single: Option<(f64, f64, f64)>,
    batch: Option<(f64, f64, f64)>,
    wake_p99: f64,
}

fn verdicts(run: &ThroughputRun) -> Verdicts {
    let single = run.top().map(|s| {
        let c = s.ceiling_rate();
        (s.rest_rate(), c, if c > 0.0 { s.rest_rate() / c } else { 0.0 })
    });
    let drain = run.pgqueuer.median(|r| r.drain_per_s);
    let batch = run.best_batched().map(|b| (b.rate, drain, if drain > 0.0 { b.rate / drain } else { 0.0 }));
    Verdicts { single, batch, wake_p99: quantile(&run.wake.after_create_ms, 0.99) }
}

/// The terminal summary.
pub fn table(run: &ThroughputRun) -> String {
    let v = verdicts(run);
    let mut out = String::from("throughput\n");
    for s in &run.single {
        let _ = writeln!(
            out,
            "  {:>3} clients: ceiling {:>7} cycles/s, REST {:>7} cycles/s",
            s.clients,
            group(s.ceiling_rate()),
            group(s.rest_rate())
        );
    }
    if let Some((f, c, r)) = v.single {
        let ok = r >= SINGLE_TARGET;
        let _ = writeln!(out, "  single-row REST {} / ceiling {} = {} ({})", group(f), group(c), pct(r), pass(ok));
    }
    if let Some((f, c, r)) = v.batch {
        let ok = r >= BATCH_TARGET;
        let _ = writeln!(out, "  batched drain {} todos/s / PGQueuer {} = {r:.2}x ({})", group(f), group(c), pass(ok));
    }
    let _ = writeln!(out, "  long-poll wake-up p99 {:.1} ms ({})", v.wake_p99, pass(v.wake_p99 < WAKE_P99_MS));
    out
}

fn cost_cells(c: &Cost) -> String {
    format!("{:.0} · {:.0} | {}", c.server_us(), c.postgres_us(), group(c.wal_per_unit()))
}

fn section(run: &ThroughputRun) -> String {
    let v = verdicts(run);
    let t = &run.args;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", run.machine.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let noise = run
        .single
        .iter()
        .flat_map(|s| s.ceiling.iter().map(|w| w.cost.cpu.other_share()).chain([s.rest_cost.cpu.other_share()]))
        .chain(run.batched.iter().map(|b| b.cost.cpu.other_share()))
        .fold(0.0, f64::max);
    let _ = writeln!(d, "- Noise: other processes took at most {} of all cores in any measured window.", pct(noise));
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} rounds of {} s windows after {} s of warm-up; the product's queue topped up to {} pending \
         todos over {} done ones and vacuumed before every window; the ceiling's table rebuilt with {} pending rows \
         before every pgbench window; every window starts after a `CHECKPOINT`.\n",
        run.rounds,
        run.seconds,
        run.warmup,
        group(f64::from(run.table.1)),
        group(f64::from(run.table.0)),
        group(t.ceiling_rows as f64),
    );

    let _ = writeln!(d, "#### Targets\n");
    let _ = writeln!(d, "| target | figure | same-run reference | result |");
    let _ = writeln!(d, "|---|---|---|---|");
    if let Some((f, c, r)) = v.single {
        let _ = writeln!(
            d,
            "| single-row REST cycle at {n} agents ≥ 50 % of the bare-SQL ceiling at {n} clients | {} cycles/s | {} \
             cycles/s → {} | **{}** |",
            group(f),
            group(c),
            pct(r),
            pass(r >= SINGLE_TARGET),
            n = run.top().map_or(0, |s| s.clients),
        );
    }
    if let Some((f, c, r)) = v.batch {
        let agents = run.best_batched().map_or(0, |b| b.agents);
        let _ = writeln!(
            d,
            "| batched drain (claim {lim} → complete {lim}) ≥ 2× PGQueuer's drain | {} todos/s at {agents} agents | {} \
             jobs/s ({} consumers, batches of {}) → {r:.2}× | **{}** |",
            group(f),
            group(c),
            run.pgqueuer.consumers,
            run.pgqueuer.dequeue_batch,
            pass(r >= BATCH_TARGET),
            lim = t.batch_limit,
        );
    }
    let _ = writeln!(
        d,
        "| long-poll wake-up p99 at idle < 50 ms | p99 {:.1} ms (p50 {:.1} ms) over {} wake-ups | limit 50 ms | **{}** |",
        v.wake_p99,
        quantile(&run.wake.after_create_ms, 0.5),
        run.wake.after_create_ms.len(),
        pass(v.wake_p99 < WAKE_P99_MS)
    );
    let _ = writeln!(
        d,
        "| every batch equivalent to the singles | property test `batches::equivalence::the_same_operations_batched_or_not_leave_the_same_rows_attempts_outbox_records_and_signals` \
         (tests/it) | - | see `scripts/test` |\n"
    );

    let _ = writeln!(d, "#### Single-row cycles: REST beside the bare-SQL ceiling\n");
    let _ = writeln!(
        d,
        "| clients | ceiling cycles/s | REST cycles/s | REST / ceiling | ceiling mean ms | REST p50 / p99 ms | CPU µs per cycle, ceiling: \
         postgres | WAL bytes per cycle, ceiling | CPU µs per cycle, REST: server · postgres | WAL bytes per cycle, \
         REST | cores busy ceiling / REST | of which other processes |"
    );
    let _ = writeln!(d, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for s in &run.single {
        let c = s.ceiling_cost();
        let ratio = if s.ceiling_rate() > 0.0 { s.rest_rate() / s.ceiling_rate() } else { 0.0 };
        let _ = writeln!(
            d,
            "| {} | {} | {} | {} | {:.1} | {:.1} / {:.1} | {:.0} | {} | {} | {} / {} | {} / {} |",
            s.clients,
            group(s.ceiling_rate()),
            group(s.rest_rate()),
            pct(ratio),
            s.ceiling.iter().map(|w| w.latency_ms).sum::<f64>() / s.ceiling.len().max(1) as f64,
            quantile(&s.rest_latency_ms, 0.5),
            quantile(&s.rest_latency_ms, 0.99),
            c.postgres_us(),
            group(c.wal_per_unit()),
            cost_cells(&s.rest_cost),
            pct(c.cpu.busy_share()),
            pct(s.rest_cost.cpu.busy_share()),
            pct(c.cpu.other_share()),
            pct(s.rest_cost.cpu.other_share()),
        );
    }
    if let Some(b) = &run.before {
        let now = run.top().map(|s| s.rest_cost).unwrap_or_default();
        let now_rate = run.top().map_or(0.0, |s| s.rest_rate());
        let _ = writeln!(
            d,
            "\nBefore and after, single-row REST at {} agents: baseline `{}` {} cycles/s, CPU µs per cycle server · \
             postgres {:.0} · {:.0}, WAL {} bytes per cycle; this build {} cycles/s, {:.0} · {:.0}, WAL {} bytes per \
             cycle.",
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

    let _ = writeln!(d, "\n#### Batched drains beside PGQueuer\n");
    let drain = run.pgqueuer.median(|r| r.drain_per_s);
    let _ = writeln!(
        d,
        "| side | todos (jobs) per second | × PGQueuer's drain | batch round trip p50 / p99 ms | CPU µs per todo: server \
         · postgres | WAL bytes per todo | cores busy | of which other processes |"
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|--:|--:|");
    for b in &run.batched {
        let _ = writeln!(
            d,
            "| REST, {} agents, claim {lim} → complete {lim} | {} | {:.2}× | {:.1} / {:.1} | {:.0} · {:.0} | {} | {} | {} |",
            b.agents,
            group(b.rate),
            if drain > 0.0 { b.rate / drain } else { 0.0 },
            quantile(&b.latency_ms, 0.5),
            quantile(&b.latency_ms, 0.99),
            b.cost.server_us(),
            b.cost.postgres_us(),
            group(b.cost.wal_per_unit()),
            pct(b.cost.cpu.busy_share()),
            pct(b.cost.cpu.other_share()),
            lim = t.batch_limit,
        );
    }
    let rounds: Vec<String> = run.pgqueuer.rounds.iter().map(|r| group(r.drain_per_s)).collect();
    let _ = writeln!(
        d,
        "| PGQueuer 1.6.0, {} consumers, dequeue batches of {}, {} jobs per round (median of {}) | {} | 1.00× | - | - | \
         - | - | - |\n",
        run.pgqueuer.consumers,
        run.pgqueuer.dequeue_batch,
        group(run.pgqueuer.jobs as f64),
        rounds.join(" / "),
        group(drain),
    );

    let _ = writeln!(d, "#### Batched creation beside PGQueuer's batched enqueue\n");
    let enq = run.pgqueuer.median(|r| r.enqueue_per_s);
    let creates: Vec<String> = run.create_rates.iter().map(|r| group(*r)).collect();
    let _ = writeln!(
        d,
        "One agent over REST creates {} todos in batches of {} (`POST /api/v1/agent/todos/batch`, each with a 200-byte \
         payload): **{} todos/s** (median of {}); PGQueuer enqueues {} jobs in batches of {} over one connection: \
         **{} jobs/s** (median). REST / PGQueuer: {}.\n",
        group(run.pgqueuer.jobs as f64),
        t.create_batch,
        group(run.create_rate()),
        creates.join(" / "),
        group(run.pgqueuer.jobs as f64),
        run.pgqueuer.enqueue_batch,
        group(enq),
        pct(if enq > 0.0 { run.create_rate() / enq } else { 0.0 }),
    );

    let _ = writeln!(d, "#### Long-poll wake-up at idle\n");
    let w = &run.wake;
    let _ = writeln!(
        d,
        "An agent waits in `claim-next` with `wait_seconds: 30` on an empty queue; 50 ms later another creates a todo \
         there over REST. From the create's answer to the waiting claim's answer with that todo: **p50 {:.1} ms, p99 \
         {:.1} ms** (max {:.1} ms) over {} wake-ups; {} answered before the create's own answer was read (counted as 0). \
         From the create's request: p50 {:.1} ms, p99 {:.1} ms.",
        quantile(&w.after_create_ms, 0.5),
        quantile(&w.after_create_ms, 0.99),
        w.after_create_ms.last().copied().unwrap_or(0.0),
        w.after_create_ms.len(),
        w.before_create_answer,
        quantile(&w.after_send_ms, 0.5),
        quantile(&w.after_send_ms, 0.99),
    );
    let _ = writeln!(d, "{END}");
    d
}
