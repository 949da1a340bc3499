//! A client of the balancer that writes every answer other than a 2xx, and every
//! request that got no answer, into the journal with its times and the upstream nginx
//! tried. Each client is one keep-alive connection (an agent's, the feeder's, the
//! operator's).

use std::rc::Rc;
use std::time::{Duration, Instant};

use actix_web::web::Bytes;

use super::balancer::UPSTREAM_HEADER;
use super::journal::{Answer, Journal};

/// What came back.
pub struct Reply {
    /// The status; none when the request got no answer (the connection failed or was
    /// dropped, or the client timed out).
    pub status: Option<u16>,
    /// The body (empty without an answer).
    pub body: Bytes,
}

impl Reply {
    /// Whether it is a 2xx.
    pub fn ok(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }

    /// Whether a client should ask again: a 502 or 503 from the balancer or a replica,
    /// or no answer at all.
    pub fn retryable(&self) -> bool {
        matches!(self.status, None | Some(502) | Some(503) | Some(504))
    }

    /// The body as JSON (null when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// One client (one keep-alive connection) of the balancer.
pub struct Client {
    client: awc::Client,
    base: String,
    authorization: Option<String>,
    journal: Rc<Journal>,
}

impl Client {
    /// A client of `base` sending `Authorization: Bearer <token>` when given. The timeout
    /// is above the longest long-poll (30 s).
    pub fn new(base: &str, token: Option<&str>, journal: &Rc<Journal>) -> Client {
        Client {
            client: awc::Client::builder().timeout(Duration::from_secs(40)).finish(),
            base: base.to_owned(),
            authorization: token.map(|t| format!("Bearer {t}")),
            journal: journal.clone(),
        }
    }

    /// POSTs JSON to `path`.
    pub async fn post(&self, what: &'static str, path: &str, body: &serde_json::Value) -> Reply {
        let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        self.send(what, "POST", path, &[("content-type", "application/json".to_owned())], bytes).await
    }

    /// Sends `body` with `method` and `headers` to `path`, journaling what is not a 2xx.
    pub async fn send(
        &self,
        what: &'static str,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Bytes,
    ) -> Reply {
        let url = format!("{}{path}", self.base);
        let mut req = match method {
            "PUT" => self.client.put(&url),
            "PATCH" => self.client.patch(&url),
            "GET" => self.client.get(&url),
            _ => self.client.post(&url),
        };
        if let Some(auth) = &self.authorization {
            req = req.insert_header(("authorization", auth.as_str()));
        }
        for (name, value) in headers {
            req = req.insert_header((*name, value.as_str()));
        }
        let sent = Instant::now();
        let result = req.send_body(body).await;
        let (status, upstream, body, detail) = match result {
            Ok(mut resp) => {
                let upstream =
                    resp.headers().get(UPSTREAM_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                let status = resp.status().as_u16();
                match resp.body().limit(8 << 20).await {
                    Ok(body) => {
                        let detail = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
                        (Some(status), upstream, body, detail)
                    }
                    // The answer's head came but its body was cut: as good as none.
                    Err(e) => (None, upstream, Bytes::new(), format!("body of a {status}: {e}")),
                }
            }
            Err(e) => (None, String::new(), Bytes::new(), e.to_string()),
        };
        let reply = Reply { status, body };
        if !reply.ok() {
            self.journal.answer(Answer { what, sent, answered: Instant::now(), status, upstream, detail });
        }
        reply
    }
}
