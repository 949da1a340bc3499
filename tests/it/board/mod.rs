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
mod todos;
mod webhooks;

use std::time::Duration;

use actix_web::cookie::Cookie;
use awc::http::StatusCode;
use switchboard::domain::ids::HumanId;
use switchboard::domain::passwords::hash_password;

use crate::harness::{Owner, TestApp};

/// A password long enough for the Board.
pub const PASSWORD: &str = "correct horse battery staple";

/// One answer, as a browser sees it.
#[derive(Debug)]
pub struct Page {
    pub status: StatusCode,
    pub headers: awc::http::header::HeaderMap,
    pub body: String,
}

impl Page {
    /// The `Location` header.
    pub fn location(&self) -> &str {
        self.headers.get("location").and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The cookie set under `name` by this answer, if any.
    pub fn set_cookie(&self, name: &str) -> Option<Cookie<'static>> {
        self.headers
            .get_all("set-cookie")
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| Cookie::parse(v.to_owned()).ok())
            .find(|c| c.name() == name)
    }

    /// The value of the first hidden `csrf_token` field on the page.
    pub fn csrf_field(&self) -> String {
        hidden_value(&self.body, "csrf_token").unwrap_or_else(|| panic!("no csrf_token field in {}", self.body))
    }
}

/// The value of a hidden input named `name` in `html` (maud writes `name` before `value`).
pub fn hidden_value(html: &str, name: &str) -> Option<String> {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker)? + marker.len();
    let end = html[start..].find('"')?;
    Some(html[start..start + end].to_owned())
}

/// A client that never follows redirects and keeps no cookies.
pub fn browser() -> awc::Client {
    awc::Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish()
}

/// GET `path` with a `Cookie` header.
pub async fn get(app: &TestApp, path: &str, cookie: Option<&str>) -> Page {
    let mut req = browser().get(format!("{}{}", app.base, path));
    if let Some(c) = cookie {
        req = req.insert_header(("cookie", c));
    }
    read(req.send().await.expect("GET")).await
}

/// POST an urlencoded form with a `Cookie` header.
pub async fn post_form(app: &TestApp, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> Page {
    let mut req = browser().post(format!("{}{}", app.base, path));
    if let Some(c) = cookie {
        req = req.insert_header(("cookie", c));
    }
    read(req.send_form(&form).await.expect("POST")).await
}

async fn read<S>(mut resp: awc::ClientResponse<S>) -> Page
where
    S: futures_util::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin,
{
    let body = resp.body().limit(4 * 1024 * 1024).await.expect("body");
    Page { status: resp.status(), headers: resp.headers().clone(), body: String::from_utf8_lossy(&body).into_owned() }
}

/// A human who may sign in with [`PASSWORD`].
pub async fn human(app: &TestApp, email: &str, name: &str) -> HumanId {
    let hash = hash_password(PASSWORD).expect("hash");
    app.store.create_human(email, name, Some(hash)).await.expect("create human").human.id
}

/// The sign-in form: the `Cookie` header carrying its double-submit token, and the token.
pub async fn login_form(app: &TestApp) -> (String, String) {
    let page = get(app, "/login", None).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    let cookie = page.set_cookie("sb_login_csrf").expect("the form sets its CSRF cookie");
    (format!("sb_login_csrf={}", cookie.value()), page.csrf_field())
}

/// Submits the sign-in form the way a browser would.
pub async fn submit_login(app: &TestApp, email: &str, password: &str) -> Page {
    let (cookie, csrf) = login_form(app).await;
    post_form(app, "/login", Some(&cookie), &[("email", email), ("password", password), ("csrf_token", &csrf)]).await
}

/// A signed-in browser: its `Cookie` header and its session's CSRF token.
#[derive(Debug, Clone)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

/// Signs in (the human must exist with [`PASSWORD`]).
pub async fn sign_in(app: &TestApp, email: &str) -> Session {
    let page = submit_login(app, email, PASSWORD).await;
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
    let cookie = page.set_cookie("sb_session").expect("session cookie");
    let cookie = format!("sb_session={}", cookie.value());
    let todos = get(app, "/todos", Some(&cookie)).await;
    assert_eq!(todos.status, StatusCode::OK, "{}", todos.body);
    Session { csrf: todos.csrf_field(), cookie }
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
