//! Debian's nginx in front of the replicas, run as a child of the bench (`daemon off`)
//! with a configuration written into the run's directory: one upstream of the replicas
//! with passive health (`max_fails`/`fail_timeout`: open-source nginx has no active
//! checks), keep-alive connections to them, timeouts above the long-poll's 30 s, the
//! body limit of intake (5 MiB), and `X-Forwarded-For` set for the trusted-proxy
//! setting. Each answer carries the upstream nginx tried (`X-Fleet-Upstream`), so the
//! verdict can tell which replica a 502 or 503 came from.
//!
//! A request nginx has already sent to a replica is not sent to another when that
//! replica fails (nginx's default for POST: a claim or a completion may have happened),
//! so a replica killed mid-request shows its clients a 502; a connection that is
//! refused is tried on the next replica, so a dead replica costs nothing more.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

use crate::BenchResult;

/// The header naming the upstream(s) nginx tried for an answer.
pub const UPSTREAM_HEADER: &str = "x-fleet-upstream";

/// How nginx treats a replica that failed: out for this long after one failure.
pub const FAIL_TIMEOUT_SECONDS: u64 = 5;

/// Where Debian installs it.
const NGINX: &str = "/usr/sbin/nginx";

/// The running balancer.
pub struct Balancer {
    dir: PathBuf,
    port: u16,
    child: Child,
    access_log: bool,
}

/// Refuses to go on without Debian's nginx (`scripts/fleet` installs it when missing).
pub fn ensure_installed() -> BenchResult<()> {
    if Path::new(NGINX).is_file() {
        Ok(())
    } else {
        Err(format!("{NGINX} is missing: apt-get install -y nginx (scripts/fleet does)"))
    }
}

/// `nginx/1.22.1`: what `nginx -v` says it is.
pub fn version() -> String {
    std::process::Command::new(NGINX)
        .arg("-v")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stderr).trim().strip_prefix("nginx version: ").map(str::to_owned))
        .unwrap_or_else(|| "nginx".to_owned())
}

/// The configuration for replicas on `upstreams`, listening on `port`, with files
/// under `dir`.
pub fn config(dir: &Path, port: u16, upstreams: &[u16], access_log: bool) -> String {
    let servers: String = upstreams
        .iter()
        .map(|p| format!("        server 127.0.0.1:{p} max_fails=1 fail_timeout={FAIL_TIMEOUT_SECONDS}s;\n"))
        .collect();
    let d = dir.display();
    let access = if access_log {
        format!(
            "    log_format fleet '$msec $status $request_method $uri upstream=$upstream_addr \
             upstream_status=$upstream_status rt=$request_time';\n    access_log {d}/access.log fleet;\n"
        )
    } else {
        "    access_log off;\n".to_owned()
    };
    format!(
        "# Written by switchboard-bench's fleet run; see deploy/nginx/ for the example to deploy.
worker_processes auto;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{
    worker_connections 4096;
}}
http {{
{access}    client_body_temp_path {d}/tmp/body;
    proxy_temp_path {d}/tmp/proxy;
    fastcgi_temp_path {d}/tmp/fastcgi;
    uwsgi_temp_path {d}/tmp/uwsgi;
    scgi_temp_path {d}/tmp/scgi;
    # An agent keeps one connection for thousands of cycles.
    keepalive_requests 1000000;
    keepalive_timeout 75s;

    upstream switchboard {{
{servers}        keepalive 64;
        keepalive_requests 1000000;
        # Below the server's own keep-alive (actix-web's 5 s): a replica closing an
        # idle connection just as nginx sends a request on it is a 502 that nginx does
        # not retry (the POST was sent).
        keepalive_timeout 4s;
    }}

    server {{
        listen 127.0.0.1:{port};
        # Intake takes bodies up to 5 MiB (the API 1 MiB; the server refuses above).
        client_max_body_size 6m;
        client_body_buffer_size 1m;

        location / {{
            proxy_pass http://switchboard;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_connect_timeout 2s;
            # Long-polls wait up to 30 s; MCP streams a little longer.
            proxy_read_timeout 65s;
            proxy_send_timeout 65s;
            # Only what was not sent is tried on another replica (never a POST that
            # reached one: it may have claimed or completed).
            proxy_next_upstream error timeout;
            proxy_next_upstream_tries 3;
            proxy_buffering off;
            add_header X-Fleet-Upstream $upstream_addr always;
        }}
    }}
}}
"
    )
}

impl Balancer {
    /// Writes the configuration for `upstreams`, checks it (`nginx -t`) and starts
    /// nginx on `port` as a child of this process.
    pub async fn start(dir: &Path, port: u16, upstreams: &[u16], access_log: bool) -> BenchResult<Balancer> {
        ensure_installed()?;
        let dir = dir.join("nginx");
        for sub in ["", "tmp"] {
            let d = dir.join(sub);
            std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
            // nginx's workers (`nobody` when the bench is root) write temporary files.
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(if sub.is_empty() { 0o755 } else { 0o777 }))
                .map_err(|e| format!("{}: {e}", d.display()))?;
        }
        let placeholder = Balancer::write(&dir, port, upstreams, access_log)?;
        let check = Command::new(NGINX)
            .args(["-t", "-q", "-p"])
            .arg(&dir)
            .arg("-c")
            .arg(&placeholder)
            .arg("-e")
            .arg(dir.join("error.log"))
            .output()
            .await
            .map_err(|e| format!("cannot run nginx -t: {e}"))?;
        if !check.status.success() {
            return Err(format!(
                "nginx -t refused the fleet's configuration: {}",
                String::from_utf8_lossy(&check.stderr)
            ));
        }
        let child = Command::new(NGINX)
            .arg("-p")
            .arg(&dir)
            .arg("-c")
            .arg(&placeholder)
            .arg("-e")
            .arg(dir.join("error.log"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start nginx: {e}"))?;
        let balancer = Balancer { dir, port, child, access_log };
        balancer.wait_listening().await?;
        Ok(balancer)
    }

    fn write(dir: &Path, port: u16, upstreams: &[u16], access_log: bool) -> BenchResult<PathBuf> {
        let path = dir.join("nginx.conf");
        std::fs::write(&path, config(dir, port, upstreams, access_log))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(path)
    }

    async fn wait_listening(&self) -> BenchResult<()> {
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await.is_ok() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!(
            "nginx did not listen on 127.0.0.1:{} within 5 s (see {}/error.log)",
            self.port,
            self.dir.display()
        ))
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The master's pid.
    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Rewrites the configuration for `upstreams` and reloads it (SIGHUP: new workers
    /// take it, old ones finish their requests); waits a moment for the new workers.
    pub async fn reload(&self, upstreams: &[u16]) -> BenchResult<()> {
        Balancer::write(&self.dir, self.port, upstreams, self.access_log)?;
        kill(Pid::from_raw(self.pid() as i32), Signal::SIGHUP).map_err(|e| format!("cannot signal nginx: {e}"))?;
        tokio::time::sleep(Duration::from_millis(500)).await;
        Ok(())
    }

    /// Stops nginx (SIGQUIT: graceful) and waits for it.
    pub async fn stop(mut self) -> BenchResult<()> {
        let _ = kill(Pid::from_raw(self.pid() as i32), Signal::SIGQUIT);
        match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(_) => Ok(()),
            Err(_) => {
                let _ = self.child.kill().await;
                Err("nginx did not stop within 10 s of SIGQUIT; killed".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_replica_is_an_upstream_with_passive_health_and_idle_connections_close_before_the_server_closes_them() {
        let text = config(Path::new("/run/fleet"), 8000, &[8001, 8002], false);
        assert!(text.contains("server 127.0.0.1:8001 max_fails=1 fail_timeout=5s;"));
        assert!(text.contains("server 127.0.0.1:8002 max_fails=1 fail_timeout=5s;"));
        // actix-web closes an idle connection after 5 s.
        assert!(text.contains("keepalive_timeout 4s;"));
        assert!(text.contains("listen 127.0.0.1:8000;"));
        assert!(text.contains("access_log off;"));
    }
}
