//! What a run found and how it stands against the targets, plus the table
//! printed on the terminal. (The results file is written by `results_doc`.)

use std::fmt::Write as _;

use crate::Args;
use crate::hooks::HooksResult;
use crate::intake::IntakeResult;
use crate::load::Window;
use crate::machine::Machine;
use crate::plan::Plan;
use crate::prune::PruneResult;
use crate::sweep::SweepResult;

/// REST throughput must reach this share of the raw SQL ceiling…
const RATIO_TARGET: f64 = 0.60;
/// …at this many clients.
const RATIO_CLIENTS: usize = 16;
/// Claim throughput may drop by less than this during a sweep, percent.
const SWEEP_DROP_TARGET_PCT: f64 = 30.0;
/// The server's peak RSS must stay under this, MiB.
const RSS_TARGET_MIB: f64 = 100.0;
/// Signed deliveries through intake must reach this share of plain todo creation…
const INTAKE_TARGET: f64 = 0.60;
/// …at this many concurrent senders.
const INTAKE_SENDERS: usize = 16;
/// Notify-hook deliveries/s must reach this share of plain POSTs/s to the same receiver.
pub(crate) const HOOK_THROUGHPUT_TARGET: f64 = 0.50;
/// p99 dead-letter announcement latency may be at most this many times the p99 round
/// trip of a plain POST to the same receiver.
pub(crate) const ANNOUNCE_P99_FACTOR: f64 = 5.0;

/// A measurement's one-line summary for the terminal, written where its results
/// section is (hooks/doc.rs implements it for the hook figures). The trait keeps
/// `report` from knowing the doc modules that use its `Run` and helpers (no module
/// cycle).
pub trait TerminalLine {
    /// The line.
    fn terminal_line(&self) -> String;
}

/// REST and raw SQL windows at one concurrency.
#[derive(Debug, Clone)]
pub struct CyclePair {
    /// Concurrent clients.
    pub clients: usize,
    /// Over HTTP.
    pub rest: Window,
    /// The same statements through one pool.
    pub raw: Window,
}

impl CyclePair {
    /// REST throughput as a share of the raw SQL ceiling.
    pub fn ratio(&self) -> f64 {
        let raw = self.raw.rate();
        if raw > 0.0 { self.rest.rate() / raw } else { 0.0 }
    }
}

/// Everything one run measured.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Start time, as `date -u` prints it.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL's version.
    pub pg_version: String,
    /// PostgreSQL settings that matter here, `name=value, …`.
    pub pg_settings: String,
    /// Source revision.
    pub revision: String,
    /// Measured seconds per window.
    pub seconds: u64,
    /// Warm-up seconds per window.
    pub warmup: u64,
    /// Windows per side and concurrency.
    pub rounds: u32,
    /// Server and raw pool size.
    pub pool_size: u32,
    /// Seeded pending todos (kept topped up).
    pub pending: u32,
    /// Seeded done todos.
    pub done: u32,
    /// REST clients during the sweep measurement.
    pub sweep_clients: usize,
    /// Cycle windows, one pair per concurrency.
    pub cycles: Vec<CyclePair>,
    /// The sweep measurement.
    pub sweep: SweepResult,
    /// Claim throughput while a retention pass prunes old history.
    pub prune: PruneResult,
    /// The server's peak RSS (VmHWM), KiB.
    pub peak_rss_kib: u64,
    /// The server's RSS at the end, KiB.
    pub end_rss_kib: u64,
    /// The claim statement's plans.
    pub plans: Vec<Plan>,
    /// Rows per (endpoint slug, state) when the plans were taken.
    pub table_counts: Vec<(String, String, i64)>,
    /// Intake beside plain todo creation.
    pub intake: IntakeResult,
    /// Notify hooks beside plain POSTs to the same receiver.
    pub hooks: HooksResult,
    /// The whole run, seconds.
    pub total_seconds: f64,
}

impl Run {
    /// An empty run with its settings and surroundings filled in.
    pub fn new(args: &Args, (pg_version, pg_settings): (String, String)) -> Run {
        Run {
            date: chrono::Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
            machine: Machine::describe(),
            pg_version,
            pg_settings,
            revision: args.revision.clone(),
            seconds: args.seconds,
            warmup: args.warmup,
            rounds: args.rounds,
            pool_size: args.pool_size,
            pending: args.pending,
            done: args.done,
            sweep_clients: args.sweep_clients,
            ..Run::default()
        }
    }

    /// The largest share of all cores that other processes took in any measured
    /// window: how far a shared machine's neighbours may have moved the figures.
    pub(crate) fn worst_noise(&self) -> f64 {
        let windows = self.cycles.iter().flat_map(|p| [&p.rest, &p.raw]).chain([
            &self.sweep.baseline,
            &self.intake.intake.window,
            &self.intake.ceiling.window,
            &self.hooks.rtt,
            &self.hooks.notifications,
            &self.hooks.ceiling,
        ]);
        let sweeps = self.sweep.sweeps.iter().map(|t| t.cpu.other_share());
        let prune =
            [&self.prune.baseline].into_iter().map(|w| w.cpu.other_share()).chain([self.prune.cpu.other_share()]);
        windows.map(|w| w.cpu.other_share()).chain(sweeps).chain(prune).fold(0.0, f64::max)
    }

    /// The server's peak RSS (VmHWM), MiB.
    pub(crate) fn peak_rss_mib(&self) -> f64 {
        self.peak_rss_kib as f64 / 1024.0
    }

    /// One verdict per target: (target, figure, against, PASS/MISS).
    pub(crate) fn verdicts(&self) -> Vec<[String; 4]> {
        let mut rows = Vec::new();
        let target = format!("REST ≥ {:.0} % of raw SQL at {RATIO_CLIENTS} clients", RATIO_TARGET * 100.0);
        match self.cycles.iter().find(|p| p.clients == RATIO_CLIENTS) {
            Some(p) => rows.push([
                target,
                format!("{} cycles/s", group(p.rest.rate())),
                format!("{} cycles/s raw → {:.1} %", group(p.raw.rate()), p.ratio() * 100.0),
                pass(p.ratio() >= RATIO_TARGET),
            ]),
            None => {
                rows.push([target, "not measured".into(), format!("--clients lacks {RATIO_CLIENTS}"), "MISS".into()])
            }
        }
        let s = &self.sweep;
        rows.push([
            format!(
                "claim throughput drops < {SWEEP_DROP_TARGET_PCT:.0} % during a sweep of {} expired leases",
                group(s.expired as f64)
            ),
            format!("{} cycles/s during sweeps", group(s.during_rate())),
            format!("{} cycles/s baseline → {:.1} % drop", group(s.baseline.rate()), s.drop_pct()),
            pass(!s.sweeps.is_empty() && s.drop_pct() < SWEEP_DROP_TARGET_PCT),
        ]);
        rows.push([
            format!("server peak RSS < {RSS_TARGET_MIB:.0} MiB"),
            format!("{:.1} MiB", self.peak_rss_mib()),
            format!("{RSS_TARGET_MIB:.0} MiB"),
            pass(self.peak_rss_mib() < RSS_TARGET_MIB),
        ]);
        let good = self.plans.iter().filter(|p| p.passes()).count();
        rows.push([
            "claim_next uses its partial index; no seq scan, no primary-key walk".into(),
            format!("{good} of {} plans", self.plans.len()),
            "custom and generic plan of both forms".into(),
            pass(!self.plans.is_empty() && good == self.plans.len()),
        ]);
        let i = &self.intake;
        let errors = i.intake.window.errors;
        rows.push([
            format!(
                "signed intake ≥ {:.0} % of plain todo creation at {INTAKE_SENDERS} senders",
                INTAKE_TARGET * 100.0
            ),
            if errors > 0 {
                format!("{} deliveries/s ({errors} refused or failed)", group(i.intake.window.rate()))
            } else {
                format!("{} deliveries/s", group(i.intake.window.rate()))
            },
            format!("{} todos/s created → {:.1} %", group(i.ceiling.window.rate()), i.ratio() * 100.0),
            pass(i.senders == INTAKE_SENDERS && errors == 0 && i.ratio() >= INTAKE_TARGET),
        ]);
        rows.extend(hook_verdicts(&self.hooks));
        rows
    }
}

/// The notify-hook targets. A loss of any kind (a notification dropped or never
/// arriving, a POST that did not verify) is a MISS whatever the figures say.
fn hook_verdicts(h: &HooksResult) -> Vec<[String; 4]> {
    let throughput =
        format!("notify-hook deliveries ≥ {:.0} % of plain POSTs to the same receiver", HOOK_THROUGHPUT_TARGET * 100.0);
    let latency = format!("p99 dead-letter announcement ≤ {ANNOUNCE_P99_FACTOR:.0}× the p99 plain POST round trip");
    if !h.measured() {
        return [throughput, latency]
            .map(|t| [t, "not measured".into(), "run without --only-intake".into(), "MISS".into()])
            .into();
    }
    let lost = h.load_counts.dropped + h.load_counts.failed + h.notifications.errors as f64;
    let losses = |lost: f64| {
        let mut notes = Vec::new();
        if lost > 0.0 {
            notes.push(format!("{} dropped, failed or lost", group(lost)));
        }
        if h.rejected > 0 {
            notes.push(format!("{} POSTs did not verify", h.rejected));
        }
        if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) }
    };
    let dead_lost = h.dead_counts.dropped + h.dead_counts.failed;
    let rtt_p99 = h.rtt.latency_ms(0.99);
    vec![
        [
            throughput,
            format!("{} deliveries/s{}", group(h.deliveries_rate()), losses(lost)),
            format!(
                "{} POSTs/s at {} concurrent → {:.1} %",
                group(h.ceiling.rate()),
                h.concurrency(),
                h.ratio() * 100.0
            ),
            pass(lost == 0.0 && h.rejected == 0 && h.ratio() >= HOOK_THROUGHPUT_TARGET),
        ],
        [
            latency,
            format!(
                "p99 {:.1} ms (p50 {:.1} ms) over {} dead letters{}",
                h.announce_ms(0.99),
                h.announce_ms(0.5),
                h.dead_letters,
                losses(dead_lost)
            ),
            format!(
                "plain POST p99 {rtt_p99:.2} ms at {} concurrent → limit {:.1} ms",
                h.agents,
                rtt_p99 * ANNOUNCE_P99_FACTOR
            ),
            pass(
                dead_lost == 0.0
                    && h.rejected == 0
                    && h.rtt.cycles > 0
                    && h.announce_ms(0.99) <= rtt_p99 * ANNOUNCE_P99_FACTOR,
            ),
        ],
    ]
}

/// A target's verdict word: "PASS" when met, "MISS" when not.
pub(crate) fn pass(ok: bool) -> String {
    if ok { "PASS".into() } else { "MISS".into() }
}

/// A number rounded to an integer, thousands separated by spaces ("10 000").
pub(crate) fn group(n: f64) -> String {
    let digits = format!("{:.0}", n.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    if n < -0.5 { format!("-{out}") } else { out }
}

/// CPU microseconds per cycle, or "-" for an empty window.
pub(crate) fn us(w: &Window, cpu_s: f64) -> String {
    w.per_cycle_us(cpu_s).map_or_else(|| "-".into(), |v| format!("{v:.0}"))
}

/// A share (0.25) as a whole percentage ("25 %").
pub(crate) fn pct(share: f64) -> String {
    format!("{:.0} %", share * 100.0)
}

/// A duration rounded to whole seconds, in minutes and seconds from a minute on
/// ("2 min 5 s", "42 s").
pub(crate) fn minutes(seconds: f64) -> String {
    let s = seconds.round() as u64;
    if s >= 60 { format!("{} min {} s", s / 60, s % 60) } else { format!("{s} s") }
}

/// How a plan's candidate search went, in words.
pub(crate) fn plan_summary(p: &Plan) -> String {
    let index = match p.claim_index_used() {
        Some(i) if i == p.designed_index => format!("uses `{i}`"),
        Some(i) => format!("uses `{i}` (picked over `{}`, see the note below)", p.designed_index),
        None => "uses NO claim index".into(),
    };
    let walk =
        if p.scans_or_walks() { "seq scan or primary-key walk: YES" } else { "no seq scan, no primary-key walk" };
    format!("{index}; {walk}; candidate search buffers: {}", p.candidate_buffers())
}

/// The results table for the terminal.
pub fn table(run: &Run) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "\nclaim_next → complete cycles ({} × {} s windows per side)", run.rounds, run.seconds);
    let _ = writeln!(
        t,
        "{:>7} {:>11} {:>11} {:>8} {:>15} {:>15} {:>11}",
        "clients", "REST c/s", "raw c/s", "REST/raw", "REST p50/p99ms", "raw p50/p99ms", "other CPU"
    );
    for p in &run.cycles {
        let _ = writeln!(
            t,
            "{:>7} {:>11.0} {:>11.0} {:>7.1}% {:>15} {:>15} {:>11}",
            p.clients,
            p.rest.rate(),
            p.raw.rate(),
            p.ratio() * 100.0,
            format!("{:.1}/{:.1}", p.rest.latency_ms(0.5), p.rest.latency_ms(0.99)),
            format!("{:.1}/{:.1}", p.raw.latency_ms(0.5), p.raw.latency_ms(0.99)),
            format!("{}/{}", pct(p.rest.cpu.other_share()), pct(p.raw.cpu.other_share())),
        );
    }
    let s = &run.sweep;
    let _ = writeln!(
        t,
        "\nlease sweep over {} expired leases: median {:.0} ms over {} sweeps; {} REST clients: \
         baseline {:.0} c/s, during sweeps {:.0} c/s ({:.1} % drop)",
        s.expired,
        s.median_sweep_ms(),
        s.sweeps.len(),
        run.sweep_clients,
        s.baseline.rate(),
        s.during_rate(),
        s.drop_pct()
    );
    let p = &run.prune;
    if p.measured() {
        let _ = writeln!(
            t,
            "retention prune of {} old todos (+ attempts, events): {:.1} s; {} REST clients: \
             baseline {:.0} c/s, during the prune {:.0} c/s ({:.1} % drop)",
            p.seeded,
            p.duration.as_secs_f64(),
            run.sweep_clients,
            p.baseline.rate(),
            p.during_rate(),
            p.drop_pct()
        );
    }
    let i = &run.intake;
    let _ = writeln!(
        t,
        "intake at {} senders: {:.0} deliveries/s (p50/p99 {:.1}/{:.1} ms, {} errors); plain todo creation \
         {:.0} todos/s (p50/p99 {:.1}/{:.1} ms): {:.1} %",
        i.senders,
        i.intake.window.rate(),
        i.intake.window.latency_ms(0.5),
        i.intake.window.latency_ms(0.99),
        i.intake.window.errors,
        i.ceiling.window.rate(),
        i.ceiling.window.latency_ms(0.5),
        i.ceiling.window.latency_ms(0.99),
        i.ratio() * 100.0
    );
    if run.hooks.measured() {
        let _ = writeln!(t, "{}", run.hooks.terminal_line());
    }
    let _ = writeln!(t, "server peak RSS (VmHWM): {:.1} MiB", run.peak_rss_mib());
    for p in &run.plans {
        let _ = writeln!(t, "plan, {} ({}): {}", p.form, p.mode, plan_summary(p));
    }
    let _ = writeln!(t, "\ntargets:");
    for [target, figure, against, verdict] in run.verdicts() {
        let _ = writeln!(t, "  {verdict}  {target}: {figure} ({against})");
    }
    let _ =
        writeln!(t, "noise: other processes took at most {} of all cores in a measured span", pct(run.worst_noise()));
    let _ = writeln!(t, "whole run: {}", minutes(run.total_seconds));
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_in_thousands() {
        assert_eq!(group(10_000.0), "10 000");
        assert_eq!(group(999.4), "999");
        assert_eq!(group(1_234_567.0), "1 234 567");
    }
}
