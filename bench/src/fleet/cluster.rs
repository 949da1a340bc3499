//! The fleet's own PostgreSQL cluster: initdb'd into the run's temporary directory and
//! started on a free loopback port, so stopping and starting it never disturbs the
//! machine's cluster on 5432 that the tests and the other benchmarks use.
//!
//! PostgreSQL refuses to run as root, so when the bench is root every PostgreSQL program
//! runs as the `postgres` system user (as the server's embedded database does), and the
//! cluster's directory is handed to that user.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::os::unix::fs::chown;

use nix::unistd::{Uid, User};

use crate::BenchResult;

/// The superuser initdb creates; everything connects as it, trusted on loopback.
const SUPERUSER: &str = "postgres";

/// Who runs the PostgreSQL programs.
#[derive(Debug, Clone, Copy)]
struct RunAs {
    uid: u32,
    gid: u32,
    /// Whether the bench switches to that user (it is root).
    switch: bool,
}

impl RunAs {
    fn resolve() -> BenchResult<RunAs> {
        if !Uid::effective().is_root() {
            return Ok(RunAs {
                uid: Uid::effective().as_raw(),
                gid: nix::unistd::Gid::effective().as_raw(),
                switch: false,
            });
        }
        match User::from_name("postgres") {
            Ok(Some(user)) if !user.uid.is_root() => {
                Ok(RunAs { uid: user.uid.as_raw(), gid: user.gid.as_raw(), switch: true })
            }
            _ => {
                Err("running as root needs a `postgres` system user to run PostgreSQL as (apt-get install postgresql)"
                    .into())
            }
        }
    }
}

/// A cluster in `<dir>/pg/data`, listening on 127.0.0.1:`port` and on a socket in
/// `<dir>/pg`.
pub struct Cluster {
    bin_dir: PathBuf,
    home: PathBuf,
    port: u16,
    run_as: RunAs,
    /// `max_connections` it is started with.
    max_connections: u32,
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb` and `pg_ctl`.
fn bin_dir() -> BenchResult<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("/usr/lib/postgresql: {e} (apt-get install postgresql)"))?
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            (bin.join("initdb").is_file() && bin.join("pg_ctl").is_file()).then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, bin)| bin)
        .ok_or_else(|| "no PostgreSQL server binaries (apt-get install postgresql)".into())
}

impl Cluster {
    /// Runs initdb into `<dir>/pg/data` (`dir` must exist and let the cluster's user
    /// through) for a server on `port`.
    pub fn init(dir: &Path, port: u16, max_connections: u32) -> BenchResult<Cluster> {
        let run_as = RunAs::resolve()?;
        let home = dir.join("pg");
        std::fs::create_dir_all(&home).map_err(|e| format!("{}: {e}", home.display()))?;
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", home.display()))?;
        if run_as.switch {
            chown(&home, Some(run_as.uid), Some(run_as.gid))
                .map_err(|e| format!("handing {} to postgres: {e}", home.display()))?;
        }
        let cluster = Cluster { bin_dir: bin_dir()?, home, port, run_as, max_connections };
        cluster.run(
            "initdb",
            &[
                "-D",
                &cluster.data().to_string_lossy(),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        )?;
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.home.join("data")
    }

    /// The server log.
    pub fn log(&self) -> PathBuf {
        self.home.join("postgres.log")
    }

    /// A URL of database `db` on it.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{db}", self.port)
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(self.bin_dir.join(program));
        if self.run_as.switch {
            cmd.uid(self.run_as.uid).gid(self.run_as.gid);
        }
        // The user may not read the bench's working directory.
        cmd.current_dir(&self.home);
        cmd.stdin(Stdio::null());
        cmd
    }

    fn run(&self, program: &str, args: &[&str]) -> BenchResult<()> {
        let out = self.command(program).args(args).output().map_err(|e| format!("cannot run {program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// The server's options: loopback only, its own socket directory, the connections a
    /// fleet and the bench's clients need; fsync and synchronous commit as installed
    /// (on), autovacuum off as on the machine's cluster the other benchmarks use.
    fn options(&self) -> String {
        format!(
            "-p {} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c max_connections={} \
             -c autovacuum=off -c lc_messages=C",
            self.port,
            self.home.display(),
            self.max_connections
        )
    }

    /// Starts the server and waits until it accepts connections.
    pub fn start(&self) -> BenchResult<()> {
        let (data, log, options) = (self.data(), self.log(), self.options());
        self.run(
            "pg_ctl",
            &["-D", &data.to_string_lossy(), "-l", &log.to_string_lossy(), "-o", &options, "-w", "-t", "60", "start"],
        )
    }

    /// Stops the server in fast mode (open sessions are ended, a shutdown checkpoint is
    /// written), waiting until it is down.
    pub fn stop(&self) -> BenchResult<()> {
        self.run("pg_ctl", &["-D", &self.data().to_string_lossy(), "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// The postmaster's pid (the first line of `postmaster.pid`), while it runs.
    pub fn postmaster(&self) -> Option<u32> {
        // Readable by its owner only: read as root or as that owner (both can).
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    /// Stops the server if it runs (a failed run's teardown).
    pub fn stop_quietly(&self) {
        if self.postmaster().is_some() {
            let _ = self.run("pg_ctl", &["-D", &self.data().to_string_lossy(), "-m", "immediate", "-w", "stop"]);
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop_quietly();
    }
}
