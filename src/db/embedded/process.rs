//! Running PostgreSQL programs: as which user, from where, with what environment, and
//! how their failures are reported.

use std::ffi::OsStr;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use nix::unistd::{User, getegid, geteuid};

use super::{EmbeddedError, EmbeddedPostgres, LOG_FILE, TAIL_LINES, one_line};

/// The user every PostgreSQL program runs as.
#[derive(Debug, Clone)]
pub(super) struct RunAs {
    pub(super) name: String,
    pub(super) uid: u32,
    pub(super) gid: u32,
    /// True when we are root and must switch to this user for every child process;
    /// false when it is simply the current user.
    pub(super) switch: bool,
}

impl RunAs {
    /// PostgreSQL refuses to run as root, so root hands the cluster to `postgres` (the
    /// conventional owner, so file ownership looks familiar) or `nobody`; anyone else
    /// runs it as themselves.
    pub(super) fn resolve() -> Result<Self, EmbeddedError> {
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

impl EmbeddedPostgres {
    pub(super) fn bin(&self, name: &str) -> PathBuf {
        self.bin_dir.join(name)
    }

    /// A command for a PostgreSQL program, as the run-as user, from inside the data
    /// directory, with an environment that cannot redirect it elsewhere.
    pub(super) fn command(&self, program: &Path) -> Command {
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
    pub(super) fn run<'a>(
        &self,
        program: PathBuf,
        args: impl IntoIterator<Item = &'a OsStr>,
    ) -> Result<Output, EmbeddedError> {
        let mut cmd = self.command(&program);
        cmd.args(args);
        tracing::debug!(program = %program.display(), "running");
        cmd.output().map_err(|source| EmbeddedError::Spawn { program, source })
    }

    /// Build a `CommandFailed` from a finished command's stderr (and the server log).
    pub(super) fn command_failed(&self, command: &str, output: &Output, with_log: bool) -> EmbeddedError {
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

/// Last `n` non-blank lines, trimmed.
pub(super) fn tail_lines(text: &str, n: usize) -> Vec<String> {
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
