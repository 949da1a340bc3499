//! A private PostgreSQL cluster for running Switchboard without a configured database.
//!
//! When no database URL is configured the service still needs PostgreSQL, so it brings up
//! a cluster of its own from the machine's PostgreSQL server binaries, under a data
//! directory it owns:
//!
//! ```text
//! <data_dir>/            0700, owned by the user the cluster runs as
//!   pgdata/              the cluster (initdb output)
//!   run/                 0700; the Unix socket lives here (no TCP listener at all)
//!   postgres.log         server log (pg_ctl -l)
//! ```
//!
//! The cluster is reused on the next start and stopped on shutdown by whichever handle
//! started it. PostgreSQL refuses to run as root, so when we are root every PostgreSQL
//! program runs as the `postgres` system user (or `nobody`), and the data directory is
//! handed to that user.
//!
//! Everything here is blocking (it spawns processes and waits for them); call it before
//! the async runtime needs the database, or from `spawn_blocking`.

mod binaries;
mod conninfo;
mod data_dir;
mod process;
pub mod sealed;
mod server;
#[cfg(test)]
mod tests;

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use binaries::{has_server_binaries, pg_config_bindir, versioned_bin_dirs};
use conninfo::{conninfo_value, validate_database_name};
use data_dir::{absolute, check_socket_path, dir_has_entries, prepare_data_dir};
use process::RunAs;
use server::ServerState;

/// Superuser created by initdb; the service connects as this role.
const SUPERUSER: &str = "switchboard";
/// Only used as the socket file suffix (`.s.PGSQL.5432`): there is no TCP listener, so it
/// cannot clash with another server on the machine.
const PORT: u16 = 5432;
/// Cluster directory inside the data directory.
const PGDATA: &str = "pgdata";
/// Socket directory inside the data directory.
const RUN_DIR: &str = "run";
/// Server log inside the data directory.
const LOG_FILE: &str = "postgres.log";
/// Our settings file inside the cluster, included from postgresql.conf and rewritten
/// before every start so the socket path follows the data directory if it moves.
const CONF_FILE: &str = "switchboard.conf";
/// initdb writes into `pgdata.initdb-<pid>-<n>` and we rename it into place, so a cluster
/// directory only ever appears complete, even if initdb is interrupted or two processes
/// (or threads) initialise at once.
const INIT_PREFIX: &str = "pgdata.initdb-";
/// How long to wait for a server that another process is still starting; also what we
/// give `pg_ctl start -w` (its own default).
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How many trailing lines of stderr / the server log go into an error message.
const TAIL_LINES: usize = 5;
/// Longest socket path the kernel accepts (`sun_path` minus the terminating NUL).
#[cfg(target_os = "linux")]
const MAX_SOCKET_PATH: usize = 107;
#[cfg(not(target_os = "linux"))]
const MAX_SOCKET_PATH: usize = 103;
/// PostgreSQL truncates identifiers beyond NAMEDATALEN - 1 bytes; we refuse instead of
/// silently creating a differently named database.
const MAX_IDENTIFIER_BYTES: usize = 63;

/// Why the private cluster could not be located, started or stopped.
///
/// Every variant displays as one line, because these end up as the service's fatal
/// start-up message.
#[derive(Debug, thiserror::Error)]
pub enum EmbeddedError {
    /// No directory holding both `initdb` and `pg_ctl` was found.
    #[error(
        "no PostgreSQL server binaries found (looked in: {}); install the `postgresql` package or set SWITCHBOARD_DATABASE_URL to an existing server",
        join_paths(searched)
    )]
    BinariesNotFound {
        /// Every directory that was examined, in search order.
        searched: Vec<PathBuf>,
    },

    /// A file-system operation on the data directory failed.
    #[error("could not {action} {}: {source}", one_line(path))]
    Io {
        /// What we were doing, e.g. "create directory".
        action: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },

    /// A PostgreSQL program could not be executed at all.
    #[error("could not run {}: {source}", one_line(program))]
    Spawn {
        /// The program that failed to start.
        program: PathBuf,
        /// The underlying error.
        source: io::Error,
    },

    /// A PostgreSQL program ran and failed.
    #[error("`{command}` failed ({status}){}", detail_suffix(detail))]
    CommandFailed {
        /// The program and sub-command, e.g. `pg_ctl start` (no arguments, so nothing
        /// sensitive can leak through here).
        command: String,
        /// How it exited.
        status: ExitStatus,
        /// The last lines of its stderr and, for the server, of the server log, joined
        /// into one line.
        detail: String,
    },

    /// The data directory cannot host a cluster (untraversable parent, path too long for a
    /// socket, stray `pgdata`, ...).
    #[error("data directory {} is not usable: {reason}", one_line(path))]
    DataDirUnusable {
        /// The data directory (absolute once it exists).
        path: PathBuf,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// We are root and there is no unprivileged user to run PostgreSQL as.
    #[error(
        "running as root, but neither the `postgres` nor the `nobody` user exists to run PostgreSQL as (it refuses to run as root); create a `postgres` user or set SWITCHBOARD_DATABASE_URL"
    )]
    NoUnprivilegedUser,

    /// Looking up a user in the password database failed.
    #[error("could not look up user `{name}`: {source}")]
    UserLookup {
        /// The user name looked up.
        name: String,
        /// The underlying error.
        source: nix::Error,
    },

    /// The requested database name cannot be used.
    #[error("invalid database name {name:?}: {reason}")]
    InvalidDatabaseName {
        /// The name as given.
        name: String,
        /// Why it is refused.
        reason: &'static str,
    },

    /// A client program we need besides the server binaries is missing.
    #[error(
        "`{tool}` not found in {} or on PATH; it is needed to create the database (install the PostgreSQL client package)",
        one_line(bin_dir)
    )]
    ToolNotFound {
        /// The program name.
        tool: &'static str,
        /// The server binary directory that was searched first.
        bin_dir: PathBuf,
    },
}

/// A running (or reused) private cluster.
///
/// Dropping the handle stops the server if this handle started it.
#[derive(Debug)]
pub struct EmbeddedPostgres {
    /// Absolute, canonical data directory.
    data_dir: PathBuf,
    /// Absolute socket directory (`data_dir/run`).
    socket_dir: PathBuf,
    /// Directory holding initdb, pg_ctl and friends.
    bin_dir: PathBuf,
    /// Database created at start and named in `database_url`.
    database: String,
    run_as: RunAs,
    /// Whether `start` launched the server (rather than finding it running).
    started_by_us: bool,
    /// Set once `stop` has succeeded, so it and `Drop` are idempotent.
    stopped: bool,
}

impl EmbeddedPostgres {
    /// Locate the server binaries.
    ///
    /// Order: `bin_dir_override` if Some (only that directory; if it lacks initdb and
    /// pg_ctl the result is `BinariesNotFound`), else the directory printed by
    /// `pg_config --bindir` if it contains both, else the highest-numbered
    /// `/usr/lib/postgresql/<N>/bin` containing them (Debian/Ubuntu keep the server off
    /// PATH there), else any directory on PATH containing both. The result is absolute,
    /// because the programs are later run from inside the data directory.
    pub fn locate_binaries(bin_dir_override: Option<&Path>) -> Result<PathBuf, EmbeddedError> {
        if let Some(dir) = bin_dir_override {
            // An explicit choice is honoured or refused, never silently replaced.
            return if has_server_binaries(dir) {
                Ok(absolute(dir))
            } else {
                Err(EmbeddedError::BinariesNotFound { searched: vec![dir.to_path_buf()] })
            };
        }

        let mut searched: Vec<PathBuf> = Vec::new();
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(dir) = pg_config_bindir() {
            candidates.push(dir);
        }
        let debian_root = Path::new("/usr/lib/postgresql");
        let versioned = versioned_bin_dirs(debian_root);
        if versioned.is_empty() {
            // Still say we looked there, so the error tells the whole story.
            searched.push(debian_root.join("<N>").join("bin"));
        }
        candidates.extend(versioned);
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).filter(|dir| !dir.as_os_str().is_empty()));
        }

        for dir in candidates {
            if has_server_binaries(&dir) {
                return Ok(absolute(&dir));
            }
            if !searched.contains(&dir) {
                searched.push(dir);
            }
        }
        Err(EmbeddedError::BinariesNotFound { searched })
    }

    /// Bring up the private cluster and make sure `database` exists. Blocking.
    ///
    /// Creates `data_dir` if missing (mode 0700), runs initdb into `data_dir/pgdata` once
    /// (superuser `switchboard`, trust authentication on the socket, UTF8, C locale),
    /// starts the server with `pg_ctl start -w` unless `pg_ctl status` says it is already
    /// running, listening only on a Unix socket in `data_dir/run` (0700, owned by the
    /// user the server runs as) and logging to `data_dir/postgres.log`, then creates the
    /// database if it does not exist. A server that was already running (e.g. started by
    /// another process of ours) is reused and [`started_by_us`](Self::started_by_us) is
    /// false, so this handle will not stop it.
    pub fn start(
        data_dir: &Path,
        bin_dir_override: Option<&Path>,
        database: &str,
    ) -> Result<EmbeddedPostgres, EmbeddedError> {
        validate_database_name(database)?;
        let bin_dir = Self::locate_binaries(bin_dir_override)?;
        let run_as = RunAs::resolve()?;
        let data_dir = prepare_data_dir(data_dir, &run_as)?;
        let socket_dir = data_dir.join(RUN_DIR);
        check_socket_path(&data_dir, &socket_dir)?;

        let mut pg = EmbeddedPostgres {
            data_dir,
            socket_dir,
            bin_dir,
            database: database.to_owned(),
            run_as,
            started_by_us: false,
            stopped: false,
        };
        tracing::debug!(
            data_dir = %pg.data_dir.display(),
            bin_dir = %pg.bin_dir.display(),
            user = %pg.run_as.name,
            "preparing embedded PostgreSQL"
        );

        let pgdata = pg.data_dir.join(PGDATA);
        if !pgdata.join("PG_VERSION").is_file() {
            if dir_has_entries(&pgdata) {
                return Err(EmbeddedError::DataDirUnusable {
                    path: pg.data_dir.clone(),
                    reason: format!(
                        "{} exists but holds no PostgreSQL cluster (no PG_VERSION); move it away so a fresh one can be created",
                        one_line(&pgdata)
                    ),
                });
            }
            pg.initdb()?;
        }
        pg.fix_ownership()?;
        pg.prepare_socket_dir()?;

        match pg.status()? {
            ServerState::Running => {
                tracing::info!(data_dir = %pg.data_dir.display(), "reusing running embedded PostgreSQL server");
            }
            ServerState::Stopped => {
                pg.write_settings()?;
                match pg.pg_ctl_start() {
                    Ok(()) => pg.started_by_us = true,
                    // Another process of ours may have won a race to start it; that is fine.
                    Err(err) if pg.status().ok() == Some(ServerState::Running) => {
                        tracing::info!(error = %err, "embedded PostgreSQL was started concurrently by another process; reusing it");
                    }
                    Err(err) => return Err(err),
                }
            }
        }

        // On failure `pg` is dropped here, which stops a server we just started.
        pg.ensure_database()?;
        Ok(pg)
    }

    /// A libpq-style key/value connection string that tokio-postgres accepts:
    /// `host=<socket dir> port=5432 user=switchboard dbname=<db>`.
    ///
    /// The socket directory is absolute, which is what makes `host` mean a Unix socket.
    /// Values are quoted only when they contain spaces, quotes or backslashes.
    pub fn database_url(&self) -> String {
        format!(
            "host={} port={} user={} dbname={}",
            conninfo_value(&self.socket_dir.to_string_lossy()),
            PORT,
            conninfo_value(SUPERUSER),
            conninfo_value(&self.database),
        )
    }

    /// The data directory (absolute and canonical).
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Whether `data_dir` already holds an embedded cluster (what `start` would reuse
    /// rather than create). Looks only: creates nothing.
    pub fn exists_in(data_dir: &Path) -> bool {
        data_dir.join(PGDATA).join("PG_VERSION").is_file()
    }

    /// Whether this handle started the server (and so will stop it).
    pub fn started_by_us(&self) -> bool {
        self.started_by_us
    }

    /// Stops the server with `pg_ctl stop -m fast -w` if this handle started it;
    /// idempotent, and a no-op for a reused server.
    ///
    /// "fast" rolls back open transactions and disconnects clients instead of waiting for
    /// them, which is what a shutting-down service wants.
    pub fn stop(&mut self) -> Result<(), EmbeddedError> {
        if !self.started_by_us || self.stopped {
            return Ok(());
        }
        tracing::info!(data_dir = %self.data_dir.display(), "stopping embedded PostgreSQL server");
        let began = Instant::now();
        let output = self.run(self.bin("pg_ctl"), ["stop", "-D", PGDATA, "-m", "fast", "-w"].map(OsStr::new))?;
        if !output.status.success() {
            // Already gone (someone else stopped it, or it crashed) counts as stopped.
            if self.status().ok() != Some(ServerState::Stopped) {
                return Err(self.command_failed("pg_ctl stop", &output, true));
            }
        }
        self.stopped = true;
        tracing::info!(elapsed_ms = began.elapsed().as_millis() as u64, "embedded PostgreSQL server stopped");
        Ok(())
    }
}

impl Drop for EmbeddedPostgres {
    /// Best effort: a service shutting down cannot do more than report the failure.
    fn drop(&mut self) {
        if let Err(err) = self.stop() {
            tracing::warn!(error = %err, "could not stop the embedded PostgreSQL server");
        }
    }
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> EmbeddedError {
    EmbeddedError::Io { action, path: path.to_path_buf(), source }
}

/// A path for a one-line message: control characters would break the line.
fn one_line(path: &Path) -> String {
    path.display().to_string().chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

fn join_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "nowhere".to_owned();
    }
    paths.iter().map(|p| one_line(p)).collect::<Vec<_>>().join(", ")
}

fn detail_suffix(detail: &str) -> String {
    if detail.is_empty() { String::new() } else { format!(": {detail}") }
}
