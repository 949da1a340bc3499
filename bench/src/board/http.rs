//! The Board over HTTP for the benchmark: the viewer signed in through the real sign-in
//! form (testkit's, as the tests sign in), and a signed-in page fetched the way a
//! browser does, timed, and checked to be the page and not a redirect to sign-in or a
//! refusal.

use std::time::{Duration, Instant};

use awc::Client;

use crate::BenchResult;

/// A signed-in browser: the server's base URL and the `Cookie` header to send.
pub struct Browser {
    client: Client,
    base: String,
    cookie: String,
}

impl Browser {
    /// Signs `email` in at `base` with `password`, as the sign-in form does.
    pub async fn sign_in(base: &str, email: &str, password: &str) -> BenchResult<Browser> {
        let client = testkit::board::browser();
        let session = testkit::board::sign_in(&client, base, email, password).await?;
        Ok(Browser { client, base: base.to_owned(), cookie: session.cookie })
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
