//! PostgreSQL for scratch databases: connecting, naming a database on the same server,
//! and dropping the databases of runs whose process is gone. A scratch database is named
//! `<prefix><pid>…` (the tests' `sbt_<pid>_<n>`, the benchmark's `sb_bench_<pid>[_tag]`)
//! so that a later run can tell an interrupted run's leftovers from a live run's.

use tokio_postgres::{Client, NoTls};

/// A connection to `url`, its connection task spawned on the current runtime.
pub async fn connect(url: &str) -> Result<Client, String> {
    let (client, conn) =
        tokio_postgres::connect(url, NoTls).await.map_err(|e| format!("cannot connect to PostgreSQL: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

/// `url` with its database replaced by `db` (query parameters kept).
pub fn url_for(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let base = base.rsplit_once('/').map(|(b, _)| b).unwrap_or(base);
    format!("{base}/{db}{query}")
}

/// Whether `name` (`<prefix><pid>` or `<prefix><pid>_…`) belongs to a process that is
/// gone. False for a name without that shape.
pub fn owner_gone(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.split('_').next())
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
}

/// `DROP DATABASE IF EXISTS "<name>" WITH (FORCE)` (forcing out its sessions).
pub async fn drop_database(admin: &Client, name: &str) -> Result<(), String> {
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .await
        .map_err(|e| format!("dropping {name}: {e}"))
}

/// Drops every database named `<prefix><pid>…` whose process is gone (an interrupted
/// run's); failures to drop one (another process dropping it meanwhile) are ignored.
pub async fn drop_orphans(admin: &Client, prefix: &str) -> Result<(), String> {
    let like = format!("{}%", prefix.replace('_', "\\_"));
    let rows = admin
        .query("SELECT datname FROM pg_database WHERE datname LIKE $1", &[&like])
        .await
        .map_err(|e| format!("listing databases: {e}"))?;
    for row in rows {
        let name: String = row.get(0);
        if owner_gone(&name, prefix) {
            let _ = drop_database(admin, &name).await;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_another_database_on_the_same_server() {
        assert_eq!(url_for("postgres://u@h:5432/postgres", "sbt_1_2"), "postgres://u@h:5432/sbt_1_2");
        assert_eq!(url_for("postgres://u@h/postgres?sslmode=disable", "x"), "postgres://u@h/x?sslmode=disable");
    }

    #[test]
    fn a_name_belongs_to_a_gone_process_only_when_its_pid_is_not_running() {
        let me = std::process::id();
        assert!(!owner_gone(&format!("sbt_{me}_3"), "sbt_"));
        assert!(!owner_gone(&format!("sb_bench_{me}"), "sb_bench_"));
        assert!(owner_gone("sbt_4294967295_1", "sbt_"));
        assert!(!owner_gone("sbt_template_abc", "sbt_"));
        assert!(!owner_gone("other_1", "sbt_"));
    }
}
