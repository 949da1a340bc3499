//! What a failed outbound attempt was, for retry decisions, health and metrics: a guard
//! refusal (never retried) told apart from timeouts, TLS failures and other network
//! trouble (retried).

use std::error::Error as StdError;
use std::io;

use awc::error::{ConnectError, SendRequestError};

use super::failure::TransportFailure;
use super::guard::CheckError;
use super::refusal::Refusal;

/// Classifies an error from a client built by [`super::Guard::client`].
pub fn classify(err: &SendRequestError) -> TransportFailure {
    match err {
        SendRequestError::Timeout => TransportFailure::Timeout,
        // awc refuses URLs it cannot dial before connecting; the guard would refuse them too.
        SendRequestError::Url(_) => TransportFailure::RejectedSsrf,
        SendRequestError::Connect(c) => classify_connect(c),
        SendRequestError::Send(e) => classify_io(e),
        _ => TransportFailure::Network,
    }
}

/// The guard's refusal inside a send error, if the guard refused the connection.
pub fn refusal(err: &SendRequestError) -> Option<Refusal> {
    match err {
        SendRequestError::Connect(ConnectError::Resolver(inner)) => inner.downcast_ref::<Refusal>().copied(),
        _ => None,
    }
}

/// Whether a send error is the guard refusing the target.
pub fn is_refusal(err: &SendRequestError) -> bool {
    refusal(err).is_some()
}

impl From<&CheckError> for TransportFailure {
    /// A pre-attempt check that failed counts as the attempt.
    fn from(err: &CheckError) -> Self {
        match err {
            CheckError::Refused(r) => TransportFailure::of_refusal(*r),
            CheckError::Dns(e) => classify_io(e),
        }
    }
}

fn classify_connect(err: &ConnectError) -> TransportFailure {
    match err {
        ConnectError::Timeout => TransportFailure::Timeout,
        ConnectError::SslIsNotSupported => TransportFailure::Tls,
        ConnectError::Resolver(inner) => match inner.downcast_ref::<Refusal>() {
            Some(r) => TransportFailure::of_refusal(*r),
            None => inner.downcast_ref::<io::Error>().map_or(TransportFailure::Network, classify_io),
        },
        ConnectError::Io(e) => classify_io(e),
        _ => TransportFailure::Network,
    }
}

fn classify_io(err: &io::Error) -> TransportFailure {
    if err.kind() == io::ErrorKind::TimedOut {
        TransportFailure::Timeout
    } else if is_tls(err) {
        TransportFailure::Tls
    } else {
        TransportFailure::Network
    }
}

/// rustls reports handshake failures as I/O errors wrapping its own error.
fn is_tls(err: &io::Error) -> bool {
    let mut source: Option<&(dyn StdError + 'static)> = err.get_ref().map(|e| e as _);
    while let Some(e) = source {
        if e.is::<rustls::Error>() {
            return true;
        }
        source = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outbound::policy::AddressClass;

    fn connect(e: ConnectError) -> SendRequestError {
        SendRequestError::Connect(e)
    }

    #[test]
    fn a_guard_refusal_is_never_retried_and_one_that_depends_on_resolution_is_forbidden_target() {
        let err = connect(ConnectError::Resolver(Box::new(Refusal::Address(AddressClass::Loopback))));
        assert_eq!(classify(&err), TransportFailure::ForbiddenTarget);
        assert!(!classify(&err).is_retryable());
        assert_eq!(refusal(&err), Some(Refusal::Address(AddressClass::Loopback)));
        assert!(is_refusal(&err));
        let unresolved = connect(ConnectError::Resolver(Box::new(Refusal::Unresolved)));
        assert_eq!(classify(&unresolved), classify(&err), "a name that does not resolve reads as a private one");
        let text = connect(ConnectError::Resolver(Box::new(Refusal::Scheme)));
        assert_eq!(classify(&text), TransportFailure::RejectedSsrf);
        assert!(!classify(&text).is_retryable());
        assert_eq!(TransportFailure::ForbiddenTarget.as_str(), "forbidden_target");
    }

    #[test]
    fn dns_failures_are_network_and_slow_ones_timeouts_both_retried() {
        let dns = connect(ConnectError::Resolver(Box::new(io::Error::other("SERVFAIL"))));
        assert_eq!(classify(&dns), TransportFailure::Network);
        assert!(!is_refusal(&dns));
        let slow = connect(ConnectError::Resolver(Box::new(io::Error::new(io::ErrorKind::TimedOut, "slow"))));
        assert_eq!(classify(&slow), TransportFailure::Timeout);
        assert!(classify(&slow).is_retryable());
    }

    #[test]
    fn timeouts_tls_and_connection_failures_are_told_apart() {
        assert_eq!(classify(&SendRequestError::Timeout), TransportFailure::Timeout);
        assert_eq!(classify(&connect(ConnectError::Timeout)), TransportFailure::Timeout);
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(classify(&connect(ConnectError::Io(refused))), TransportFailure::Network);
        let tls = io::Error::new(io::ErrorKind::InvalidData, rustls::Error::DecryptError);
        assert_eq!(classify(&connect(ConnectError::Io(tls))), TransportFailure::Tls);
        assert_eq!(classify(&connect(ConnectError::NoRecords)), TransportFailure::Network);
    }

    #[test]
    fn a_failed_pre_attempt_check_classifies_like_the_attempt() {
        assert_eq!(
            TransportFailure::from(&CheckError::Refused(Refusal::OwnAddress)),
            TransportFailure::ForbiddenTarget
        );
        assert_eq!(TransportFailure::from(&CheckError::Refused(Refusal::IngestRoute)), TransportFailure::RejectedSsrf);
        assert_eq!(TransportFailure::from(&CheckError::Dns(io::Error::other("nx"))), TransportFailure::Network);
    }
}
