//! The Board over HTTP for the benchmark: sign the viewer in through the real sign-in
//! form (its double-submit CSRF cookie and field, then the session cookie), and fetch
//! a signed-in page the way a browser does, checking it is the page and not a redirect
//! to sign-in or a refusal.

use std::time::{Duration, Instant};

use actix_web::cookie::Cookie;
use awc::Client;

use crate::BenchResult;

/// A signed-in browser: the server's base URL and the `Cookie` header to send.
pub struct Browser {
    client: Client,
    base: String,
    cookie: String,
}

fn set_cookie(resp: &awc::ClientResponse<impl Sized>, name: &str) -> Option<String> {
    resp.headers()
        .get_all("set-cookie")
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| Cookie::parse(v.to_owned()).ok())
        .find(|c| c.name() == name)
        .map(|c| c.value().to_owned())
}

/// The value of the hidden `csrf_token` field of a form.
fn csrf_field(html: &str) -> Option<String> {
    let marker = r#"name="csrf_token" value=""#;
    let start = html.find(marker)? + marker.len();
    let end = html[start..].find('"')?;
    Some(html[start..start + end].to_owned())
}

impl Browser {
    /// Signs `email` in at `base` with `password`, as the sign-in form does.
    pub async fn sign_in(base: &str, email: &str, password: &str) -> BenchResult<Browser> {
        let client = Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish();
        let mut form = client.get(format!("{base}/login")).send().await.map_err(|e| format!("GET /login: {e}"))?;
        let body = form.body().await.map_err(|e| format!("GET /login body: {e}"))?;
        let login_cookie = set_cookie(&form, "sb_login_csrf").ok_or("GET /login set no sb_login_csrf cookie")?;
        let csrf = csrf_field(&String::from_utf8_lossy(&body)).ok_or("the sign-in form has no csrf_token")?;
        let resp = client
            .post(format!("{base}/login"))
            .insert_header(("cookie", format!("sb_login_csrf={login_cookie}")))
            .send_form(&[("email", email), ("password", password), ("csrf_token", &csrf)])
            .await
            .map_err(|e| format!("POST /login: {e}"))?;
        if resp.status() != awc::http::StatusCode::SEE_OTHER {
            return Err(format!("signing {email} in answered {}", resp.status()));
        }
        let session = set_cookie(&resp, "sb_session").ok_or("signing in set no session cookie")?;
        Ok(Browser { client, base: base.to_owned(), cookie: format!("sb_session={session}") })
    }

    /// GETs `path` (with the session), times it to the last byte of the body, and
    /// checks it is a 200 page holding `expect`.
    pub async fn page(&self, path: &str, expect: &str) -> BenchResult<Duration> {
        let started = Instant::now();
        let mut resp = self
            .client
            .get(format!("{}{path}", self.base))
            .insert_header(("cookie", self.cookie.as_str()))
            .send()
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        let body = resp.body().limit(16 * 1024 * 1024).await.map_err(|e| format!("GET {path} body: {e}"))?;
        let took = started.elapsed();
        if !resp.status().is_success() {
            return Err(format!("GET {path} answered {}", resp.status()));
        }
        if !String::from_utf8_lossy(&body).contains(expect) {
            return Err(format!("GET {path} is not the page expected (no {expect:?} in it)"));
        }
        Ok(took)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_csrf_field_is_read_from_the_form() {
        let html = r#"<form><input type="hidden" name="csrf_token" value="abc-_1"><input name="email"></form>"#;
        assert_eq!(csrf_field(html).as_deref(), Some("abc-_1"));
        assert_eq!(csrf_field("<form></form>"), None);
    }
}
