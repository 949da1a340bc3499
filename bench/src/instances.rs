//! Several `switchboard serve` processes on one database (different ports, one
//! encryption key, so each opens the secrets another sealed), started together and
//! stopped together, for the outbox benchmark.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::BenchResult;
use crate::machine::{CpuSample, Probe};
use crate::server::Server;

/// How the outbox benchmark's servers are started.
pub struct Instances {
    bin: PathBuf,
    database_url: String,
    pool_size: u32,
    secret_key: [u8; 32],
    extra: Vec<(&'static str, String)>,
}

impl Instances {
    /// Servers of `bin` on `database_url`, each with a pool of `pool_size`, sharing a
    /// key made for this run, with `extra` settings.
    pub fn new(bin: &Path, database_url: &str, pool_size: u32, extra: Vec<(&'static str, String)>) -> Instances {
        Instances {
            bin: bin.to_owned(),
            database_url: database_url.to_owned(),
            pool_size,
            secret_key: rand::random::<[u8; 32]>(),
            extra,
        }
    }

    /// Spawns `n` servers one right after another (none waited for in between).
    pub async fn spawn(&self, n: usize) -> BenchResult<Vec<Server>> {
        let mut servers = Vec::new();
        for _ in 0..n {
            servers.push(
                Server::start_with(&self.bin, &self.database_url, self.pool_size, self.secret_key, &self.extra).await?,
            );
        }
        Ok(servers)
    }

    /// Spawns `n` servers and waits until each answers `/readyz`.
    pub async fn start(&self, n: usize) -> BenchResult<Vec<Server>> {
        let mut servers = self.spawn(n).await?;
        ready(&mut servers).await?;
        Ok(servers)
    }
}

/// Waits until every server answers `/readyz`.
pub async fn ready(servers: &mut [Server]) -> BenchResult<()> {
    for server in servers.iter_mut() {
        server.wait_ready(Duration::from_secs(60)).await?;
    }
    Ok(())
}

/// Stops every server (SIGTERM, a clean exit awaited); the first failure is returned
/// after all were asked to stop.
pub async fn stop(servers: Vec<Server>) -> BenchResult<()> {
    let mut first = Ok(());
    for server in servers {
        let stopped = server.stop().await;
        if first.is_ok() {
            first = stopped;
        }
    }
    first
}

/// CPU counters now, with the server share summed over every one of `servers`.
pub fn sample(servers: &[Server], database: &str) -> CpuSample {
    let probe = |pid: u32| Probe { server_pid: pid, database: database.to_owned(), threads: Vec::new() };
    let mut sample = probe(servers.first().map_or(0, Server::pid)).sample();
    for server in servers.iter().skip(1) {
        sample.server += probe(server.pid()).sample().server;
    }
    sample
}
