//! The Board's extractors: [`Human`] from the session cookie (a page that takes one
//! requires sign-in) and [`Posted`], a signed-in human's form whose CSRF token checked
//! out (a handler that changes state takes one).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::Method;
use actix_web::{FromRequest, HttpRequest, web};
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::csrf::{CsrfToken, FORM_LIMIT};
use super::error::BoardError;
use super::notice::{NOTICE_COOKIE, Notice};
use super::session::{Human, SESSION_COOKIE};
use crate::error::Error;
use crate::service::{Services, sessions};
use crate::web::body_read::{declared_length, read_bounded, read_timeout};

/// The services of the application serving `req`.
pub(super) fn services(req: &HttpRequest) -> Result<web::Data<Services>, BoardError> {
    req.app_data::<web::Data<Services>>().cloned().ok_or_else(|| BoardError::App(Error::internal("services missing")))
}

/// Where to return after signing in: this page, for a GET.
fn return_to(req: &HttpRequest) -> Option<String> {
    (req.method() == Method::GET)
        .then(|| req.uri().path_and_query().map(|pq| pq.as_str().to_owned()))
        .flatten()
        .filter(|p| p != "/")
}

impl FromRequest for Human {
    type Error = BoardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, BoardError>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let token = req.cookie(SESSION_COOKIE).map(|c| c.value().to_owned());
        let notice = req.cookie(NOTICE_COOKIE).and_then(|c| Notice::decode(c.value()));
        let services = services(req);
        let next = return_to(req);
        Box::pin(async move {
            let Some(token) = token else { return Err(BoardError::SignIn { next }) };
            let Some(session) = sessions::session(&*services?, &token).await? else {
                return Err(BoardError::SignIn { next });
            };
            Ok(Human {
                reach: session.reach,
                email: session.email,
                name: session.display_name,
                csrf: CsrfToken::for_session(&token),
                notice,
                session_token: token,
            })
        })
    }
}

/// The one field every POST form has.
#[derive(Deserialize)]
struct CsrfOnly {
    #[serde(default)]
    csrf_token: String,
}

/// A form with no fields of its own (sign-out, a single-button action).
#[derive(Debug, Default, Deserialize)]
pub struct NoFields {}

/// A POSTed form from a signed-in human, whose CSRF token checked out. Handlers that
/// change state take this instead of [`Human`]: without a session the request is
/// redirected to sign-in, with a missing or wrong token it is refused with 403 before
/// the handler runs, and a body that does not parse as `T` answers 422.
#[derive(Debug)]
pub struct Posted<T> {
    /// Who posted it.
    pub human: Human,
    /// The form's own fields (`csrf_token` is not among them).
    pub form: T,
}

impl<T: DeserializeOwned + 'static> FromRequest for Posted<T> {
    type Error = BoardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, BoardError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let human = Human::from_request(req, payload);
        let (body, declared, timeout) = (payload.take(), declared_length(req), read_timeout(req));
        Box::pin(async move {
            let human = human.await?;
            // Bounded like every API body: at most FORM_LIMIT, and within the read
            // timeout (a stalled form holds no connection forever).
            let body = read_bounded(body, declared, FORM_LIMIT, timeout).await.map_err(BoardError::App)?;
            let token = serde_urlencoded::from_bytes::<CsrfOnly>(&body).map(|c| c.csrf_token).unwrap_or_default();
            if !human.csrf.matches(&token) {
                return Err(BoardError::Csrf);
            }
            // PostgreSQL cannot store U+0000 in text: refuse it before any handler runs.
            if body.contains(&0) || body.windows(3).any(|w| w.eq_ignore_ascii_case(b"%00")) {
                return Err(BoardError::App(Error::InvalidArgument(
                    "form: text may not contain NUL characters".into(),
                )));
            }
            let form = serde_urlencoded::from_bytes::<T>(&body)
                .map_err(|e| BoardError::App(Error::InvalidArgument(format!("form: {e}"))))?;
            Ok(Posted { human, form })
        })
    }
}
