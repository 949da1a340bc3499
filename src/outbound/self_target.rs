//! Targets that are Switchboard itself by name, which the address rules cannot see:
//! the host of its public base URL (`SWITCHBOARD_BASE_URL`: a proxy in front forwards
//! it to us, and its public address is just a public address), and any URL whose path
//! is one of our ingest routes, on whatever host (a relay may forward there). A hook at
//! either would feed each notification back in as a fresh delivery, forever: every
//! post carries a new id, so intake never deduplicates it.

use std::net::IpAddr;

use actix_web::http::Uri;

use super::address::unmap;
use super::refusal::Refusal;
use crate::intake::INGEST_ROUTE_PREFIXES;

/// How many rounds of percent-decoding a path gets before it is compared: a proxy and
/// the router may each decode once, so `%2577` can still arrive as `w`.
const DECODE_ROUNDS: usize = 3;

/// The base URL's host, as targets are compared with it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BaseHost {
    host: String,
    /// The host, when the base URL names it by IP address: a target that resolves to
    /// it is us however the target spells it (`https://3405803781/`, a DNS name). A
    /// name is not compared by address: a proxy or CDN address is shared with others.
    literal: Option<IpAddr>,
    /// Only this port is us. `None`: every port of the host is (a name that points at
    /// Switchboard's proxy belongs to it). A loopback host names the machine, not the
    /// service, and the default base URL is the loopback listen address, so there the
    /// port decides, as it does for the listen address.
    port: Option<u16>,
}

/// The self-target rules of one instance.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelfTarget {
    base: Option<BaseHost>,
}

impl SelfTarget {
    /// The rules for an instance reached at `base_url` (an absolute http(s) URL, as the
    /// settings validate it); one that does not parse adds only the ingest-route rule.
    pub fn for_base_url(base_url: &str) -> Self {
        let Ok(uri) = base_url.trim().parse::<Uri>() else { return SelfTarget::default() };
        let Some(host) = uri.host().filter(|h| !h.is_empty()) else { return SelfTarget::default() };
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host).parse::<IpAddr>().ok();
        let host = host_key(host, literal);
        let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("http") { 80 } else { 443 });
        let loopback = match literal {
            Some(ip) => unmap(ip).is_loopback(),
            None => host == "localhost" || host.ends_with(".localhost"),
        };
        let literal = literal.map(unmap);
        SelfTarget { base: Some(BaseHost { host, literal, port: loopback.then_some(port) }) }
    }

    /// Refuses a target at the base URL's host ([`Refusal::OwnHost`]) or at an ingest
    /// route ([`Refusal::IngestRoute`]). `host` and `literal` as [`super::Target`] holds them.
    pub fn check(&self, host: &str, literal: Option<IpAddr>, port: u16, path: &str) -> Result<(), Refusal> {
        if let Some(base) = &self.base
            && host_key(host, literal) == base.host
            && base.port.is_none_or(|p| p == port)
        {
            return Err(Refusal::OwnHost);
        }
        if is_ingest_path(path) {
            return Err(Refusal::IngestRoute);
        }
        Ok(())
    }
}

impl SelfTarget {
    /// Refuses an address a target resolved to when it is the base URL's own IP
    /// address (and port, for a loopback one): [`Refusal::OwnAddress`], since the
    /// verdict depends on where a name points (a name is answered as every other
    /// address refusal is, SPEC 13 "Outbound refusals").
    pub fn admit_address(&self, addr: std::net::SocketAddr) -> Result<(), Refusal> {
        match &self.base {
            Some(BaseHost { literal: Some(ip), port, .. })
                if unmap(addr.ip()) == *ip && port.is_none_or(|p| p == addr.port()) =>
            {
                Err(Refusal::OwnAddress)
            }
            _ => Ok(()),
        }
    }
}

/// A host as compared: an IP literal in its canonical form (IPv4-mapped as IPv4), a
/// name in lower case without the trailing dot of a fully qualified name.
fn host_key(host: &str, literal: Option<IpAddr>) -> String {
    match literal {
        Some(ip) => unmap(ip).to_string(),
        None => host.trim_end_matches('.').to_ascii_lowercase(),
    }
}

/// Whether `path` reaches one of our ingest routes once decoded and normalised the
/// way a proxy or our router might: percent-escapes decoded, empty and `.` segments
/// dropped, `..` applied, compared without regard to case. The route may stand below
/// any prefix (a base URL with a path, or a proxy that mounts us under one), so it is
/// looked for at every segment boundary, not only at the start.
fn is_ingest_path(path: &str) -> bool {
    let normal = normalise(path);
    INGEST_ROUTE_PREFIXES.iter().any(|prefix| {
        let prefix = prefix.trim_end_matches('/').to_ascii_lowercase();
        normal.ends_with(&prefix) || normal.contains(&format!("{prefix}/"))
    })
}

fn normalise(path: &str) -> String {
    let mut decoded = path.as_bytes().to_vec();
    for _ in 0..DECODE_ROUNDS {
        let next = percent_decode(&decoded);
        if next == decoded {
            break;
        }
        decoded = next;
    }
    let text = String::from_utf8_lossy(&decoded).to_ascii_lowercase();
    let mut segments: Vec<&str> = Vec::new();
    for segment in text.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    format!("/{}", segments.join("/"))
}

fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push(hi << 4 | lo);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rules: &SelfTarget, url: &str) -> Result<(), Refusal> {
        let uri: Uri = url.parse().unwrap();
        let host = uri.host().unwrap();
        let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
        let literal = bare.parse::<IpAddr>().ok();
        let port = uri.port_u16().unwrap_or(443);
        rules.check(bare, literal, port, uri.path())
    }

    #[test]
    fn the_base_urls_host_is_us_on_every_port_whatever_its_case_or_trailing_dot() {
        let rules = SelfTarget::for_base_url("https://Switchboard.Example.com");
        for url in [
            "https://switchboard.example.com/hook",
            "https://SWITCHBOARD.example.com./hook",
            "https://switchboard.example.com:8443/",
        ] {
            assert_eq!(check(&rules, url), Err(Refusal::OwnHost), "{url}");
        }
        assert_eq!(check(&rules, "https://hooks.example.com/"), Ok(()));
        assert_eq!(check(&rules, "https://switchboard.example.com.evil.test/"), Ok(()));
    }

    #[test]
    fn an_ip_literal_base_host_matches_its_canonical_and_ipv4_mapped_forms() {
        let rules = SelfTarget::for_base_url("https://203.0.113.5/sb");
        assert_eq!(check(&rules, "https://203.0.113.5:444/"), Err(Refusal::OwnHost));
        assert_eq!(check(&rules, "https://[::ffff:203.0.113.5]/"), Err(Refusal::OwnHost));
        assert_eq!(check(&rules, "https://203.0.113.6/"), Ok(()));
        let v6 = SelfTarget::for_base_url("https://[2001:db8::1]");
        assert_eq!(check(&v6, "https://[2001:0db8:0::1]/"), Err(Refusal::OwnHost));
    }

    #[test]
    fn an_address_that_is_the_ip_literal_base_host_is_us_however_the_target_spelled_it() {
        let rules = SelfTarget::for_base_url("https://203.0.113.5");
        let at = |ip: &str, port| std::net::SocketAddr::new(ip.parse().unwrap(), port);
        assert_eq!(rules.admit_address(at("203.0.113.5", 443)), Err(Refusal::OwnAddress));
        assert_eq!(rules.admit_address(at("::ffff:203.0.113.5", 8443)), Err(Refusal::OwnAddress));
        assert_eq!(rules.admit_address(at("203.0.113.6", 443)), Ok(()));
        let named = SelfTarget::for_base_url("https://switchboard.example.com");
        assert_eq!(named.admit_address(at("203.0.113.5", 443)), Ok(()), "a name is not compared by address");
    }

    #[test]
    fn a_loopback_base_host_is_us_only_on_its_port() {
        let rules = SelfTarget::for_base_url("http://127.0.0.1:8080");
        assert_eq!(check(&rules, "https://127.0.0.1:8080/"), Err(Refusal::OwnHost));
        assert_eq!(check(&rules, "https://127.0.0.1:9000/"), Ok(()), "another service on this machine");
        let named = SelfTarget::for_base_url("http://localhost");
        assert_eq!(check(&named, "https://localhost:80/"), Err(Refusal::OwnHost));
        assert_eq!(check(&named, "https://localhost:9000/"), Ok(()));
    }

    #[test]
    fn an_ingest_route_is_refused_on_any_host_however_its_path_is_spelled() {
        let rules = SelfTarget::default();
        for url in [
            "https://relay.example.com/webhooks/w/sbw_token",
            "https://relay.example.com/webhooks/w/",
            "https://relay.example.com/webhooks/w",
            "https://relay.example.com//webhooks//w/sbw_token",
            "https://relay.example.com/%77ebhooks/w/sbw_token",
            "https://relay.example.com/%2577ebhooks/w/sbw_token",
            "https://relay.example.com/webhooks%2Fw/sbw_token",
            "https://relay.example.com/WEBHOOKS/W/sbw_token",
            "https://relay.example.com/a/../webhooks/./w/sbw_token?x=1",
            "https://relay.example.com/sb/webhooks/w/sbw_token",
            "https://relay.example.com/hooks/webhooks/w/1",
        ] {
            assert_eq!(check(&rules, url), Err(Refusal::IngestRoute), "{url}");
        }
        for url in [
            "https://relay.example.com/webhooks",
            "https://relay.example.com/webhooks/github",
            "https://relay.example.com/webhooks/wx/1",
            "https://relay.example.com/webhooks/w-archive/1",
        ] {
            assert_eq!(check(&rules, url), Ok(()), "{url}");
        }
    }

    #[test]
    fn the_refusals_name_the_rule_and_never_the_url() {
        let own = Refusal::OwnHost.to_string();
        assert!(own.contains("SWITCHBOARD_BASE_URL"), "{own}");
        assert!(Refusal::IngestRoute.to_string().contains("ingest route"));
        assert_eq!((Refusal::OwnHost.reason(), Refusal::IngestRoute.reason()), ("own_host", "ingest_route"));
    }
}
