//! The one place a request's client address is worked out, for everything that reasons
//! about who is calling: the Board's sign-in limits and the access log. It reads the
//! TCP peer and every `X-Forwarded-For` line and asks the pure rule
//! ([`crate::domain::client_address`]) with the trusted proxies start-up registered
//! (`web::Data<TrustedProxies>`; none registered trusts none).
//!
//! Never actix's `ConnectionInfo::realip_remote_addr`: it believes `Forwarded` and
//! `X-Forwarded-For` from anyone.

use std::net::IpAddr;

use actix_web::{HttpRequest, web};

use crate::domain::client_address::client_address as decide;
use crate::domain::trusted_proxies::TrustedProxies;

/// The header proxies append the address they were called from to.
const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// The client's address, or `None` when the connection has no IP peer (a test request
/// built without one). Cheap: with no trusted proxy it is the peer, and the header walk
/// is bounded.
pub fn client_address(req: &HttpRequest) -> Option<IpAddr> {
    let peer = req.peer_addr()?.ip();
    let none = TrustedProxies::none();
    let trusted = req.app_data::<web::Data<TrustedProxies>>().map_or(&none, |t| t.get_ref());
    Some(decide(peer, req.headers().get_all(X_FORWARDED_FOR).map(|v| v.as_bytes()), trusted))
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn request(trusted: Option<&str>) -> TestRequest {
        let req = TestRequest::default()
            .peer_addr("127.0.0.1:40000".parse().unwrap())
            .insert_header((X_FORWARDED_FOR, "6.6.6.6, 198.51.100.7"))
            .append_header((X_FORWARDED_FOR, "192.0.2.9"));
        match trusted {
            Some(raw) => req.app_data(web::Data::new(TrustedProxies::parse(raw).unwrap())),
            None => req,
        }
    }

    #[test]
    fn without_trusted_proxies_the_peer_is_the_client() {
        let ip = |s: &str| s.parse::<IpAddr>().ok();
        assert_eq!(client_address(&request(None).to_http_request()), ip("127.0.0.1"));
        assert_eq!(client_address(&request(Some("")).to_http_request()), ip("127.0.0.1"));
    }

    #[test]
    fn behind_a_trusted_peer_every_header_line_is_read_from_the_right() {
        let ip = |s: &str| s.parse::<IpAddr>().ok();
        assert_eq!(client_address(&request(Some("127.0.0.1")).to_http_request()), ip("192.0.2.9"));
        let through_two = request(Some("127.0.0.1, 192.0.2.0/24")).to_http_request();
        assert_eq!(client_address(&through_two), ip("198.51.100.7"));
    }

    #[test]
    fn a_request_without_a_peer_has_no_client_address() {
        assert_eq!(client_address(&TestRequest::default().to_http_request()), None);
    }
}
