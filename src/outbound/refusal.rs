//! Why an outbound target was refused: the verdicts of the URL rules, the address
//! rules and the self-target rules alike.
//!
//! Two kinds (SPEC 13, "Outbound refusals"): a refusal that depends on where a name
//! points ([`Refusal::depends_on_resolution`]: an address class, this instance's own
//! address, a name that does not resolve) is told to whoever saved or tests the URL
//! only as [`FORBIDDEN_TARGET_MESSAGE`], the same for every cause, so that saving URLs
//! cannot map internal DNS names ("db.internal resolves to a private address,
//! nothing.internal does not resolve"); the cause goes to the server log and the
//! `switchboard_outbound_refused_total{reason}` counter. A refusal of the URL's own text
//! (scheme, userinfo, length, an ingest route, Switchboard's own host by name) tells
//! nothing about the network and names its rule.

use super::address::AddressClass;

/// The one message of a refusal that depends on where a name points, whatever the
/// cause: on save (`forbidden_target`), in test-send answers and in every `last_error`
/// a member or agent reads.
pub const FORBIDDEN_TARGET_MESSAGE: &str = "the target's host does not resolve, or resolves to an address this \
     instance does not call (loopback, private, link-local, CGNAT, metadata, multicast or its own); an operator may \
     allow private ranges with SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS";

/// What a test send or test call answers when the outbound guard refused the URL's own
/// text at dial time (it passed when saved, so a setting changed since): the rules that
/// can, and the settings that change them.
pub const REJECTED_URL_MESSAGE: &str = "the outbound guard refused the URL's own text: plain http needs \
     SWITCHBOARD_PUSH_ALLOW_HTTP; Switchboard's own host (SWITCHBOARD_BASE_URL) and its ingest routes are never called";

/// The class name a refusal that depends on where a name points is stored and answered
/// under (a hook's or a sink delivery's `last_error`, a test send's error code).
pub const FORBIDDEN_TARGET: &str = "forbidden_target";

/// Why an outbound target was refused by policy. Never retried. The message names the
/// rule, never a resolved address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not an absolute URL.
    #[error("url is not a valid absolute URL")]
    Malformed,
    /// Longer than [`super::policy::MAX_URL_BYTES`].
    #[error("url is longer than 2048 bytes")]
    TooLong,
    /// Not https (or http where plain http is allowed).
    #[error("url scheme is not allowed: https only (plain http needs SWITCHBOARD_PUSH_ALLOW_HTTP)")]
    Scheme,
    /// No host name.
    #[error("url has no host")]
    NoHost,
    /// A port outside 1–65535.
    #[error("url port must be between 1 and 65535")]
    Port,
    /// `user:password@` in the authority.
    #[error("url must not carry a user name or password")]
    Userinfo,
    /// The target is (or resolves to) an address of a refused class.
    #[error("target address is not allowed ({0})")]
    Address(AddressClass),
    /// The target is this Switchboard's own listen address and port.
    #[error("target is this Switchboard instance")]
    OwnAddress,
    /// The target's host is the host of Switchboard's public base URL.
    #[error("target is this Switchboard's own public host (SWITCHBOARD_BASE_URL)")]
    OwnHost,
    /// The target's path is one of Switchboard's ingest routes (on any host).
    #[error("target is a Switchboard ingest route; a hook there would feed itself")]
    IngestRoute,
    /// The target's host name does not resolve (an error from the resolver, or no
    /// address): to the caller, a refusal like an address class, never a retryable
    /// network failure, or the two would tell apart.
    #[error("target host does not resolve")]
    Unresolved,
}

impl Refusal {
    /// Stable snake_case reason (logs, health `last_error` detail).
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Malformed => "malformed_url",
            Refusal::TooLong => "url_too_long",
            Refusal::Scheme => "scheme",
            Refusal::NoHost => "no_host",
            Refusal::Port => "bad_port",
            Refusal::Userinfo => "userinfo",
            Refusal::Address(class) => class.as_str(),
            Refusal::OwnAddress => "own_address",
            Refusal::OwnHost => "own_host",
            Refusal::IngestRoute => "ingest_route",
            Refusal::Unresolved => "unresolved",
        }
    }

    /// Whether the verdict depends on where the target's name points (its resolved
    /// addresses, or that it has none) rather than on the URL's own text: such a
    /// refusal is answered only as [`FORBIDDEN_TARGET_MESSAGE`].
    pub fn depends_on_resolution(&self) -> bool {
        match self {
            Refusal::Address(_) | Refusal::OwnAddress | Refusal::Unresolved => true,
            Refusal::Malformed
            | Refusal::TooLong
            | Refusal::Scheme
            | Refusal::NoHost
            | Refusal::Port
            | Refusal::Userinfo
            | Refusal::OwnHost
            | Refusal::IngestRoute => false,
        }
    }

    /// What a caller is told: [`FORBIDDEN_TARGET_MESSAGE`] for a refusal that depends
    /// on resolution, else the rule.
    pub fn public_message(&self) -> String {
        if self.depends_on_resolution() { FORBIDDEN_TARGET_MESSAGE.to_owned() } else { self.to_string() }
    }
}

/// Every `reason` label of `switchboard_outbound_refused_total`: each refusal's
/// [`Refusal::reason`] and `dns_timeout` (the resolver did not answer in time).
pub const REFUSAL_REASONS: &[&str] = &[
    "malformed_url",
    "url_too_long",
    "scheme",
    "no_host",
    "bad_port",
    "userinfo",
    "unspecified",
    "reserved",
    "loopback",
    "link_local",
    "multicast",
    "private",
    "unique_local",
    "cgnat",
    "metadata",
    "own_address",
    "own_host",
    "ingest_route",
    "unresolved",
    "dns_timeout",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_that_depends_on_resolution_reads_the_same_and_text_rules_name_themselves() {
        let by_name = [
            Refusal::Address(AddressClass::Loopback),
            Refusal::Address(AddressClass::Private),
            Refusal::Address(AddressClass::Metadata),
            Refusal::Address(AddressClass::Cgnat),
            Refusal::OwnAddress,
            Refusal::Unresolved,
        ];
        for r in by_name {
            assert!(r.depends_on_resolution(), "{r:?}");
            assert_eq!(r.public_message(), FORBIDDEN_TARGET_MESSAGE, "{r:?}");
            assert!(REFUSAL_REASONS.contains(&r.reason()), "{r:?}");
        }
        assert!(FORBIDDEN_TARGET_MESSAGE.contains("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS"));
        assert!(REJECTED_URL_MESSAGE.contains("SWITCHBOARD_PUSH_ALLOW_HTTP"), "a dial-time text refusal names it too");
        assert!(Refusal::Scheme.public_message().contains("SWITCHBOARD_PUSH_ALLOW_HTTP"));
        for r in [Refusal::Scheme, Refusal::Userinfo, Refusal::TooLong, Refusal::IngestRoute, Refusal::OwnHost] {
            assert!(!r.depends_on_resolution(), "{r:?}");
            assert_eq!(r.public_message(), r.to_string());
            assert!(REFUSAL_REASONS.contains(&r.reason()), "{r:?}");
        }
    }
}
