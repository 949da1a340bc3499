//! Telling systemd that `serve` is ready (`Type=notify`, `deploy/systemd/`): `READY=1`
//! is sent once the instance answers its own `GET /readyz` with 200 through its
//! listening socket, so `systemctl start` returns when the database is migrated and
//! reachable and the application (not the start-up 503 server) answers requests. Without
//! `NOTIFY_SOCKET` (not started by systemd) nothing is probed or sent.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

/// How long one probe of `/readyz` may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The pause between probes that did not answer 200.
const PROBE_AGAIN: Duration = Duration::from_millis(100);

/// Whether a service manager listens for this process's notifications.
pub fn wanted() -> bool {
    std::env::var_os("NOTIFY_SOCKET").is_some()
}

/// Where this process reaches its own listener: the bound address, with an unspecified
/// IP (`0.0.0.0`, `::`) replaced by loopback of the same family.
pub fn own_address(bound: SocketAddr) -> SocketAddr {
    let ip = match bound.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, bound.port())
}

/// Waits until `GET /readyz` at `addr` answers 200, then tells the service manager
/// `READY=1` (with a status line naming the address). Runs as a task beside the server:
/// it is spawned before the server is first polled, so the probes are what tell when
/// the workers accept. A server that never becomes ready is stopped by systemd's
/// `TimeoutStartSec`, or exits by itself.
pub async fn notify_when_ready(addr: SocketAddr) {
    let url = format!("http://{addr}/readyz");
    let client = awc::Client::builder().timeout(PROBE_TIMEOUT).disable_redirects().finish();
    loop {
        match client.get(&url).send().await {
            Ok(resp) if resp.status() == actix_web::http::StatusCode::OK => break,
            // Not yet: the server's workers are starting, or the database is not ready.
            _ => actix_rt::time::sleep(PROBE_AGAIN).await,
        }
    }
    let status = format!("serving on {addr}");
    match sd_notify::notify(&[sd_notify::NotifyState::Ready, sd_notify::NotifyState::Status(&status)]) {
        Ok(()) => tracing::info!("told the service manager: ready"),
        Err(e) => tracing::warn!(error = %e, "could not tell the service manager that the server is ready"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_own_address_is_the_bound_one_with_unspecified_ips_made_loopback() {
        let own = |a: &str| own_address(a.parse().unwrap()).to_string();
        assert_eq!(own("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(own("[::]:8080"), "[::1]:8080");
        assert_eq!(own("10.1.2.3:9000"), "10.1.2.3:9000");
        assert_eq!(own("[fd00::5]:9000"), "[fd00::5]:9000");
    }
}
