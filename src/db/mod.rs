//! The database: connection pool, embedded migrations, the schema and row types.

pub mod advisory;
pub mod embedded;
pub mod failure;
pub mod listen;
mod migrate;
pub mod models;
pub mod prepared;
pub mod schema;
mod target;

use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::{Hook, HookError, Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod};
use diesel_migrations::{EmbeddedMigrations, embed_migrations};

pub use migrate::{connect, run_migrations};

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
    /// The database could not be reached (or refused us).
    #[error("cannot connect to the database at {target}: {cause}")]
    Connect {
        /// Hosts, ports, database and user; never the password.
        target: String,
        /// Why, with every underlying cause.
        cause: String,
    },
}

/// Builds a pool of at most `max_size` connections. Connections open lazily.
pub fn pool(database_url: &str, max_size: usize) -> Result<DbPool, DbSetupError> {
    // Fast recycling: a checked-out connection is not pinged first (that would be a
    // round trip per store call); a dead one fails its first statement instead (503,
    // see `failure`), and the manager discards it at the next checkout because its
    // client reports closed or its transaction manager broken.
    let mut config = ManagerConfig::default();
    config.recycling_method = RecyclingMethod::Fast;
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(database_url, config);
    Pool::builder(manager)
        .max_size(max_size)
        .wait_timeout(Some(std::time::Duration::from_secs(10)))
        .create_timeout(Some(std::time::Duration::from_secs(10)))
        .runtime(deadpool::Runtime::Tokio1)
        // Statements kept prepared before a schema change fail forever on their
        // connection ("cached plan must not change result type"): once one has, every
        // connection that old is dropped at checkout, with its statement cache.
        .pre_recycle(Hook::sync_fn(|_, metrics| match failure::stale(metrics.created) {
            true => Err(HookError::message("prepared before a schema change")),
            false => Ok(()),
        }))
        .build()
        .map_err(|e| DbSetupError::Pool(e.to_string()))
}
