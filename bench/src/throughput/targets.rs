//! Issue 41's targets judged on a run's medians, and the budget each implies: the CPU
//! per cycle (or todo) on this machine's cores, and the WAL, beside today's figures.

use super::ThroughputRun;
use super::agents::quantile;
use super::ceiling::Cost;
use super::series::Series;
use crate::report::{group, pct};

/// Single-row REST at the highest concurrency over the bare-SQL ceiling.
pub const SINGLE_OVER_CEILING: f64 = 0.65;
/// Single-row REST at the highest concurrency over Graphile Worker's best.
pub const SINGLE_OVER_GRAPHILE: f64 = 1.0;
/// The batched drain (compiled agents) over PGQueuer's best point.
pub const BATCH_OVER_PGQUEUER: f64 = 2.0;
/// The batched drain by Python `requests` agents with the lean answer over PGQueuer's best.
pub const PYTHON_OVER_PGQUEUER: f64 = 1.2;
/// WAL bytes per single-row cycle without full-page images, over the ceiling's.
pub const WAL_OVER_CEILING: f64 = 1.3;
/// One agent's cycle over the ceiling at one client.
pub const ONE_AGENT_OVER_CEILING: f64 = 0.5;
/// The drain with the small table's statistics over the analyzed one.
pub const STABILITY: f64 = 0.85;
/// Long-poll wake-up p99 at idle, ms.
pub const WAKE_P99_MS: f64 = 50.0;

/// A target's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Met.
    Pass,
    /// Missed.
    Miss,
    /// Not measured in this run, and why.
    NotMeasured(String),
}

impl Verdict {
    fn of(ratio: f64, at_least: f64) -> Verdict {
        if ratio >= at_least { Verdict::Pass } else { Verdict::Miss }
    }

    /// "PASS", "MISS" or "not measured (why)".
    pub fn text(&self) -> String {
        match self {
            Verdict::Pass => "PASS".into(),
            Verdict::Miss => "MISS".into(),
            Verdict::NotMeasured(why) => format!("not measured ({why})"),
        }
    }
}

/// One row of the targets table.
pub struct Target {
    /// The target, in words.
    pub what: String,
    /// The product's figure.
    pub figure: String,
    /// The same-run reference and the ratio.
    pub reference: String,
    /// The outcome.
    pub verdict: Verdict,
}

/// One row of the budget table.
pub struct Budget {
    /// The target, briefly.
    pub target: String,
    /// What the target implies (a rate, a size).
    pub implied: String,
    /// The machine's CPU per unit at that rate with every core busy, µs (or the wall
    /// time per cycle for one agent).
    pub budget: String,
    /// Today's figure and CPU per unit.
    pub today: String,
    /// Today's WAL per unit.
    pub wal: String,
    /// What the reference spends per unit.
    pub reference: String,
    /// What must change.
    pub gap: String,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// "server · postgres · agents = total" µs per unit, medians of the rounds.
pub fn cpu_cells(s: &Series) -> String {
    let (sv, pg, ag) =
        (s.cost_median(Cost::server_us), s.cost_median(Cost::postgres_us), s.cost_median(Cost::agents_us));
    format!("{} · {} · {} = {}", group(sv), group(pg), group(ag), group(sv + pg + ag))
}

/// "all (without FPI)" WAL bytes per unit, medians; "unavailable" for the split when
/// `pg_waldump` could not read the WAL.
pub fn wal_cells(s: &Series) -> String {
    let all = group(s.cost_median(Cost::wal_per_unit));
    match s.median_of(Cost::wal_without_fpi_per_unit) {
        Some(w) => format!("{all} ({})", group(w)),
        None => format!("{all} (unavailable)"),
    }
}

/// Every target of issue 41, judged.
pub fn targets(run: &ThroughputRun) -> Vec<Target> {
    let mut out = Vec::new();
    let not_run = |why: &str| Verdict::NotMeasured(why.into());
    let lean_missing = "the server has no lean answer";
    if let Some(top) = run.top() {
        let c = top.ceiling.rate();
        for (label, s) in [("full answer", &top.rest), ("lean answer", &top.lean)] {
            let r = ratio(s.rate(), c);
            out.push(Target {
                what: format!(
                    "single-row REST at {n} agents ≥ {} of the bare-SQL ceiling at {n} clients ({label})",
                    pct(SINGLE_OVER_CEILING),
                    n = top.clients
                ),
                figure: if s.is_empty() { "-".into() } else { format!("{} cycles/s", group(s.rate())) },
                reference: format!("{} cycles/s → {}", group(c), if s.is_empty() { "-".into() } else { pct(r) }),
                verdict: if s.is_empty() { not_run(lean_missing) } else { Verdict::of(r, SINGLE_OVER_CEILING) },
            });
        }
        let best = run.graphile.as_ref().and_then(|g| g.best());
        for (label, s) in [("full answer", &top.rest), ("lean answer", &top.lean)] {
            let (reference, verdict) = match best {
                Some(p) => {
                    let r = ratio(s.rate(), p.drains.rate());
                    (
                        format!(
                            "Graphile Worker {} at concurrency {}: {} jobs/s → {}",
                            super::graphile::VERSION,
                            p.concurrency,
                            group(p.drains.rate()),
                            if s.is_empty() { "-".into() } else { format!("{r:.2}×") }
                        ),
                        if s.is_empty() { not_run(lean_missing) } else { Verdict::of(r, SINGLE_OVER_GRAPHILE) },
                    )
                }
                None => ("-".into(), not_run("Graphile Worker was not run")),
            };
            out.push(Target {
                what: format!(
                    "single-row REST at {} agents ≥ {SINGLE_OVER_GRAPHILE:.1}× Graphile Worker at its best concurrency ({label})",
                    top.clients
                ),
                figure: if s.is_empty() { "-".into() } else { format!("{} cycles/s", group(s.rate())) },
                reference,
                verdict,
            });
        }
    }
    let pgq = run.pgqueuer.as_ref().and_then(|p| p.best());
    let pgq_ref = |rate: f64, at_least: f64, missing: Option<&str>| match pgq {
        Some(p) => {
            let r = ratio(rate, p.drains.rate());
            let text = format!(
                "PGQueuer {} best point ({} consumers, batches of {}): {} jobs/s → {}",
                super::pgqueuer::VERSION,
                p.consumers,
                p.batch,
                group(p.drains.rate()),
                if missing.is_some() { "-".into() } else { format!("{r:.2}×") }
            );
            (text, missing.map_or_else(|| Verdict::of(r, at_least), |m| Verdict::NotMeasured(m.into())))
        }
        None => ("-".into(), Verdict::NotMeasured("PGQueuer was not run".into())),
    };
    for lean in [false, true] {
        let best = run.best_batched(lean);
        let rate = best.map_or(0.0, |(_, s)| s.rate());
        let (reference, verdict) = pgq_ref(rate, BATCH_OVER_PGQUEUER, best.is_none().then_some(lean_missing));
        out.push(Target {
            what: format!(
                "batched drain (claim {l} → complete {l}), compiled agents, {} ≥ {BATCH_OVER_PGQUEUER:.0}× PGQueuer's best",
                if lean { "lean answer" } else { "full answer" },
                l = run.args.batch_limit
            ),
            figure: best.map_or("-".into(), |(a, s)| format!("{} todos/s at {a} agents", group(s.rate()))),
            reference,
            verdict,
        });
    }
    if let Some(py) = &run.python {
        let (reference, verdict) =
            pgq_ref(py.batch_lean.rate(), PYTHON_OVER_PGQUEUER, py.batch_lean.is_empty().then_some(lean_missing));
        out.push(Target {
            what: format!(
                "batched drain, Python `requests` agents ({} threads, one process), lean answer ≥ {PYTHON_OVER_PGQUEUER:.1}× PGQueuer's best",
                py.threads
            ),
            figure: if py.batch_lean.is_empty() { "-".into() } else { format!("{} todos/s", group(py.batch_lean.rate())) },
            reference,
            verdict,
        });
    } else {
        out.push(Target {
            what: format!(
                "batched drain, Python `requests` agents, lean answer ≥ {PYTHON_OVER_PGQUEUER:.1}× PGQueuer's best"
            ),
            figure: "-".into(),
            reference: "-".into(),
            verdict: not_run("Python agents were not run"),
        });
    }
    if let Some(top) = run.top() {
        let (product, ceiling) =
            (top.rest.median_of(Cost::wal_without_fpi_per_unit), top.ceiling.median_of(Cost::wal_without_fpi_per_unit));
        let (figure, reference, verdict) = match (product, ceiling) {
            (Some(p), Some(c)) => {
                let r = ratio(p, c);
                (
                    format!("{} bytes per cycle", group(p)),
                    format!("ceiling {} bytes per cycle → {r:.2}×", group(c)),
                    if r <= WAL_OVER_CEILING { Verdict::Pass } else { Verdict::Miss },
                )
            }
            _ => ("unavailable".into(), "unavailable".into(), not_run("pg_waldump could not read the WAL")),
        };
        out.push(Target {
            what: format!(
                "WAL bytes per single-row cycle at {} agents without full-page images ≤ {WAL_OVER_CEILING:.1}× the ceiling's (full answer)",
                top.clients
            ),
            figure,
            reference,
            verdict,
        });
    }
    if let Some(one) = run.bottom() {
        for (label, s) in [("full answer", &one.rest), ("lean answer", &one.lean)] {
            let r = ratio(s.rate(), one.ceiling.rate());
            out.push(Target {
                what: format!(
                    "{} agent's cycle ≥ {} of the ceiling at {} client ({label})",
                    if one.clients == 1 { "a single".to_owned() } else { format!("{}", one.clients) },
                    pct(ONE_AGENT_OVER_CEILING),
                    one.clients
                ),
                figure: if s.is_empty() { "-".into() } else { format!("{} cycles/s", group(s.rate())) },
                reference: format!(
                    "{} cycles/s → {}",
                    group(one.ceiling.rate()),
                    if s.is_empty() { "-".into() } else { pct(r) }
                ),
                verdict: if s.is_empty() { not_run(lean_missing) } else { Verdict::of(r, ONE_AGENT_OVER_CEILING) },
            });
        }
    }
    match &run.stability {
        Some(st) => out.push(Target {
            what: format!(
                "plan stability: the batched drain of a {} burst with the small table's statistics ≥ {} of the drain after ANALYZE",
                group(st.burst as f64),
                pct(STABILITY)
            ),
            figure: format!("{} todos/s", group(st.stale.rate())),
            reference: format!("{} todos/s after VACUUM (ANALYZE) → {:.2}", group(st.analyzed.rate()), st.ratio()),
            verdict: Verdict::of(st.ratio(), STABILITY),
        }),
        None => out.push(Target {
            what: format!("plan stability: drain without ANALYZE ≥ {} of the analyzed drain", pct(STABILITY)),
            figure: "-".into(),
            reference: "-".into(),
            verdict: not_run("not run"),
        }),
    }
    let p99 = quantile(&run.wake.after_create_ms, 0.99);
    out.push(Target {
        what: format!("long-poll wake-up p99 at idle < {WAKE_P99_MS:.0} ms"),
        figure: format!(
            "p99 {p99:.1} ms (p50 {:.1} ms) over {} wake-ups",
            quantile(&run.wake.after_create_ms, 0.5),
            run.wake.after_create_ms.len()
        ),
        reference: format!("limit {WAKE_P99_MS:.0} ms"),
        verdict: if p99 < WAKE_P99_MS { Verdict::Pass } else { Verdict::Miss },
    });
    out
}

/// What each target implies on this machine, beside today's figures.
pub fn budgets(run: &ThroughputRun) -> Vec<Budget> {
    let cores = run.machine.cores.max(1) as f64;
    let per_unit_budget = |rate: f64| if rate > 0.0 { cores * 1e6 / rate } else { 0.0 };
    let gap = |budget: f64, s: &Series| {
        // The sum of the components' medians, as the "today" cell shows it.
        let total = s.cost_median(Cost::server_us) + s.cost_median(Cost::postgres_us) + s.cost_median(Cost::agents_us);
        let busy = s.pooled().cpu.busy_share();
        let cpu = format!(
            "server + PostgreSQL + agents from {} to ≤ {} µs ({})",
            group(total),
            group(budget),
            if total > 0.0 { format!("{:+.0} %", (budget / total - 1.0) * 100.0) } else { "-".into() }
        );
        if busy < 0.9 {
            format!("{cpu}; the cores were {} busy, so part of the distance is waiting, not CPU", pct(busy))
        } else {
            cpu
        }
    };
    let mut out = Vec::new();
    if let Some(top) = run.top() {
        let ceiling_ref = format!(
            "ceiling: postgres {} µs · pgbench {} µs, WAL {}",
            group(top.ceiling.cost_median(Cost::postgres_us)),
            group(top.ceiling.cost_median(Cost::agents_us)),
            wal_cells(&top.ceiling)
        );
        let mut implied = vec![(
            format!("{} of the ceiling", pct(SINGLE_OVER_CEILING)),
            SINGLE_OVER_CEILING * top.ceiling.rate(),
            ceiling_ref,
        )];
        if let Some(p) = run.graphile.as_ref().and_then(|g| g.best()) {
            let graphile_ref = format!(
                "Graphile Worker at concurrency {}: postgres {} µs · its Node worker {} µs per job, WAL {}",
                p.concurrency,
                group(p.drains.cost_median(Cost::postgres_us)),
                group(p.drains.cost_median(Cost::agents_us)),
                wal_cells(&p.drains)
            );
            implied.push((
                format!("{SINGLE_OVER_GRAPHILE:.1}× Graphile Worker"),
                SINGLE_OVER_GRAPHILE * p.drains.rate(),
                graphile_ref,
            ));
        }
        for (what, rate, reference) in implied {
            let b = per_unit_budget(rate);
            out.push(Budget {
                target: format!("single-row REST at {} agents ≥ {what}", top.clients),
                implied: format!("≥ {} cycles/s", group(rate)),
                budget: format!("{} µs per cycle", group(b)),
                today: format!("{} cycles/s; {}", group(top.rest.rate()), cpu_cells(&top.rest)),
                wal: wal_cells(&top.rest),
                reference,
                gap: gap(b, &top.rest),
            });
        }
    }
    if let Some(p) = run.pgqueuer.as_ref().and_then(|p| p.best()) {
        let pgq_ref = format!(
            "PGQueuer best: postgres {} µs · consumers {} µs per job, WAL {}",
            group(p.drains.cost_median(Cost::postgres_us)),
            group(p.drains.cost_median(Cost::agents_us)),
            wal_cells(&p.drains)
        );
        let rate = BATCH_OVER_PGQUEUER * p.drains.rate();
        if let Some((agents, s)) = run.best_batched(false) {
            let b = per_unit_budget(rate);
            out.push(Budget {
                target: format!("batched drain, compiled agents ≥ {BATCH_OVER_PGQUEUER:.0}× PGQueuer"),
                implied: format!("≥ {} todos/s", group(rate)),
                budget: format!("{} µs per todo", group(b)),
                today: format!("{} todos/s at {agents} agents; {}", group(s.rate()), cpu_cells(s)),
                wal: wal_cells(s),
                reference: pgq_ref.clone(),
                gap: gap(b, s),
            });
        }
        if let Some(py) = &run.python {
            let rate = PYTHON_OVER_PGQUEUER * p.drains.rate();
            let b = per_unit_budget(rate);
            let (s, label) =
                if py.batch_lean.is_empty() { (&py.batch, "full answer") } else { (&py.batch_lean, "lean answer") };
            out.push(Budget {
                target: format!("batched drain, Python agents, lean answer ≥ {PYTHON_OVER_PGQUEUER:.1}× PGQueuer"),
                implied: format!("≥ {} todos/s", group(rate)),
                budget: format!("{} µs per todo (the agents' process included)", group(b)),
                today: format!("{} todos/s ({label}); {}", group(s.rate()), cpu_cells(s)),
                wal: wal_cells(s),
                reference: pgq_ref,
                gap: gap(b, s),
            });
        }
    }
    if let Some(top) = run.top() {
        let c = top.ceiling.median_of(Cost::wal_without_fpi_per_unit);
        out.push(Budget {
            target: format!("WAL per single-row cycle without FPI ≤ {WAL_OVER_CEILING:.1}× the ceiling's"),
            implied: c.map_or("unavailable".into(), |c| format!("≤ {} bytes per cycle", group(WAL_OVER_CEILING * c))),
            budget: "-".into(),
            today: format!("{} cycles/s", group(top.rest.rate())),
            wal: format!(
                "{}; full-page images {:.2} per cycle",
                wal_cells(&top.rest),
                top.rest.cost_median(Cost::fpi_per_unit)
            ),
            reference: format!(
                "ceiling: {}; full-page images {:.2} per cycle",
                wal_cells(&top.ceiling),
                top.ceiling.cost_median(Cost::fpi_per_unit)
            ),
            gap: match (top.rest.median_of(Cost::wal_without_fpi_per_unit), c) {
                (Some(p), Some(c)) => format!("{:+.0} bytes per cycle", WAL_OVER_CEILING * c - p),
                _ => "unavailable".into(),
            },
        });
    }
    if let Some(one) = run.bottom() {
        let rate = ONE_AGENT_OVER_CEILING * one.ceiling.rate();
        let wall = if rate > 0.0 { 1e6 / rate } else { 0.0 };
        let today_wall = if one.rest.rate() > 0.0 { 1e6 / one.rest.rate() } else { 0.0 };
        out.push(Budget {
            target: format!(
                "{} agent ≥ {} of the ceiling at {} client",
                one.clients,
                pct(ONE_AGENT_OVER_CEILING),
                one.clients
            ),
            implied: format!("≥ {} cycles/s", group(rate)),
            budget: format!("{} µs of wall time per cycle (one request at a time: latency, not cores)", group(wall)),
            today: format!(
                "{} cycles/s = {} µs per cycle; CPU {}",
                group(one.rest.rate()),
                group(today_wall),
                cpu_cells(&one.rest)
            ),
            wal: wal_cells(&one.rest),
            reference: format!(
                "ceiling: {} µs per cycle, postgres {} µs",
                group(if one.ceiling.rate() > 0.0 { 1e6 / one.ceiling.rate() } else { 0.0 }),
                group(one.ceiling.cost_median(Cost::postgres_us))
            ),
            gap: format!("{:+.0} µs of wall time per cycle", wall - today_wall),
        });
    }
    if let Some(st) = &run.stability {
        let rate = STABILITY * st.analyzed.rate();
        let b = per_unit_budget(rate);
        out.push(Budget {
            target: format!("plan stability ≥ {}", pct(STABILITY)),
            implied: format!("≥ {} todos/s without ANALYZE", group(rate)),
            budget: format!("{} µs per todo", group(b)),
            today: format!("{} todos/s; {}", group(st.stale.rate()), cpu_cells(&st.stale)),
            wal: wal_cells(&st.stale),
            reference: format!("after ANALYZE: {} todos/s; {}", group(st.analyzed.rate()), cpu_cells(&st.analyzed)),
            gap: gap(b, &st.stale),
        });
    }
    out
}
