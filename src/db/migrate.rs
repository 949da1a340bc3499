//! Bringing the schema up to date, safely from several instances at once.
//!
//! Migrations run under a session advisory lock held on the migrating connection
//! ([`advisory::MIGRATIONS`]): replicas started together, `switchboard migrate` and admin
//! commands queue on it, and each finds nothing left to do once it gets the lock (diesel
//! reads the applied versions after we hold it). Versions in the database that this
//! binary does not know (a newer release migrated it) are ignored, not refused, so an
//! older binary still starts during a rolling upgrade.

use diesel::RunQueryDsl;
use diesel::sql_types::BigInt;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::MigrationHarness;

use super::statement::statement;
use super::{DbSetupError, MIGRATIONS, advisory, target};

/// `pg_try_advisory_lock` / `pg_advisory_lock` answer a boolean / void row.
#[derive(diesel::QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    locked: bool,
}

/// How often an instance waiting for another's migrations asks for the lock again.
const MIGRATION_LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// Connects to `database_url`; a failure names the host, port, database and user (never
/// the password) and the underlying reason.
pub async fn connect(database_url: &str) -> Result<AsyncPgConnection, DbSetupError> {
    let config: tokio_postgres::Config = database_url.parse().map_err(|e| DbSetupError::Connect {
        target: "the configured database".into(),
        cause: target::cause_chain(&e),
    })?;
    let (client, connection) = config
        .connect(tokio_postgres::NoTls)
        .await
        .map_err(|e| DbSetupError::Connect { target: target::describe(&config), cause: target::cause_chain(&e) })?;
    AsyncPgConnection::try_from_client_and_connection(client, connection)
        .await
        .map_err(|e| DbSetupError::Connect { target: target::describe(&config), cause: e.to_string() })
}

/// Runs every pending embedded migration under the migration lock; returns the versions
/// this call applied (none when another instance got there first).
pub async fn run_migrations(database_url: &str) -> Result<Vec<String>, DbSetupError> {
    let conn = connect(database_url).await?;
    // diesel's migration harness is synchronous: it runs on a blocking thread, driving
    // the async connection through the runtime it was made on.
    tokio::task::spawn_blocking(move || {
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(conn);
        let failed = |e: diesel::result::Error| DbSetupError::Migration(e.to_string());
        // Waiters poll with short statements instead of blocking in `pg_advisory_lock`:
        // a session blocked there is a transaction whose snapshot a `CREATE INDEX
        // CONCURRENTLY` in the migrating session must wait out, and the two then
        // deadlock (seen with three replicas starting together).
        let mut told = false;
        loop {
            let got: Locked = advisory::TRY_LOCK
                .query()
                .bind::<BigInt, _>(advisory::MIGRATIONS)
                .get_result(&mut conn)
                .map_err(failed)?;
            if got.locked {
                break;
            }
            if !told {
                tracing::info!("another instance is migrating the database; waiting for it to finish");
                told = true;
            }
            std::thread::sleep(MIGRATION_LOCK_POLL);
        }
        let applied = conn
            .run_pending_migrations(MIGRATIONS)
            .map(|versions| versions.iter().map(|v| v.to_string()).collect::<Vec<_>>())
            .map_err(|e| DbSetupError::Migration(e.to_string()))
            .and_then(|applied| repair_invalid_indexes(&mut conn).map(|()| applied).map_err(failed));
        // Closing the connection would release the lock too; unlocking says so at once.
        let _ = advisory::UNLOCK.query().bind::<BigInt, _>(advisory::MIGRATIONS).execute(&mut conn);
        applied
    })
    .await
    .map_err(|e| DbSetupError::Migration(e.to_string()))?
}

/// An index left invalid: its name and its definition.
#[derive(diesel::QueryableByName)]
struct InvalidIndex {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    definition: String,
}

/// Rebuilds every index of the schema that an interrupted `CREATE INDEX CONCURRENTLY`
/// left invalid (an instance killed mid-rollout): the migration that built it is
/// recorded as applied once re-run (`IF NOT EXISTS` skips the invalid one), and the
/// planner ignores an invalid index, so without this it would stay useless for good.
/// Leftovers of an interrupted `REINDEX CONCURRENTLY` (`…_ccnew`, `…_ccold`) are only
/// dropped. Runs under the migration lock, concurrently, so writes go on.
fn repair_invalid_indexes(conn: &mut AsyncConnectionWrapper<AsyncPgConnection>) -> diesel::QueryResult<()> {
    let invalid: Vec<InvalidIndex> = INVALID_INDEXES.query().load(conn)?;
    for index in invalid {
        tracing::warn!(index = %index.name, "rebuilding an index an interrupted concurrent build left invalid");
        let quoted = format!("\"{}\"", index.name.replace('"', "\"\""));
        run_catalog_ddl(conn, &format!("DROP INDEX CONCURRENTLY IF EXISTS {quoted}"))?;
        if index.name.contains("_ccnew") || index.name.contains("_ccold") {
            continue;
        }
        let create = index
            .definition
            .replacen("CREATE UNIQUE INDEX ", "CREATE UNIQUE INDEX CONCURRENTLY ", 1)
            .replacen("CREATE INDEX ", "CREATE INDEX CONCURRENTLY ", 1);
        run_catalog_ddl(conn, &create)?;
    }
    Ok(())
}

statement! {
    /// The schema's invalid indexes: each one's name and definition.
    static INVALID_INDEXES = "SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition \
        FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
        WHERE NOT i.indisvalid AND n.nspname = current_schema()";
}

/// Runs DDL made from the catalog (an invalid index's name, quoted, or its own
/// definition as `pg_get_indexdef` gives it): the one statement text of the crate that
/// is data, not written here, so it cannot be a registered statement.
#[expect(clippy::disallowed_methods, reason = "DDL taken from the catalog, not hand-written SQL")]
fn run_catalog_ddl(conn: &mut AsyncConnectionWrapper<AsyncPgConnection>, ddl: &str) -> diesel::QueryResult<()> {
    diesel::connection::SimpleConnection::batch_execute(conn, ddl)
}
