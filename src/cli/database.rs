//! Which database a command talks to: the configured URL, or the embedded cluster.

use crate::config::Settings;
use crate::db::embedded::{EmbeddedError, EmbeddedPostgres};

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

impl Database {
    /// Uses `SWITCHBOARD_DATABASE_URL`, or brings up (or reuses) the embedded cluster
    /// under `SWITCHBOARD_DATA_DIR`. Blocking.
    pub fn open(settings: &Settings) -> Result<Self, EmbeddedError> {
        if let Some(url) = &settings.database_url {
            return Ok(Database { url: url.clone(), embedded: None });
        }
        let pg = EmbeddedPostgres::start(&settings.data_dir, settings.pg_bin_dir.as_deref(), EMBEDDED_DATABASE)?;
        Ok(Database { url: pg.database_url(), embedded: Some(pg) })
    }

    /// Whether this is the embedded default (where the demo is seeded).
    pub fn is_embedded(&self) -> bool {
        self.embedded.is_some()
    }
}
