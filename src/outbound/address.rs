//! What kind of address a resolved IP is, as far as outbound calls care: loopback,
//! private, link-local, metadata and the rest. Pure; the policy decides what each
//! class may do.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// AWS, GCP and Azure instance metadata (also link-local).
const METADATA_V4: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);
/// Alibaba Cloud instance metadata (inside CGNAT space).
const METADATA_V4_ALIBABA: Ipv4Addr = Ipv4Addr::new(100, 100, 100, 200);
/// AWS instance metadata over IPv6 (inside ULA space).
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// What kind of address a resolved IP is, as far as outbound calls care.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// Routable on the internet: allowed.
    Public,
    /// `0.0.0.0` or `::` (Linux dials them as this host).
    Unspecified,
    /// `0.0.0.0/8` ("this network") and `240.0.0.0/4` (reserved, with the broadcast address).
    Reserved,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// `224.0.0.0/4`, `ff00::/8` (interface- and link-local multicast included).
    Multicast,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// Unique local IPv6, `fc00::/7`.
    UniqueLocal,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    Cgnat,
    /// A cloud instance-metadata address (`169.254.169.254`, `100.100.100.200`, `fd00:ec2::254`).
    Metadata,
}

impl AddressClass {
    /// Stable snake_case name (logs, refusal reasons).
    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Public => "public",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Reserved => "reserved",
            AddressClass::Loopback => "loopback",
            AddressClass::LinkLocal => "link_local",
            AddressClass::Multicast => "multicast",
            AddressClass::Private => "private",
            AddressClass::UniqueLocal => "unique_local",
            AddressClass::Cgnat => "cgnat",
            AddressClass::Metadata => "metadata",
        }
    }
}

impl std::fmt::Display for AddressClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 address it is.
pub fn unmap(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The class of an address (IPv4-mapped addresses classify as the IPv4 address).
pub fn classify(ip: IpAddr) -> AddressClass {
    match unmap(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [first, second, ..] = ip.octets();
    if ip.is_unspecified() {
        AddressClass::Unspecified
    } else if first == 0 || first >= 240 {
        AddressClass::Reserved
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip == METADATA_V4 || ip == METADATA_V4_ALIBABA {
        AddressClass::Metadata
    } else if ip.is_link_local() {
        AddressClass::LinkLocal
    } else if ip.is_multicast() {
        AddressClass::Multicast
    } else if ip.is_private() {
        AddressClass::Private
    } else if first == 100 && (second & 0b1100_0000) == 64 {
        AddressClass::Cgnat
    } else {
        AddressClass::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    let segments = ip.segments();
    // NAT64 (64:ff9b::/96) reaches the IPv4 address in its low 32 bits, wherever a
    // DNS64 gateway is in the path: judge it by that address.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let [a, b, c, d] = ip.octets()[12..] else { return AddressClass::Reserved };
        return classify_v4(Ipv4Addr::new(a, b, c, d));
    }
    if ip.is_unspecified() {
        AddressClass::Unspecified
    } else if ip.is_loopback() {
        AddressClass::Loopback
    } else if ip.is_multicast() {
        AddressClass::Multicast
    } else if ip == METADATA_V6 {
        AddressClass::Metadata
    } else if ip.is_unicast_link_local() {
        AddressClass::LinkLocal
    } else if ip.is_unique_local() {
        AddressClass::UniqueLocal
    } else {
        AddressClass::Public
    }
}
