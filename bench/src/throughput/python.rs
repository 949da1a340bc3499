//! The product drained by agents written the way most agents are: Python with
//! `requests`, 16 threads in one process, each with its own `Session` (one keep-alive
//! connection), single-row cycles or batched drains, with the full or the lean answer
//! (bench/python_agents.py). Their process's CPU is counted as the agents'.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use tokio::process::Command;

use super::child;
use super::series::Round;
use crate::BenchResult;
use crate::claim_cost::Rig;
use crate::database::QUEUE;

/// What the script prints after its window.
#[derive(Debug, Deserialize)]
struct Printed {
    units: u64,
    seconds: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
    empty: u64,
    first_error: Option<String>,
}

/// A Python window's shape.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Threads (agents).
    pub threads: usize,
    /// Todos per claim; `None`: single-row cycles.
    pub limit: Option<u64>,
    /// Whether the claims ask for the lean answer.
    pub lean: bool,
}

/// One window of Python agents on the freshly topped-up queue.
pub async fn window(rig: &Rig, args: &crate::Args, python: &Path, shape: Shape) -> BenchResult<Round> {
    rig.db.prepare_window(args, &rig.seeded).await?;
    rig.db.exec_batch("CHECKPOINT").await?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("python_agents.py");
    let mut cmd = Command::new(python);
    cmd.arg(script)
        .args(["--base", rig.server.base(), "--token", &rig.seeded.cycles_token, "--queue", QUEUE])
        .args(["--threads", &shape.threads.to_string()])
        .args(["--warmup", &args.warmup.to_string(), "--seconds", &args.seconds.to_string()]);
    if let Some(limit) = shape.limit {
        cmd.args(["--mode", "batch", "--limit", &limit.to_string()]);
    }
    if shape.lean {
        cmd.arg("--lean");
    }
    let limit = Duration::from_secs(args.warmup + args.seconds + 180);
    let marked = child::run::<Printed>(cmd, &rig.db, &rig.probe, "the Python agents", limit).await?;
    let p = &marked.result;
    if p.errors > 0 {
        return Err(format!(
            "{} of the Python agents' cycles failed; first: {}",
            p.errors,
            p.first_error.as_deref().unwrap_or("?")
        ));
    }
    if p.empty > 0 {
        return Err("the queue ran dry under the Python agents; raise --throughput-pending".into());
    }
    let cost = marked.cost(&rig.db, p.units).await;
    Ok(Round { units: p.units, seconds: p.seconds, p50_ms: p.p50_ms, p99_ms: p.p99_ms, cost })
}
