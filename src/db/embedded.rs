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

use std::ffi::OsStr;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::{Pid, User, getegid, geteuid};

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

/// The user every PostgreSQL program runs as.
#[derive(Debug, Clone)]
struct RunAs {
    name: String,
    uid: u32,
    gid: u32,
    /// True when we are root and must switch to this user for every child process;
    /// false when it is simply the current user.
    switch: bool,
}

impl RunAs {
    /// PostgreSQL refuses to run as root, so root hands the cluster to `postgres` (the
    /// conventional owner, so file ownership looks familiar) or `nobody`; anyone else
    /// runs it as themselves.
    fn resolve() -> Result<Self, EmbeddedError> {
        let euid = geteuid();
        if !euid.is_root() {
            let name = User::from_uid(euid).ok().flatten().map(|user| user.name).unwrap_or_else(|| euid.to_string());
            return Ok(Self { name, uid: euid.as_raw(), gid: getegid().as_raw(), switch: false });
        }
        for name in ["postgres", "nobody"] {
            match User::from_name(name) {
                // A uid-0 "postgres" would be refused by PostgreSQL just the same.
                Ok(Some(user)) if !user.uid.is_root() => {
                    return Ok(Self { name: user.name, uid: user.uid.as_raw(), gid: user.gid.as_raw(), switch: true });
                }
                Ok(_) => continue,
                Err(source) => {
                    return Err(EmbeddedError::UserLookup { name: name.to_owned(), source });
                }
            }
        }
        Err(EmbeddedError::NoUnprivilegedUser)
    }
}

/// Whether the server is up, as reported by `pg_ctl status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerState {
    Running,
    Stopped,
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

    /// Run initdb into a scratch directory and move it into place.
    fn initdb(&self) -> Result<(), EmbeddedError> {
        self.remove_stale_init_dirs();
        // The counter keeps two threads of one process apart; the pid lets a later start
        // recognise leftovers of a process that died mid-initdb.
        static ATTEMPT: AtomicU64 = AtomicU64::new(0);
        let scratch_name = format!("{INIT_PREFIX}{}-{}", std::process::id(), ATTEMPT.fetch_add(1, Ordering::Relaxed));
        let scratch = self.data_dir.join(&scratch_name);
        if scratch.exists() {
            remove_dir_all(&scratch)?;
        }

        tracing::info!(
            data_dir = %self.data_dir.display(),
            user = %self.run_as.name,
            "initialising embedded PostgreSQL cluster (first run only; takes a few seconds)"
        );
        let began = Instant::now();
        let output = self.run(
            self.bin("initdb"),
            [
                "-D",
                scratch_name.as_str(),
                "--username",
                SUPERUSER,
                // Only the run-as user (and root) can reach the 0700 socket directory, so
                // trusting local connections admits nobody else.
                "--auth=trust",
                // Belt and braces: should anyone ever enable TCP, it stays closed.
                "--auth-host=reject",
                "--encoding=UTF8",
                // The C locale always exists (minimal containers often have no other) and
                // does not depend on whatever LANG the service happened to start with.
                "--no-locale",
                "--no-instructions",
            ]
            .map(OsStr::new),
        )?;
        if !output.status.success() {
            let err = self.command_failed("initdb", &output, false);
            let _ = fs::remove_dir_all(&scratch);
            return Err(err);
        }

        // Route our settings through an include so the stock postgresql.conf stays intact
        // and the socket path can be rewritten on each start.
        let conf = scratch.join("postgresql.conf");
        let mut file = OpenOptions::new().append(true).open(&conf).map_err(|source| io_err("open", &conf, source))?;
        writeln!(
            file,
            "\n# Added by Switchboard: its own settings, rewritten on every start.\ninclude_if_exists = '{CONF_FILE}'"
        )
        .map_err(|source| io_err("write", &conf, source))?;
        drop(file);

        let pgdata = self.data_dir.join(PGDATA);
        if let Err(source) = fs::rename(&scratch, &pgdata) {
            let _ = fs::remove_dir_all(&scratch);
            // Another process of ours finished initdb first; use its cluster.
            if !pgdata.join("PG_VERSION").is_file() {
                return Err(io_err("move the new cluster to", &pgdata, source));
            }
        }
        tracing::info!(elapsed_ms = began.elapsed().as_millis() as u64, "embedded PostgreSQL cluster initialised");
        Ok(())
    }

    /// Remove scratch initdb directories left by processes that died mid-initdb.
    fn remove_stale_init_dirs(&self) {
        let Ok(entries) = fs::read_dir(&self.data_dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .and_then(|n| n.strip_prefix(INIT_PREFIX))
                .and_then(|n| n.split('-').next())
                .and_then(|n| n.parse::<i32>().ok())
            else {
                continue;
            };
            // EPERM means the process exists (as someone else), so only ESRCH is stale.
            if pid <= 0 || kill(Pid::from_raw(pid), None) == Err(Errno::ESRCH) {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }

    /// When root, hand anything in the data directory not owned by the run-as user over to
    /// it: PostgreSQL refuses a cluster owned by another user, which happens if the
    /// run-as user changed (e.g. a `postgres` user was created after a first run as
    /// `nobody`).
    fn fix_ownership(&self) -> Result<(), EmbeddedError> {
        if !self.run_as.switch {
            return Ok(());
        }
        let pgdata = self.data_dir.join(PGDATA);
        let meta = fs::symlink_metadata(&pgdata).map_err(|source| io_err("inspect", &pgdata, source))?;
        if meta.uid() == self.run_as.uid && meta.gid() == self.run_as.gid {
            return Ok(());
        }
        tracing::info!(
            data_dir = %self.data_dir.display(),
            user = %self.run_as.name,
            "changing ownership of the embedded PostgreSQL data directory"
        );
        chown_tree(&self.data_dir, self.run_as.uid, self.run_as.gid)
    }

    /// Create the socket directory, private to the run-as user.
    fn prepare_socket_dir(&self) -> Result<(), EmbeddedError> {
        let dir = &self.socket_dir;
        match DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(io_err("create directory", dir, source)),
        }
        if self.run_as.switch {
            std::os::unix::fs::lchown(dir, Some(self.run_as.uid), Some(self.run_as.gid))
                .map_err(|source| io_err("change owner of", dir, source))?;
        }
        // Fix the mode even if the directory already existed: it is what keeps other
        // local users away from a trust-authenticated socket.
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|source| io_err("set permissions on", dir, source))
    }

    /// Write `pgdata/switchboard.conf`: socket only, in our run directory.
    fn write_settings(&self) -> Result<(), EmbeddedError> {
        let path = self.data_dir.join(PGDATA).join(CONF_FILE);
        let contents = settings_file(&self.socket_dir.to_string_lossy());
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| io_err("create", &path, source))?;
        file.write_all(contents.as_bytes()).map_err(|source| io_err("write", &path, source))?;
        drop(file);
        if self.run_as.switch {
            // The server must be able to read it even if root's umask made it 0600.
            std::os::unix::fs::lchown(&path, Some(self.run_as.uid), Some(self.run_as.gid))
                .map_err(|source| io_err("change owner of", &path, source))?;
        }
        Ok(())
    }

    /// `pg_ctl status`: exit 0 running, 3 not running; anything else is an error.
    fn status(&self) -> Result<ServerState, EmbeddedError> {
        let output = self.run(self.bin("pg_ctl"), ["status", "-D", PGDATA].map(OsStr::new))?;
        match output.status.code() {
            Some(0) => Ok(ServerState::Running),
            Some(3) => Ok(ServerState::Stopped),
            _ => Err(self.command_failed("pg_ctl status", &output, false)),
        }
    }

    /// `pg_ctl start -w`, waiting until the server accepts connections.
    fn pg_ctl_start(&self) -> Result<(), EmbeddedError> {
        tracing::info!(
            data_dir = %self.data_dir.display(),
            user = %self.run_as.name,
            "starting embedded PostgreSQL server"
        );
        let began = Instant::now();
        let timeout = READY_TIMEOUT.as_secs().to_string();
        // Relative paths on purpose: pg_ctl pastes -D and -l into a /bin/sh command line,
        // and the working directory is the data directory, so odd characters in the
        // absolute path can never break that command.
        let output = self.run(
            self.bin("pg_ctl"),
            [
                "start".as_ref(),
                "-D".as_ref(),
                PGDATA.as_ref(),
                "-l".as_ref(),
                LOG_FILE.as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                timeout.as_ref(),
            ],
        )?;
        if !output.status.success() {
            return Err(self.command_failed("pg_ctl start", &output, true));
        }
        tracing::info!(
            elapsed_ms = began.elapsed().as_millis() as u64,
            socket_dir = %self.socket_dir.display(),
            "embedded PostgreSQL server started"
        );
        Ok(())
    }

    /// Create the database unless it exists, via psql so the name is quoted by the server
    /// (`format('%I')`) rather than by us.
    fn ensure_database(&self) -> Result<(), EmbeddedError> {
        let psql = find_tool(&self.bin_dir, "psql")
            .ok_or_else(|| EmbeddedError::ToolNotFound { tool: "psql", bin_dir: self.bin_dir.clone() })?;
        let script = "SELECT format('CREATE DATABASE %I', :'db') \
                      WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \\gexec\n";
        let db_var = format!("db={}", self.database);
        let port = PORT.to_string();
        let args: [&OsStr; 14] = [
            "-X".as_ref(),
            "-q".as_ref(),
            "-v".as_ref(),
            "ON_ERROR_STOP=1".as_ref(),
            "-v".as_ref(),
            db_var.as_ref(),
            "-h".as_ref(),
            self.socket_dir.as_os_str(),
            "-p".as_ref(),
            port.as_ref(),
            "-U".as_ref(),
            SUPERUSER.as_ref(),
            "-d".as_ref(),
            "postgres".as_ref(),
        ];
        let deadline = Instant::now() + READY_TIMEOUT;
        let mut script_failures = 0;
        loop {
            let mut cmd = self.command(&psql);
            cmd.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = cmd.spawn().map_err(|source| EmbeddedError::Spawn { program: psql.clone(), source })?;
            if let Some(mut stdin) = child.stdin.take() {
                // A broken pipe means psql died early; its exit status tells why.
                let _ = stdin.write_all(script.as_bytes());
            }
            let output =
                child.wait_with_output().map_err(|source| EmbeddedError::Spawn { program: psql.clone(), source })?;
            match output.status.code() {
                Some(0) => return Ok(()),
                // Could not connect: a reused server may still be starting up (another
                // process's `pg_ctl start -w` has not returned yet), so wait while
                // pg_ctl still reports it running.
                Some(2) if Instant::now() < deadline && self.status().ok() == Some(ServerState::Running) => {
                    std::thread::sleep(Duration::from_millis(200));
                }
                // The script failed: a concurrent creator can make our CREATE fail after
                // our check; the next pass then finds the database and does nothing.
                Some(3) if script_failures == 0 => script_failures += 1,
                _ => return Err(self.command_failed("psql (create database)", &output, false)),
            }
        }
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A command for a PostgreSQL program, as the run-as user, from inside the data
    /// directory, with an environment that cannot redirect it elsewhere.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        // The run-as user may not be able to read the caller's working directory, and
        // relative -D / -l paths resolve against this.
        cmd.current_dir(&self.data_dir).stdin(Stdio::null());
        // PGDATA, PGHOST, PGPORT, PGUSER, PGOPTIONS, PGSERVICE... would all silently
        // override what we pass.
        for (key, _) in std::env::vars_os() {
            if key.as_encoded_bytes().starts_with(b"PG") {
                cmd.env_remove(&key);
            }
        }
        if self.run_as.switch {
            // std also drops root's supplementary groups when uid is set.
            cmd.uid(self.run_as.uid)
                .gid(self.run_as.gid)
                .env("HOME", &self.data_dir)
                .env("USER", &self.run_as.name)
                .env("LOGNAME", &self.run_as.name);
        }
        cmd
    }

    /// Run a program to completion, capturing its output.
    fn run<'a>(&self, program: PathBuf, args: impl IntoIterator<Item = &'a OsStr>) -> Result<Output, EmbeddedError> {
        let mut cmd = self.command(&program);
        cmd.args(args);
        tracing::debug!(program = %program.display(), "running");
        cmd.output().map_err(|source| EmbeddedError::Spawn { program, source })
    }

    /// Build a `CommandFailed` from a finished command's stderr (and the server log).
    fn command_failed(&self, command: &str, output: &Output, with_log: bool) -> EmbeddedError {
        let mut parts = Vec::new();
        let stderr = tail_lines(&String::from_utf8_lossy(&output.stderr), TAIL_LINES);
        if !stderr.is_empty() {
            parts.push(format!("stderr: {}", stderr.join(" | ")));
        }
        if with_log {
            let log = self.data_dir.join(LOG_FILE);
            let lines = read_log_tail(&log);
            if !lines.is_empty() {
                parts.push(format!("{}: {}", one_line(&log), lines.join(" | ")));
            }
        }
        EmbeddedError::CommandFailed { command: command.to_owned(), status: output.status, detail: parts.join("; ") }
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

/// Create (0700) and canonicalize the data directory; when root, make sure the run-as user
/// can reach it and owns it.
fn prepare_data_dir(requested: &Path, run_as: &RunAs) -> Result<PathBuf, EmbeddedError> {
    // Refuse before creating anything when the path as given is already unusable.
    check_path_text(&absolute(requested))?;
    if let Some(parent) = requested.parent().filter(|p| !p.as_os_str().is_empty()) {
        // Parents get the default mode: a 0700 parent owned by root would lock the
        // run-as user out.
        fs::create_dir_all(parent).map_err(|source| io_err("create directory", parent, source))?;
    }
    match DirBuilder::new().mode(0o700).create(requested) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(io_err("create directory", requested, source)),
    }
    let dir = fs::canonicalize(requested).map_err(|source| io_err("resolve", requested, source))?;
    if !dir.is_dir() {
        return Err(EmbeddedError::DataDirUnusable { path: dir, reason: "it is not a directory".to_owned() });
    }
    // Checked again on the resolved path: a symlink may have led somewhere awkward.
    check_path_text(&dir)?;
    if run_as.switch {
        check_ancestors(&dir, run_as)?;
        std::os::unix::fs::lchown(&dir, Some(run_as.uid), Some(run_as.gid))
            .map_err(|source| io_err("change owner of", &dir, source))?;
    }
    Ok(dir)
}

/// The socket directory has to fit in a connection string and in postgresql.conf.
fn check_path_text(dir: &Path) -> Result<(), EmbeddedError> {
    let reason = match dir.to_str() {
        // database_url() is a String.
        None => "its path is not valid UTF-8",
        // postgresql.conf strings cannot span lines.
        Some(text) if text.chars().any(char::is_control) => "its path contains control characters",
        // libpq and tokio-postgres split `host` on commas (multi-host lists), with no way
        // to escape one, so clients could never reach a socket under such a path.
        Some(text) if text.contains(',') => {
            "its path contains a comma, which PostgreSQL clients read as a host-list separator"
        }
        Some(_) => return Ok(()),
    };
    Err(EmbeddedError::DataDirUnusable { path: dir.to_path_buf(), reason: reason.to_owned() })
}

/// Every ancestor of `dir` must be searchable by the run-as user, or initdb and the
/// server fail later with a far less helpful "permission denied".
fn check_ancestors(dir: &Path, run_as: &RunAs) -> Result<(), EmbeddedError> {
    for ancestor in dir.ancestors().skip(1) {
        let meta = fs::metadata(ancestor).map_err(|source| io_err("inspect", ancestor, source))?;
        if !can_traverse(meta.mode(), meta.uid(), meta.gid(), run_as.uid, run_as.gid) {
            return Err(EmbeddedError::DataDirUnusable {
                path: dir.to_path_buf(),
                reason: format!(
                    "PostgreSQL runs as user `{}` (uid {}) because we are root, and it cannot enter {} (mode {:o}, owner uid {}, gid {}); pick a data directory under a path it can traverse, or run `chmod o+x {}`",
                    run_as.name,
                    run_as.uid,
                    one_line(ancestor),
                    meta.mode() & 0o7777,
                    meta.uid(),
                    meta.gid(),
                    one_line(ancestor),
                ),
            });
        }
    }
    Ok(())
}

/// Unix search permission for a user whose only group is `user_gid` (std drops
/// supplementary groups when switching users). Only the first matching class counts:
/// an owner without u+x is refused even if o+x is set.
fn can_traverse(mode: u32, owner: u32, group: u32, user_uid: u32, user_gid: u32) -> bool {
    if owner == user_uid {
        mode & 0o100 != 0
    } else if group == user_gid {
        mode & 0o010 != 0
    } else {
        mode & 0o001 != 0
    }
}

/// The kernel limits socket paths; PostgreSQL would only say so in its log.
fn check_socket_path(data_dir: &Path, socket_dir: &Path) -> Result<(), EmbeddedError> {
    let socket = socket_dir.join(format!(".s.PGSQL.{PORT}"));
    let len = socket.as_os_str().len();
    if len > MAX_SOCKET_PATH {
        return Err(EmbeddedError::DataDirUnusable {
            path: data_dir.to_path_buf(),
            reason: format!(
                "the socket path {} is {len} bytes, over the {MAX_SOCKET_PATH}-byte limit for Unix sockets; use a shorter data directory path",
                one_line(&socket)
            ),
        });
    }
    Ok(())
}

/// Recursively lchown everything under `root` (symlinks themselves, never their targets).
fn chown_tree(root: &Path, uid: u32, gid: u32) -> Result<(), EmbeddedError> {
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let meta = fs::symlink_metadata(&path).map_err(|source| io_err("inspect", &path, source))?;
        if meta.uid() != uid || meta.gid() != gid {
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid))
                .map_err(|source| io_err("change owner of", &path, source))?;
        }
        if meta.is_dir() {
            let entries = fs::read_dir(&path).map_err(|source| io_err("list", &path, source))?;
            for entry in entries {
                let entry = entry.map_err(|source| io_err("list", &path, source))?;
                pending.push(entry.path());
            }
        }
    }
    Ok(())
}

fn validate_database_name(name: &str) -> Result<(), EmbeddedError> {
    let reason = if name.is_empty() {
        "it is empty"
    } else if name.len() > MAX_IDENTIFIER_BYTES {
        "it is longer than 63 bytes, which PostgreSQL would silently truncate"
    } else if name.chars().any(char::is_control) {
        "it contains control characters"
    } else {
        return Ok(());
    };
    Err(EmbeddedError::InvalidDatabaseName { name: name.to_owned(), reason })
}

/// Contents of `switchboard.conf`: no TCP at all, socket in our run directory.
fn settings_file(socket_dir: &str) -> String {
    // unix_socket_directories is a comma-separated list in which a double-quoted entry
    // may contain commas and spaces ("" for a quote); the whole value is then a
    // postgresql.conf string ('' for a quote, \\ for a backslash).
    let list_entry = format!("\"{}\"", socket_dir.replace('"', "\"\""));
    format!(
        "# Written by Switchboard before every start of its private cluster; edits are overwritten.\n\
         listen_addresses = ''\n\
         unix_socket_directories = {}\n\
         port = {PORT}\n",
        conf_string(&list_entry)
    )
}

/// Quote a postgresql.conf string value.
fn conf_string(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
}

/// Quote a libpq key/value connection string value when needed. libpq and
/// tokio-postgres both read `'...'` with backslash escapes.
fn conninfo_value(value: &str) -> String {
    let plain = !value.is_empty() && !value.chars().any(|c| c.is_whitespace() || c == '\'' || c == '\\');
    if plain { value.to_owned() } else { format!("'{}'", value.replace('\\', "\\\\").replace('\'', "\\'")) }
}

/// `pg_config --bindir`, if pg_config is on PATH and answers.
fn pg_config_bindir() -> Option<PathBuf> {
    let output = Command::new("pg_config").arg("--bindir").stdin(Stdio::null()).stderr(Stdio::null()).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let dir = text.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

/// `<root>/<version>/bin` directories, highest version first (`15` > `9.6`).
fn versioned_bin_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(root) else {
        return Vec::new();
    };
    let mut versions: Vec<(Vec<u32>, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let version = parse_version(name.to_str()?)?;
            Some((version, entry.path().join("bin")))
        })
        .collect();
    versions.sort_by(|a, b| b.0.cmp(&a.0));
    versions.into_iter().map(|(_, dir)| dir).collect()
}

fn parse_version(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

fn has_server_binaries(dir: &Path) -> bool {
    is_executable(&dir.join("initdb")) && is_executable(&dir.join("pg_ctl"))
}

fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.mode() & 0o111 != 0)
}

/// A client tool, preferably from the server's own directory so versions match.
fn find_tool(bin_dir: &Path, name: &str) -> Option<PathBuf> {
    let own = bin_dir.join(name);
    if is_executable(&own) {
        return Some(own);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|path| is_executable(path))
}

fn absolute(path: &Path) -> PathBuf {
    fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf())
}

fn dir_has_entries(path: &Path) -> bool {
    fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_some())
}

fn remove_dir_all(path: &Path) -> Result<(), EmbeddedError> {
    fs::remove_dir_all(path).map_err(|source| io_err("remove", path, source))
}

fn io_err(action: &'static str, path: &Path, source: io::Error) -> EmbeddedError {
    EmbeddedError::Io { action, path: path.to_path_buf(), source }
}

/// Last `n` non-blank lines, trimmed.
fn tail_lines(text: &str, n: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].iter().map(|line| line.to_string()).collect()
}

/// The last lines of the server log, reading only its end (it can grow large).
fn read_log_tail(path: &Path) -> Vec<String> {
    const WINDOW: u64 = 16 * 1024;
    let Ok(mut file) = fs::File::open(path) else {
        return Vec::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > WINDOW && file.seek(SeekFrom::Start(len - WINDOW)).is_err() {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    tail_lines(&String::from_utf8_lossy(&bytes), TAIL_LINES)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("switchboard-embedded-unit-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn binaries_not_found_is_one_line_naming_package_and_variable() {
        let dir = scratch_dir("nobin");
        let err = EmbeddedPostgres::locate_binaries(Some(&dir)).unwrap_err();
        let text = err.to_string();
        fs::remove_dir_all(&dir).unwrap();
        assert!(
            matches!(err, EmbeddedError::BinariesNotFound { ref searched } if searched.as_slice() == std::slice::from_ref(&dir))
        );
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains("`postgresql`"), "{text}");
        assert!(text.contains("SWITCHBOARD_DATABASE_URL"), "{text}");
        assert!(text.contains(&dir.display().to_string()), "{text}");
    }

    #[test]
    fn binaries_not_found_display_is_exact() {
        let err = EmbeddedError::BinariesNotFound { searched: vec![PathBuf::from("/a/bin"), PathBuf::from("/b\nc")] };
        assert_eq!(
            err.to_string(),
            "no PostgreSQL server binaries found (looked in: /a/bin, /b?c); install the `postgresql` package or set SWITCHBOARD_DATABASE_URL to an existing server"
        );
    }

    #[test]
    fn override_with_both_binaries_is_accepted() {
        let dir = scratch_dir("fakebin");
        for name in ["initdb", "pg_ctl"] {
            let path = dir.join(name);
            fs::write(&path, "#!/bin/sh\n").unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let found = EmbeddedPostgres::locate_binaries(Some(&dir));
        let expected = fs::canonicalize(&dir).unwrap();
        // Not executable -> not a binary.
        fs::set_permissions(dir.join("pg_ctl"), fs::Permissions::from_mode(0o644)).unwrap();
        let refused = EmbeddedPostgres::locate_binaries(Some(&dir));
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found.unwrap(), expected);
        assert!(matches!(refused, Err(EmbeddedError::BinariesNotFound { .. })));
    }

    #[test]
    fn versions_sort_numerically() {
        let dir = scratch_dir("versions");
        for v in ["9.6", "15", "10", "notaversion", "16"] {
            fs::create_dir_all(dir.join(v).join("bin")).unwrap();
        }
        let found = versioned_bin_dirs(&dir);
        fs::remove_dir_all(&dir).unwrap();
        let names: Vec<_> =
            found.iter().map(|p| p.parent().unwrap().file_name().unwrap().to_str().unwrap().to_owned()).collect();
        assert_eq!(names, ["16", "15", "10", "9.6"]);
    }

    #[test]
    fn conninfo_values_are_quoted_only_when_needed() {
        assert_eq!(conninfo_value("/tmp/x/run"), "/tmp/x/run");
        assert_eq!(conninfo_value("/tmp/a b/run"), "'/tmp/a b/run'");
        assert_eq!(conninfo_value(r"it's\x"), r"'it\'s\\x'");
        assert_eq!(conninfo_value(""), "''");
    }

    #[test]
    fn settings_quote_socket_dir_for_list_and_conf() {
        let text = settings_file(r#"/d/it's, "q"\b"#);
        assert!(text.contains("listen_addresses = ''\n"));
        assert!(text.contains(r#"unix_socket_directories = '"/d/it''s, ""q""\\b"'"#), "{text}");
        assert!(text.contains("port = 5432\n"));
    }

    #[test]
    fn traversal_follows_the_first_matching_class() {
        // owner match: only user bits count
        assert!(can_traverse(0o700, 101, 0, 101, 104));
        assert!(!can_traverse(0o011, 101, 0, 101, 104));
        // group match
        assert!(can_traverse(0o750, 0, 104, 101, 104));
        assert!(!can_traverse(0o701, 0, 104, 101, 104));
        // others
        assert!(can_traverse(0o711, 0, 0, 101, 104));
        assert!(!can_traverse(0o700, 0, 0, 101, 104));
    }

    #[test]
    fn ancestor_check_names_the_blocking_directory() {
        let top = scratch_dir("ancestors");
        let locked = top.join("locked");
        fs::create_dir(&locked).unwrap();
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o700)).unwrap();
        let data = locked.join("data");
        fs::create_dir(&data).unwrap();
        // A user that owns nothing here and shares no group with the owner.
        let stranger = RunAs { name: "stranger".to_owned(), uid: 4_000_000_001, gid: 4_000_000_001, switch: true };
        let result = check_ancestors(&data, &stranger);
        fs::remove_dir_all(&top).unwrap();
        let err = result.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, EmbeddedError::DataDirUnusable { .. }));
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains(&format!("cannot enter {}", locked.display())), "{text}");
    }

    #[test]
    fn awkward_data_dir_paths_are_refused() {
        for bad in ["/tmp/a,b/data", "/tmp/line\nbreak"] {
            let err = check_path_text(Path::new(bad)).unwrap_err();
            assert!(matches!(err, EmbeddedError::DataDirUnusable { .. }));
            assert!(!err.to_string().contains('\n'), "{err}");
        }
        assert!(check_path_text(Path::new("/tmp/it's a $dir/data")).is_ok());
    }

    #[test]
    fn database_names_are_validated() {
        assert!(validate_database_name("switchboard").is_ok());
        assert!(validate_database_name("with space-and\"quote").is_ok());
        assert!(validate_database_name("").is_err());
        assert!(validate_database_name(&"x".repeat(64)).is_err());
        assert!(validate_database_name("a\nb").is_err());
    }

    #[test]
    fn long_socket_paths_are_refused() {
        let long = PathBuf::from(format!("/{}", "d".repeat(120)));
        let err = check_socket_path(&long, &long.join(RUN_DIR)).unwrap_err();
        assert!(err.to_string().contains("over the"), "{err}");
        assert!(check_socket_path(Path::new("/tmp/x"), Path::new("/tmp/x/run")).is_ok());
    }

    #[test]
    fn command_failed_is_one_line() {
        use std::os::unix::process::ExitStatusExt;
        let err = EmbeddedError::CommandFailed {
            command: "pg_ctl start".to_owned(),
            status: ExitStatus::from_raw(1 << 8),
            detail: "stderr: pg_ctl: could not start server | Examine the log output.".to_owned(),
        };
        assert_eq!(
            err.to_string(),
            "`pg_ctl start` failed (exit status: 1): stderr: pg_ctl: could not start server | Examine the log output."
        );
    }

    #[test]
    fn tails_skip_blank_lines() {
        assert_eq!(tail_lines("a\n\n b \nc\nd\ne\nf\n\n", 3), ["d", "e", "f"]);
        assert!(tail_lines("", 3).is_empty());
    }
}
