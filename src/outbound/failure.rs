//! The class of an outbound attempt that got no HTTP response, for retry decisions,
//! health and metrics: a guard refusal (never retried) told apart from timeouts, TLS
//! failures and other network trouble (retried). Pure vocabulary: how a client's error
//! becomes one of these is [`super::classify`].

use super::refusal::Refusal;

/// The class of an attempt that got no HTTP response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportFailure {
    /// DNS, connect, TLS handshake or the response head took too long.
    Timeout,
    /// DNS failure, connection refused or reset, a broken response, anything else on the wire.
    Network,
    /// The TLS handshake failed (certificate, protocol).
    Tls,
    /// The SSRF guard refused the URL's own text (scheme, own host, ingest route; also
    /// an unusable URL): never retried.
    RejectedSsrf,
    /// The SSRF guard refused where the target's name points (an address class, our
    /// own address, a name that does not resolve): never retried, and one class for
    /// every such cause, so a stored `last_error` does not tell them apart.
    ForbiddenTarget,
}

impl TransportFailure {
    /// Stable snake_case name (`last_error`, the `result` metric label).
    pub fn as_str(self) -> &'static str {
        match self {
            TransportFailure::Timeout => "timeout",
            TransportFailure::Network => "network",
            TransportFailure::Tls => "tls",
            TransportFailure::RejectedSsrf => "rejected_ssrf",
            TransportFailure::ForbiddenTarget => super::refusal::FORBIDDEN_TARGET,
        }
    }

    /// Whether another attempt may succeed.
    pub fn is_retryable(self) -> bool {
        !matches!(self, TransportFailure::RejectedSsrf | TransportFailure::ForbiddenTarget)
    }

    /// The class of a guard refusal.
    pub fn of_refusal(refusal: Refusal) -> Self {
        if refusal.depends_on_resolution() { TransportFailure::ForbiddenTarget } else { TransportFailure::RejectedSsrf }
    }
}
