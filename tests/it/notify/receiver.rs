//! A real HTTP receiver on loopback for notify hooks: it records every request it
//! handles (method, path, headers, body, arrival time) and answers each one as scripted
//! (a status, a redirect, or never), so tests observe exactly what Switchboard sent.

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use serde_json::Value;
use standardwebhooks::{Webhook, WebhookError};

/// How long a test waits for something that should arrive.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// This status, empty body (a 3xx gets no `Location`).
    Status(u16),
    /// `302 Found` to this URL.
    RedirectTo(String),
    /// Never answers (until the receiver stops).
    Hang,
    /// This status, once the test calls [`Receiver::open`] (at once after that).
    HeldThen(u16),
    /// This status with this JSON body.
    Json(u16, String),
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    /// The value of header `name` (lower case), if present once or more (the first).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("body is not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The notification type (`todo.ready` or `todo.dead_lettered`).
    pub fn kind(&self) -> String {
        self.json()["type"].as_str().unwrap_or_default().to_owned()
    }

    /// The `todo_id` the notification is about.
    pub fn todo_id(&self) -> String {
        self.json()["todo_id"].as_str().unwrap_or_default().to_owned()
    }

    /// The headers as the reference verifier takes them, with `webhook-signature`
    /// replaced when `signature` is given.
    pub fn header_map(&self, signature: Option<&str>) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in &self.headers {
            let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap();
            map.append(name, http::HeaderValue::from_str(value).unwrap());
        }
        if let Some(sig) = signature {
            map.insert("webhook-signature", http::HeaderValue::from_str(sig).unwrap());
        }
        map
    }

    /// Verifies the request with the reference Standard Webhooks verifier under `secret`.
    pub fn verify(&self, secret: &str) -> Result<(), WebhookError> {
        Webhook::new(secret)?.verify(&self.body, &self.header_map(None))
    }

    /// Verifies with only one of the signature entries left in the header.
    pub fn verify_entry(&self, secret: &str, entry: &str) -> Result<(), WebhookError> {
        Webhook::new(secret)?.verify(&self.body, &self.header_map(Some(entry)))
    }

    /// The entries of `webhook-signature`.
    pub fn signatures(&self) -> Vec<String> {
        self.header("webhook-signature").unwrap_or_default().split(' ').map(str::to_owned).collect()
    }
}

struct State {
    seen: Vec<Received>,
    script: VecDeque<Reply>,
    then: Reply,
}

/// Opened by [`Receiver::open`]: releases every `HeldThen` answer.
type Gate = tokio::sync::watch::Sender<bool>;

/// The receiver. Stopped when dropped.
pub struct Receiver {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    gate: Arc<Gate>,
    handle: actix_web::dev::ServerHandle,
}

impl Receiver {
    /// A receiver that answers `204` to everything.
    pub async fn start() -> Receiver {
        Self::scripted(vec![], Reply::Status(204)).await
    }

    /// A receiver that answers the first requests as `script` says, then always `then`.
    pub async fn scripted(script: Vec<Reply>, then: Reply) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(Mutex::new(State { seen: Vec::new(), script: script.into(), then }));
        let shared = state.clone();
        let gate = Arc::new(tokio::sync::watch::channel(false).0);
        let opened = gate.clone();
        let server = HttpServer::new(move || {
            let shared = shared.clone();
            let opened = opened.clone();
            App::new().default_service(web::to(move |req: HttpRequest, body: web::Bytes| {
                let shared = shared.clone();
                let mut opened = opened.subscribe();
                async move {
                    let reply = {
                        let mut s = shared.lock().unwrap();
                        s.seen.push(Received {
                            method: req.method().to_string(),
                            path: req.path().to_owned(),
                            headers: req
                                .headers()
                                .iter()
                                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("<binary>").to_owned()))
                                .collect(),
                            body: body.to_vec(),
                            at: Instant::now(),
                        });
                        let then = s.then.clone();
                        s.script.pop_front().unwrap_or(then)
                    };
                    match reply {
                        Reply::Status(code) => {
                            HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap()).finish()
                        }
                        Reply::Json(code, body) => {
                            HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap())
                                .content_type("application/json")
                                .body(body)
                        }
                        Reply::RedirectTo(to) => HttpResponse::Found().insert_header(("location", to)).finish(),
                        Reply::Hang => {
                            actix_rt::time::sleep(Duration::from_secs(3600)).await;
                            HttpResponse::NoContent().finish()
                        }
                        Reply::HeldThen(code) => {
                            let _ = opened.wait_for(|open| *open).await;
                            HttpResponse::build(actix_web::http::StatusCode::from_u16(code).unwrap()).finish()
                        }
                    }
                }
            }))
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Receiver { addr, state, gate, handle }
    }

    /// Releases every `HeldThen` answer, held or still to come.
    pub fn open(&self) {
        self.gate.send_replace(true);
    }

    /// The URL hooks point at: `http://127.0.0.1:<port>/hook`.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// Its base URL (`http://127.0.0.1:<port>`), for a sink that appends its own path.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Everything received so far.
    pub fn seen(&self) -> Vec<Received> {
        self.state.lock().unwrap().seen.clone()
    }

    /// How many requests arrived so far.
    pub fn count(&self) -> usize {
        self.state.lock().unwrap().seen.len()
    }

    /// Waits (up to [`DEADLINE`]) until at least `n` requests arrived; returns them all.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let started = Instant::now();
        loop {
            let seen = self.seen();
            if seen.len() >= n {
                return seen;
            }
            if started.elapsed() > DEADLINE {
                let kinds: Vec<String> = seen.iter().map(|r| r.kind()).collect();
                panic!("waited {DEADLINE:?} for {n} notifications; got {}: {kinds:?}", seen.len());
            }
            actix_rt::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// A URL on loopback where nothing listens (connection refused).
pub fn down_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}/hook")
}
