//! The MCP benchmark's section of `docs/benchmarks.md` (between the `bench:mcp` markers;
//! how to read it is written above them), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchResult;
use crate::mcp::McpRun;
use crate::report::{group, minutes, pass, pct, us};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:mcp:start -->";
const END: &str = "<!-- bench:mcp:end -->";

/// MCP cycles per second must reach this share of REST's (issue 15).
pub const TARGET: f64 = 0.70;

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &McpRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// The terminal summary.
pub fn table(run: &McpRun) -> String {
    let mut out = format!("claim_next → complete at {} agents\n", run.agents);
    for (name, w) in [("REST", &run.rest), ("MCP", &run.mcp)] {
        let _ = writeln!(
            out,
            "  {name:<5} {:>8} cycles/s  p50 {:.2} ms  p99 {:.2} ms",
            group(w.rate()),
            w.latency_ms(0.50),
            w.latency_ms(0.99)
        );
    }
    let _ = writeln!(out, "  MCP / REST: {:.1} % ({})", run.ratio() * 100.0, pass(run.ratio() >= TARGET));
    out
}

fn section(run: &McpRun) -> String {
    let m = &run.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", run.date);
    let _ = writeln!(d, "- Machine: {}.", m.summary());
    let _ = writeln!(d, "- PostgreSQL {} on the same host over 127.0.0.1; {}.", run.pg.0, run.pg.1);
    let _ = writeln!(d, "- Revision `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} agents per window, each with its own keep-alive connection (an MCP agent opens one session, \
         protocol 2025-06-18, answers as SSE); {} rounds per side, alternating which goes first; windows of {} s \
         after {} s of warm-up; the queue holds {} done and {} pending todos (topped up and vacuumed before every \
         window).\n",
        run.agents,
        run.rounds,
        run.seconds,
        run.warmup,
        group(f64::from(run.table.0)),
        group(f64::from(run.table.1))
    );
    let _ = writeln!(d, "| target | MCP | REST | result |\n|---|---|---|---|");
    let _ = writeln!(
        d,
        "| claim_next → complete over MCP at {} agents ≥ {:.0} % of REST | {} cycles/s | {} cycles/s → {:.1} % | \
         **{}** |\n",
        run.agents,
        TARGET * 100.0,
        group(run.mcp.rate()),
        group(run.rest.rate()),
        run.ratio() * 100.0,
        pass(run.ratio() >= TARGET)
    );
    let _ = writeln!(
        d,
        "| side | cycles/s | cycles | p50 / p99 ms | CPU µs per cycle: server · postgres · bench | cores busy | of \
         which other processes |\n|---|--:|--:|--:|--:|--:|--:|"
    );
    for (name, w) in [("REST", &run.rest), ("MCP", &run.mcp)] {
        let _ = writeln!(
            d,
            "| {name} | {} | {} | {:.2} / {:.2} | {} · {} · {} | {} | {} |",
            group(w.rate()),
            group(w.cycles as f64),
            w.latency_ms(0.50),
            w.latency_ms(0.99),
            us(w, w.cpu.server_s),
            us(w, w.cpu.postgres_s),
            us(w, w.cpu.bench_s),
            pct(w.cpu.busy_share()),
            pct(w.cpu.other_share())
        );
    }
    let _ = writeln!(d, "\nServer peak RSS at the end: {:.1} MiB.", run.peak_rss_kib as f64 / 1024.0);
    let _ = writeln!(d, "{END}");
    d
}
