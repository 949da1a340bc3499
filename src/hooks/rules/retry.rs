//! How one ring is attempted: at most three tries, 1 s and 5 s apart (±20 %
//! jitter, so hooks that failed together do not retry in lockstep), and what each
//! attempt's result means: a success, worth another try, or final.
//!
//! The jitter is a parameter in [-1, 1] (scaled to ±20 %), so the schedule is a pure
//! function; [`unit_jitter`] draws one from an injected generator.

use std::time::Duration;

use rand::Rng;

use crate::domain::text_enum::text_enum;
use crate::outbound::failure::TransportFailure;

/// Most attempts per ring (announcement, hook).
pub const MAX_ATTEMPTS: u32 = 3;
/// Waits before attempts 2 and 3, before jitter.
pub const BASE_WAITS: [Duration; 2] = [Duration::from_secs(1), Duration::from_secs(5)];
/// Largest jitter, as a fraction of the base wait.
pub const JITTER_FRACTION: f64 = 0.2;
/// Longest one attempt may take (DNS, connect, TLS, response headers).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// What one attempt came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptClass {
    /// A 2xx answer.
    Success(u16),
    /// A 3xx answer (redirects are never followed).
    Redirect(u16),
    /// A 4xx answer other than 408 and 429.
    ClientError(u16),
    /// 408, 429 or 5xx: the receiver may accept a later try.
    RetryableStatus(u16),
    /// The attempt ran out of time.
    Timeout,
    /// Resolving, connecting or exchanging failed (also a nonsense status line).
    Network,
    /// The TLS handshake failed.
    Tls,
    /// The outbound guard refused the URL's own text (section 8): never retried.
    RejectedSsrf,
    /// The outbound guard refused where the target's name points (an address class,
    /// our own address, a name that does not resolve): never retried.
    ForbiddenTarget,
}

pub use crate::hooks::rules::hook::LastError;

text_enum!(
    /// The `result` label of `switchboard_notify_hook_attempts_total`.
    AttemptResult {
        /// A 2xx answer.
        Status2xx => "2xx",
        /// A 3xx answer.
        Status3xx => "3xx",
        /// A 4xx answer (408 and 429 included).
        Status4xx => "4xx",
        /// A 5xx answer.
        Status5xx => "5xx",
        /// The attempt timed out.
        Timeout => "timeout",
        /// A network failure.
        Network => "network",
        /// A TLS failure.
        Tls => "tls",
        /// The outbound guard refused the URL's own text.
        RejectedSsrf => "rejected_ssrf",
        /// The outbound guard refused where the target's name points.
        ForbiddenTarget => "forbidden_target",
    }
);

impl AttemptClass {
    /// The class of an HTTP answer. A status outside 200–599 (a final 1xx, or a
    /// three-digit code no server means) is a broken exchange: [`AttemptClass::Network`].
    pub fn from_status(status: u16) -> Self {
        match status {
            200..=299 => AttemptClass::Success(status),
            300..=399 => AttemptClass::Redirect(status),
            408 | 429 | 500..=599 => AttemptClass::RetryableStatus(status),
            400..=499 => AttemptClass::ClientError(status),
            _ => AttemptClass::Network,
        }
    }

    /// Whether the receiver took it.
    pub fn succeeded(self) -> bool {
        matches!(self, AttemptClass::Success(_))
    }

    /// Whether another attempt may succeed where this one failed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            AttemptClass::RetryableStatus(_) | AttemptClass::Timeout | AttemptClass::Network | AttemptClass::Tls
        )
    }

    /// The HTTP status, when the receiver answered.
    pub fn status(self) -> Option<u16> {
        match self {
            AttemptClass::Success(s)
            | AttemptClass::Redirect(s)
            | AttemptClass::ClientError(s)
            | AttemptClass::RetryableStatus(s) => Some(s),
            AttemptClass::Timeout
            | AttemptClass::Network
            | AttemptClass::Tls
            | AttemptClass::RejectedSsrf
            | AttemptClass::ForbiddenTarget => None,
        }
    }

    /// The hook's `last_error` if this was the ring's last attempt (none when
    /// it succeeded). 408 and 429 are `client_error`: the status class, not the retry
    /// policy, names the error.
    pub fn last_error(self) -> Option<LastError> {
        Some(match self {
            AttemptClass::Success(_) => return None,
            AttemptClass::Redirect(_) => LastError::Redirect,
            AttemptClass::ClientError(_) => LastError::ClientError,
            AttemptClass::RetryableStatus(s) if s < 500 => LastError::ClientError,
            AttemptClass::RetryableStatus(_) => LastError::ServerError,
            AttemptClass::Timeout => LastError::Timeout,
            AttemptClass::Network => LastError::Network,
            AttemptClass::Tls => LastError::Tls,
            AttemptClass::RejectedSsrf => LastError::RejectedSsrf,
            AttemptClass::ForbiddenTarget => LastError::ForbiddenTarget,
        })
    }

    /// The metrics `result` label.
    pub fn metric_result(self) -> AttemptResult {
        match self {
            AttemptClass::Success(_) => AttemptResult::Status2xx,
            AttemptClass::Redirect(_) => AttemptResult::Status3xx,
            AttemptClass::ClientError(_) => AttemptResult::Status4xx,
            AttemptClass::RetryableStatus(s) if s < 500 => AttemptResult::Status4xx,
            AttemptClass::RetryableStatus(_) => AttemptResult::Status5xx,
            AttemptClass::Timeout => AttemptResult::Timeout,
            AttemptClass::Network => AttemptResult::Network,
            AttemptClass::Tls => AttemptResult::Tls,
            AttemptClass::RejectedSsrf => AttemptResult::RejectedSsrf,
            AttemptClass::ForbiddenTarget => AttemptResult::ForbiddenTarget,
        }
    }
}

impl From<TransportFailure> for AttemptClass {
    fn from(failure: TransportFailure) -> Self {
        match failure {
            TransportFailure::Timeout => AttemptClass::Timeout,
            TransportFailure::Network => AttemptClass::Network,
            TransportFailure::Tls => AttemptClass::Tls,
            TransportFailure::RejectedSsrf => AttemptClass::RejectedSsrf,
            TransportFailure::ForbiddenTarget => AttemptClass::ForbiddenTarget,
        }
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NextStep {
    /// The receiver took it: record success.
    Succeeded,
    /// Wait this long, re-check endpoint, hook and target, then try again.
    RetryAfter(Duration),
    /// Give up: record the failure with this attempt's status and error.
    GiveUp,
}

/// The decision after attempt number `attempt` (1-based) came to `class`; `unit_jitter`
/// is in [-1, 1] (see [`unit_jitter`]).
pub fn after_attempt(attempt: u32, class: AttemptClass, unit_jitter: f64) -> NextStep {
    if class.succeeded() {
        return NextStep::Succeeded;
    }
    match wait_before(attempt.saturating_add(1), unit_jitter) {
        Some(wait) if class.retryable() => NextStep::RetryAfter(wait),
        _ => NextStep::GiveUp,
    }
}

/// The wait before attempt number `attempt` (2 or 3), the base wait scaled by
/// `1 + 0.2 × unit_jitter`; `None` for the first attempt or past the last. Jitter
/// outside [-1, 1] (or NaN) is clamped (or taken as 0).
pub fn wait_before(attempt: u32, unit_jitter: f64) -> Option<Duration> {
    let index = usize::try_from(attempt.checked_sub(2)?).ok()?;
    let base = BASE_WAITS.get(index)?;
    let jitter = if unit_jitter.is_nan() { 0.0 } else { unit_jitter.clamp(-1.0, 1.0) };
    Some(base.mul_f64(1.0 + JITTER_FRACTION * jitter))
}

/// A jitter draw in [-1, 1].
pub fn unit_jitter(rng: &mut impl Rng) -> f64 {
    rng.gen_range(-1.0..=1.0)
}

#[cfg(test)]
mod tests;
