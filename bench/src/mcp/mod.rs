//! Issue 15's benchmark: claim_next → complete cycles over MCP (Streamable HTTP sessions,
//! mcp/agent.rs) beside the same cycles over REST, at `--mcp-agents` agents, in one run on
//! one server and database, rounds alternating which goes first. Target: MCP at least
//! 70 % of REST.

pub mod agent;
pub mod doc;

use std::path::Path;
use std::time::Instant;

use chrono::Utc;

use crate::claim_cost::Rig;
use crate::load::{self, Agent, Window};
use crate::machine::Machine;
use crate::{Args, BenchResult, progress};
use agent::{McpAgent, Sessions, close_sessions};

/// The MCP benchmark's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// Run only the MCP-beside-REST cycles; it rewrites only its own section of `--doc`.
    #[arg(long, conflicts_with_all = ["only_board", "only_intake", "only_hooks", "only_outbox", "only_throughput"])]
    pub only_mcp: bool,
    /// Concurrent agents in every MCP and REST window.
    #[arg(long, default_value_t = 16)]
    pub mcp_agents: usize,
}

/// What the run found.
pub struct McpRun {
    /// When it ran.
    pub date: String,
    /// The machine.
    pub machine: Machine,
    /// PostgreSQL version and the settings that matter.
    pub pg: (String, String),
    /// This build's revision.
    pub revision: String,
    /// Agents per window.
    pub agents: usize,
    /// Windows per side.
    pub rounds: u32,
    /// Measured seconds per window.
    pub seconds: u64,
    /// Warm-up seconds per window.
    pub warmup: u64,
    /// Done and pending todos on the queue.
    pub table: (u32, u32),
    /// REST windows, pooled.
    pub rest: Window,
    /// MCP windows, pooled.
    pub mcp: Window,
    /// The server's peak resident set at the end, KiB.
    pub peak_rss_kib: u64,
    /// Wall time, seconds.
    pub total_seconds: f64,
}

impl McpRun {
    /// MCP cycles per second over REST's.
    pub fn ratio(&self) -> f64 {
        let rest = self.rest.rate();
        if rest > 0.0 { self.mcp.rate() / rest } else { 0.0 }
    }
}

/// Runs REST and MCP windows against this build's server `bin`.
pub async fn run(args: &Args, bin: &Path) -> BenchResult<McpRun> {
    let agents = args.mcp.mcp_agents;
    if agents == 0 {
        return Err("--mcp-agents must be positive".into());
    }
    let started = Instant::now();
    let rig = Rig::start(args, bin, "mcp").await?;
    let pg = rig.db.settings().await;
    let measured = measure(args, &rig, agents).await;
    let peak = rig.finish().await;
    let (rest, mcp) = measured?;
    Ok(McpRun {
        date: Utc::now().format("%a %b %e %H:%M:%S UTC %Y").to_string(),
        machine: Machine::describe(),
        pg: pg?,
        revision: args.revision.clone(),
        agents,
        rounds: args.rounds,
        seconds: args.seconds,
        warmup: args.warmup,
        table: (args.done, args.pending),
        rest,
        mcp,
        peak_rss_kib: peak?,
        total_seconds: started.elapsed().as_secs_f64(),
    })
}

/// The windows, rounds alternating which side goes first.
async fn measure(args: &Args, rig: &Rig, agents: usize) -> BenchResult<(Window, Window)> {
    let (mut rest, mut mcp) = (Window::default(), Window::default());
    let base = rig.server.base();
    for round in 0..args.rounds {
        for mcp_turn in if round % 2 == 0 { [false, true] } else { [true, false] } {
            let budget = rig.db.prepare_window(args, &rig.seeded).await?;
            let opened = Sessions::default();
            let side: Vec<Agent> = (0..agents)
                .map(|_| {
                    if mcp_turn {
                        Agent::Batch(Box::new(McpAgent::new(base, &rig.seeded, &opened)))
                    } else {
                        Agent::rest(base, &rig.seeded)
                    }
                })
                .collect();
            let w = load::measure(side, budget, args.warmup(), args.window(), &rig.probe).await;
            close_sessions(base, &rig.seeded, &opened).await?;
            w.check()?;
            let name = if mcp_turn { "MCP" } else { "REST" };
            progress(&format!("round {round}: {name} at {agents} agents {:.0} cycles/s", w.rate()));
            if mcp_turn { mcp.merge(w) } else { rest.merge(w) }
        }
    }
    Ok((rest, mcp))
}
