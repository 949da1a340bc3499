//! The fleet's section of `docs/benchmarks.md` (between the `bench:fleet` markers; how
//! to read it is written above them), and its summary on the terminal.

use std::fmt::Write as _;
use std::path::Path;

use super::fault::FaultRun;
use super::throughput::{Census, Config, Throughput};
use crate::BenchResult;
use crate::report::{group, minutes, pct};
use crate::results_doc::write_section;

const START: &str = "<!-- bench:fleet:start -->";
const END: &str = "<!-- bench:fleet:end -->";

/// Everything the fleet benchmark found.
pub struct FleetRun {
    /// Throughput and connections.
    pub throughput: Throughput,
    /// The fault run.
    pub faults: FaultRun,
    /// This build's revision.
    pub revision: String,
    /// The previous release's, when one joined the fault run.
    pub previous_revision: Option<String>,
    /// Wall time, seconds.
    pub total_seconds: f64,
}

/// Writes the run's section into `path`.
pub fn write_doc(path: &Path, run: &FleetRun) -> BenchResult<()> {
    write_section(path, START, END, &section(run))
}

/// `name n, name n` of a census.
fn parts(c: &Census) -> String {
    c.iter().map(|(name, n)| format!("{name} {n}")).collect::<Vec<_>>().join(", ")
}

/// `**total**: name n, name n` of a census.
fn census(c: &Census) -> String {
    format!("**{}**: {}", c.values().sum::<i64>(), parts(c))
}

/// The terminal summary.
pub fn table(t: &Throughput, f: &FaultRun) -> String {
    let mut out = String::from("fleet\n");
    let _ = writeln!(out, "  bare-SQL ceiling at {} clients: {} cycles/s", t.agents, group(t.ceiling_rate()));
    for c in &t.configs {
        let _ = writeln!(
            out,
            "  {:<34} {:>7} cycles/s ({} of the ceiling); connections idle {} / under load {}",
            c.label(),
            group(c.rate()),
            pct(ratio(c.rate(), t.ceiling_rate())),
            c.idle.values().sum::<i64>(),
            c.loaded.values().sum::<i64>()
        );
    }
    let _ = writeln!(out, "  fault run:\n{}", f.verdict.report());
    out
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

fn row(d: &mut String, t: &Throughput, c: &Config) {
    let cpu = &c.cpu;
    let _ = writeln!(
        d,
        "| {} | {} | {} | {:.1} / {:.1} | {:.0} · {:.0} · {:.0} · {:.0} | {} / {} | {} | {} |",
        c.label(),
        group(c.rate()),
        pct(ratio(c.rate(), t.ceiling_rate())),
        c.latency_ms(0.5),
        c.latency_ms(0.99),
        c.per_cycle_us(cpu.replicas_s),
        c.per_cycle_us(cpu.nginx_s),
        c.per_cycle_us(cpu.postgres_s),
        c.per_cycle_us(cpu.bench_s),
        pct(cpu.busy_share()),
        pct(cpu.other_share()),
        census(&c.idle),
        census(&c.loaded),
    );
}

fn section(run: &FleetRun) -> String {
    let t = &run.throughput;
    let f = &run.faults;
    let m = &t.machine;
    let mut d = String::new();
    let _ = writeln!(d, "{START}");
    let _ = writeln!(d, "### Latest run: {}\n", t.date);
    let _ = writeln!(d, "- Machine: {}.", m.summary());
    let _ = writeln!(
        d,
        "- PostgreSQL {} in a cluster of the run's own on the same host, over 127.0.0.1; {}.",
        t.pg.0, t.pg.1
    );
    let _ = writeln!(d, "- Revision: `{}`. Whole run: {}.", run.revision, minutes(run.total_seconds));
    let _ = writeln!(
        d,
        "- Settings: {} agents (one keep-alive connection each; pgbench {} clients); {} rounds of {} s windows after \
         {} s of warm-up, alternating the order; a pool of {} per replica; the queue topped up to {} pending todos \
         over {} done ones and vacuumed before every window; {} (Debian) with `worker_processes auto`.\n",
        t.agents,
        t.agents,
        t.rounds,
        t.seconds,
        t.warmup,
        t.pool_size,
        group(f64::from(t.table.1)),
        group(f64::from(t.table.0)),
        t.nginx
    );
    let _ = writeln!(
        d,
        "**On {} cores this shows what the balancer and each further instance cost, not scale-out**: every replica, \
         nginx, PostgreSQL and the agents share the same cores, so more replicas can only divide them further.\n",
        m.cores
    );
    let _ = writeln!(d, "#### claim_next → complete through nginx, beside the bare-SQL ceiling\n");
    let _ = writeln!(
        d,
        "| configuration | cycles/s | of the ceiling ({} cycles/s) | p50 / p99 ms | CPU µs per cycle: replicas · nginx · \
         postgres · agents | cores busy / of which other processes | PostgreSQL connections at idle | under load (most \
         seen mid-window) |",
        group(t.ceiling_rate())
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|---|---|");
    for c in &t.configs {
        row(&mut d, t, c);
    }
    let _ = writeln!(
        d,
        "\nJust started, before any load, three replicas held {} connections ({}): each instance is its pool, \
         opened as requests need it (at most `SWITCHBOARD_DB_POOL_SIZE`, kept once opened), plus one listener session.",
        t.fresh.values().sum::<i64>(),
        parts(&t.fresh)
    );
    let ceilings: Vec<String> = t.ceiling.iter().map(|w| group(w.rate)).collect();
    let _ = writeln!(
        d,
        "\nThe ceiling: pgbench at {} clients on the same cluster, windows of {} cycles/s (pooled {}).",
        t.agents,
        ceilings.join(" / "),
        group(t.ceiling_rate())
    );

    let v = &f.verdict;
    let fig = &v.figures;
    let _ = writeln!(d, "\n#### The fault run: three replicas behind nginx on a bad day\n");
    let previous = match &run.previous_revision {
        Some(rev) => format!(
            "a replica of the previous release (`{rev}`, `deploy/previous-release`) joins at {} s and leaves at {} s \
             (nginx reloaded each time, the replica then stopped with SIGTERM); ",
            f.plan.previous.as_ref().map_or(0, |p| p.1.as_secs()),
            f.plan.previous.as_ref().map_or(0, |p| p.2.as_secs())
        ),
        None => "no replica of the previous release (no `--previous-bin`); ".to_owned(),
    };
    let _ = writeln!(
        d,
        "{} agents and {} signed deliveries per second (every fifth to a webhook whose todos die at their first \
         failure) through nginx for {} s; {previous}replica r2 killed (SIGKILL) at {} s and started again {} s later; \
         PostgreSQL stopped (`pg_ctl stop -m fast`) at {} s and started {} s later. Then the agents drain what is \
         left ({:.1} s) and the outbox finishes (at {:.0} s: a message sent but not recorded before a crash is sent \
         again once its 60 s claim lapses); {:.0} s in all. Result: **{}**.\n",
        f.plan.agents,
        f.plan.rate,
        f.plan.feed_until.as_secs(),
        f.plan.kill_at.as_secs(),
        f.plan.restart_after.as_secs(),
        f.plan.database_at.as_secs(),
        f.plan.database_down.as_secs(),
        f.drain_seconds,
        f.outbox_seconds,
        f.seconds,
        if v.passed() { "every rule held" } else { "rules broken (below)" }
    );
    let dead: u64 = fig.dead.values().sum();
    let _ = writeln!(d, "| what | figure |\n|---|---|");
    let _ = writeln!(
        d,
        "| todos created (deliveries accepted) | {} ({} deliveries were retries answered `duplicate`) |",
        group(fig.todos as f64),
        fig.duplicate_deliveries
    );
    let _ = writeln!(d, "| done / dead letters | {} / {} {:?} |", group(fig.done as f64), group(dead as f64), fig.dead);
    let _ = writeln!(d, "| todos claimed more than once (a lost claim's lease lapsed) | {} |", fig.reclaimed);
    let _ = writeln!(
        d,
        "| sink messages: dead letters delivered / extra copies (crash windows) / lost | {} / {} / {} |",
        fig.sink.0, fig.sink.1, fig.sink.2
    );
    let _ = writeln!(
        d,
        "| hook announcements of dead letters: delivered / lost in flight / lost otherwise | {} / {} / {} |",
        fig.hooks.0, fig.hooks.1, fig.hooks.2
    );
    let answers: Vec<String> = fig.answers.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    let _ = writeln!(
        d,
        "| answers other than 2xx | {} |",
        if answers.is_empty() { "none".to_owned() } else { answers.join("; ") }
    );
    if !v.passed() {
        let _ = writeln!(d, "\nBroken rules:\n");
        for line in &v.violations {
            let _ = writeln!(d, "- {line}");
        }
    }
    let _ = write!(d, "{END}");
    d
}
