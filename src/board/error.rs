//! Refusals on the Board, rendered as pages (never the API's JSON envelope): sign-in
//! redirects, CSRF refusals, the sign-in rate limit, unknown ids, and every store error.

use actix_web::http::StatusCode;
use actix_web::http::header::{LOCATION, RETRY_AFTER};
use actix_web::{HttpResponse, ResponseError};
use maud::html;

use super::cookies::{SESSION_COOKIE, removal};
use super::layout;
use super::respond;
use crate::error::Error;

/// Why a Board request did not get its page.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    /// No live session: 303 to the sign-in form, returning to `next` afterwards.
    #[error("sign-in required")]
    SignIn {
        /// Path (and query) to return to after signing in.
        next: Option<String>,
    },
    /// The form's CSRF token is missing or wrong: 403, nothing changed.
    #[error("form token missing or wrong")]
    Csrf,
    /// Anything the rest of the service refuses or fails with (an unknown or
    /// out-of-scope id is [`Error::NotFound`]: 404).
    #[error(transparent)]
    App(#[from] Error),
}

/// The sign-in URL that returns to `next` (when it is a safe local path).
pub fn login_url(next: Option<&str>) -> String {
    match next.and_then(super::paths::safe_next) {
        Some(next) => {
            format!(
                "{}?next={}",
                super::paths::LOGIN,
                url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>()
            )
        }
        None => super::paths::LOGIN.to_owned(),
    }
}

impl ResponseError for BoardError {
    fn status_code(&self) -> StatusCode {
        match self {
            BoardError::SignIn { .. } => StatusCode::SEE_OTHER,
            BoardError::Csrf => StatusCode::FORBIDDEN,
            BoardError::App(e) => e.status_code(),
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let (title, message) = match self {
            BoardError::SignIn { next } => {
                return HttpResponse::SeeOther()
                    .insert_header((LOCATION, login_url(next.as_deref())))
                    .cookie(removal(SESSION_COOKIE))
                    .finish();
            }
            BoardError::Csrf => (
                "Form expired",
                "This form's security token is missing or out of date, so nothing was changed. \
                 Go back, reload the page and try again."
                    .to_owned(),
            ),
            BoardError::App(e @ Error::RateLimited { .. }) => {
                ("Too many attempts", format!("{e}. Wait a minute and try again."))
            }
            BoardError::App(Error::NotFound) => {
                ("Not found", "There is nothing here, or it belongs to a scope you are not in.".to_owned())
            }
            BoardError::App(e @ (Error::Internal(_) | Error::Unavailable(_))) => {
                // Logged once here with its cause; the page says only what the caller can act on.
                match e {
                    Error::Internal(internal) => internal.log("board"),
                    other => tracing::warn!(cause = %other, "board: dependency unavailable"),
                }
                ("Something went wrong", "The Board could not finish this request. Try again in a moment.".to_owned())
            }
            BoardError::App(e) => ("Request refused", e.to_string()),
        };
        let body = layout::bare(
            title,
            html! {
                h1 { (title) }
                p.sb-lede { (message) }
                p { a.sb-btn href=(super::paths::LANDING) { "Back to the Board" } }
            },
        );
        let mut resp = respond::html(status, body);
        if let BoardError::App(e) = self
            && let Some(secs) = e.retry_after()
            && let Ok(v) = secs.to_string().parse()
        {
            resp.headers_mut().insert(RETRY_AFTER, v);
        }
        resp
    }
}
