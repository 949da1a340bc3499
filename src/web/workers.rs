//! How many HTTP worker threads serve requests when `SWITCHBOARD_WORKERS` is not set.
//!
//! One per core, unless the database runs on the same host (a loopback address, a Unix
//! socket, or the embedded database, which listens on loopback): then half the cores, at
//! least one. Why: per claim → complete cycle the server spends about a quarter of the
//! CPU the database does (115 µs against 383 µs at 16 agents, `docs/benchmarks.md`), so a
//! worker per core only competes with the database's own backends for the same cores.
//! Measured on 2 cores with the database beside the server (Dec 5, alternating claim-cost
//! windows at 16 agents): one worker +8 % cycles against two (every round ahead), four
//! workers -8 %.

use std::str::FromStr;

use tokio_postgres::config::Host;

/// The default worker count for `cores` cores and a database at `database_url`.
pub fn default_workers(cores: usize, database_url: &str) -> usize {
    let cores = cores.max(1);
    if database_is_local(database_url) { (cores / 2).max(1) } else { cores }
}

/// Whether every host `database_url` names is this machine (loopback or a Unix socket).
/// A URL that does not parse, or names no host, is taken as remote: one worker per core,
/// as before this rule.
fn database_is_local(database_url: &str) -> bool {
    let Ok(config) = tokio_postgres::Config::from_str(database_url) else { return false };
    let hosts = config.get_hosts();
    !hosts.is_empty()
        && hosts.iter().all(|host| match host {
            Host::Unix(_) => true,
            Host::Tcp(name) => {
                let name = name.trim_start_matches('[').trim_end_matches(']');
                name.eq_ignore_ascii_case("localhost")
                    || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_on_loopback_leaves_half_the_cores_to_it() {
        assert_eq!(default_workers(2, "postgres://postgres@127.0.0.1:5432/sb"), 1);
        assert_eq!(default_workers(8, "postgres://postgres@localhost/sb"), 4);
        assert_eq!(default_workers(4, "postgres://u@[::1]:5433/sb"), 2);
        assert_eq!(default_workers(4, "host=/var/run/postgresql dbname=sb"), 2, "a Unix socket");
    }

    #[test]
    fn a_remote_database_gets_a_worker_per_core() {
        assert_eq!(default_workers(2, "postgres://u@db.internal:5432/sb"), 2);
        assert_eq!(default_workers(4, "postgres://u@10.0.0.5/sb"), 4);
        assert_eq!(default_workers(4, "postgres://u@127.0.0.1,db.internal/sb"), 4, "one host elsewhere");
    }

    #[test]
    fn one_core_or_an_unreadable_url_still_gets_a_worker() {
        assert_eq!(default_workers(1, "postgres://u@127.0.0.1/sb"), 1);
        assert_eq!(default_workers(0, "postgres://u@127.0.0.1/sb"), 1);
        assert_eq!(default_workers(3, "not a url"), 3);
    }
}
