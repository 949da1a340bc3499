//! What the embedded default keeps in its data dir beside the database: the generated
//! master key (`secret.key`) and the demo credentials (`demo.json`).
//!
//! Both are written readable by their owner only (0600), in one step (a temporary file
//! renamed or linked into place, so a reader never sees half a file), and read back
//! only while they still are: a file that group or others may read, that cannot be
//! read, or whose content is not what we wrote stops start-up with one line naming it.
//! Neither is ever made with `SWITCHBOARD_DATABASE_URL` set (production).

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

use crate::config::SecretKey;

/// The generated master key's file in the data dir.
pub const KEY_FILE: &str = "secret.key";
/// The demo credentials' file in the data dir.
pub const DEMO_FILE: &str = "demo.json";

/// Why a kept file cannot be used; each displays as one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum KeptFileError {
    /// Group or others may read it: what it holds is no longer private to its owner.
    #[error(
        "{path} is readable by group or others (mode {mode:03o}); it holds {what} and must be readable by its \
         owner only: run `chmod 600 {path}` (and consider the secret seen)"
    )]
    Exposed {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
        /// What it holds.
        what: &'static str,
    },
    /// It exists and could not be read.
    #[error("cannot read {path}: {source}")]
    Unreadable {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
    /// It reads, but not as what we wrote.
    #[error("{path} is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong and what to do.
        reason: String,
    },
    /// It could not be written.
    #[error("cannot write {path}: {source}")]
    Unwritable {
        /// The file.
        path: String,
        /// The cause.
        source: io::Error,
    },
}

/// A path for a one-line message.
fn shown(path: &Path) -> String {
    path.display().to_string().chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The file's text, `None` when there is no such file; refused when group or others
/// may read it.
fn read_private(path: &Path, what: &'static str) -> Result<Option<String>, KeptFileError> {
    let meta = match fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(KeptFileError::Unreadable { path: shown(path), source }),
    };
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(KeptFileError::Exposed { path: shown(path), mode, what });
    }
    let bytes = fs::read(path).map_err(|source| KeptFileError::Unreadable { path: shown(path), source })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| KeptFileError::Corrupt { path: shown(path), reason: "it is not text".into() })
}

/// Writes `contents` to `path` readable by its owner only, in one step. `replace`:
/// over whatever is there (rename); otherwise only if there is no file yet (link), and
/// `false` when another process wrote it first.
fn write_private(path: &Path, contents: &str, replace: bool) -> Result<bool, KeptFileError> {
    let unwritable = |source| KeptFileError::Unwritable { path: shown(path), source };
    let mut suffix = [0u8; 8];
    rand::thread_rng().fill_bytes(&mut suffix);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", hex::encode(suffix)));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&temporary)
        .and_then(|mut f| f.write_all(contents.as_bytes()).and_then(|()| f.sync_all()));
    if let Err(source) = written {
        let _ = fs::remove_file(&temporary);
        return Err(unwritable(source));
    }
    let placed = if replace { fs::rename(&temporary, path) } else { fs::hard_link(&temporary, path) };
    let _ = fs::remove_file(&temporary);
    match placed {
        Ok(()) => Ok(true),
        Err(e) if !replace && e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(source) => Err(unwritable(source)),
    }
}

/// The master key kept at `path`, if the file exists; refused (naming the file) when
/// it is readable by others, unreadable, or does not hold a 32-byte key.
pub fn existing_key(path: &Path) -> Result<Option<SecretKey>, KeptFileError> {
    let Some(text) = read_private(path, "the master key that seals this instance's secrets")? else {
        return Ok(None);
    };
    SecretKey::decode(&text).map(Some).ok_or_else(|| KeptFileError::Corrupt {
        path: shown(path),
        reason: "it does not hold a 32-byte key (base64 or hex); restore it from a backup, since the secrets \
                 sealed under it cannot be opened without it"
            .into(),
    })
}

/// The master key kept at `path`: the one there, or a new random one written there
/// first (when two processes race, both end up with the one written first).
pub fn kept_key(path: &Path) -> Result<SecretKey, KeptFileError> {
    if let Some(key) = existing_key(path)? {
        return Ok(key);
    }
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    if write_private(path, &format!("{}\n", STANDARD.encode(bytes)), false)? {
        tracing::info!(path = %path.display(), "generated the embedded default's master key");
        return Ok(SecretKey(bytes));
    }
    existing_key(path)?.ok_or_else(|| KeptFileError::Corrupt { path: shown(path), reason: "it vanished".into() })
}

/// The demo credentials kept at `path`, if the file exists.
pub fn read_demo<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, KeptFileError> {
    let Some(text) = read_private(path, "the demo's operator token, agent token and Board password")? else {
        return Ok(None);
    };
    serde_json::from_str(&text).map(Some).map_err(|e| KeptFileError::Corrupt {
        path: shown(path),
        reason: format!("{e}; run `switchboard serve --reset-demo` to mint new demo credentials"),
    })
}

/// Keeps the demo credentials at `path` (replacing what was there).
pub fn write_demo<T: serde::Serialize>(path: &Path, demo: &T) -> Result<(), KeptFileError> {
    let text = serde_json::to_string_pretty(demo)
        .map_err(|e| KeptFileError::Unwritable { path: shown(path), source: io::Error::other(e.to_string()) })?;
    write_private(path, &format!("{text}\n"), true).map(|_| ())
}

/// Where the master key in force comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// `SWITCHBOARD_SECRET_ENCRYPTION_KEY` (or `--secret-encryption-key`).
    Variable,
    /// The file the embedded default keeps in its data dir.
    File(PathBuf),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Variable => f.write_str("SWITCHBOARD_SECRET_ENCRYPTION_KEY"),
            KeySource::File(path) => write!(f, "the key in {}", shown(path)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("sb-kept-{}-{}", std::process::id(), rand::random::<u64>()));
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_generated_key_is_owner_only_and_read_back_the_same() {
        let path = dir().join(KEY_FILE);
        let first = kept_key(&path).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(kept_key(&path).unwrap().0, first.0, "the same key on the next start");
    }

    #[test]
    fn a_key_file_others_can_read_or_that_holds_no_key_is_refused_naming_it() {
        let path = dir().join(KEY_FILE);
        kept_key(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let err = existing_key(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()) && err.contains("644"), "{err}");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        fs::write(&path, "not a key\n").unwrap();
        let err = existing_key(&path).unwrap_err().to_string();
        assert!(err.contains(&path.display().to_string()) && err.contains("corrupt"), "{err}");
    }
}
