//! Which database a command talks to: the configured URL, or the embedded cluster; and
//! the master key in force with it.

use std::path::{Path, PathBuf};

use super::kept::{self, KeptFileError, KeySource};
use crate::config::{SecretKey, Settings};
use crate::db::embedded::{EmbeddedError, EmbeddedPostgres};
use crate::vault::Vault;

/// The database in use; holding it keeps an embedded cluster running (and dropping it
/// stops the cluster if this process started it).
pub struct Database {
    /// Connection string.
    pub url: String,
    /// The embedded cluster, when one is in use.
    pub embedded: Option<EmbeddedPostgres>,
}

/// Name of the embedded cluster's database.
pub const EMBEDDED_DATABASE: &str = "switchboard";

/// Why no database (or no key) can be used; each displays as one line.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// The embedded cluster could not be brought up.
    #[error(transparent)]
    Embedded(#[from] EmbeddedError),
    /// A command other than `serve` found neither a URL nor an embedded database: it
    /// creates none (an empty one would answer every question with "not found").
    #[error(
        "no database: SWITCHBOARD_DATABASE_URL is not set and there is no embedded database in {} \
         (`switchboard serve` creates one there); set SWITCHBOARD_DATABASE_URL, or run from the directory \
         where `serve` ran, or set SWITCHBOARD_DATA_DIR to its data dir",
        .0.display()
    )]
    NoDatabase(PathBuf),
    /// `SWITCHBOARD_DIRECT_DATABASE_URL` names PostgreSQL itself beside a database URL
    /// that may go through a pooler; the embedded database has neither.
    #[error(
        "SWITCHBOARD_DIRECT_DATABASE_URL is set without SWITCHBOARD_DATABASE_URL: it names PostgreSQL itself \
         beside a database URL that may go through a pooler, and the embedded database has neither (set both, \
         or neither)"
    )]
    DirectWithoutUrl,
    /// A file the embedded default keeps cannot be used.
    #[error(transparent)]
    Kept(#[from] KeptFileError),
    /// The stored secrets were sealed under another key than the one in force.
    #[error("{0}")]
    KeyMismatch(String),
}

impl Database {
    /// Uses `SWITCHBOARD_DATABASE_URL`, or brings up (or reuses) the embedded cluster
    /// under `SWITCHBOARD_DATA_DIR`; with `create` false (every command but `serve`) an
    /// embedded cluster is only reused, never created. Blocking.
    pub fn open(settings: &Settings, create: bool) -> Result<Self, DatabaseError> {
        if settings.direct_database_url.is_some() && settings.database_url.is_none() {
            return Err(DatabaseError::DirectWithoutUrl);
        }
        if let Some(url) = &settings.database_url {
            return Ok(Database { url: url.clone(), embedded: None });
        }
        if !create && !EmbeddedPostgres::exists_in(&settings.data_dir) {
            return Err(DatabaseError::NoDatabase(absolute(&settings.data_dir)));
        }
        let pg = EmbeddedPostgres::start(&settings.data_dir, settings.pg_bin_dir.as_deref(), EMBEDDED_DATABASE)?;
        Ok(Database { url: pg.database_url(), embedded: Some(pg) })
    }

    /// Whether this is the embedded default (where the demo is seeded).
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }

    /// Where the embedded default keeps its files (`None` with a configured URL).
    pub fn data_dir(&self) -> Option<&Path> {
        self.embedded.as_ref().map(EmbeddedPostgres::data_dir)
    }

    /// The master key in force and where it comes from: the variable when set; else, on
    /// the embedded default, the key kept in its data dir (generated on first use);
    /// else none (production without the variable stores no secret).
    pub fn key(&self, settings: &Settings) -> Result<Option<(SecretKey, KeySource)>, DatabaseError> {
        if let Some(key) = &settings.secret_encryption_key {
            return Ok(Some((key.clone(), KeySource::Variable)));
        }
        let Some(dir) = self.data_dir() else {
            return Ok(None);
        };
        let path = dir.join(kept::KEY_FILE);
        Ok(Some((kept::kept_key(&path)?, KeySource::File(path))))
    }

    /// On the embedded default, refuses a key in force that does not open the secrets
    /// already stored (see `db::embedded::sealed`), naming the key that does when it is
    /// the kept one. The database must be migrated.
    pub async fn check_key(&self, key: &SecretKey, source: &KeySource) -> Result<(), DatabaseError> {
        let Some(dir) = self.data_dir() else {
            return Ok(());
        };
        let stored =
            crate::db::embedded::sealed::one_sealed_secret(&self.url).await.map_err(DatabaseError::KeyMismatch)?;
        let Some(stored) = stored else {
            return Ok(());
        };
        let opens = |k: &SecretKey| Vault::new(Some(k)).open(&stored).is_ok();
        if opens(key) {
            return Ok(());
        }
        let file = dir.join(kept::KEY_FILE);
        let sealed_under = match source {
            // The kept file is only a candidate here: an unusable one names nothing.
            KeySource::Variable => match kept::existing_key(&file) {
                Ok(Some(k)) if opens(&k) => KeySource::File(file).to_string(),
                _ => "another key".to_owned(),
            },
            KeySource::File(_) => {
                "another key (SWITCHBOARD_SECRET_ENCRYPTION_KEY as an earlier start set it, or a secret.key since \
                 lost or replaced: restore it from a backup)"
                    .to_owned()
            }
        };
        Err(DatabaseError::KeyMismatch(format!(
            "secrets in this database were sealed under {sealed_under}, but {source} is in force; start with the \
             key that sealed them (unset SWITCHBOARD_SECRET_ENCRYPTION_KEY to use the kept key file, or set it to \
             the key that sealed them)"
        )))
    }
}

/// `path` made absolute without touching the file system beyond reading the current
/// directory.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
