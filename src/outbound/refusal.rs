//! Why an outbound target was refused: the verdicts of the URL rules, the address
//! rules and the self-target rules alike.

use super::address::AddressClass;

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
    #[error("url scheme is not allowed (https only, http only where enabled)")]
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
        }
    }
}
