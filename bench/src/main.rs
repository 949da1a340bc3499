//! `switchboard-bench`: the foundation benchmark. It brings up the release server as a
//! separate process on a fresh database and measures, in one run:
//!
//! 1. agents over REST doing claim_next → complete cycles at several concurrencies,
//!    beside the raw SQL ceiling (the same store calls through one pool, no HTTP);
//! 2. one lease-reaper sweep over 10 000 expired leases, and REST claim throughput
//!    while it runs;
//!    beside it, one retention pass over 100 000 old terminal todos (with their attempts
//!    and events) and REST claim throughput while it runs (prune.rs);
//! 3. the server's peak RSS;
//! 4. the `EXPLAIN (ANALYZE, BUFFERS)` plan of the claim_next statement;
//! 5. signed GitHub-style deliveries per second through intake (verify → rules → event
//!    and todo), beside the ceiling of plain todo creation through the store;
//! 6. notify hooks: the latency from an agent's dead-lettering `fail` to a verified
//!    `todo.dead_lettered` POST at a local receiver (through the server), and
//!    `todo.ready` deliveries per second to it from the real notify channel run inside
//!    the bench process and fed signals directly, beside plain `awc` POSTs to the same
//!    receiver.
//! 6. the Board's Dead view (dead-letter list, pill counts, chart) on 100 000 and on
//!    1 000 000 todos, beside `/healthz`, with its statements' plans (board/), on a
//!    database and server of its own.
//! 7. one queue digest built for an owner with 200 queues on 100 000 and on 1 000 000
//!    todos, with its sections' plans (digest/), on a database of its own, no server.
//! 8. the sink outbox (outbox/): throughput of two servers draining one outbox to a
//!    Gotify-contract receiver beside plain POSTs, the outbox's cost on the dead-letter
//!    transaction, and dead letter → message latency, on a database and servers of
//!    its own.
//! 9. with `--baseline-bin`: what an unbudgeted claim costs against the server built
//!    before admission budgets (claim_cost/), REST cycles at 16 agents, each server
//!    on a database of its own.
//! 10. with `--only-throughput` (throughput/): the bare-SQL ceiling of a claim cycle
//!     (pgbench), PGQueuer's enqueue and drain, and the product's single-row, batched and
//!     long-poll figures over REST, all on one database in one run.
//!
//! 11. with `--only-fleet` (fleet/): cycles through nginx with 1, 2 and 3 replicas on
//!     one PostgreSQL beside the ceiling, the connections each holds, and the fault run
//!     (a replica killed, the database restarted, the previous release beside this
//!     one); `--fleet-check` runs only the fault run and judges it (CI, `scripts/fleet`).
//!
//! Results are printed as a table and written to `docs/benchmarks.md` between the
//! `bench:foundation` markers (the Board's between `bench:board`, the outbox's between
//! `bench:outbox`, the claim cost's between `bench:claim-cost`, the throughput's between
//! `bench:throughput`, MCP beside REST between `bench:mcp`). Run it through `scripts/bench`, which builds both binaries in
//! release mode first.

mod board;
mod claim_cost;
mod database;
mod digest;
mod fleet;
mod hooks;
mod instances;
mod intake;
mod load;
mod machine;
mod mcp;
mod outbox;
mod plan;
mod prune;
mod queues;
mod report;
mod results_doc;
mod scrape;
mod server;
mod sweep;
mod throughput;
mod waits;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;

use database::{BenchDb, Seeded};
use load::{Agent, Window};
use machine::Probe;
use report::{CyclePair, Run};
use server::Server;

/// What every fallible step returns: a message that already says what failed.
pub type BenchResult<T> = Result<T, String>;

/// The benchmark's command line.
#[derive(Debug, Clone, Parser)]
#[command(name = "switchboard-bench", about = "Switchboard foundation benchmark (run it via scripts/bench)")]
pub struct Args {
    /// PostgreSQL server (any database on it) where the fresh benchmark database is
    /// created and dropped.
    #[arg(long, env = "SWITCHBOARD_BENCH_ADMIN_URL", default_value = "postgres://postgres@127.0.0.1:5432/postgres")]
    pub admin_url: String,
    /// Measured seconds per window (after the warm-up).
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Warm-up seconds before each window (not measured).
    #[arg(long, default_value_t = 2)]
    pub warmup: u64,
    /// Concurrent clients for the REST and raw SQL cycle windows.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16")]
    pub clients: Vec<usize>,
    /// Windows per side and concurrency; rounds alternate which side goes first.
    #[arg(long, default_value_t = 2)]
    pub rounds: u32,
    /// Concurrent REST clients claiming while the lease reaper sweeps.
    #[arg(long, default_value_t = 4)]
    pub sweep_clients: usize,
    /// Expired leases each sweep reaps.
    #[arg(long, default_value_t = 10_000)]
    pub expired: u32,
    /// How many sweeps to time (one sweep is short; several give the throughput during
    /// sweeps more cycles to count).
    #[arg(long, default_value_t = 5)]
    pub sweeps: u32,
    /// Old terminal todos (each with an attempt and an event) one retention pass prunes
    /// while REST clients claim; 0 skips that measurement.
    #[arg(long, default_value_t = 100_000)]
    pub pruned: u32,
    /// Pending todos kept on the benchmark queue before every window (topped up).
    #[arg(long, default_value_t = 200_000)]
    pub pending: u32,
    /// Bytes of each seeded pending todo's payload (`{"body": "xx…"}`), 0 for none (the
    /// throughput run sets its own, `--throughput-payload-bytes`).
    #[arg(long, default_value_t = 0)]
    pub todo_payload_bytes: u32,
    /// Completed todos seeded on the same queue, so most rows are done as in production.
    #[arg(long, default_value_t = 300_000)]
    pub done: u32,
    /// Concurrent senders posting signed deliveries to intake (and concurrent tasks
    /// creating todos for its ceiling).
    #[arg(long, default_value_t = 16)]
    pub intake_clients: usize,
    /// Database connections of the server's pool and of the raw SQL pool.
    #[arg(long, default_value_t = 16)]
    pub pool_size: u32,
    /// The `switchboard` binary to serve (default: next to this binary).
    #[arg(long)]
    pub server_bin: Option<PathBuf>,
    /// Results file; the section between the `bench:foundation` markers is replaced.
    #[arg(long, default_value = "docs/benchmarks.md")]
    pub doc: PathBuf,
    /// Print the results without writing the results file.
    #[arg(long)]
    pub no_doc: bool,
    /// Run only the intake measurement (on a small seed); its results go to a `--doc`
    /// other than docs/benchmarks.md, which only a full run may rewrite.
    #[arg(long, conflicts_with = "only_hooks")]
    pub only_intake: bool,
    /// Run only the notify-hook measurements (on a small seed); like `--only-intake`,
    /// its results go to a `--doc` other than docs/benchmarks.md.
    #[arg(long)]
    pub only_hooks: bool,
    /// Dead letters whose announcement is timed.
    #[arg(long, default_value_t = 300)]
    pub dead_letters: usize,
    /// Agents dead-lettering todos at once (and the concurrency of the plain POSTs
    /// whose round trip is the latency's ceiling).
    #[arg(long, default_value_t = 1)]
    pub dead_letter_agents: usize,
    /// Endpoints the ready-notification throughput is spread over (each has its own
    /// supervisor and in-flight cap in the notify channel): many, so that no one
    /// endpoint's cap is what limits.
    #[arg(long, default_value_t = 16)]
    pub hook_endpoints: usize,
    /// Hooks on each of those endpoints (the server allows 5 by default).
    #[arg(long, default_value_t = 4)]
    pub hooks_per_endpoint: usize,
    /// Feeders per endpoint, each keeping one notification (to every hook) in flight.
    /// Feeders × hooks stays well under the channel's 32 deliveries in flight per
    /// endpoint: a slot stays taken until the delivery's health is written, after the
    /// receiver already holds the POST, so a feeder may start its next notification
    /// while the last one's slots are still taken: with more than one feeder per
    /// endpoint the cap starts shedding once health writes lag.
    #[arg(long, default_value_t = 1)]
    pub feeders_per_endpoint: usize,
    /// Run only the Board measurement (the Dead view on two table sizes); it rewrites
    /// only its own section of `--doc`.
    #[arg(long)]
    pub only_board: bool,
    /// Todos in the Board measurement's first table.
    #[arg(long, default_value_t = 100_000)]
    pub board_small: u64,
    /// Todos in its second table (the first, grown in the same proportions).
    #[arg(long, default_value_t = 1_000_000)]
    pub board_large: u64,
    /// Measured requests of each kind per table size.
    #[arg(long, default_value_t = 50)]
    pub board_requests: usize,
    /// The digest measurement's flags (`--only-digest`, …; digest/).
    #[command(flatten)]
    pub digest: digest::DigestArgs,
    /// The Queues overview measurement's flags (`--only-queues`, …; queues/).
    #[command(flatten)]
    pub queues: queues::QueuesArgs,
    /// Run only the outbox measurement (throughput of two servers, the cost on the
    /// dead-letter transaction, latency); it rewrites only its own section of `--doc`.
    #[arg(long, conflicts_with_all = ["only_intake", "only_hooks", "only_board"])]
    pub only_outbox: bool,
    /// Dead-letter rows in each backlog the two servers drain.
    #[arg(long, default_value_t = 20_000)]
    pub outbox_backlog: u64,
    /// Dead letters whose message latency is timed, one at a time.
    #[arg(long, default_value_t = 200)]
    pub outbox_dead_letters: usize,
    /// Claimed todos written before each fail window (more than a window can fail).
    #[arg(long, default_value_t = 100_000)]
    pub outbox_supply: u64,
    /// Concurrent tasks failing todos (the fail windows, and making the backlogs).
    #[arg(long, default_value_t = 16)]
    pub outbox_fail_tasks: usize,
    /// The claim-cost comparison's flags (`--only-claim-cost`, `--baseline-bin`, …;
    /// claim_cost/).
    #[command(flatten)]
    pub claim_cost: claim_cost::ClaimCostArgs,
    /// The throughput benchmark's flags (`--only-throughput`, …; throughput/).
    #[command(flatten)]
    pub throughput: throughput::ThroughputArgs,
    /// The MCP benchmark's flags (`--only-mcp`, `--mcp-agents`; mcp/).
    #[command(flatten)]
    pub mcp: mcp::McpArgs,
    /// The fleet's flags (`--only-fleet`, `--fleet-check`, `--previous-bin`; fleet/).
    #[command(flatten)]
    pub fleet: fleet::FleetArgs,
    /// Source revision to record with the results (scripts/bench passes `git describe`).
    #[arg(long, default_value = "unknown")]
    pub revision: String,
}

impl Args {
    fn window(&self) -> Duration {
        Duration::from_secs(self.seconds)
    }

    fn warmup(&self) -> Duration {
        Duration::from_secs(self.warmup)
    }
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if args.seconds == 0
        || args.rounds == 0
        || args.clients.is_empty()
        || args.clients.contains(&0)
        || args.sweep_clients == 0
        || args.intake_clients == 0
        || args.dead_letters == 0
        || args.dead_letter_agents == 0
        || args.hook_endpoints == 0
        || args.hooks_per_endpoint == 0
        || args.feeders_per_endpoint == 0
    {
        eprintln!(
            "switchboard-bench: --seconds, --rounds, --clients, --sweep-clients, --intake-clients, --dead-letters, \
             --dead-letter-agents, --hook-endpoints, --hooks-per-endpoint and --feeders-per-endpoint must be positive"
        );
        return std::process::ExitCode::FAILURE;
    }
    if args.board_small == 0 || args.board_large <= args.board_small || args.board_requests == 0 {
        eprintln!("switchboard-bench: --board-small must be positive, --board-large larger, --board-requests positive");
        return std::process::ExitCode::FAILURE;
    }
    if args.outbox_backlog < 2
        || args.outbox_dead_letters == 0
        || args.outbox_supply == 0
        || args.outbox_fail_tasks == 0
    {
        eprintln!(
            "switchboard-bench: --outbox-backlog must be at least 2; --outbox-dead-letters, --outbox-supply and \
             --outbox-fail-tasks positive"
        );
        return std::process::ExitCode::FAILURE;
    }
    if args.only_board && args.only_intake {
        eprintln!("switchboard-bench: --only-board and --only-intake exclude each other");
        return std::process::ExitCode::FAILURE;
    }
    // awc clients are not Send, so the whole client side runs on one actix thread; the
    // lease sweep gets its own thread (see sweep.rs) so it never steals client time.
    match actix_rt::System::new().block_on(run(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("switchboard-bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Sets up, measures, and always tears down (server stopped, database dropped).
async fn run(args: Args) -> BenchResult<()> {
    if args.only_board {
        return run_board(&args).await;
    }
    if args.queues.only_queues {
        let server_bin = match &args.server_bin {
            Some(p) => p.clone(),
            None => server::binary_next_to_bench()?,
        };
        return queues::run_part(&args, &server_bin).await;
    }
    if args.digest.only_digest {
        return digest::run_part(&args).await;
    }
    if args.only_outbox {
        return run_outbox(&args).await;
    }
    if args.claim_cost.only_claim_cost {
        return run_claim_cost(&args).await;
    }
    if args.throughput.only_throughput {
        return run_throughput(&args).await;
    }
    if args.mcp.only_mcp {
        return run_mcp(&args).await;
    }
    if args.fleet.fleet_check || args.fleet.only_fleet {
        let server_bin = match &args.server_bin {
            Some(p) => p.clone(),
            None => server::binary_next_to_bench()?,
        };
        return if args.fleet.fleet_check {
            fleet::check(&args, &server_bin).await
        } else {
            fleet::bench(&args, &server_bin).await
        };
    }
    let started = Instant::now();
    let db = BenchDb::create(&args.admin_url).await?;
    progress(&format!("created database {}", db.name()));
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let outcome = match Server::start(&server_bin, &db.url, args.pool_size).await {
        Ok(mut server) => {
            let measured = measure(&args, &db, &mut server).await;
            // Read before stopping: /proc/<pid> goes away with the process.
            let memory = server.memory_kib();
            let stopped = server.stop().await;
            match (measured, memory, stopped) {
                (Ok(mut run), Ok((peak, now)), Ok(())) => {
                    run.peak_rss_kib = peak;
                    run.end_rss_kib = now;
                    Ok(run)
                }
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    let dropped = db.drop_database().await;
    let mut run = outcome?;
    dropped?;
    run.total_seconds = started.elapsed().as_secs_f64();
    println!("{}", report::table(&run));
    // A partial run may only go to a results file of its own.
    let partial_over_full =
        (args.only_intake || args.only_hooks) && args.doc == std::path::Path::new("docs/benchmarks.md");
    if !(args.no_doc || partial_over_full) {
        results_doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote {}", args.doc.display()));
    }
    if args.only_intake {
        return Ok(());
    }
    let board = run_board(&args).await;
    if args.only_hooks {
        return board;
    }
    // The digest and the outbox run even when the Board's plans failed: their figures
    // stand alone.
    let digest = digest::run_part(&args).await;
    let outbox = run_outbox(&args).await;
    let claim_cost = if args.claim_cost.baseline_bin.is_some() { run_claim_cost(&args).await } else { Ok(()) };
    board.and(digest).and(outbox).and(claim_cost)
}

/// The claim-cost comparison with the baseline binary, on databases and servers of its
/// own; writes its own section of `--doc`.
async fn run_claim_cost(args: &Args) -> BenchResult<()> {
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let run = claim_cost::run(args, &server_bin).await?;
    println!("{}", claim_cost::doc::table(&run));
    if !args.no_doc {
        claim_cost::doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the claim-cost section of {}", args.doc.display()));
    }
    Ok(())
}

/// The throughput benchmark (issue 14), on a database and server of its own; writes its
/// own section of `--doc`.
async fn run_throughput(args: &Args) -> BenchResult<()> {
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let run = throughput::run(args, &server_bin).await?;
    println!("{}", throughput::doc::table(&run));
    if !args.no_doc {
        throughput::doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the throughput section of {}", args.doc.display()));
    }
    Ok(())
}

/// MCP cycles beside REST cycles (issue 15), on a database and server of their own;
/// writes its own section of `--doc`.
async fn run_mcp(args: &Args) -> BenchResult<()> {
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let run = mcp::run(args, &server_bin).await?;
    println!("{}", mcp::doc::table(&run));
    if !args.no_doc {
        mcp::doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the MCP section of {}", args.doc.display()));
    }
    Ok(())
}

/// The outbox measurement, on a database and servers of its own; writes its own
/// section of `--doc`.
async fn run_outbox(args: &Args) -> BenchResult<()> {
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let run = outbox::run(args, &server_bin).await?;
    println!("{}", outbox::doc::table(&run));
    if !args.no_doc {
        outbox::doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the outbox section of {}", args.doc.display()));
    }
    Ok(())
}

/// The Board measurement, on a database and server of its own; writes its own section
/// of `--doc` and fails the run when a Dead view statement scans `todos`.
async fn run_board(args: &Args) -> BenchResult<()> {
    let server_bin = match &args.server_bin {
        Some(p) => p.clone(),
        None => server::binary_next_to_bench()?,
    };
    let run = board::run(args, &server_bin).await?;
    println!("{}", board::doc::table(&run));
    if !args.no_doc {
        board::doc::write_doc(&args.doc, &run)?;
        progress(&format!("wrote the Board section of {}", args.doc.display()));
    }
    let scans = run.seq_scans();
    if scans.is_empty() {
        Ok(())
    } else {
        let which: Vec<String> = scans.iter().map(|(n, q)| format!("{q} on {n} todos")).collect();
        Err(format!("sequential scan over todos in: {}", which.join("; ")))
    }
}

/// Every measurement, in the order that keeps each figure next to its ceiling.
async fn measure(args: &Args, db: &BenchDb, server: &mut Server) -> BenchResult<Run> {
    server.wait_ready(Duration::from_secs(60)).await?;
    let server: &Server = server;
    progress(&format!("server pid {} ready at {}", server.pid(), server.base()));
    if args.only_intake {
        let small = Args { done: 1_000, pending: 1_000, expired: 0, ..args.clone() };
        let seeded = db.seed(&small).await?;
        let probe = Probe { server_pid: server.pid(), database: db.name().to_owned(), threads: Vec::new() };
        let raw_store = db.store(args.pool_size)?;
        let mut run = Run::new(args, db.settings().await?);
        run.intake = intake::measure(args, db, server, &seeded, &raw_store, &probe).await?;
        report_intake(&run);
        return Ok(run);
    }
    if args.only_hooks {
        let small = Args { done: 1_000, pending: 1_000, expired: 0, ..args.clone() };
        let seeded = db.seed(&small).await?;
        let probe = Probe { server_pid: server.pid(), database: db.name().to_owned(), threads: Vec::new() };
        let raw_store = db.store(2)?;
        let mut run = Run::new(args, db.settings().await?);
        let throughput = hooks::load::ChannelLoad { args, db, server, store: &raw_store, probe: &probe };
        run.hooks = hooks::measure(args, server, &seeded, &raw_store, &throughput).await?;
        return Ok(run);
    }
    let seeded = db.seed(args).await?;
    progress(&format!(
        "seeded {} done + {} pending todos on one queue, {} expired leases on another endpoint",
        args.done, args.pending, args.expired
    ));
    let probe = Probe { server_pid: server.pid(), database: db.name().to_owned(), threads: Vec::new() };
    let raw_store = db.store(args.pool_size)?;
    let mut run = Run::new(args, db.settings().await?);

    for &clients in &args.clients {
        let (mut rest, mut raw) = (Window::default(), Window::default());
        // Rounds alternate which side goes first (REST, raw, raw, REST, …) so that a
        // drift in the machine's load does not favour one side.
        for round in 0..args.rounds {
            for rest_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
                let w = if rest_turn {
                    cycle_window(args, db, &probe, &seeded, clients, || Agent::rest(server.base(), &seeded)).await?
                } else {
                    cycle_window(args, db, &probe, &seeded, clients, || Agent::raw(&raw_store, &seeded)).await?
                };
                if rest_turn { rest.merge(w) } else { raw.merge(w) }
            }
        }
        let pair = CyclePair { clients, rest, raw };
        progress(&format!(
            "{clients:>2} clients: REST {:.0} cycles/s, raw SQL {:.0} cycles/s ({:.1} %)",
            pair.rest.rate(),
            pair.raw.rate(),
            pair.ratio() * 100.0
        ));
        run.cycles.push(pair);
    }

    run.sweep = sweep::measure(args, db, server, &seeded, &probe).await?;
    progress(&format!(
        "sweep: {:.0} ms median, baseline {:.0} cycles/s, during sweeps {:.0} cycles/s",
        run.sweep.median_sweep_ms(),
        run.sweep.baseline.rate(),
        run.sweep.during_rate()
    ));

    run.prune = prune::measure(args, db, server, &seeded, &probe).await?;
    if run.prune.measured() {
        progress(&format!(
            "retention prune: {:.1} s, baseline {:.0} cycles/s, during the prune {:.0} cycles/s",
            run.prune.duration.as_secs_f64(),
            run.prune.baseline.rate(),
            run.prune.during_rate()
        ));
    }

    run.plans = plan::explain_claim_next(db, &seeded).await?;
    run.table_counts = db.state_counts().await?;

    // Last, on an endpoint of its own, so its rows never sit under the figures above.
    run.intake = intake::measure(args, db, server, &seeded, &raw_store, &probe).await?;
    report_intake(&run);

    // Notify hooks on endpoints of their own, after everything above.
    let throughput = hooks::load::ChannelLoad { args, db, server, store: &raw_store, probe: &probe };
    run.hooks = hooks::measure(args, server, &seeded, &raw_store, &throughput).await?;
    Ok(run)
}

fn report_intake(run: &Run) {
    progress(&format!(
        "intake: {:.0} deliveries/s at {} senders, ceiling {:.0} todos/s ({:.1} %)",
        run.intake.intake.window.rate(),
        run.intake.senders,
        run.intake.ceiling.window.rate(),
        run.intake.ratio() * 100.0
    ));
}

/// One window of claim → complete cycles by `clients` agents, on a freshly topped-up
/// and vacuumed queue, so every window starts from the same table.
async fn cycle_window(
    args: &Args,
    db: &BenchDb,
    probe: &Probe,
    seeded: &Seeded,
    clients: usize,
    agent: impl Fn() -> Agent,
) -> BenchResult<Window> {
    let budget = db.prepare_window(args, seeded).await?;
    let agents = (0..clients).map(|_| agent()).collect();
    let window = load::measure(agents, budget, args.warmup(), args.window(), probe).await;
    window.check()?;
    Ok(window)
}

/// A progress line on stderr (the results table goes to stdout).
pub(crate) fn progress(line: &str) {
    eprintln!("bench: {line}");
}
