//! Where a connection string points, and why connecting failed, for start-up messages
//! an operator can act on. Never includes the password.

use tokio_postgres::config::{Config, Host};

/// The hosts and ports of `config`, the database and the user (never the password):
/// `127.0.0.1:5432 (database switchboard, user app)`, or a socket path.
pub fn describe(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let mut places: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            Host::Unix(dir) => format!("socket {}/.s.PGSQL.{}", dir.display(), port(i)),
        })
        .collect();
    if places.is_empty() {
        places = config.get_hostaddrs().iter().enumerate().map(|(i, a)| format!("{a}:{}", port(i))).collect();
    }
    let place = if places.is_empty() { "no host given".to_owned() } else { places.join(", ") };
    let mut about = Vec::new();
    if let Some(db) = config.get_dbname() {
        about.push(format!("database {db}"));
    }
    if let Some(user) = config.get_user() {
        about.push(format!("user {user}"));
    }
    if about.is_empty() { place } else { format!("{place} ({})", about.join(", ")) }
}

/// `e` and every cause under it on one line: tokio-postgres says only "error connecting
/// to server" at the top and keeps the reason (refused, timed out, no such host,
/// authentication failed) in its source.
pub fn cause_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = cause.source();
    }
    parts.join(": ").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_described_by_host_port_database_and_user_without_its_password() {
        let config: Config = "postgres://app:s3cret@db.example:6543/switchboard".parse().unwrap();
        let text = describe(&config);
        assert_eq!(text, "db.example:6543 (database switchboard, user app)");
        let config: Config = "host=/run/sb port=5432 user=switchboard dbname=switchboard".parse().unwrap();
        assert_eq!(describe(&config), "socket /run/sb/.s.PGSQL.5432 (database switchboard, user switchboard)");
    }
}
