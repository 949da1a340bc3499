//! One `switchboard serve` replica of the fleet: a binary (this build's or the previous
//! release's) on a fixed loopback port, so that it can be killed and started again
//! where the balancer expects it. Its log goes to a file of its own in the run's
//! directory.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::BenchResult;

/// What every replica of one fleet shares: the database, the master key, the public
/// address (the balancer's) and the settings of the run.
#[derive(Clone)]
pub struct Recipe {
    /// The database URL.
    pub database_url: String,
    /// `SWITCHBOARD_SECRET_ENCRYPTION_KEY`, hex.
    pub secret_key: String,
    /// `SWITCHBOARD_BASE_URL`: the balancer, so links point there.
    pub base_url: String,
    /// `/metrics`' bearer.
    pub metrics_token: String,
    /// Settings beyond the common ones (`NAME`, value), applied last.
    pub extra: Vec<(&'static str, String)>,
    /// Where the logs go.
    pub log_dir: PathBuf,
}

impl Recipe {
    /// The environment of a replica on `port`: the settings a fleet needs, then the
    /// recipe's own. Hooks and sinks may post plain http to the receivers on loopback;
    /// the balancer on 127.0.0.1 is the trusted proxy (a release without the setting
    /// ignores it: unknown variables are not read).
    fn env(&self, port: u16) -> Vec<(&'static str, String)> {
        let mut env = vec![
            ("SWITCHBOARD_DATABASE_URL", self.database_url.clone()),
            ("SWITCHBOARD_ADDR", format!("127.0.0.1:{port}")),
            ("SWITCHBOARD_BASE_URL", self.base_url.clone()),
            ("SWITCHBOARD_SECRET_ENCRYPTION_KEY", self.secret_key.clone()),
            ("SWITCHBOARD_METRICS_TOKEN", self.metrics_token.clone()),
            ("SWITCHBOARD_PUSH_ALLOW_HTTP", "true".into()),
            ("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", "127.0.0.1/32".into()),
            ("SWITCHBOARD_TRUSTED_PROXIES", "127.0.0.1/32".into()),
            ("SWITCHBOARD_LOG", "warn".into()),
        ];
        env.extend(self.extra.iter().cloned());
        env
    }
}

/// A running (or killed) replica.
pub struct Replica {
    /// Its name in logs and reports (`r1`, `prev`, …).
    pub name: String,
    bin: PathBuf,
    port: u16,
    child: Option<Child>,
    recipe: Recipe,
}

impl Replica {
    /// Starts `bin` on `port` (not waiting for it to be ready).
    pub fn spawn(name: &str, bin: &Path, port: u16, recipe: &Recipe) -> BenchResult<Replica> {
        let mut replica =
            Replica { name: name.to_owned(), bin: bin.to_owned(), port, child: None, recipe: recipe.clone() };
        replica.start_process()?;
        Ok(replica)
    }

    fn start_process(&mut self) -> BenchResult<()> {
        let log_path = self.recipe.log_dir.join(format!("{}.log", self.name));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let mut command = Command::new(&self.bin);
        command.arg("serve");
        for (name, value) in self.recipe.env(self.port) {
            command.env(name, value);
        }
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.bin.display()))?;
        self.child = Some(child);
        Ok(())
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its process id (0 when it is not running).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().and_then(Child::id).unwrap_or(0)
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Polls its `/readyz` (directly, not through the balancer) until it answers 200.
    pub async fn wait_ready(&mut self, timeout: Duration) -> BenchResult<()> {
        let client = awc::Client::builder().timeout(Duration::from_secs(2)).finish();
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(resp) = client.get(format!("{}/readyz", self.base())).send().await
                && resp.status().is_success()
            {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!("replica {} exited before it was ready ({status}); see its log", self.name));
            }
            if Instant::now() > deadline {
                return Err(format!("replica {} was not ready within {} s", self.name, timeout.as_secs()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL, and waits until the process is gone.
    pub async fn kill(&mut self) -> BenchResult<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        child.kill().await.map_err(|e| format!("cannot kill replica {}: {e}", self.name))
    }

    /// Starts the process again, on the same port with the same settings.
    pub fn restart(&mut self) -> BenchResult<()> {
        if self.child.is_some() {
            return Err(format!("replica {} still runs", self.name));
        }
        self.start_process()
    }

    /// SIGTERM and a clean exit awaited (the server drains for up to 10 s); it may be
    /// started again with [`Replica::restart`].
    pub async fn terminate(&mut self) -> BenchResult<()> {
        let Some(mut child) = self.child.take() else { return Ok(()) };
        let pid = child.id().unwrap_or(0) as i32;
        kill(Pid::from_raw(pid), Signal::SIGTERM).map_err(|e| format!("cannot signal replica {}: {e}", self.name))?;
        match tokio::time::timeout(Duration::from_secs(20), child.wait()).await {
            Ok(Ok(status)) if status.success() => Ok(()),
            Ok(Ok(status)) => Err(format!("replica {} exited with {status} after SIGTERM", self.name)),
            Ok(Err(e)) => Err(format!("waiting for replica {}: {e}", self.name)),
            Err(_) => {
                let _ = child.kill().await;
                Err(format!("replica {} did not stop within 20 s of SIGTERM; killed", self.name))
            }
        }
    }

    /// Whether its process runs.
    pub fn running(&self) -> bool {
        self.child.is_some()
    }

    /// [`Replica::terminate`], for good.
    pub async fn stop(mut self) -> BenchResult<()> {
        self.terminate().await
    }
}

/// Stops every replica; the first failure is returned after all were asked.
pub async fn stop_all(replicas: Vec<Replica>) -> BenchResult<()> {
    let mut first = Ok(());
    for r in replicas {
        let stopped = r.stop().await;
        if first.is_ok() {
            first = stopped;
        }
    }
    first
}

/// A port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> BenchResult<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("cannot find a free port: {e}"))
}
