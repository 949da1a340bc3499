//! The cluster's life cycle through PostgreSQL's own programs: initdb, `pg_ctl status` and
//! `start`, and creating the database with psql.

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

use super::binaries::find_tool;
use super::data_dir::remove_dir_all;
use super::{
    CONF_FILE, EmbeddedError, EmbeddedPostgres, INIT_PREFIX, LOG_FILE, PGDATA, PORT, READY_TIMEOUT, SUPERUSER, io_err,
};

/// Whether the server is up, as reported by `pg_ctl status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ServerState {
    Running,
    Stopped,
}

impl EmbeddedPostgres {
    /// Run initdb into a scratch directory and move it into place.
    pub(super) fn initdb(&self) -> Result<(), EmbeddedError> {
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

    /// `pg_ctl status`: exit 0 running, 3 not running; anything else is an error.
    pub(super) fn status(&self) -> Result<ServerState, EmbeddedError> {
        let output = self.run(self.bin("pg_ctl"), ["status", "-D", PGDATA].map(OsStr::new))?;
        match output.status.code() {
            Some(0) => Ok(ServerState::Running),
            Some(3) => Ok(ServerState::Stopped),
            _ => Err(self.command_failed("pg_ctl status", &output, false)),
        }
    }

    /// `pg_ctl start -w`, waiting until the server accepts connections.
    pub(super) fn pg_ctl_start(&self) -> Result<(), EmbeddedError> {
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
    pub(super) fn ensure_database(&self) -> Result<(), EmbeddedError> {
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
}
