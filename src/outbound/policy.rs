//! The SSRF policy, pure (SPEC section 8): which URLs are acceptable outbound targets
//! and which resolved addresses may be dialled. No DNS and no I/O here; the guard feeds
//! it the addresses it resolved.
//!
//! A refusal names a class ("loopback", "own_address"), never the address: the caller
//! who typed a host name must not learn what it resolves to inside our network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use actix_web::http::Uri;
use ipnet::{IpNet, Ipv4Net, Ipv6Net};

pub use super::address::{AddressClass, classify, unmap};
pub use super::refusal::Refusal;
use super::self_target::SelfTarget;
use crate::config::{CidrList, Settings};

/// Longest URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// A URL that passed the URL rules: where to connect, before any DNS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The host as DNS sees it (IPv6 literals without brackets).
    pub host: String,
    /// The port (the scheme's default when the URL names none).
    pub port: u16,
    /// The host, when it is an IP literal (no DNS is done for it).
    pub literal: Option<IpAddr>,
}

/// The outbound policy: URL rules, the operator's private-host allowlist, this
/// instance's own listen address, and the names it is reached at (its base URL's host,
/// its ingest routes).
#[derive(Debug, Clone)]
pub struct Policy {
    allow_http: bool,
    allow: Vec<IpNet>,
    own: SocketAddr,
    itself: SelfTarget,
}

impl Policy {
    /// A policy. `own` is the address the server is bound to (after binding: the real port).
    pub fn new(allow_http: bool, allow: &CidrList, own: SocketAddr) -> Self {
        let allow = allow
            .0
            .iter()
            // The config parser has already refused prefixes longer than the family allows,
            // the only thing `IpNet::new` can reject.
            .filter_map(|&(ip, prefix)| allow_entry(ip, prefix))
            .collect();
        Policy { allow_http, allow, own: SocketAddr::new(unmap(own.ip()), own.port()), itself: SelfTarget::default() }
    }

    /// The same policy, also refusing the host of `base_url`, where this instance is
    /// reached (ingest routes are refused on every host in any case).
    pub fn with_base_url(mut self, base_url: &str) -> Self {
        self.itself = SelfTarget::for_base_url(base_url);
        self
    }

    /// The policy the settings describe, for a server bound to `listen`.
    pub fn from_settings(settings: &Settings, listen: SocketAddr) -> Self {
        let policy = Policy::new(settings.push_allow_http, &settings.notify_hook_allow_cidrs, listen);
        match &settings.base_url {
            Some(base_url) => policy.with_base_url(base_url),
            // The derived base URL is the listen address, which `admit` refuses already.
            None => policy,
        }
    }

    /// Checks a URL against the URL rules (no DNS).
    pub fn target(&self, url: &str) -> Result<Target, Refusal> {
        if url.len() > MAX_URL_BYTES {
            return Err(Refusal::TooLong);
        }
        let uri: Uri = url.parse().map_err(|_| Refusal::Malformed)?;
        self.target_of(&uri)
    }

    /// Checks an already parsed URI (what the HTTP client is about to connect to).
    pub fn target_of(&self, uri: &Uri) -> Result<Target, Refusal> {
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(Refusal::Malformed);
        };
        let path = uri.path_and_query().map_or(0, |p| p.as_str().len());
        if scheme.len() + "://".len() + authority.as_str().len() + path > MAX_URL_BYTES {
            return Err(Refusal::TooLong);
        }
        let default_port = match scheme {
            "https" => 443,
            "http" if self.allow_http => 80,
            _ => return Err(Refusal::Scheme),
        };
        let authority = authority.as_str();
        if authority.contains('@') {
            return Err(Refusal::Userinfo);
        }
        let host = uri.host().unwrap_or("");
        if host.is_empty() {
            return Err(Refusal::NoHost);
        }
        // The URI parser drops a port it cannot read (":70000") and the client would
        // then dial the scheme's default port: read the port text ourselves.
        let port = match authority.strip_prefix(host).unwrap_or("") {
            "" | ":" => default_port,
            rest => rest
                .strip_prefix(':')
                .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<u16>().ok())
                .filter(|p| *p != 0)
                .ok_or(Refusal::Port)?,
        };
        let literal = match host.strip_prefix('[') {
            Some(inner) => Some(
                inner
                    .strip_suffix(']')
                    .and_then(|h| h.parse::<Ipv6Addr>().ok())
                    .map(IpAddr::V6)
                    .ok_or(Refusal::Malformed)?,
            ),
            None => host.parse::<IpAddr>().ok(),
        };
        let host = match literal {
            Some(ip) => ip.to_string(),
            None => host.to_owned(),
        };
        // By name, before any DNS: a proxy in front of us has an ordinary public address.
        self.itself.check(&host, literal, port, uri.path())?;
        Ok(Target { host, port, literal })
    }

    /// Checks one address the target resolved to.
    pub fn admit(&self, addr: SocketAddr) -> Result<(), Refusal> {
        let ip = unmap(addr.ip());
        let class = classify(ip);
        let exempted = match class {
            AddressClass::Public => false,
            AddressClass::Unspecified | AddressClass::Reserved | AddressClass::Multicast => {
                return Err(Refusal::Address(class));
            }
            AddressClass::Private | AddressClass::UniqueLocal | AddressClass::Cgnat => {
                self.allow.iter().any(|net| net.contains(&ip))
            }
            AddressClass::Loopback => self.allow.iter().any(|net| net.contains(&ip) && inside(net, &loopback_nets())),
            AddressClass::LinkLocal => {
                self.allow.iter().any(|net| net.contains(&ip) && inside(net, &link_local_nets()))
            }
            AddressClass::Metadata => {
                self.allow.iter().any(|net| net.prefix_len() == net.max_prefix_len() && net.addr() == ip)
            }
        };
        if class != AddressClass::Public && !exempted {
            return Err(Refusal::Address(class));
        }
        // Our own port on an address we are listening on is us, allowlisted or not. With a
        // wildcard bind we listen everywhere, so every exempted address is suspect on that port.
        if addr.port() == self.own.port() && (ip == self.own.ip() || (exempted && self.own.ip().is_unspecified())) {
            return Err(Refusal::OwnAddress);
        }
        Ok(())
    }

    /// Checks every address a target resolved to: one refused address refuses the target.
    pub fn admit_all(&self, addrs: &[SocketAddr]) -> Result<(), Refusal> {
        addrs.iter().try_for_each(|a| self.admit(*a).and_then(|()| self.itself.admit_address(*a)))
    }
}

/// An allowlist entry as a network, IPv4-mapped IPv6 ranges turned into IPv4 ones.
fn allow_entry(ip: IpAddr, prefix: u8) -> Option<IpNet> {
    let net = match ip {
        IpAddr::V6(v6) if prefix >= 96 => match v6.to_ipv4_mapped() {
            Some(v4) => IpNet::V4(Ipv4Net::new(v4, prefix - 96).ok()?),
            None => IpNet::V6(Ipv6Net::new(v6, prefix).ok()?),
        },
        other => IpNet::new(other, prefix).ok()?,
    };
    Some(net.trunc())
}

fn loopback_nets() -> [IpNet; 2] {
    [
        IpNet::V4(Ipv4Net::new_assert(Ipv4Addr::new(127, 0, 0, 0), 8)),
        IpNet::V6(Ipv6Net::new_assert(Ipv6Addr::LOCALHOST, 128)),
    ]
}

fn link_local_nets() -> [IpNet; 2] {
    [
        IpNet::V4(Ipv4Net::new_assert(Ipv4Addr::new(169, 254, 0, 0), 16)),
        IpNet::V6(Ipv6Net::new_assert(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10)),
    ]
}

/// Whether an allowlist entry lies wholly inside one of `ranges`.
fn inside(entry: &IpNet, ranges: &[IpNet]) -> bool {
    ranges.iter().any(|r| r.contains(entry))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "127.0.0.1:8080";

    fn policy(allow: &[(&str, u8)]) -> Policy {
        policy_at(allow, OWN)
    }

    fn policy_at(allow: &[(&str, u8)], own: &str) -> Policy {
        let list = CidrList(allow.iter().map(|(ip, p)| (ip.parse().unwrap(), *p)).collect());
        Policy::new(false, &list, own.parse().unwrap())
    }

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn class(s: &str) -> AddressClass {
        classify(s.parse().unwrap())
    }

    #[test]
    fn addresses_are_classified_by_range() {
        use AddressClass::*;
        for (ip, want) in [
            ("0.0.0.0", Unspecified),
            ("::", Unspecified),
            ("0.1.2.3", Reserved),
            ("240.0.0.1", Reserved),
            ("255.255.255.255", Reserved),
            ("127.0.0.1", Loopback),
            ("127.255.0.9", Loopback),
            ("::1", Loopback),
            ("169.254.1.1", LinkLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("ff01::1", Multicast),
            ("ff02::1", Multicast),
            ("ff0e::1", Multicast),
            ("10.0.0.1", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("100.64.0.1", Cgnat),
            ("100.127.255.255", Cgnat),
            ("169.254.169.254", Metadata),
            ("100.100.100.200", Metadata),
            ("fd00:ec2::254", Metadata),
            ("8.8.8.8", Public),
            ("172.32.0.1", Public),
            ("100.128.0.1", Public),
            ("100.63.255.255", Public),
            ("2606:4700::1111", Public),
        ] {
            assert_eq!(class(ip), want, "{ip}");
        }
    }

    #[test]
    fn ipv4_mapped_and_nat64_addresses_are_judged_as_the_ipv4_address_they_reach() {
        assert_eq!(class("::ffff:127.0.0.1"), AddressClass::Loopback);
        assert_eq!(class("::ffff:169.254.169.254"), AddressClass::Metadata);
        assert_eq!(class("::ffff:10.1.2.3"), AddressClass::Private);
        assert_eq!(class("::ffff:8.8.8.8"), AddressClass::Public);
        assert_eq!(class("64:ff9b::a00:1"), AddressClass::Private);
        assert_eq!(class("64:ff9b::7f00:1"), AddressClass::Loopback);
        assert_eq!(class("64:ff9b::808:808"), AddressClass::Public);
        let p = policy(&[]);
        assert_eq!(p.admit(sa("[::ffff:127.0.0.1]:443")), Err(Refusal::Address(AddressClass::Loopback)));
    }

    #[test]
    fn public_addresses_pass_and_every_refused_class_is_refused_without_an_allowlist() {
        let p = policy(&[]);
        assert_eq!(p.admit(sa("8.8.8.8:443")), Ok(()));
        assert_eq!(p.admit(sa("[2606:4700::1111]:443")), Ok(()));
        for addr in [
            "0.0.0.0:443",
            "127.0.0.1:443",
            "[::1]:443",
            "169.254.1.1:443",
            "[fe80::1]:443",
            "224.0.0.1:443",
            "10.0.0.1:443",
            "[fd00::1]:443",
            "100.64.0.1:443",
            "169.254.169.254:80",
            "100.100.100.200:80",
            "[fd00:ec2::254]:80",
            "255.255.255.255:443",
        ] {
            assert!(matches!(p.admit(sa(addr)), Err(Refusal::Address(_))), "{addr}");
        }
    }

    #[test]
    fn one_refused_address_among_many_refuses_the_target() {
        let p = policy(&[]);
        assert_eq!(p.admit_all(&[sa("8.8.8.8:443"), sa("1.1.1.1:443")]), Ok(()));
        assert_eq!(
            p.admit_all(&[sa("8.8.8.8:443"), sa("10.0.0.5:443"), sa("1.1.1.1:443")]),
            Err(Refusal::Address(AddressClass::Private))
        );
    }

    #[test]
    fn the_allowlist_exempts_private_ula_and_cgnat_addresses_inside_a_listed_range_only() {
        let p = policy(&[("10.0.0.0", 8), ("fd00::", 8), ("100.64.0.0", 10), ("192.168.1.7", 32)]);
        assert_eq!(p.admit(sa("10.200.0.1:443")), Ok(()));
        assert_eq!(p.admit(sa("[fd12::1]:443")), Ok(()));
        assert_eq!(p.admit(sa("100.99.0.1:443")), Ok(()));
        assert_eq!(p.admit(sa("192.168.1.7:443")), Ok(()));
        assert_eq!(p.admit(sa("192.168.1.8:443")), Err(Refusal::Address(AddressClass::Private)));
        assert_eq!(p.admit(sa("172.16.0.1:443")), Err(Refusal::Address(AddressClass::Private)));
        assert_eq!(p.admit(sa("[fc00::1]:443")), Err(Refusal::Address(AddressClass::UniqueLocal)));
    }

    #[test]
    fn loopback_and_link_local_are_exempted_only_by_entries_wholly_inside_their_ranges() {
        let broad = policy(&[("0.0.0.0", 0), ("::", 0)]);
        assert_eq!(broad.admit(sa("10.0.0.1:443")), Ok(()), "a broad entry still exempts private space");
        assert_eq!(broad.admit(sa("127.0.0.1:443")), Err(Refusal::Address(AddressClass::Loopback)));
        assert_eq!(broad.admit(sa("[::1]:443")), Err(Refusal::Address(AddressClass::Loopback)));
        assert_eq!(broad.admit(sa("169.254.3.4:443")), Err(Refusal::Address(AddressClass::LinkLocal)));
        assert_eq!(broad.admit(sa("[fe80::1]:443")), Err(Refusal::Address(AddressClass::LinkLocal)));
        let half = policy(&[("126.0.0.0", 7)]);
        assert_eq!(half.admit(sa("127.0.0.1:443")), Err(Refusal::Address(AddressClass::Loopback)));

        let narrow = policy(&[("127.0.0.0", 8), ("::1", 128), ("169.254.0.0", 16), ("fe80::", 64)]);
        assert_eq!(narrow.admit(sa("127.0.0.1:9000")), Ok(()));
        assert_eq!(narrow.admit(sa("[::1]:9000")), Ok(()));
        assert_eq!(narrow.admit(sa("169.254.3.4:443")), Ok(()));
        assert_eq!(narrow.admit(sa("[fe80::1]:443")), Ok(()));
        assert_eq!(narrow.admit(sa("[fe80:0:0:1::1]:443")), Err(Refusal::Address(AddressClass::LinkLocal)));
    }

    #[test]
    fn metadata_addresses_are_exempted_only_by_an_exact_single_address_entry() {
        let ranges = policy(&[("169.254.0.0", 16), ("100.64.0.0", 10), ("fd00::", 8)]);
        for addr in ["169.254.169.254:80", "100.100.100.200:80", "[fd00:ec2::254]:80"] {
            assert_eq!(ranges.admit(sa(addr)), Err(Refusal::Address(AddressClass::Metadata)), "{addr}");
        }
        let exact = policy(&[("169.254.169.254", 32), ("100.100.100.200", 32), ("fd00:ec2::254", 128)]);
        for addr in ["169.254.169.254:80", "100.100.100.200:80", "[fd00:ec2::254]:80"] {
            assert_eq!(exact.admit(sa(addr)), Ok(()), "{addr}");
        }
    }

    #[test]
    fn unspecified_reserved_and_multicast_are_never_exempted() {
        let p = policy(&[("0.0.0.0", 0), ("::", 0), ("0.0.0.0", 32), ("224.0.0.0", 4), ("ff00::", 8)]);
        for addr in ["0.0.0.0:443", "[::]:443", "224.0.0.1:443", "[ff02::1]:443", "255.255.255.255:443", "0.1.2.3:443"]
        {
            assert!(matches!(p.admit(sa(addr)), Err(Refusal::Address(_))), "{addr}");
        }
    }

    #[test]
    fn an_ipv4_mapped_allowlist_entry_covers_the_ipv4_range() {
        let p = policy(&[("::ffff:10.0.0.0", 104)]);
        assert_eq!(p.admit(sa("10.9.9.9:443")), Ok(()));
        assert_eq!(p.admit(sa("11.0.0.1:443")), Ok(()), "public anyway");
        assert_eq!(p.admit(sa("172.16.0.1:443")), Err(Refusal::Address(AddressClass::Private)));
    }

    #[test]
    fn our_own_address_and_port_is_refused_even_when_allowlisted() {
        let p = policy(&[("127.0.0.1", 32)]);
        assert_eq!(p.admit(sa("127.0.0.1:8080")), Err(Refusal::OwnAddress));
        assert_eq!(p.admit(sa("[::ffff:127.0.0.1]:8080")), Err(Refusal::OwnAddress));
        assert_eq!(p.admit(sa("127.0.0.1:8081")), Ok(()), "another port on the same host is another service");

        let public = policy_at(&[], "203.0.113.5:443");
        assert_eq!(public.admit(sa("203.0.113.5:443")), Err(Refusal::OwnAddress));
        assert_eq!(public.admit(sa("203.0.113.6:443")), Ok(()));
    }

    #[test]
    fn a_wildcard_bind_refuses_its_port_on_every_allowlisted_address() {
        let p = policy_at(&[("10.0.0.0", 8), ("127.0.0.0", 8)], "0.0.0.0:8080");
        assert_eq!(p.admit(sa("10.1.2.3:8080")), Err(Refusal::OwnAddress));
        assert_eq!(p.admit(sa("127.0.0.1:8080")), Err(Refusal::OwnAddress));
        assert_eq!(p.admit(sa("10.1.2.3:8081")), Ok(()));
        assert_eq!(p.admit(sa("8.8.8.8:8080")), Ok(()), "a public address is somebody else");
        let v6 = policy_at(&[("fd00::", 8)], "[::]:8080");
        assert_eq!(v6.admit(sa("[fd00::1]:8080")), Err(Refusal::OwnAddress));
    }

    #[test]
    fn urls_must_be_https_unless_plain_http_is_enabled() {
        let strict = policy(&[]);
        let t = strict.target("https://hooks.example.com/x?y=1").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.literal), ("hooks.example.com", 443, None));
        assert_eq!(strict.target("HTTPS://hooks.example.com/").map(|t| t.port), Ok(443));
        assert_eq!(strict.target("http://hooks.example.com/"), Err(Refusal::Scheme));
        assert_eq!(strict.target("ftp://hooks.example.com/"), Err(Refusal::Scheme));
        assert_eq!(strict.target("wss://hooks.example.com/"), Err(Refusal::Scheme));
        let lax = Policy::new(true, &CidrList::default(), sa(OWN));
        assert_eq!(lax.target("http://hooks.example.com/").map(|t| t.port), Ok(80));
        assert_eq!(lax.target("ftp://hooks.example.com/"), Err(Refusal::Scheme));
    }

    #[test]
    fn urls_need_a_host_a_usable_port_no_userinfo_and_at_most_2048_bytes() {
        let p = policy(&[]);
        assert_eq!(p.target("hooks.example.com"), Err(Refusal::Malformed));
        assert_eq!(p.target("/relative"), Err(Refusal::Malformed));
        assert_eq!(p.target("https:///x"), Err(Refusal::Malformed));
        assert_eq!(p.target("not a url"), Err(Refusal::Malformed));
        assert_eq!(p.target("https://:443/"), Err(Refusal::NoHost));
        assert_eq!(p.target("https://u:p@hooks.example.com/"), Err(Refusal::Userinfo));
        assert_eq!(p.target("https://@hooks.example.com/"), Err(Refusal::Userinfo));
        assert_eq!(p.target("https://hooks.example.com:0/"), Err(Refusal::Port));
        assert_eq!(p.target("https://hooks.example.com:70000/"), Err(Refusal::Port), "never falls back to 443");
        assert_eq!(p.target("https://hooks.example.com:8443/").map(|t| t.port), Ok(8443));
        assert_eq!(p.target("https://hooks.example.com:65535/").map(|t| t.port), Ok(65535));
        assert_eq!(p.target("https://hooks.example.com:/").map(|t| t.port), Ok(443));
        let long = format!("https://hooks.example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(p.target(&long), Err(Refusal::TooLong));
        let fits = format!("https://h.example/{}", "a".repeat(MAX_URL_BYTES - "https://h.example/".len()));
        assert!(p.target(&fits).is_ok());
    }

    #[test]
    fn ip_literal_hosts_are_read_as_addresses_brackets_removed() {
        let p = policy(&[]);
        let t = p.target("https://[2606:4700::1111]:8443/x").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("2606:4700::1111", 8443));
        assert_eq!(t.literal, Some("2606:4700::1111".parse().unwrap()));
        assert_eq!(p.target("https://8.8.8.8/").unwrap().literal, Some("8.8.8.8".parse().unwrap()));
        assert_eq!(p.target("https://[fe80::1%25eth0]/"), Err(Refusal::Malformed), "zone ids are refused");
        assert_eq!(p.target("https://[not-ip]/"), Err(Refusal::Malformed));
    }

    #[test]
    fn refusal_messages_name_the_rule_never_an_address() {
        let shown = Refusal::Address(AddressClass::Loopback).to_string();
        assert_eq!(shown, "target address is not allowed (loopback)");
        assert!(!shown.chars().any(|c| c.is_ascii_digit()));
        assert_eq!(Refusal::OwnAddress.reason(), "own_address");
        assert_eq!(Refusal::Address(AddressClass::Metadata).reason(), "metadata");
    }
}
