//! A process of the run that is not this one: the Python agents, PGQueuer's consumers,
//! Graphile Worker. Each prints `{"event": "start"}` on stdout when its measured span
//! begins and `{"event": "end"}` when it ends, then one JSON line with its figures;
//! the bench marks the cluster (CPU, WAL) at both events, and counts the process's own
//! CPU as the agents'.

use std::process::Stdio;
use std::time::Duration;

use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::Command;

use super::ceiling::{ClusterMark, Cost};
use crate::BenchResult;
use crate::database::BenchDb;
use crate::machine::Probe;

/// What a marked process printed last, and the cost of its measured span.
pub struct Marked<T> {
    /// Its figures.
    pub result: T,
    /// The span's start.
    pub from: ClusterMark,
    /// The span's end.
    pub to: ClusterMark,
}

impl<T> Marked<T> {
    /// The span's cost for `units` of work, the WAL split by `pg_waldump`.
    pub async fn cost(&self, db: &BenchDb, units: u64) -> Cost {
        self.from.cost_until(db, &self.to, units).await
    }
}

/// Runs `cmd` to its end (at most `limit`), marking the cluster at its two events.
pub async fn run<T: DeserializeOwned>(
    mut cmd: Command,
    db: &BenchDb,
    probe: &Probe,
    what: &str,
    limit: Duration,
) -> BenchResult<Marked<T>> {
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {what}: {e}"))?;
    let pid = child.id();
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(format!("{what}: no pipes"));
    };
    // Read stderr beside stdout, so a chatty child never blocks on a full pipe.
    let errors = actix_rt::spawn(async move {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text).await;
        text
    });
    let followed = tokio::time::timeout(limit, async {
        let mut lines = BufReader::new(stdout).lines();
        let (mut from, mut to, mut last) = (None, None, None);
        while let Some(line) = lines.next_line().await.map_err(|e| format!("{what}: {e}"))? {
            match line.trim() {
                r#"{"event": "start"}"# | r#"{"event":"start"}"# => {
                    from = Some(ClusterMark::start(db, probe).await?.with_agents(pid));
                }
                r#"{"event": "end"}"# | r#"{"event":"end"}"# => {
                    to = Some(ClusterMark::now(db, probe).await?.with_agents(pid));
                }
                l if l.starts_with('{') => last = Some(l.to_owned()),
                _ => {}
            }
        }
        Ok::<_, String>((from, to, last))
    })
    .await;
    let status = match &followed {
        Ok(_) => child.wait().await.map_err(|e| format!("{what}: {e}"))?,
        Err(_) => {
            let _ = child.kill().await;
            return Err(format!("{what} did not finish within {} s", limit.as_secs()));
        }
    };
    let stderr_text = errors.await.unwrap_or_default();
    let (from, to, last) = followed.map_err(|_| format!("{what} timed out"))??;
    if !status.success() {
        return Err(format!("{what} failed ({status}): {}", tail(&stderr_text)));
    }
    let (Some(from), Some(to), Some(last)) = (from, to, last) else {
        return Err(format!("{what} printed no measured span: {}", tail(&stderr_text)));
    };
    let result = serde_json::from_str(&last).map_err(|e| format!("{what}'s figures ({last}): {e}"))?;
    Ok(Marked { result, from, to })
}

/// The last lines of a child's stderr, for an error message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}
