//! Sign-in and sign-out. `GET /login` renders a form with fields `email`, `password`
//! and `csrf_token` (SPEC §13); `POST /login` checks the CSRF token, then the rate
//! limits, then the password (argon2id, off the async executor, against a dummy hash
//! when the email is unknown, so every refusal takes the same path and reads the same),
//! and on success sets the session cookie and redirects (303) to `/todos` or to the
//! page that sent the human here. `POST /logout` ends the session on the server.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use maud::{Markup, html};
use serde::Deserialize;

use super::cookies::{SESSION_COOKIE, removal};
use super::csrf::{CsrfToken, FORM_LIMIT, LOGIN_CSRF_COOKIE};
use super::error::BoardError;
use super::extract::{NoFields, Posted, services};
use super::layout;
use super::paths::{LANDING, safe_next};
use super::respond;
use super::session::Human;
use super::state::BoardState;
use crate::error::Error;
use crate::service::sessions;
use crate::web::body_read::{declared_length, read_bounded, read_timeout};
use crate::web::client_address::client_address;

/// The one message for every wrong email/password combination.
pub const WRONG_CREDENTIALS: &str = "That email and password do not match an account.";

/// `?next=` on the sign-in form.
#[derive(Debug, Deserialize)]
pub struct LoginQuery {
    next: Option<String>,
}

/// The sign-in form's fields. Every one defaults to empty, so a form missing its CSRF
/// token is refused as a CSRF failure (403), not as malformed input.
#[derive(Default, Deserialize)]
struct LoginForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf_token: String,
    #[serde(default)]
    next: Option<String>,
}

fn view(csrf: &CsrfToken, email: &str, next: Option<&str>, refusal: Option<&str>) -> Markup {
    layout::bare(
        "Sign in",
        html! {
            h1 { "Sign in" }
            @if let Some(refusal) = refusal {
                div.sb-notice.sb-notice-error role="alert" { (refusal) }
            }
            form.sb-form method="post" action=(super::paths::LOGIN) {
                (csrf.field())
                @if let Some(next) = next {
                    input type="hidden" name="next" value=(next);
                }
                label for="email" { "Email" }
                input #email type="email" name="email" value=(email) autocomplete="username" required autofocus;
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required;
                button.sb-btn.sb-btn-primary type="submit" { "Sign in" }
            }
            p.sb-hint {
                "No password yet? An administrator sets one with "
                code { "switchboard admin set-password --email … --password-stdin" } "."
            }
        },
    )
}

fn login_token(req: &HttpRequest) -> Option<CsrfToken> {
    req.cookie(LOGIN_CSRF_COOKIE).and_then(|c| CsrfToken::parse(c.value()))
}

fn board(req: &HttpRequest) -> Result<web::Data<BoardState>, BoardError> {
    req.app_data::<web::Data<BoardState>>()
        .cloned()
        .ok_or_else(|| BoardError::App(Error::internal("board state missing")))
}

/// `GET /login`: the form (or, for someone already signed in, the Board).
pub async fn form(req: HttpRequest, human: Option<Human>, query: web::Query<LoginQuery>) -> HttpResponse {
    let next = query.next.as_deref().and_then(safe_next);
    if human.is_some() {
        return respond::see_other(next.unwrap_or(LANDING));
    }
    let token = login_token(&req).unwrap_or_else(CsrfToken::random);
    let mut resp = respond::html(StatusCode::OK, view(&token, "", next, None));
    if let Ok(board) = board(&req) {
        let _ = resp.add_cookie(&board.cookies.cookie(LOGIN_CSRF_COOKIE, token.as_str().to_owned(), None));
    }
    resp
}

/// `POST /login`.
pub async fn submit(req: HttpRequest, payload: web::Payload) -> Result<HttpResponse, BoardError> {
    let board = board(&req)?;
    let services = services(&req)?;
    let body = read_bounded(payload, declared_length(&req), FORM_LIMIT, read_timeout(&req)).await?;
    let form: LoginForm = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let Some(token) = login_token(&req).filter(|t| t.matches(&form.csrf_token)) else {
        return Err(BoardError::Csrf);
    };
    let email = form.email.trim();
    if let Err(wait) = board.login_limits.attempt(email, client_address(&req)) {
        tracing::warn!("board sign-in refused: too many attempts");
        return Err(Error::rate_limited("Too many sign-in attempts for this account or from this address", wait).into());
    }
    let next = form.next.as_deref().and_then(safe_next);
    match sessions::sign_in(&services, email, form.password).await? {
        Some((human, session)) => {
            tracing::info!(human = %human, "board sign-in");
            let mut resp = respond::see_other(next.unwrap_or(LANDING));
            let _ = resp.add_cookie(&board.cookies.session_cookie(session.token));
            let _ = resp.add_cookie(&removal(LOGIN_CSRF_COOKIE));
            Ok(resp)
        }
        None => {
            tracing::info!("board sign-in refused: wrong email or password");
            Ok(respond::html(StatusCode::UNAUTHORIZED, view(&token, email, next, Some(WRONG_CREDENTIALS))))
        }
    }
}

/// `POST /logout`: ends the session on the server, forgets the cookie, back to sign-in.
pub async fn logout(req: HttpRequest, posted: Posted<NoFields>) -> Result<HttpResponse, BoardError> {
    sessions::sign_out(&*services(&req)?, &posted.human.session_token).await?;
    tracing::info!(human = %posted.human.reach.human, "board sign-out");
    let mut resp = respond::see_other(super::paths::LOGIN);
    let _ = resp.add_cookie(&removal(SESSION_COOKIE));
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sign_in_form_names_its_fields_as_the_contract_says() {
        let html = view(&CsrfToken::random(), "", Some("/todos?filter=dead"), None).into_string();
        for field in [r#"name="email""#, r#"name="password""#, r#"name="csrf_token""#, r#"name="next""#] {
            assert!(html.contains(field), "{field} in {html}");
        }
        assert!(html.contains(r#"action="/login""#) && html.contains(r#"method="post""#));
    }

    #[test]
    fn a_refused_email_is_shown_back_escaped() {
        let html = view(&CsrfToken::random(), "<script>x</script>", None, Some(WRONG_CREDENTIALS)).into_string();
        assert!(!html.contains("<script>x"), "{html}");
        assert!(html.contains("&lt;script&gt;x"));
    }
}
