//! The server under test: the release `switchboard serve` binary as a separate process,
//! so its memory and CPU are its own and the HTTP path is the real one.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::BenchResult;
use crate::machine;

/// Notifications per hook per minute the server is started with: lifted so far above
/// what a run produces that the rate limit never drops one.
pub const NOTIFY_RATE_PER_MINUTE: u32 = 10_000_000;

/// A running server process. Killed if dropped without [`Server::stop`], so a failed
/// run never leaves it behind.
pub struct Server {
    child: Child,
    pid: u32,
    port: u16,
    base: String,
    metrics_token: String,
    secret_key: [u8; 32],
}

/// The `switchboard` binary built next to this one (`target/release/`).
pub fn binary_next_to_bench() -> BenchResult<PathBuf> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate the bench binary: {e}"))?;
    let bin = me.with_file_name("switchboard");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "{} not found; build it with `cargo build --release --bin switchboard` (scripts/bench does)",
            bin.display()
        ))
    }
}

/// A port that was free a moment ago on 127.0.0.1. The server binds it right after;
/// the tiny race is acceptable for a benchmark run by hand.
fn free_port() -> BenchResult<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("cannot find a free port: {e}"))
}

impl Server {
    /// Starts `switchboard serve` on a free loopback port against `database_url` (the
    /// server migrates it on start). Sweeps are set to a day so the server's own lease
    /// reaper never touches the expired leases the benchmark times itself, and retention
    /// is off: the Board's seed reaches 90 days back, and the benchmark times its own
    /// retention pass (prune.rs), which the server's must not run ahead of. A secret
    /// encryption key fresh for this run (32 random bytes, hex) lets the intake
    /// benchmark create a signed webhook; it lives in the server's environment and in
    /// this process, whose in-process notify channel opens the hooks' secrets with it.
    ///
    /// For the notify-hook benchmark the server may post to the bench's receiver on
    /// 127.0.0.1 over plain http (`SWITCHBOARD_PUSH_ALLOW_HTTP`, loopback allowlisted),
    /// the per-hook rate is lifted far above anything a run produces, and `/metrics`
    /// answers a token fresh for this run (to read drops).
    pub async fn start(bin: &Path, database_url: &str, pool_size: u32) -> BenchResult<Server> {
        Self::start_with(bin, database_url, pool_size, rand::random::<[u8; 32]>(), &[]).await
    }

    /// [`Server::start`] with the encryption key given (several servers on one
    /// database must share it: each opens the secrets another sealed) and `extra`
    /// settings added after the defaults (a setting named again overrides its default).
    pub async fn start_with(
        bin: &Path,
        database_url: &str,
        pool_size: u32,
        secret_key: [u8; 32],
        extra: &[(&str, String)],
    ) -> BenchResult<Server> {
        let port = free_port()?;
        let day_ms = (24 * 3600 * 1000).to_string();
        let metrics_token = hex::encode(rand::random::<[u8; 32]>());
        let mut command = Command::new(bin);
        command
            .arg("serve")
            .env("SWITCHBOARD_DATABASE_URL", database_url)
            .env("SWITCHBOARD_ADDR", format!("127.0.0.1:{port}"))
            .env("SWITCHBOARD_LOG", "warn")
            .env("SWITCHBOARD_DB_POOL_SIZE", pool_size.to_string())
            .env("SWITCHBOARD_SECRET_ENCRYPTION_KEY", hex::encode(secret_key))
            .env("SWITCHBOARD_LEASE_REAPER_INTERVAL_MS", &day_ms)
            .env("SWITCHBOARD_INTERRUPT_REAPER_INTERVAL_MS", &day_ms)
            .env("SWITCHBOARD_RETRY_SCHEDULER_INTERVAL_MS", &day_ms)
            .env("SWITCHBOARD_ENDPOINT_EXPIRY_INTERVAL_MS", &day_ms)
            .env("SWITCHBOARD_RETENTION_DAYS", "0")
            .env("SWITCHBOARD_PUSH_ALLOW_HTTP", "1")
            .env("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", "127.0.0.1/32")
            .env("SWITCHBOARD_NOTIFY_HOOK_RATE_PER_MINUTE", NOTIFY_RATE_PER_MINUTE.to_string())
            .env("SWITCHBOARD_METRICS_TOKEN", &metrics_token);
        for (name, value) in extra {
            command.env(name, value);
        }
        let child = command
            // The server's greeting goes to stdout; keep stdout for the results table.
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let pid = child.id().ok_or("the server exited at once")?;
        Ok(Server { child, pid, port, base: format!("http://127.0.0.1:{port}"), metrics_token, secret_key })
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The address the server listens on (what its outbound guard refuses as "itself").
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The key the server seals secrets with, so a notify channel built in the bench
    /// process opens the hook secrets the server's API created.
    pub fn secret_key(&self) -> switchboard::config::SecretKey {
        switchboard::config::SecretKey(self.secret_key)
    }

    /// The bearer token `/metrics` answers.
    pub fn metrics_token(&self) -> &str {
        &self.metrics_token
    }

    /// Polls `/readyz` until it answers 200 (migrations done, database reachable).
    pub async fn wait_ready(&mut self, timeout: Duration) -> BenchResult<()> {
        let client = awc::Client::builder().timeout(Duration::from_secs(2)).finish();
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(resp) = client.get(format!("{}/readyz", self.base)).send().await
                && resp.status().is_success()
            {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("the server exited before it was ready ({status})"));
            }
            if Instant::now() > deadline {
                return Err(format!("the server was not ready within {} s", timeout.as_secs()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The server's peak resident set so far (`VmHWM`) and its current one, in KiB.
    pub fn memory_kib(&self) -> BenchResult<(u64, u64)> {
        machine::memory_kib(self.pid).ok_or_else(|| format!("cannot read /proc/{}/status", self.pid))
    }

    /// Sends SIGTERM and waits for a clean exit (the server drains for up to 10 s).
    pub async fn stop(mut self) -> BenchResult<()> {
        kill(Pid::from_raw(self.pid as i32), Signal::SIGTERM).map_err(|e| format!("cannot signal the server: {e}"))?;
        match tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!("the server exited with {status} after SIGTERM")),
            Ok(Err(e)) => Err(format!("waiting for the server: {e}")),
            Err(_) => {
                let _ = self.child.kill().await;
                Err("the server did not stop within 20 s of SIGTERM; killed".into())
            }
        }
    }
}
