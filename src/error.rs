//! One error type for the whole service, mapped to HTTP exactly once (here).
//! Client errors carry a message meant for the caller; internal errors are logged
//! with their cause and answer a bare `internal`, so nothing leaks.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

/// Everything that can go wrong in a request or a worker.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No credential, or one that does not authenticate.
    #[error("missing or invalid credentials")]
    Unauthenticated,
    /// No credential, or one that does not authenticate, on a route that takes one kind
    /// of token: the message names that kind, and nothing about the token or name sent
    /// (unknown, revoked, expired, of another kind or for another endpoint all read the
    /// same). Answers 401 `unauthenticated`, as [`Error::Unauthenticated`].
    #[error("missing or invalid credentials: {}", .0.expected())]
    CredentialsExpected(TokenKind),
    /// A known path asked with a method it does not take. Answers 405
    /// `method_not_allowed` with an `Allow` header listing the methods (held here as
    /// that header's text, e.g. `GET, POST`).
    #[error("method not allowed: this path takes {0}")]
    MethodNotAllowed(String),
    /// Authenticated, but the grant or role does not allow this.
    #[error("{0}")]
    Forbidden(String),
    /// Unknown id, or an id outside the caller's scope (indistinguishable on purpose).
    #[error("not found")]
    NotFound,
    /// The resource is not in a state that allows this (or a lease token mismatch).
    #[error("{0}")]
    Conflict(String),
    /// An admission budget refused to put an interrupted todo back in flight (resume):
    /// the todo stays interrupted under its interrupt lease. Answers 409 `conflict` with
    /// the budget's reason in `deferred` (a name of
    /// `crate::domain::admission::Deferral`, held as text so that this module depends on
    /// no domain type).
    #[error(
        "deferred: {0}: the queue's admission budget does not admit this todo back in flight now; it stays \
         interrupted under its interrupt lease (a heartbeat renews it): resume it later"
    )]
    Deferred(&'static str),
    /// The request is well-formed HTTP but its content is not acceptable.
    #[error("{0}")]
    InvalidArgument(String),
    /// A secret would have to be stored, and no `SWITCHBOARD_SECRET_ENCRYPTION_KEY` is
    /// configured: nothing was stored.
    #[error("encryption_required: set SWITCHBOARD_SECRET_ENCRYPTION_KEY to store secrets")]
    EncryptionRequired,
    /// An Apprise URL's scheme is not on the instance's allowlist; the message names
    /// the scheme and never echoes the URL.
    #[error("forbidden_scheme: {0}")]
    ForbiddenScheme(String),
    /// An outbound target refused for where its host points: an address class, this
    /// instance's own address, or a name that does not resolve. One message for every
    /// cause (the cause goes to the log and `switchboard_outbound_refused_total`), so
    /// that saving URLs cannot map internal DNS names.
    #[error("{}", crate::outbound::refusal::FORBIDDEN_TARGET_MESSAGE)]
    ForbiddenTarget,
    /// A reference to a resource of another owner scope (or an unknown one).
    #[error("{0}")]
    ReferenceOutOfScope(String),
    /// A sink named a base URL that is not its connection's destination: a connection's
    /// secret goes only where it is bound (only a human admin's rotate changes that).
    #[error("destination_mismatch: {0}")]
    DestinationMismatch(String),
    /// The request body is larger than this route accepts.
    #[error("request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// The request body did not arrive within the read timeout.
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// A limit refused the request before doing anything; it may be repeated after
    /// `retry_after_secs` (sent as `Retry-After`).
    #[error("{message}")]
    RateLimited {
        /// What was limited, for the caller.
        message: String,
        /// Seconds until a retry can succeed (at least 1).
        retry_after_secs: u64,
    },
    /// A dependency (usually the database) is not available right now.
    #[error("{0}")]
    Unavailable(String),
    /// A bug or an unexpected failure; the cause is logged, never sent.
    #[error("internal error: {0}")]
    Internal(Box<Internal>),
}

/// The kind of bearer token a route takes, named in its 401 answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// An agent route: an endpoint token.
    EndpointToken,
    /// An operator route: a human's operator token.
    OperatorToken,
    /// `/mcp/{slug}`: the token of that slug's endpoint.
    McpEndpointToken,
}

impl TokenKind {
    /// What the caller should send instead, in words.
    pub fn expected(self) -> &'static str {
        match self {
            TokenKind::EndpointToken => {
                "this route takes an endpoint token (`Authorization: Bearer sbk_…`, vended by an operator)"
            }
            TokenKind::OperatorToken => {
                "this route takes a human's operator token (`Authorization: Bearer sbo_…`, from `switchboard admin \
                 create-human`)"
            }
            TokenKind::McpEndpointToken => {
                "/mcp/{slug} takes that endpoint's token (`Authorization: Bearer sbk_…` of the endpoint the slug \
                 names)"
            }
        }
    }
}

/// An internal failure: what was being done, where in the code, and the error that
/// caused it (kept as a source, so its whole chain reaches the log). None of it ever
/// reaches a response.
#[derive(Debug)]
pub struct Internal {
    /// What was being done.
    pub context: String,
    /// The error underneath, if any.
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// Where the error was made (the caller of [`Error::internal`], or the `?`).
    pub at: &'static std::panic::Location<'static>,
}

impl std::fmt::Display for Internal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.context)
    }
}

impl std::error::Error for Internal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl Internal {
    /// The context and every cause beneath it, for a log line.
    pub fn chain(&self) -> String {
        let mut out = self.context.clone();
        let mut next = std::error::Error::source(self);
        while let Some(cause) = next {
            out.push_str(": ");
            out.push_str(&cause.to_string());
            next = cause.source();
        }
        out
    }

    /// Logs it, with its chain and origin (`what` says who answered it).
    pub fn log(&self, what: &str) {
        tracing::error!(cause = %self.chain(), at = %self.at, "{what}: internal error");
    }
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An internal error with no cause beneath it (a broken invariant).
    #[track_caller]
    pub fn internal(context: impl Into<String>) -> Self {
        Error::Internal(Box::new(Internal {
            context: context.into(),
            source: None,
            at: std::panic::Location::caller(),
        }))
    }

    /// An internal error caused by `source`, while doing `context`.
    #[track_caller]
    pub fn internal_from(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Internal(Box::new(Internal {
            context: context.into(),
            source: Some(source.into()),
            at: std::panic::Location::caller(),
        }))
    }

    /// This error, with a plain [`Error::Unauthenticated`] made to name the token kind
    /// `expected` (every other error as it is).
    pub fn expecting(self, expected: TokenKind) -> Self {
        match self {
            Error::Unauthenticated => Error::CredentialsExpected(expected),
            other => other,
        }
    }

    /// An `invalid_argument` error naming the offending field.
    pub fn invalid(field: &str, why: impl std::fmt::Display) -> Self {
        Error::InvalidArgument(format!("{field}: {why}"))
    }

    /// A rate limit's refusal: `what` is limited, try again in `wait` (rounded up to
    /// whole seconds, at least one).
    pub fn rate_limited(what: impl Into<String>, wait: std::time::Duration) -> Self {
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        Error::RateLimited { message: what.into(), retry_after_secs: secs.max(1) }
    }

    /// Seconds the caller should wait before repeating the request, when a limit
    /// refused it.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Error::RateLimited { retry_after_secs, .. } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The stable error code clients branch on.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Unauthenticated | Error::CredentialsExpected(_) => "unauthenticated",
            Error::MethodNotAllowed(_) => "method_not_allowed",
            Error::Forbidden(_) => "forbidden",
            Error::NotFound => "not_found",
            Error::Conflict(_) | Error::Deferred(_) => "conflict",
            Error::InvalidArgument(_) => "invalid_argument",
            Error::EncryptionRequired => "encryption_required",
            Error::ForbiddenScheme(_) => "forbidden_scheme",
            Error::ForbiddenTarget => "forbidden_target",
            Error::ReferenceOutOfScope(_) => "reference_out_of_scope",
            Error::DestinationMismatch(_) => "destination_mismatch",
            Error::PayloadTooLarge(_) => "payload_too_large",
            Error::RequestTimeout => "request_timeout",
            Error::RateLimited { .. } => "rate_limited",
            Error::Unavailable(_) => "unavailable",
            Error::Internal(_) => "internal",
        }
    }
}

impl Error {
    /// What a caller is told of this error: the body of the envelope, also an item's
    /// answer in a batch. An internal or unavailable error says no more than that.
    pub fn body(&self) -> ErrorBody {
        let message = match self {
            Error::Internal(_) => "internal error".to_owned(),
            Error::Unavailable(_) => "service temporarily unavailable".to_owned(),
            other => other.to_string(),
        };
        let deferred = match self {
            Error::Deferred(reason) => Some(*reason),
            _ => None,
        };
        ErrorBody { code: self.code(), message, deferred }
    }
}

/// The JSON error envelope: `{"error": {"code", "message"}}`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

/// Body of the error envelope.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// Stable machine-readable code.
    pub code: &'static str,
    /// Human-readable explanation (never internal detail).
    pub message: String,
    /// Only on a `conflict` from resume that an admission budget refused: `paused`,
    /// `in_flight_full` or `window_exhausted`, as a deferred claim's `deferred`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub deferred: Option<&'static str>,
}

impl ResponseError for Error {
    fn status_code(&self) -> StatusCode {
        match self {
            Error::Unauthenticated | Error::CredentialsExpected(_) => StatusCode::UNAUTHORIZED,
            Error::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::NotFound => StatusCode::NOT_FOUND,
            Error::Conflict(_) | Error::Deferred(_) => StatusCode::CONFLICT,
            Error::InvalidArgument(_) => StatusCode::UNPROCESSABLE_ENTITY,
            // The instance, not the request, lacks something: as a wrong state, 409.
            Error::EncryptionRequired => StatusCode::CONFLICT,
            Error::ForbiddenScheme(_)
            | Error::ForbiddenTarget
            | Error::ReferenceOutOfScope(_)
            | Error::DestinationMismatch(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Error::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Error::Internal(internal) => internal.log("request"),
            Error::Unavailable(cause) => tracing::warn!(cause = %cause, "dependency unavailable"),
            _ => {}
        }
        let mut resp = HttpResponse::build(self.status_code());
        if matches!(self, Error::Unauthenticated | Error::CredentialsExpected(_)) {
            resp.insert_header(("WWW-Authenticate", "Bearer"));
        }
        if let Error::MethodNotAllowed(allow) = self {
            resp.insert_header((actix_web::http::header::ALLOW, allow.as_str()));
        }
        // The rest of a body that stalled may still come: this connection cannot carry
        // another request (RFC 9110, 408).
        if matches!(self, Error::RequestTimeout) {
            resp.force_close();
        }
        if let Some(secs) = self.retry_after() {
            resp.insert_header((actix_web::http::header::RETRY_AFTER, secs.to_string()));
        }
        resp.json(ErrorEnvelope { error: self.body() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_internal_error_keeps_its_cause_and_origin_for_the_log_and_sends_neither() {
        let cause = std::io::Error::other("disk on fire");
        let err = Error::internal_from("writing the outbox", cause);
        let Error::Internal(internal) = &err else { panic!("not internal: {err:?}") };
        assert_eq!(internal.chain(), "writing the outbox: disk on fire");
        assert!(internal.at.file().ends_with("error.rs"), "{}", internal.at);
        assert!(std::error::Error::source(internal.as_ref()).is_some(), "the cause is a source, not text");
        let body = actix_web::body::to_bytes(err.error_response().into_body());
        let body = futures_util::FutureExt::now_or_never(body).and_then(Result::ok).unwrap_or_default();
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("\"internal\"") && !text.contains("fire") && !text.contains("outbox"), "{text}");
    }

    #[test]
    fn a_rate_limit_answers_429_rate_limited_with_retry_after_in_whole_seconds() {
        let err = Error::rate_limited("too many sign-in attempts", std::time::Duration::from_millis(1500));
        assert_eq!(err.code(), "rate_limited");
        assert_eq!(err.status_code(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(err.retry_after(), Some(2), "rounded up");
        assert_eq!(Error::rate_limited("x", std::time::Duration::ZERO).retry_after(), Some(1), "never 0");
        let resp = err.error_response();
        assert_eq!(resp.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("2"));
        let body = futures_util::FutureExt::now_or_never(actix_web::body::to_bytes(resp.into_body()));
        let text = String::from_utf8_lossy(&body.and_then(Result::ok).unwrap_or_default()).into_owned();
        assert!(text.contains(r#""code":"rate_limited""#) && text.contains("too many sign-in attempts"), "{text}");
    }

    #[test]
    fn a_database_error_converted_by_question_mark_records_where_it_happened() {
        fn query() -> (u32, Result<()>) {
            let line = line!() + 1;
            let failed = || -> Result<()> { Err(diesel::result::Error::RollbackTransaction)? };
            (line, failed())
        }
        let (line, Err(Error::Internal(internal))) = query() else { panic!("not internal") };
        assert_eq!(internal.at.line(), line, "the `?` that converted it, not the conversion: {}", internal.at);
        assert!(internal.chain().starts_with("database: "), "{}", internal.chain());
    }
}
