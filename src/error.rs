//! One error type for the whole service, mapped to HTTP exactly once (here).
//! Client errors carry a message meant for the caller; internal errors are logged
//! with their cause and answer a bare `internal`, so nothing leaks.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use serde::Serialize;

use crate::db::failure::Failure;

/// Everything that can go wrong in a request or a worker.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No credential, or one that does not authenticate.
    #[error("missing or invalid credentials")]
    Unauthenticated,
    /// Authenticated, but the grant or role does not allow this.
    #[error("{0}")]
    Forbidden(String),
    /// Unknown id, or an id outside the caller's scope (indistinguishable on purpose).
    #[error("not found")]
    NotFound,
    /// The resource is not in a state that allows this (or a lease token mismatch).
    #[error("{0}")]
    Conflict(String),
    /// The request is well-formed HTTP but its content is not acceptable.
    #[error("{0}")]
    InvalidArgument(String),
    /// The request body is larger than this route accepts.
    #[error("request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// The request body did not arrive within the read timeout.
    #[error("the request body did not arrive in time")]
    RequestTimeout,
    /// A dependency (usually the database) is not available right now.
    #[error("{0}")]
    Unavailable(String),
    /// A bug or an unexpected failure; the cause is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An `invalid_argument` error naming the offending field.
    pub fn invalid(field: &str, why: impl std::fmt::Display) -> Self {
        Error::InvalidArgument(format!("{field}: {why}"))
    }

    /// The stable error code clients branch on.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Unauthenticated => "unauthenticated",
            Error::Forbidden(_) => "forbidden",
            Error::NotFound => "not_found",
            Error::Conflict(_) => "conflict",
            Error::InvalidArgument(_) => "invalid_argument",
            Error::PayloadTooLarge(_) => "payload_too_large",
            Error::RequestTimeout => "request_timeout",
            Error::Unavailable(_) => "unavailable",
            Error::Internal(_) => "internal",
        }
    }
}

impl From<diesel::result::Error> for Error {
    fn from(e: diesel::result::Error) -> Self {
        match e {
            diesel::result::Error::NotFound => Error::NotFound,
            // The request did not happen and a retry on another connection succeeds.
            other => match crate::db::failure::classify(&other) {
                Failure::ConnectionLost => Error::Unavailable(format!("database connection lost: {other}")),
                Failure::SchemaChanged => {
                    crate::db::failure::note_schema_change();
                    Error::Unavailable(format!("database schema changed under a prepared statement: {other}"))
                }
                Failure::Other => Error::Internal(format!("database: {other}")),
            },
        }
    }
}

impl From<deadpool::managed::PoolError<diesel_async::pooled_connection::PoolError>> for Error {
    fn from(e: deadpool::managed::PoolError<diesel_async::pooled_connection::PoolError>) -> Self {
        Error::Unavailable(format!("database unavailable: {e}"))
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
}

impl ResponseError for Error {
    fn status_code(&self) -> StatusCode {
        match self {
            Error::Unauthenticated => StatusCode::UNAUTHORIZED,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::NotFound => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::InvalidArgument(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Error::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let message = match self {
            Error::Internal(cause) => {
                tracing::error!(cause = %cause, "internal error");
                "internal error".to_owned()
            }
            Error::Unavailable(cause) => {
                tracing::warn!(cause = %cause, "dependency unavailable");
                "service temporarily unavailable".to_owned()
            }
            other => other.to_string(),
        };
        let mut resp = HttpResponse::build(self.status_code());
        if matches!(self, Error::Unauthenticated) {
            resp.insert_header(("WWW-Authenticate", "Bearer"));
        }
        // The rest of a body that stalled may still come: this connection cannot carry
        // another request (RFC 9110, 408).
        if matches!(self, Error::RequestTimeout) {
            resp.force_close();
        }
        resp.json(ErrorEnvelope { error: ErrorBody { code: self.code(), message } })
    }
}
