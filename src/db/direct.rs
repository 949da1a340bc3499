//! `SWITCHBOARD_DIRECT_DATABASE_URL`: PostgreSQL itself, for what needs a session of its
//! own (the listener session's LISTEN, the migration lock) when the database URL goes
//! through a transaction pooler. It must reach the very database the pool reaches: a
//! listener on another one hears none of the pool's NOTIFYs (caches would be evicted
//! only by their TTL, and a revocation would find no listener to wait for), and
//! migrations there would leave the pool's database behind. A pooler's alias may name
//! another real database, so the two are compared before either is used.

use super::one_row::OneRow;
use super::statement::statement;
use super::{DbSetupError, connect, run_migrations};
use diesel::sql_types::Text;

statement! {
    /// Which database a session reached: its name, and when its server started (which
    /// tells two servers apart without a privilege; a pooler passes both through).
    static WHICH_DATABASE =
        "SELECT current_database()::text AS name, pg_postmaster_start_time()::text AS started";
}

/// What tells one database from another.
#[derive(Debug, Clone, PartialEq, Eq, diesel::QueryableByName)]
struct Reached {
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = Text)]
    started: String,
}

/// The database `url` reaches.
async fn reached(url: &str) -> Result<Reached, DbSetupError> {
    let mut conn = connect(url).await?;
    WHICH_DATABASE
        .query()
        .one_row(&mut conn)
        .await
        .map_err(|e| DbSetupError::Connect { target: "the database".into(), cause: e.to_string() })
}

/// Refuses a direct URL that reaches another database than `database_url` does.
pub async fn check_same_database(database_url: &str, direct_url: &str) -> Result<(), DbSetupError> {
    let (pooled, direct) = (reached(database_url).await?, reached(direct_url).await?);
    match pooled == direct {
        true => Ok(()),
        false => Err(DbSetupError::NotTheSameDatabase(format!(
            "SWITCHBOARD_DIRECT_DATABASE_URL reaches the database {} (its server started {}), and \
             SWITCHBOARD_DATABASE_URL reaches {} (started {}): both must reach the same database on the \
             same server (a pooler's alias may name another)",
            direct.name, direct.started, pooled.name, pooled.started
        ))),
    }
}

/// Runs the pending migrations over `direct_url` when one is set (once it is known to
/// reach `database_url`'s database), else over `database_url`; the versions applied.
pub async fn migrate(database_url: &str, direct_url: Option<&str>) -> Result<Vec<String>, DbSetupError> {
    match direct_url {
        Some(direct) => {
            check_same_database(database_url, direct).await?;
            run_migrations(direct).await
        }
        None => run_migrations(database_url).await,
    }
}
