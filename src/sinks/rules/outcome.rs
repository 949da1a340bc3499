//! What a sink's answer means and when to try again (SPEC section 10, "Outbox").
//!
//! - Gotify: any 2xx is sent.
//! - Apprise API: 200 is sent; 424 means some of its services failed (retried once,
//!   then the row is `partial`); 204 means the key or URLs name nothing it can notify, a
//!   configuration error that no retry fixes (`undeliverable` at once). Other 2xx
//!   answers are taken as sent.
//! - Either: 408, 429, 5xx, a timeout, a TLS or network failure may pass on a later
//!   try; a 3xx (redirects are never followed), any other 4xx, or the outbound guard's
//!   refusal will not.
//!
//! Retries wait `base`, then twice that, and so on, for at most `max_attempts` attempts
//! in all (defaults 30 s and 7: waits of 30, 60, 120, 240, 480 and 960 s, so the last
//! attempt starts about 31.5 minutes after the first); then the row is `undeliverable`
//! with the last attempt's error class.

use std::time::Duration;

use crate::domain::text_enum::text_enum;
use crate::outbound::failure::TransportFailure;
use crate::sinks::rules::vocabulary::{OutboxStatus, SinkKind};

/// Longest one attempt may take (DNS, connect, TLS, the whole answer).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);
/// The first retry's wait by default (`SWITCHBOARD_OUTBOX_RETRY_BASE_MS`).
pub const DEFAULT_RETRY_BASE: Duration = Duration::from_secs(30);
/// Attempts per row by default (`SWITCHBOARD_OUTBOX_MAX_ATTEMPTS`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 7;
/// The longest single wait, whatever base and attempt count are configured.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(24 * 3600);

text_enum!(
    /// Why an attempt did not deliver (a row's `last_error`; also a metrics label).
    ErrorClass {
        /// 401: the token or key was refused.
        Auth => "auth",
        /// 403.
        Forbidden => "forbidden",
        /// 404: no such application, key or route.
        NotFound => "not_found",
        /// 429.
        RateLimited => "rate_limited",
        /// Any other 4xx.
        ClientError => "client_error",
        /// A 3xx (never followed).
        Redirect => "redirect",
        /// A 5xx.
        ServerError => "server_error",
        /// Apprise 424: some of its services failed.
        Partial => "partial",
        /// Apprise 204: the key or URLs name nothing it can notify.
        Configuration => "configuration",
        /// The attempt timed out (also a 408 answer).
        Timeout => "timeout",
        /// Resolving, connecting or exchanging failed (also a status no server means).
        Network => "network",
        /// The TLS handshake failed.
        Tls => "tls",
        /// The outbound guard refused the URL's own text (scheme, own host, ingest route).
        RejectedSsrf => "rejected_ssrf",
        /// The outbound guard refused where the target's name points (an address class,
        /// our own address, a name that does not resolve): one class for every cause.
        ForbiddenTarget => "forbidden_target",
    }
);

/// What one attempt's answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkAnswer {
    /// The sink took it.
    Sent,
    /// Apprise 424: retried once, then recorded `partial`.
    Partial,
    /// Apprise 204: never retried.
    ConfigurationError,
    /// Another attempt may succeed.
    Retryable(ErrorClass),
    /// No later attempt will succeed.
    Permanent(ErrorClass),
}

impl SinkAnswer {
    /// The error class of a failed attempt (none when sent).
    pub fn error_class(self) -> Option<ErrorClass> {
        match self {
            SinkAnswer::Sent => None,
            SinkAnswer::Partial => Some(ErrorClass::Partial),
            SinkAnswer::ConfigurationError => Some(ErrorClass::Configuration),
            SinkAnswer::Retryable(c) | SinkAnswer::Permanent(c) => Some(c),
        }
    }
}

/// The meaning of HTTP `status` from a sink of `kind`.
pub fn classify_status(kind: SinkKind, status: u16) -> SinkAnswer {
    match (kind, status) {
        (SinkKind::Apprise, 204) => SinkAnswer::ConfigurationError,
        (SinkKind::Apprise, 424) => SinkAnswer::Partial,
        _ => classify_http(status),
    }
}

/// The meaning of HTTP `status` from a service that gives no status a meaning of its
/// own (Gotify; Cairn): any 2xx took it.
pub fn classify_http(status: u16) -> SinkAnswer {
    match status {
        200..=299 => SinkAnswer::Sent,
        300..=399 => SinkAnswer::Permanent(ErrorClass::Redirect),
        401 => SinkAnswer::Permanent(ErrorClass::Auth),
        403 => SinkAnswer::Permanent(ErrorClass::Forbidden),
        404 => SinkAnswer::Permanent(ErrorClass::NotFound),
        408 => SinkAnswer::Retryable(ErrorClass::Timeout),
        429 => SinkAnswer::Retryable(ErrorClass::RateLimited),
        400..=499 => SinkAnswer::Permanent(ErrorClass::ClientError),
        500..=599 => SinkAnswer::Retryable(ErrorClass::ServerError),
        // A final 1xx or a code no server means: a broken exchange.
        _ => SinkAnswer::Retryable(ErrorClass::Network),
    }
}

/// The meaning of an attempt that got no HTTP answer.
pub fn classify_transport(failure: TransportFailure) -> SinkAnswer {
    match failure {
        TransportFailure::Timeout => SinkAnswer::Retryable(ErrorClass::Timeout),
        TransportFailure::Network => SinkAnswer::Retryable(ErrorClass::Network),
        TransportFailure::Tls => SinkAnswer::Retryable(ErrorClass::Tls),
        TransportFailure::RejectedSsrf => SinkAnswer::Permanent(ErrorClass::RejectedSsrf),
        TransportFailure::ForbiddenTarget => SinkAnswer::Permanent(ErrorClass::ForbiddenTarget),
    }
}

/// The retry schedule: waits doubling from `base`, at most `max_attempts` attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The wait before the second attempt.
    pub base: Duration,
    /// Attempts in all (taken as at least 1).
    pub max_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { base: DEFAULT_RETRY_BASE, max_attempts: DEFAULT_MAX_ATTEMPTS }
    }
}

impl RetryPolicy {
    /// [`next_attempt`] under this policy.
    pub fn next_attempt(&self, attempts_so_far: u32) -> Option<Duration> {
        next_attempt(attempts_so_far, self.base, self.max_attempts)
    }
}

/// How long to wait before the next attempt, after `attempts_so_far` attempts: none
/// made yet, at once (zero); after attempt `n`, `base · 2^(n−1)` (at most
/// [`MAX_RETRY_DELAY`]); `None` once `max_attempts` (at least 1) have been made.
pub fn next_attempt(attempts_so_far: u32, base: Duration, max_attempts: u32) -> Option<Duration> {
    if attempts_so_far >= max_attempts.max(1) {
        return None;
    }
    let Some(doublings) = attempts_so_far.checked_sub(1) else {
        return Some(Duration::ZERO);
    };
    let wait = 1u32.checked_shl(doublings).and_then(|factor| base.checked_mul(factor)).unwrap_or(MAX_RETRY_DELAY);
    Some(wait.min(MAX_RETRY_DELAY))
}

/// What to do with a row after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Finished: record `status` (`sent`, `partial` or `undeliverable`) and the error
    /// class of the last attempt, if it failed.
    Done(OutboxStatus, Option<ErrorClass>),
    /// Try again after this wait; record the error class meanwhile.
    RetryAfter(Duration, ErrorClass),
}

/// The step after an attempt answered `answer`. `attempts_so_far` counts this attempt;
/// `previous` is the error class the row recorded before it (a 424 after a 424 is the
/// end: Apprise's partial failure is retried once).
pub fn after_attempt(
    answer: SinkAnswer,
    attempts_so_far: u32,
    previous: Option<ErrorClass>,
    policy: &RetryPolicy,
) -> Step {
    let retry = policy.next_attempt(attempts_so_far);
    match answer {
        SinkAnswer::Sent => Step::Done(OutboxStatus::Sent, None),
        SinkAnswer::Partial => match retry {
            Some(wait) if previous != Some(ErrorClass::Partial) => Step::RetryAfter(wait, ErrorClass::Partial),
            _ => Step::Done(OutboxStatus::Partial, Some(ErrorClass::Partial)),
        },
        SinkAnswer::ConfigurationError => Step::Done(OutboxStatus::Undeliverable, Some(ErrorClass::Configuration)),
        SinkAnswer::Permanent(class) => Step::Done(OutboxStatus::Undeliverable, Some(class)),
        SinkAnswer::Retryable(class) => match retry {
            Some(wait) => Step::RetryAfter(wait, class),
            None => Step::Done(OutboxStatus::Undeliverable, Some(class)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gotify_takes_any_2xx_and_apprise_only_200_with_424_partial_and_204_configuration() {
        for s in [200, 201, 204, 299] {
            assert_eq!(classify_status(SinkKind::Gotify, s), SinkAnswer::Sent, "{s}");
        }
        assert_eq!(classify_status(SinkKind::Apprise, 200), SinkAnswer::Sent);
        assert_eq!(classify_status(SinkKind::Apprise, 204), SinkAnswer::ConfigurationError);
        assert_eq!(classify_status(SinkKind::Apprise, 424), SinkAnswer::Partial);
        assert_eq!(classify_status(SinkKind::Gotify, 424), SinkAnswer::Permanent(ErrorClass::ClientError));
    }

    #[test]
    fn server_trouble_is_retryable_and_client_errors_are_final() {
        for kind in SinkKind::ALL {
            let k = *kind;
            assert_eq!(classify_status(k, 500), SinkAnswer::Retryable(ErrorClass::ServerError));
            assert_eq!(classify_status(k, 503), SinkAnswer::Retryable(ErrorClass::ServerError));
            assert_eq!(classify_status(k, 408), SinkAnswer::Retryable(ErrorClass::Timeout));
            assert_eq!(classify_status(k, 429), SinkAnswer::Retryable(ErrorClass::RateLimited));
            assert_eq!(classify_status(k, 401), SinkAnswer::Permanent(ErrorClass::Auth));
            assert_eq!(classify_status(k, 403), SinkAnswer::Permanent(ErrorClass::Forbidden));
            assert_eq!(classify_status(k, 404), SinkAnswer::Permanent(ErrorClass::NotFound));
            assert_eq!(classify_status(k, 400), SinkAnswer::Permanent(ErrorClass::ClientError));
            assert_eq!(classify_status(k, 302), SinkAnswer::Permanent(ErrorClass::Redirect));
            assert_eq!(classify_status(k, 101), SinkAnswer::Retryable(ErrorClass::Network));
        }
    }

    #[test]
    fn transport_failures_retry_except_a_guard_refusal() {
        assert_eq!(classify_transport(TransportFailure::Timeout), SinkAnswer::Retryable(ErrorClass::Timeout));
        assert_eq!(classify_transport(TransportFailure::Network), SinkAnswer::Retryable(ErrorClass::Network));
        assert_eq!(classify_transport(TransportFailure::Tls), SinkAnswer::Retryable(ErrorClass::Tls));
        assert_eq!(classify_transport(TransportFailure::RejectedSsrf), SinkAnswer::Permanent(ErrorClass::RejectedSsrf));
        assert_eq!(
            classify_transport(TransportFailure::ForbiddenTarget),
            SinkAnswer::Permanent(ErrorClass::ForbiddenTarget)
        );
    }

    #[test]
    fn the_default_schedule_doubles_from_30_s_for_7_attempts_about_31_minutes() {
        let p = RetryPolicy::default();
        let waits: Vec<_> = (0..=7).map(|n| p.next_attempt(n).map(|d| d.as_secs())).collect();
        assert_eq!(waits, [Some(0), Some(30), Some(60), Some(120), Some(240), Some(480), Some(960), None]);
        let total: u64 = waits.iter().flatten().sum();
        assert_eq!(total, 1_890, "31.5 minutes from the first attempt to the seventh");
    }

    #[test]
    fn a_custom_schedule_uses_its_base_and_cap_and_never_overflows() {
        assert_eq!(next_attempt(1, Duration::from_millis(50), 3), Some(Duration::from_millis(50)));
        assert_eq!(next_attempt(2, Duration::from_millis(50), 3), Some(Duration::from_millis(100)));
        assert_eq!(next_attempt(3, Duration::from_millis(50), 3), None);
        assert_eq!(next_attempt(0, Duration::from_secs(1), 0), Some(Duration::ZERO), "at least one attempt");
        assert_eq!(next_attempt(1, Duration::from_secs(1), 0), None);
        assert_eq!(next_attempt(40, Duration::from_secs(30), 100), Some(MAX_RETRY_DELAY));
        assert_eq!(next_attempt(12, Duration::from_secs(30), 100), Some(Duration::from_secs(61_440)));
        assert_eq!(next_attempt(13, Duration::from_secs(30), 100), Some(MAX_RETRY_DELAY));
    }

    #[test]
    fn an_unreachable_sink_is_retried_on_schedule_then_undeliverable() {
        let p = RetryPolicy::default();
        let net = classify_transport(TransportFailure::Network);
        for n in 1..7 {
            assert!(matches!(
                after_attempt(net, n, Some(ErrorClass::Network), &p),
                Step::RetryAfter(_, ErrorClass::Network)
            ));
        }
        assert_eq!(
            after_attempt(net, 7, Some(ErrorClass::Network), &p),
            Step::Done(OutboxStatus::Undeliverable, Some(ErrorClass::Network))
        );
    }

    #[test]
    fn an_apprise_partial_is_retried_once_then_recorded_partial() {
        let p = RetryPolicy::default();
        assert_eq!(
            after_attempt(SinkAnswer::Partial, 1, None, &p),
            Step::RetryAfter(Duration::from_secs(30), ErrorClass::Partial)
        );
        assert_eq!(
            after_attempt(SinkAnswer::Partial, 2, Some(ErrorClass::Partial), &p),
            Step::Done(OutboxStatus::Partial, Some(ErrorClass::Partial))
        );
        assert_eq!(
            after_attempt(SinkAnswer::Partial, 7, Some(ErrorClass::ServerError), &p),
            Step::Done(OutboxStatus::Partial, Some(ErrorClass::Partial))
        );
        assert_eq!(
            after_attempt(SinkAnswer::Sent, 2, Some(ErrorClass::Partial), &p),
            Step::Done(OutboxStatus::Sent, None)
        );
    }

    #[test]
    fn a_configuration_error_or_permanent_refusal_is_undeliverable_at_once() {
        let p = RetryPolicy::default();
        assert_eq!(
            after_attempt(SinkAnswer::ConfigurationError, 1, None, &p),
            Step::Done(OutboxStatus::Undeliverable, Some(ErrorClass::Configuration))
        );
        let auth = classify_status(SinkKind::Gotify, 401);
        assert_eq!(after_attempt(auth, 1, None, &p), Step::Done(OutboxStatus::Undeliverable, Some(ErrorClass::Auth)));
        assert_eq!(auth.error_class(), Some(ErrorClass::Auth));
        assert_eq!(SinkAnswer::Sent.error_class(), None);
    }
}
