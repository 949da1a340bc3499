//! Preparing and checking the data directory: creating it, whether the run-as user can
//! reach it, who owns it, the socket directory and path, and what its path may contain.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::process::RunAs;
use super::{EmbeddedError, EmbeddedPostgres, MAX_SOCKET_PATH, PGDATA, PORT, io_err, one_line};

/// Create (0700) and canonicalize the data directory; when root, make sure the run-as user
/// can reach it and owns it.
pub(super) fn prepare_data_dir(requested: &Path, run_as: &RunAs) -> Result<PathBuf, EmbeddedError> {
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
pub(super) fn check_path_text(dir: &Path) -> Result<(), EmbeddedError> {
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
pub(super) fn check_ancestors(dir: &Path, run_as: &RunAs) -> Result<(), EmbeddedError> {
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
pub(super) fn can_traverse(mode: u32, owner: u32, group: u32, user_uid: u32, user_gid: u32) -> bool {
    if owner == user_uid {
        mode & 0o100 != 0
    } else if group == user_gid {
        mode & 0o010 != 0
    } else {
        mode & 0o001 != 0
    }
}

/// The kernel limits socket paths; PostgreSQL would only say so in its log.
pub(super) fn check_socket_path(data_dir: &Path, socket_dir: &Path) -> Result<(), EmbeddedError> {
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

impl EmbeddedPostgres {
    /// When root, hand anything in the data directory not owned by the run-as user over to
    /// it: PostgreSQL refuses a cluster owned by another user, which happens if the
    /// run-as user changed (e.g. a `postgres` user was created after a first run as
    /// `nobody`).
    pub(super) fn fix_ownership(&self) -> Result<(), EmbeddedError> {
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
    pub(super) fn prepare_socket_dir(&self) -> Result<(), EmbeddedError> {
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
}

pub(super) fn absolute(path: &Path) -> PathBuf {
    fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf())
}

pub(super) fn dir_has_entries(path: &Path) -> bool {
    fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_some())
}

pub(super) fn remove_dir_all(path: &Path) -> Result<(), EmbeddedError> {
    fs::remove_dir_all(path).map_err(|source| io_err("remove", path, source))
}
