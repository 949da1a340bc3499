//! The reverse proxies whose `X-Forwarded-For` is believed (`SWITCHBOARD_TRUSTED_PROXIES`):
//! a list of address ranges, parsed once at start-up. Empty, the default, trusts no
//! proxy: every request's client is its TCP peer, whatever headers it carries.
//!
//! Entries are CIDR ranges (`10.0.0.0/8`, `fd00::/8`) or bare addresses (a `/32` or a
//! `/128`). Refused, so that a typo stops start-up instead of trusting the wrong hosts:
//! anything that is not an address or a range; a range with bits set past its prefix
//! (`10.1.2.3/8`: did the operator mean the host or the network?); and a `/0`, which
//! would believe every client's own claim about where it comes from. An IPv4-mapped IPv6
//! range (`::ffff:10.0.0.0/104`) is kept as the IPv4 range it names, since addresses are
//! compared in their IPv4 form.

use std::net::IpAddr;
use std::str::FromStr;

use ipnet::{IpNet, Ipv4Net};

/// The ranges of trusted proxies (empty: none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// No proxy is trusted: the TCP peer is always the client.
    pub fn none() -> Self {
        TrustedProxies(Vec::new())
    }

    /// A comma-separated list of ranges and addresses (white space around entries and
    /// empty entries ignored). The error names the first bad entry and why.
    pub fn parse(raw: &str) -> Result<Self, String> {
        raw.split(',').map(str::trim).filter(|e| !e.is_empty()).map(range).collect::<Result<_, _>>().map(TrustedProxies)
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `address` (an IPv4-mapped IPv6 address counts as its IPv4 form) is a
    /// trusted proxy.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The ranges, as written back (`127.0.0.1/32`).
    pub fn ranges(&self) -> impl Iterator<Item = &IpNet> {
        self.0.iter()
    }
}

fn range(entry: &str) -> Result<IpNet, String> {
    let net = match IpAddr::from_str(entry) {
        Ok(address) => IpNet::from(address),
        Err(_) => IpNet::from_str(entry)
            .map_err(|_| format!("{entry:?} is not an IP address or a CIDR range (10.0.0.0/8, 127.0.0.1, fd00::/8)"))?,
    };
    if net.prefix_len() == 0 {
        return Err(format!("{entry:?} would trust every address, so any client could choose its own address"));
    }
    if net.trunc() != net {
        return Err(format!(
            "{entry:?} has bits set past its /{} prefix: write the network ({}) or the single address ({})",
            net.prefix_len(),
            net.trunc(),
            IpNet::from(net.addr())
        ));
    }
    Ok(unmapped(net))
}

/// `::ffff:a.b.c.d/n` (n ≥ 96) as `a.b.c.d/(n − 96)`.
fn unmapped(net: IpNet) -> IpNet {
    match net {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match (v6.addr().to_ipv4_mapped(), v6.prefix_len()) {
            (Some(v4), len) => Ipv4Net::new(v4, len - 96).map_or(IpNet::V6(v6), IpNet::V4),
            _ => IpNet::V6(v6),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_is_empty_and_trusts_nobody() {
        let none = TrustedProxies::parse("").unwrap();
        assert_eq!(none, TrustedProxies::none());
        assert!(none.is_empty());
        assert!(!none.trusts(ip("127.0.0.1")));
        assert_eq!(TrustedProxies::parse(" , ,").unwrap(), TrustedProxies::none());
    }

    #[test]
    fn ranges_and_bare_addresses_of_both_families_are_trusted_by_containment() {
        let t = TrustedProxies::parse(" 10.0.0.0/8 ,127.0.0.1, fd00::/8,::1").unwrap();
        let written: Vec<String> = t.ranges().map(ToString::to_string).collect();
        assert_eq!(written, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8", "::1/128"]);
        for yes in ["10.1.2.3", "127.0.0.1", "fd12::1", "::1", "::ffff:10.9.9.9", "::ffff:127.0.0.1"] {
            assert!(t.trusts(ip(yes)), "{yes}");
        }
        for no in ["11.0.0.1", "127.0.0.2", "fe80::1", "::2", "192.0.2.1"] {
            assert!(!t.trusts(ip(no)), "{no}");
        }
    }

    #[test]
    fn an_ipv4_mapped_range_is_kept_as_the_ipv4_range_it_names() {
        let t = TrustedProxies::parse("::ffff:10.0.0.0/104").unwrap();
        assert_eq!(t.ranges().map(ToString::to_string).collect::<Vec<_>>(), ["10.0.0.0/8"]);
        assert!(t.trusts(ip("10.2.3.4")));
    }

    #[test]
    fn bad_entries_are_refused_naming_the_entry() {
        for (raw, bad, why) in [
            ("10.0.0.0/8,nginx", "\"nginx\"", "not an IP address"),
            ("10.0.0.0/33", "\"10.0.0.0/33\"", "not an IP address"),
            ("fd00::/129", "\"fd00::/129\"", "not an IP address"),
            ("10.0.0.0/x", "\"10.0.0.0/x\"", "not an IP address"),
            ("10.0.0.1/8", "\"10.0.0.1/8\"", "10.0.0.0/8"),
            ("0.0.0.0/0", "\"0.0.0.0/0\"", "every address"),
            ("::/0", "\"::/0\"", "every address"),
            ("10.0.0.0/8;127.0.0.1", "\"10.0.0.0/8;127.0.0.1\"", "not an IP address"),
        ] {
            let err = TrustedProxies::parse(raw).unwrap_err();
            assert!(err.contains(bad) && err.contains(why), "{raw}: {err}");
        }
    }
}
