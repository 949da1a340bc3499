//! The notify-hook part of the results: one line for the terminal, one subsection of
//! the run's section in docs/benchmarks.md (called by results_doc).

use std::fmt::Write as _;

use crate::hooks::HooksResult;
use crate::load::Window;
use crate::report::{Run, TerminalLine, group, pct};
use crate::scrape::NotifyCounts;

/// The terminal's summary of the hook figures.
impl TerminalLine for HooksResult {
    fn terminal_line(&self) -> String {
        let h = self;
        format!(
            "notify hooks: dead-letter announcement p50/p99 {:.1}/{:.1} ms over {} (plain POST p50/p99 {:.2}/{:.2} ms); \
         {:.0} deliveries/s to {} hooks vs {:.0} plain POSTs/s at {} concurrent: {:.1} %; dropped {}, lost {}, \
         refused by the receiver {}",
            h.announce_ms(0.5),
            h.announce_ms(0.99),
            h.dead_letters,
            h.rtt.latency_ms(0.5),
            h.rtt.latency_ms(0.99),
            h.deliveries_rate(),
            h.endpoints * h.hooks_per_endpoint,
            h.ceiling.rate(),
            h.concurrency(),
            h.ratio() * 100.0,
            h.load_counts.dropped + h.dead_counts.dropped,
            h.notifications.errors,
            h.rejected
        )
    }
}

/// CPU µs per delivery (a notification's cycle holds `per_cycle` deliveries).
fn us_each(w: &Window, cpu_s: f64, per_cycle: usize) -> String {
    let n = w.cycles * per_cycle as u64;
    if n == 0 { "-".into() } else { format!("{:.0}", cpu_s * 1e6 / n as f64) }
}

fn counters(c: &NotifyCounts) -> String {
    format!(
        "{} delivered · {} failed · {} dropped · {} signals dropped · {} attempts",
        group(c.delivered),
        group(c.failed),
        group(c.dropped),
        group(c.signals_dropped),
        group(c.attempts)
    )
}

/// The subsection, appended to `d`; nothing when hooks were not measured.
pub fn section(d: &mut String, run: &Run) {
    let h = &run.hooks;
    if !h.measured() {
        return;
    }
    let _ = writeln!(d, "\n#### Notify hooks beside plain POSTs to the same receiver\n");
    let _ = writeln!(
        d,
        "Notifications go to a receiver inside the bench process on 127.0.0.1 (actix-web, 2 worker threads), which \
         verifies every POST's Standard Webhooks signature with its hook's secret before taking the arrival time. \
         Todos come from `generic` webhooks (token trust, so the sender gate passes); hooks are created through the \
         server's operator API; the notify rate is lifted to {} per hook per minute so the rate limit never drops. \
         Ceilings: concurrent tasks in the bench, each with its own keep-alive `awc` client, POSTing a body of the \
         same size (a real notification body), signed the same way, to the same receiver.\n",
        group(f64::from(crate::server::NOTIFY_RATE_PER_MINUTE))
    );
    let _ = writeln!(
        d,
        "**Dead-letter announcement.** {} agent(s) each have a todo delivered on a webhook with attempt cap 1, claim \
         it by id and `fail` it (so the todo dead-letters); the clock runs from the moment the bench has read the \
         `fail` answer to the receiver's verified arrival of that todo's `todo.dead_lettered` ({}-byte body). {} dead \
         letters: **p50 {:.1} ms, p99 {:.1} ms** (max {:.1} ms; {} arrived before the `fail` answer was read, counted \
         as 0). Ceiling: plain POSTs of a {}-byte body at {} concurrent for {:.0} s: round trip **p50 {:.2} ms, p99 \
         {:.2} ms**. Server counters over the phase: {}.\n",
        h.agents,
        h.dead_body_bytes,
        h.dead_letters,
        h.announce_ms(0.5),
        h.announce_ms(0.99),
        h.announce_ms(1.0),
        h.early,
        h.dead_body_bytes,
        h.agents,
        h.rtt.seconds,
        h.rtt.latency_ms(0.5),
        h.rtt.latency_ms(0.99),
        counters(&h.dead_counts)
    );
    let _ = writeln!(
        d,
        "**Ready deliveries per second — the notify channel itself.** What is measured is the real channel from the \
         library (`HookWorkers::start(HookChannel {{ .. }})`, built as `startup.rs` builds the server's: dispatcher \
         on an arbiter of its own, a store on the benchmark database with a pool of {}, the server's encryption key, \
         the server's outbound policy), run inside the bench process and fed `TodoReady` signals through an emitter \
         exactly as the store hands them over after a commit. Every delivery does the whole channel's work: sender \
         gate and hook matching (from the dispatcher's cache, which the database keeps coherent by NOTIFY; a \
         lookup on a miss), the endpoint supervisor's per-hook rate state and in-flight slot, opening the \
         hook's secret and signing, the SSRF guard at dial time, the `awc` \
         POST, and the health write. Intake is left out: making a todo through intake costs the server several \
         times the CPU that announcing it costs (see the intake figures), so a throughput fed through intake was \
         intake's, not the channel's. {} \
         endpoints with {} hooks each; on each endpoint {} feeders each own one real todo (made once through the \
         server's intake) and, in a loop, emit its `TodoReady` and wait until all {} hooks hold the `todo.ready` \
         ({}-byte body) verified, so at most {} deliveries are awaited at once ({} per endpoint, under the \
         channel's per-endpoint cap of {}; a slot is freed only after the delivery's health write, so the slots \
         taken can run ahead of that). Ceiling: {} concurrent plain POSTs. {} rounds of {} s per side, alternating which \
         goes first, each after {} s of warm-up. **{} deliveries/s against {} POSTs/s: {:.1} %.** The channel's \
         counters over the hook windows (warm-ups included): {}; the receiver held {} verified POSTs meanwhile and \
         refused {}{}. The channel's CPU is the bench's; its own thread ({} thread(s)) is shown apart.\n",
        run.pool_size,
        h.endpoints,
        h.hooks_per_endpoint,
        h.feeders_per_endpoint,
        h.hooks_per_endpoint,
        h.ready_body_bytes,
        h.concurrency(),
        h.feeders_per_endpoint * h.hooks_per_endpoint,
        switchboard::hooks::worker::MAX_RINGS_IN_FLIGHT,
        h.concurrency(),
        run.rounds,
        run.seconds,
        run.warmup,
        group(h.deliveries_rate()),
        group(h.ceiling.rate()),
        h.ratio() * 100.0,
        counters(&h.load_counts),
        group(h.load_verified as f64),
        h.rejected,
        h.first_rejection.as_ref().map(|r| format!(" (first: {})", r.replace('|', "/"))).unwrap_or_default(),
        h.channel_threads
    );
    let _ = writeln!(
        d,
        "| side | per second | p50 / p99 ms | CPU µs each: server · postgres · bench (channel thread) | cores busy \
         | of which other processes | errors |"
    );
    let _ = writeln!(d, "|---|--:|--:|--:|--:|--:|--:|");
    let hooks = h.hooks_per_endpoint;
    for (label, w, per, rate) in [
        (
            "hooks: in-process channel, verified deliveries (ms: `TodoReady` → all hooks hold it)",
            &h.notifications,
            hooks,
            h.deliveries_rate(),
        ),
        ("ceiling: plain POSTs (ms: round trip)", &h.ceiling, 1, h.ceiling.rate()),
        ("latency ceiling: plain POSTs (ms: round trip)", &h.rtt, 1, h.rtt.rate()),
    ] {
        let _ = writeln!(
            d,
            "| {label} | {} | {:.1} / {:.1} | {} · {} · {}{} | {} | {} | {} |",
            group(rate),
            w.latency_ms(0.5),
            w.latency_ms(0.99),
            us_each(w, w.cpu.server_s, per),
            us_each(w, w.cpu.postgres_s, per),
            us_each(w, w.cpu.bench_s, per),
            if w.cpu.threads_s > 0.0 { format!(" ({})", us_each(w, w.cpu.threads_s, per)) } else { String::new() },
            pct(w.cpu.busy_share()),
            pct(w.cpu.other_share()),
            match &w.first_error {
                Some(e) if w.errors > 0 => format!("{} (first: {})", w.errors, e.replace('|', "/")),
                _ => w.errors.to_string(),
            },
        );
    }
    let s = &h.sessions;
    let _ = writeln!(
        d,
        "\nWhat the database sessions were doing during the hook windows (`pg_stat_activity` every 20 ms, warm-ups \
         included; mean sessions per sample in each state, by the statement running or last run; {} samples):\n",
        s.samples
    );
    let _ = writeln!(d, "| state · statement | sessions |\n|---|--:|");
    let mut keys: Vec<&String> = s.seen.keys().collect();
    keys.sort_by(|x, y| s.mean(y).total_cmp(&s.mean(x)));
    for k in keys.into_iter().filter(|k| s.mean(k) >= 0.05) {
        let _ = writeln!(d, "| {k} | {:.2} |", s.mean(k));
    }
}
