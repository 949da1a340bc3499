//! Every registered statement (`switchboard::db::statement::all`) prepares against the
//! migrated schema: a statement that names a column, table or function the schema lacks
//! fails here, naming itself, its file and the database's error, instead of failing the
//! first request that runs it. And the cycle probe (`bench/cycle_probe/product.sql`) runs
//! the product's own claim and complete.

use switchboard::db::statement::{self, Statement};

use crate::harness::{TestDb, connect};

/// Prepares every registered statement on `client`; one line per statement that failed.
async fn unpreparable(client: &tokio_postgres::Client) -> Vec<String> {
    let mut failed = Vec::new();
    for s in statement::all() {
        if let Err(e) = client.prepare(s.text()).await {
            let why = match e.as_db_error() {
                Some(db) => format!("{}: {}", db.code().code(), db.message()),
                None => e.to_string(),
            };
            failed.push(format!("{} ({}:{}): {why}", s.name(), s.file(), s.line()));
        }
    }
    failed
}

#[actix_web::test]
async fn every_registered_statement_prepares_against_the_migrated_schema() {
    let db = TestDb::new().await;
    let client = connect(&db).await;
    assert!(statement::all().count() > 100, "the registry looks empty: {} statements", statement::all().count());
    let failed = unpreparable(&client).await;
    assert!(failed.is_empty(), "{} statements do not prepare:\n{}", failed.len(), failed.join("\n"));
}

/// The check is real: with a column renamed, the statements that name it fail, by name.
#[actix_web::test]
async fn a_renamed_column_fails_the_statement_check() {
    let db = TestDb::new().await;
    let client = connect(&db).await;
    let claim = statement::by_name("switchboard::store::todos::claim::NEXT_ON_QUEUE").expect("the claim is registered");
    client.batch_execute("ALTER TABLE todos RENAME COLUMN lease_token_hash TO lease_token_digest").await.unwrap();
    let failed = unpreparable(&client).await;
    let named = |s: &Statement| failed.iter().any(|f| f.starts_with(&format!("{} (", s.name())));
    assert!(named(claim), "the claim did not fail with the column renamed; failures:\n{}", failed.join("\n"));
    assert!(
        failed.iter().any(|f| f.contains("lease_token_hash") && f.contains("claim.rs")),
        "a failure names the file and the database's error:\n{}",
        failed.join("\n")
    );
    client.batch_execute("ALTER TABLE todos RENAME COLUMN lease_token_digest TO lease_token_hash").await.unwrap();
    let failed = unpreparable(&client).await;
    assert!(failed.is_empty(), "with the column back, statements still fail:\n{}", failed.join("\n"));
}

/// The statements of `bench/cycle_probe/product.sql`, comments and `\gset` left out,
/// whitespace collapsed.
fn probe_statements() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/cycle_probe/product.sql");
    let text = std::fs::read_to_string(&path).unwrap();
    let sql: Vec<&str> = text.lines().filter(|l| !l.starts_with("--")).collect();
    sql.join("\n").split("\\gset").map(|s| squash(s.trim().trim_end_matches(';'))).collect()
}

fn squash(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `sql` with its placeholders replaced by the probe's values (`$1` is the first), the
/// highest-numbered first so that `$1` never rewrites part of `$10`; a value that carries
/// its cast takes the place of the placeholder's own.
fn written_in(sql: &str, values: &[&str]) -> String {
    let mut out = sql.to_owned();
    for (i, value) in values.iter().enumerate().rev() {
        if let Some((_, cast)) = value.rsplit_once("::") {
            out = out.replace(&format!("${}::{cast}", i + 1), value);
        }
        out = out.replace(&format!("${}", i + 1), value);
    }
    squash(&out)
}

/// The cycle probe measures the product's statements: its claim and complete are the
/// registered claim-next on one queue and completion of an attempt opened on the row,
/// word for word, with the probe's values written in for the parameters.
#[test]
fn the_cycle_probe_runs_the_products_claim_and_complete() {
    let hash = "'\\x5653c5474f77637baf1479b2ac940eac050851f44670c70d4457b5c6f3296978'::bytea";
    let text = |name: &str| statement::by_name(name).unwrap_or_else(|| panic!("{name} is not registered")).text();
    let claim = written_in(
        text("switchboard::store::todos::claim::NEXT_ON_QUEUE"),
        &[":ep::uuid", "'work'", "300", hash, "NULL", "false"],
    );
    // The probe keeps only what its next statement needs (`\gset`).
    let claim = claim.replace("RETURNING t.*", "RETURNING t.id AS cid, t.payload AS cpayload");
    let complete = written_in(
        text("switchboard::store::todos::finish::COMPLETE_OPENED_ON_ROW"),
        &[":cid::uuid", ":ep::uuid", "NULL", hash, "NULL", "false", "NULL"],
    );
    assert_eq!(probe_statements(), vec![claim, complete], "bench/cycle_probe/product.sql is not the product's text");
}
