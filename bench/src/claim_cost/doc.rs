//! The claim-cost comparison's section of `docs/benchmarks.md` (between the
//! `bench:claim-cost` markers; how to read it is written above them), and its summary on
//! the terminal.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::claim_cost::ClaimCostRun;
use crate::report::{group, minutes, pass, pct, us};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:claim-cost:start -->";
const END: &str = "<!-- bench:claim-cost:end -->";

/// This build's unbudgeted cycles per second must reach this share of the baseline's:
/// "claims cost what they cost today", less what two alternating runs on a shared
/// machine cannot tell apart.
pub const TARGET: f64 = 0.95;

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &ClaimCostRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// The terminal summary.
pub fn table(run: &ClaimCostRun) -> String {
    let mut out = format!("claim cost at {} REST agents, no budget set\n", run.agents);
    for s in &run.sides {
        let _ = writeln!(
            out,
            "  {:<10} {:>8} cycles/s  p50 {:.2} ms  p99 {:.2} ms",
            s.name,
            group(s.window.rate()),
            s.window.latency_ms(0.50),
            s.window.latency_ms(0.99)
        );
    }
    let _ = writeln!(out, "  this build / baseline: {:.1} % ({})", run.ratio() * 100.0, pass(run.ratio() >= TARGET));
    out
}

fn section(run: &ClaimCostRun) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", m.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let noise = run.sides.iter().map(|s| s.window.cpu.other_share()).fold(0.0, f64::max);
    let _ = writeln!(d, "- Noise: other processes took {} of all cores in the noisier side's windows.", pct(noise));
    let _ = writeln!(
        d,
        "- Revisions: this build `{}`, baseline `{}`. Whole comparison: {}.",
        run.revision,
        run.baseline_revision,
        minutes(run.total_seconds)
    );
    let _ = writeln!(
        d,
        "- Settings: {} agents; {} rounds per side, alternating which goes first; windows of {} s after {} s of \
         warm-up; each database's queue `work` holds {} done and {} pending todos (topped up and vacuumed before \
         every window); no admission budget anywhere.\n",
        run.agents,
        run.rounds,
        run.seconds,
        run.warmup,
        group(f64::from(run.table.0)),
        group(f64::from(run.table.1))
    );
    let _ = writeln!(d, "| target | figure | baseline | result |\n|---|---|---|---|");
    let _ = writeln!(
        d,
        "| with no budget set, REST claim_next → complete cycles at {} agents ≥ {:.0} % of the baseline's | {} \
         cycles/s | {} cycles/s → {:.1} % | **{}** |\n",
        run.agents,
        TARGET * 100.0,
        group(run.sides[0].window.rate()),
        group(run.sides[1].window.rate()),
        run.ratio() * 100.0,
        pass(run.ratio() >= TARGET)
    );
    let _ = writeln!(
        d,
        "| side | cycles/s | cycles | p50 / p99 ms | CPU µs per cycle: server · postgres · bench | cores busy | of \
         which other processes | server peak RSS |\n|---|--:|--:|--:|--:|--:|--:|--:|"
    );
    for s in &run.sides {
        let w = &s.window;
        let _ = writeln!(
            d,
            "| {} | {} | {} | {:.2} / {:.2} | {} · {} · {} | {} | {} | {:.1} MiB |",
            s.name,
            group(w.rate()),
            group(w.cycles as f64),
            w.latency_ms(0.50),
            w.latency_ms(0.99),
            us(w, w.cpu.server_s),
            us(w, w.cpu.postgres_s),
            us(w, w.cpu.bench_s),
            pct(w.cpu.busy_share()),
            pct(w.cpu.other_share()),
            s.peak_rss_kib as f64 / 1024.0
        );
    }
    let _ = writeln!(d, "{END}");
    d
}
