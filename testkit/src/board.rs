//! The Board over real HTTP, as a browser without a browser: cookies carried by hand (no
//! cookie jar) and redirects not followed, so every 303 and every `Set-Cookie` is
//! visible. Signing in goes through the real form: its double-submit CSRF cookie
//! (`sb_login_csrf`) and hidden field, then the session cookie (`sb_session`), then a
//! signed-in page for the session's own CSRF token.

use std::time::Duration;

use actix_web::cookie::Cookie;
use awc::http::StatusCode;
use awc::http::header::HeaderMap;

/// The cookie that carries the sign-in form's double-submit CSRF token.
pub const LOGIN_CSRF_COOKIE: &str = "sb_login_csrf";

/// The session cookie.
pub const SESSION_COOKIE: &str = "sb_session";

/// The most a page may weigh.
const PAGE_LIMIT: usize = 16 * 1024 * 1024;

/// One answer, as a browser sees it.
#[derive(Debug)]
pub struct Page {
    /// Its status.
    pub status: StatusCode,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its body, as text.
    pub body: String,
}

impl Page {
    /// The `Location` header.
    pub fn location(&self) -> &str {
        self.headers.get("location").and_then(|v| v.to_str().ok()).unwrap_or("")
    }

    /// The cookie set under `name` by this answer, if any.
    pub fn set_cookie(&self, name: &str) -> Option<Cookie<'static>> {
        set_cookie(&self.headers, name)
    }

    /// The value of the first hidden `csrf_token` field on the page.
    pub fn csrf_field(&self) -> Result<String, String> {
        hidden_value(&self.body, "csrf_token").ok_or_else(|| format!("no csrf_token field in {}", self.body))
    }
}

/// The cookie set under `name` by an answer with `headers`, if any.
pub fn set_cookie(headers: &HeaderMap, name: &str) -> Option<Cookie<'static>> {
    headers
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| Cookie::parse(v.to_owned()).ok())
        .find(|c| c.name() == name)
}

/// The value of a hidden input named `name` in `html` (the Board writes `name` before
/// `value`).
pub fn hidden_value(html: &str, name: &str) -> Option<String> {
    let marker = format!(r#"name="{name}" value=""#);
    let start = html.find(&marker)? + marker.len();
    let end = html[start..].find('"')?;
    Some(html[start..start + end].to_owned())
}

/// A client that never follows redirects and keeps no cookies (a browser without a jar).
pub fn browser() -> awc::Client {
    awc::Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish()
}

/// GET `url` with a `Cookie` header.
pub async fn get(client: &awc::Client, url: &str, cookie: Option<&str>) -> Result<Page, String> {
    let mut req = client.get(url);
    if let Some(c) = cookie {
        req = req.insert_header(("cookie", c));
    }
    read(req.send().await.map_err(|e| format!("GET {url}: {e}"))?).await
}

/// POST an urlencoded form to `url` with a `Cookie` header.
pub async fn post_form(
    client: &awc::Client,
    url: &str,
    cookie: Option<&str>,
    form: &[(&str, &str)],
) -> Result<Page, String> {
    let mut req = client.post(url);
    if let Some(c) = cookie {
        req = req.insert_header(("cookie", c));
    }
    read(req.send_form(&form).await.map_err(|e| format!("POST {url}: {e}"))?).await
}

async fn read<S>(mut resp: awc::ClientResponse<S>) -> Result<Page, String>
where
    S: futures_core::Stream<Item = Result<actix_web::web::Bytes, awc::error::PayloadError>> + Unpin,
{
    let body = resp.body().limit(PAGE_LIMIT).await.map_err(|e| format!("body: {e}"))?;
    Ok(Page {
        status: resp.status(),
        headers: resp.headers().clone(),
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// The sign-in form at `base`: the `Cookie` header carrying its double-submit token,
/// and the token of its hidden field.
pub async fn login_form(client: &awc::Client, base: &str) -> Result<(String, String), String> {
    let page = get(client, &format!("{base}/login"), None).await?;
    if page.status != StatusCode::OK {
        return Err(format!("GET /login answered {}: {}", page.status, page.body));
    }
    let cookie = page.set_cookie(LOGIN_CSRF_COOKIE).ok_or("the sign-in form set no sb_login_csrf cookie")?;
    let csrf = page.csrf_field()?;
    Ok((format!("{LOGIN_CSRF_COOKIE}={}", cookie.value()), csrf))
}

/// Submits the sign-in form at `base` the way a browser does; the answer.
pub async fn submit_login(client: &awc::Client, base: &str, email: &str, password: &str) -> Result<Page, String> {
    let (cookie, csrf) = login_form(client, base).await?;
    let form = [("email", email), ("password", password), ("csrf_token", csrf.as_str())];
    post_form(client, &format!("{base}/login"), Some(&cookie), &form).await
}

/// A signed-in browser: its `Cookie` header and its session's CSRF token.
#[derive(Debug, Clone)]
pub struct Session {
    /// The `Cookie` header (`sb_session=…`).
    pub cookie: String,
    /// The session's CSRF token, as its forms carry it.
    pub csrf: String,
}

/// Signs `email` in at `base` with `password` through the form, then opens `/todos`
/// signed in (a 200 page) for the session's CSRF token.
pub async fn sign_in(client: &awc::Client, base: &str, email: &str, password: &str) -> Result<Session, String> {
    let page = submit_login(client, base, email, password).await?;
    if page.status != StatusCode::SEE_OTHER {
        return Err(format!("signing {email} in answered {}: {}", page.status, page.body));
    }
    let cookie = page.set_cookie(SESSION_COOKIE).ok_or("signing in set no session cookie")?;
    let cookie = format!("{SESSION_COOKIE}={}", cookie.value());
    let todos = get(client, &format!("{base}/todos"), Some(&cookie)).await?;
    if todos.status != StatusCode::OK {
        return Err(format!("GET /todos signed in answered {}: {}", todos.status, todos.body));
    }
    let csrf = todos.csrf_field()?;
    Ok(Session { cookie, csrf })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csrf_field_is_read_from_the_form() {
        let html = r#"<form><input type="hidden" name="csrf_token" value="abc-_1"><input name="email"></form>"#;
        assert_eq!(hidden_value(html, "csrf_token").as_deref(), Some("abc-_1"));
        assert_eq!(hidden_value("<form></form>", "csrf_token"), None);
    }
}
