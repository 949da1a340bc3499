//! Which address a request comes from: the TCP peer, unless that peer is a trusted proxy
//! ([`TrustedProxies`]), in which case `X-Forwarded-For` is read to find the client
//! behind it. Pure: the web layer hands in the peer and the header values
//! (`web::client_address`).
//!
//! The walk is nginx's `real_ip_recursive on` (`ngx_http_get_forwarded_addr_internal`
//! in `ngx_http_core_module.c`), which is also what Rack's `Request#ip` and Rails'
//! `RemoteIp` do with their trusted proxies: every proxy *appends* the address it was
//! called from, so the list is only as trustworthy as whoever wrote each entry. Reading
//! from the right, each entry a trusted proxy wrote is believed; the first address that
//! is **not** a trusted proxy is the client (everything left of it was written by the
//! client itself, or by proxies it chose, and is ignored). So:
//!
//! - the TCP peer not trusted: the peer, whatever the header says;
//! - entries that are trusted proxies are stepped over; the first untrusted one is the
//!   client;
//! - an entry that is not an address stops the walk, and the last trusted hop (the peer,
//!   or the last trusted entry) is the client: nothing left of garbage is believed, as
//!   nginx keeps the address it had when `ngx_parse_addr_port` fails;
//! - every entry trusted: the leftmost, as nginx does.
//!
//! Entry forms accepted (white space around an entry ignored, empty entries skipped as
//! RFC 9110 §5.6.1 asks of list recipients): `192.0.2.1`, `2001:db8::1`,
//! `[2001:db8::1]`, and with a port `192.0.2.1:51234` or `[2001:db8::1]:51234`. nginx
//! never writes a port, but some proxies do (IIS ARR, Azure Application Gateway), and
//! nginx's own parser accepts one, so the port is dropped rather than the entry
//! refused. An unbracketed IPv6 address is read as an address, never as address and
//! port (`2001:db8::1:443` is the address ending `:1:443`). An IPv4-mapped IPv6 address
//! is its IPv4 address. Anything else (`unknown`, a host name, a zone id, quotes) is
//! garbage.
//!
//! Several `X-Forwarded-For` header lines are one list, in order (RFC 9110 §5.3).
//!
//! The work is bounded whatever the request carries: at most [`MAX_HOPS`] entries are
//! looked at, and finding each entry scans at most [`MAX_ENTRY_BYTES`] + 1 bytes back
//! for its comma (a longer entry is garbage), so a request costs at most a few
//! kilobytes of scanning however long its header. A walk that meets the hop bound stops
//! as at garbage: the last trusted hop is the client.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use super::trusted_proxies::TrustedProxies;

/// Most `X-Forwarded-For` entries looked at, from the right. A real chain has one entry
/// per proxy; twenty is far past any deployment's.
pub const MAX_HOPS: usize = 20;

/// Longest entry, in bytes, white space included. The longest address with a port,
/// `[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:65535`, is 53.
pub const MAX_ENTRY_BYTES: usize = 64;

/// One entry of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    /// Nothing between two commas.
    Empty,
    /// An address (port dropped, IPv4-mapped made IPv4).
    Address(IpAddr),
    /// Not an address, or longer than [`MAX_ENTRY_BYTES`].
    Garbage,
}

/// The client's address: `peer` (the TCP peer) unless it is a trusted proxy; then the
/// first address from the right of `forwarded_for` (the values of every
/// `X-Forwarded-For` header, in order) that is not one (module docs).
pub fn client_address<'a>(
    peer: IpAddr,
    forwarded_for: impl IntoIterator<Item = &'a [u8]>,
    trusted: &TrustedProxies,
) -> IpAddr {
    let mut client = peer.to_canonical();
    if !trusted.trusts(client) {
        return client;
    }
    // Header lines are few (actix accepts at most 96 headers in all); entries are
    // taken from the last line backwards.
    let lines: Vec<&[u8]> = forwarded_for.into_iter().collect();
    let hops = lines.iter().rev().flat_map(|line| EntriesFromRight { rest: Some(line) }).take(MAX_HOPS);
    for hop in hops {
        match hop {
            Hop::Empty => {}
            Hop::Garbage => return client,
            Hop::Address(address) if trusted.trusts(address) => client = address,
            Hop::Address(address) => return address,
        }
    }
    client
}

/// The entries of one header value, last first. After an over-long entry it ends.
struct EntriesFromRight<'a> {
    /// What is left of the value, `None` once its first entry has been given.
    rest: Option<&'a [u8]>,
}

impl Iterator for EntriesFromRight<'_> {
    type Item = Hop;

    fn next(&mut self) -> Option<Hop> {
        let rest = self.rest?;
        let window = rest.len().saturating_sub(MAX_ENTRY_BYTES + 1);
        match rest[window..].iter().rposition(|&b| b == b',') {
            Some(at) => {
                let comma = window + at;
                self.rest = Some(&rest[..comma]);
                Some(hop(&rest[comma + 1..]))
            }
            None => {
                self.rest = None;
                Some(if rest.len() > MAX_ENTRY_BYTES { Hop::Garbage } else { hop(rest) })
            }
        }
    }
}

fn hop(entry: &[u8]) -> Hop {
    if entry.len() > MAX_ENTRY_BYTES {
        return Hop::Garbage;
    }
    let Ok(text) = std::str::from_utf8(entry) else { return Hop::Garbage };
    let text = text.trim_matches([' ', '\t']);
    if text.is_empty() {
        return Hop::Empty;
    }
    let address = text
        .parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| text.strip_prefix('[')?.strip_suffix(']')?.parse::<Ipv6Addr>().ok().map(IpAddr::V6));
    address.map_or(Hop::Garbage, |a| Hop::Address(a.to_canonical()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn trusted(raw: &str) -> TrustedProxies {
        TrustedProxies::parse(raw).unwrap()
    }

    /// The client for a peer and header lines.
    fn client(peer: &str, lines: &[&str], proxies: &str) -> IpAddr {
        client_address(ip(peer), lines.iter().map(|l| l.as_bytes()), &trusted(proxies))
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_the_header_says() {
        assert_eq!(client("192.0.2.1", &["198.51.100.7"], ""), ip("192.0.2.1"));
        assert_eq!(client("192.0.2.1", &["198.51.100.7"], "10.0.0.0/8"), ip("192.0.2.1"));
        assert_eq!(client("::ffff:192.0.2.1", &[], ""), ip("192.0.2.1"), "a mapped peer is its IPv4 form");
    }

    #[test]
    fn behind_a_trusted_proxy_the_rightmost_untrusted_entry_is_the_client() {
        let proxies = "127.0.0.1, 10.0.0.0/8";
        assert_eq!(client("127.0.0.1", &["198.51.100.7"], proxies), ip("198.51.100.7"));
        // The client wrote the first entry itself (nginx's $proxy_add_x_forwarded_for
        // keeps it): a forgery left of the real address changes nothing.
        assert_eq!(client("127.0.0.1", &["6.6.6.6, 198.51.100.7"], proxies), ip("198.51.100.7"));
        // Two proxies deep: the inner one (10.1.1.1) appended the outer one's client.
        assert_eq!(client("127.0.0.1", &["6.6.6.6, 198.51.100.7, 10.1.1.1"], proxies), ip("198.51.100.7"));
        // Without a header behind a trusted peer, the peer is all there is.
        assert_eq!(client("127.0.0.1", &[], proxies), ip("127.0.0.1"));
    }

    #[test]
    fn several_header_lines_are_one_list_in_order() {
        let proxies = "127.0.0.1, 10.0.0.0/8";
        assert_eq!(client("127.0.0.1", &["6.6.6.6", "198.51.100.7, 10.1.1.1"], proxies), ip("198.51.100.7"));
        assert_eq!(client("127.0.0.1", &["198.51.100.7", "10.1.1.1", ""], proxies), ip("198.51.100.7"));
    }

    #[test]
    fn white_space_empty_entries_ipv6_forms_and_ports_are_read() {
        let proxies = "127.0.0.1, fd00::/8";
        for (line, want) in [
            ("  198.51.100.7 ,\t10.0.0.1  ", "10.0.0.1"),
            ("198.51.100.7,,", "198.51.100.7"),
            (",198.51.100.7", "198.51.100.7"),
            ("2001:db8::7", "2001:db8::7"),
            ("[2001:db8::7]", "2001:db8::7"),
            ("[2001:db8::7]:51234", "2001:db8::7"),
            ("198.51.100.7:51234", "198.51.100.7"),
            ("::ffff:198.51.100.7", "198.51.100.7"),
            ("2001:db8::7, fd00::1, [fd00::2]:80", "2001:db8::7"),
            ("2001:db8::1:443", "2001:db8::1:443"),
        ] {
            assert_eq!(client("127.0.0.1", &[line], proxies), ip(want), "{line:?}");
        }
    }

    #[test]
    fn garbage_stops_the_walk_and_the_last_trusted_hop_is_the_client() {
        let proxies = "127.0.0.1, 10.0.0.0/8";
        for line in ["198.51.100.7, unknown", "198.51.100.7, evil.example", "\"198.51.100.7\"", "fe80::1%eth0", "1.2.3"]
        {
            assert_eq!(client("127.0.0.1", &[line], proxies), ip("127.0.0.1"), "{line:?}");
        }
        // Nothing left of the garbage is believed, even an address.
        assert_eq!(client("127.0.0.1", &["198.51.100.7, garbage, 10.2.2.2"], proxies), ip("10.2.2.2"));
        assert_eq!(client("127.0.0.1", &["198.51.100.7", "garbage"], proxies), ip("127.0.0.1"));
        assert_eq!(client("127.0.0.1", &["198.51.100.7 10.2.2.2"], proxies), ip("127.0.0.1"), "a space is no comma");
        let not_utf8: &[u8] = b"198.51.100.7, \xff";
        assert_eq!(client_address(ip("127.0.0.1"), [not_utf8], &trusted(proxies)), ip("127.0.0.1"));
    }

    #[test]
    fn every_entry_trusted_leaves_the_leftmost() {
        assert_eq!(client("127.0.0.1", &["10.3.3.3, 10.2.2.2"], "127.0.0.1, 10.0.0.0/8"), ip("10.3.3.3"));
    }

    #[test]
    fn an_over_long_entry_is_garbage_and_never_scanned_whole() {
        let proxies = "127.0.0.1";
        let padded = format!("{}198.51.100.7", " ".repeat(MAX_ENTRY_BYTES));
        assert_eq!(client("127.0.0.1", &[&padded], proxies), ip("127.0.0.1"));
        let long_left = format!("{}, 198.51.100.7", "x".repeat(100_000));
        assert_eq!(client("127.0.0.1", &[&long_left], proxies), ip("198.51.100.7"), "what is left is never read");
        let at_the_bound = format!("{}198.51.100.7", " ".repeat(MAX_ENTRY_BYTES - "198.51.100.7".len()));
        assert_eq!(client("127.0.0.1", &[&at_the_bound], proxies), ip("198.51.100.7"));
    }

    #[test]
    fn the_walk_stops_after_max_hops_at_the_last_trusted_one() {
        let proxies = "127.0.0.1, 10.0.0.0/8";
        let chain = |trusted_hops: usize| {
            let mut entries = vec!["198.51.100.7".to_owned()];
            entries.extend((0..trusted_hops).map(|i| format!("10.0.0.{i}")));
            entries.join(", ")
        };
        assert_eq!(client("127.0.0.1", &[&chain(MAX_HOPS - 1)], proxies), ip("198.51.100.7"));
        assert_eq!(client("127.0.0.1", &[&chain(MAX_HOPS)], proxies), ip("10.0.0.0"), "the client is one hop too far");
        let many_lines: Vec<String> = (0..10_000).map(|i| format!("10.0.{}.{}", i / 256 % 256, i % 256)).collect();
        let lines: Vec<&str> = many_lines.iter().map(String::as_str).collect();
        assert_eq!(client("127.0.0.1", &lines, proxies), ip(&many_lines[many_lines.len() - MAX_HOPS]));
    }
}
