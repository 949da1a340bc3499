//! The key-check of the embedded default: whether the secrets stored in a database open
//! under the master key now in force.
//!
//! The detector is one sealed secret, tried: every sealed form is AES-GCM, whose tag
//! only verifies under the key that sealed it, so a stored secret that does not open
//! is proof (not a guess) that it was sealed under another key. It costs one short
//! query (the first sealed value of any table, `LIMIT 1`) and one decryption at start,
//! needs no table of its own, and never refuses a database that holds no secret (for
//! which the key in force does not matter).

use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::RunQueryDsl;

use crate::db::statement::statement;

statement! {
    /// One stored sealed secret, if any: a webhook's signing secret, a notify hook's
    /// secret, or a connection's secret (the three places the vault seals into).
    pub static ONE_SEALED_SECRET = "SELECT sealed FROM ( \
        SELECT signing_secret AS sealed FROM webhooks WHERE signing_secret LIKE 'enc:%' \
        UNION ALL SELECT secret FROM notify_hooks WHERE secret LIKE 'enc:%' \
        UNION ALL SELECT secret FROM connections WHERE secret LIKE 'enc:%' \
    ) AS stored LIMIT 1";
}

#[derive(QueryableByName)]
struct Sealed {
    #[diesel(sql_type = Text)]
    sealed: String,
}

/// One sealed secret stored in the (migrated) database at `database_url`, if any; the
/// error is one line saying what failed.
pub async fn one_sealed_secret(database_url: &str) -> Result<Option<String>, String> {
    let mut conn = crate::db::connect(database_url).await.map_err(|e| e.to_string())?;
    let rows: Vec<Sealed> = ONE_SEALED_SECRET
        .query()
        .load(&mut conn)
        .await
        .map_err(|e| format!("could not read a stored secret to check the key in force: {e}"))?;
    Ok(rows.into_iter().next().map(|r| r.sealed))
}
