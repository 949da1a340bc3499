//! The Board over real HTTP: a browser's view without a browser. Cookies are carried
//! by hand (no cookie jar), redirects are not followed, so every 303 and every
//! `Set-Cookie` is visible to the test.

mod assets;
mod auth;
mod digests;
mod endpoints;
mod hooks;
mod quarantine;
mod session_sweep;
mod sinks;
mod sinks_layout;
mod todos;
mod webhooks;

use switchboard::domain::ids::HumanId;
use switchboard::domain::passwords::hash_password;
pub use testkit::board::{Page, Session, browser, hidden_value};

use crate::harness::{Owner, TestApp};

/// A password long enough for the Board.
pub const PASSWORD: &str = "correct horse battery staple";

/// GET `path` with a `Cookie` header.
pub async fn get(app: &TestApp, path: &str, cookie: Option<&str>) -> Page {
    testkit::board::get(&browser(), &format!("{}{}", app.base, path), cookie).await.unwrap()
}

/// POST an urlencoded form with a `Cookie` header.
pub async fn post_form(app: &TestApp, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> Page {
    testkit::board::post_form(&browser(), &format!("{}{}", app.base, path), cookie, form).await.unwrap()
}

/// A human who may sign in with [`PASSWORD`].
pub async fn human(app: &TestApp, email: &str, name: &str) -> HumanId {
    let hash = hash_password(PASSWORD).expect("hash");
    app.store.create_human(email, name, Some(hash)).await.expect("create human").human.id
}

/// The sign-in form: the `Cookie` header carrying its double-submit token, and the token.
pub async fn login_form(app: &TestApp) -> (String, String) {
    testkit::board::login_form(&browser(), &app.base).await.unwrap()
}

/// Submits the sign-in form the way a browser would.
pub async fn submit_login(app: &TestApp, email: &str, password: &str) -> Page {
    testkit::board::submit_login(&browser(), &app.base, email, password).await.unwrap()
}

/// Signs in (the human must exist with [`PASSWORD`]).
pub async fn sign_in(app: &TestApp, email: &str) -> Session {
    testkit::board::sign_in(&browser(), &app.base, email, PASSWORD).await.unwrap()
}

/// A human who may sign in with [`PASSWORD`] and also holds an operator token (to set
/// things up through the API).
pub async fn board_owner(app: &TestApp, email: &str) -> Owner {
    let hash = hash_password(PASSWORD).expect("hash");
    let h = app.store.create_human(email, "Board Owner", Some(hash)).await.expect("create human");
    Owner { id: h.human.id, scope: h.scope, token: h.token }
}

/// The text between `start` and the next `<` in `html`.
pub fn text_after<'a>(html: &'a str, start: &str) -> Option<&'a str> {
    let from = html.find(start)?;
    let rest = &html[from..];
    Some(&rest[..rest.find('<').unwrap_or(rest.len())])
}
