//! The database: connection pool, embedded migrations, the schema and row types.

pub mod embedded;
pub mod listen;
pub mod models;
pub mod prepared;
pub mod schema;

use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

/// The migrations in `migrations/`, compiled into the binary.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");

/// A pool of async PostgreSQL connections.
pub type DbPool = Pool<AsyncPgConnection>;
/// One connection checked out of the pool.
pub type DbConn = Object<AsyncPgConnection>;

/// Failure to reach the database or bring its schema up to date.
#[derive(Debug, thiserror::Error)]
pub enum DbSetupError {
    /// The pool could not be built.
    #[error("could not build the database pool: {0}")]
    Pool(String),
    /// A migration failed.
    #[error("database migration failed: {0}")]
    Migration(String),
}

/// Builds a pool of at most `max_size` connections. Connections open lazily.
pub fn pool(database_url: &str, max_size: usize) -> Result<DbPool, DbSetupError> {
    // Fast recycling: a checked-out connection is not pinged first (that would be a
    // round trip per store call); a dead one fails its first statement instead, which
    // the pool then discards.
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(database_url, config);
    Pool::builder(manager)
        .max_size(max_size)
        .wait_timeout(Some(std::time::Duration::from_secs(10)))
        .create_timeout(Some(std::time::Duration::from_secs(10)))
        .runtime(deadpool::Runtime::Tokio1)
        .build()
        .map_err(|e| DbSetupError::Pool(e.to_string()))
}

/// Runs every pending embedded migration. Blocking work runs on a blocking thread,
/// because diesel's migration harness is synchronous.
pub async fn run_migrations(database_url: &str) -> Result<Vec<String>, DbSetupError> {
    let url = database_url.to_owned();
    tokio::task::spawn_blocking(move || {
        use diesel::Connection;
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url)
            .map_err(|e| DbSetupError::Migration(e.to_string()))?;
        let applied = conn.run_pending_migrations(MIGRATIONS).map_err(|e| DbSetupError::Migration(e.to_string()))?;
        Ok(applied.iter().map(|m| m.to_string()).collect())
    })
    .await
    .map_err(|e| DbSetupError::Migration(e.to_string()))?
}
