//! A real HTTP receiver on loopback: what Switchboard's notify hooks, sinks and digests
//! post to in the tests, and what the benchmark times its notifications against.
//!
//! Every request goes through the same steps:
//!
//! 1. **Admission.** With no rules every request is admitted. Once a path has rules
//!    ([`Receiver::admit_signed`]: a Standard Webhooks signature under a hook's secret;
//!    [`Receiver::admit_header`]: a header holding a token, as Gotify's
//!    `X-Gotify-Key`), a request to it is admitted when one rule accepts it, and
//!    refused otherwise (answered as [`Builder::refusal`] says, 401 unless told, and
//!    counted with the first reason); a request to a path without rules is then
//!    answered 404 and counted as refused.
//! 2. **Recording.** The arrival time is taken once the request is admitted (after its
//!    signature is checked). Every admitted request is counted and, unless the receiver
//!    was built not to keep them ([`Builder::keep`]), kept whole ([`Received`]). An
//!    admitted request whose rule tracks it ([`Track`]) also adds its arrival to the
//!    ones of its (kind, todo id), for which a caller may wait ([`Receiver::expect`],
//!    [`Receiver::take`]) whether they come before or after it starts waiting.
//! 3. **Answer.** The first requests are answered as the script says, every later one
//!    as its last line ([`Reply`]).
//!
//! The tests use it as built by [`Receiver::start`] or [`Receiver::scripted`]: every
//! request kept, one worker. The benchmark builds one with workers of its own (on
//! threads of their own, so its clients never delay a timestamp), keeping nothing but
//! the arrivals it tracks.

use std::collections::{HashMap, VecDeque};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use serde::Deserialize;
use serde_json::Value;
use standardwebhooks::{Webhook, WebhookError};
use tokio::sync::{oneshot, watch};

use crate::signature::Key;
use crate::wait;

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
    /// This status, after this long.
    Slow(Duration, u16),
    /// As a Gotify server answers `POST /message`: 200 with the stored message
    /// (`{id, appid, message, title, priority, date}`), or 400 (counted as refused) for
    /// a body that is not `{title, message, priority}`.
    Gotify,
}

/// What a tracked request is about: the (kind, todo id) its arrival is kept under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Track {
    /// A notify-hook notification: its body's `type` and `todo_id`.
    Notification,
    /// A Gotify message: kind [`GOTIFY_KIND`], the todo of the Board link `…/todos/{id}`
    /// the message ends with.
    GotifyMessage,
}

/// The kind [`Track::GotifyMessage`] keeps arrivals under.
pub const GOTIFY_KIND: &str = "gotify";

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// The method (`POST`).
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body, as sent.
    pub body: Vec<u8>,
    /// When it was admitted.
    pub at: Instant,
}

impl Received {
    /// The value of header `name` (lower case), if present once or more (the first).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The body as JSON; panics when it is not.
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
    /// replaced when `signature` is given. Panics on a header that cannot be one.
    pub fn header_map(&self, signature: Option<&str>) -> http::HeaderMap {
        let mut map = http::HeaderMap::new();
        for (name, value) in &self.headers {
            let name = http::HeaderName::from_bytes(name.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            map.append(name, http::HeaderValue::from_str(value).unwrap_or_else(|e| panic!("{value}: {e}")));
        }
        if let Some(sig) = signature {
            map.insert("webhook-signature", http::HeaderValue::from_str(sig).unwrap_or_else(|e| panic!("{sig}: {e}")));
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

/// How the expected todos' arrivals fared ([`Receiver::tally`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Expected todos all of whose copies arrived.
    pub arrived: u64,
    /// Expected copies that never arrived.
    pub lost: u64,
    /// Copies beyond the expected ones for an expected todo.
    pub duplicates: u64,
    /// Todos with an arrival that were not expected.
    pub unexpected: u64,
    /// The earliest first arrival among the expected todos.
    pub first: Option<Instant>,
    /// The latest first arrival among them: when the receiver held one of each.
    pub last: Option<Instant>,
}

/// The todo id of a message's Board link: what follows the last `/todos/`, up to the
/// first character that cannot be in an id.
pub fn todo_of(message: &str) -> Option<&str> {
    let (_, rest) = message.rsplit_once("/todos/")?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// A URL on loopback where nothing listens (connection refused). Panics when no port
/// can be had.
pub fn down_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("bind: {e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("local address: {e}"));
    drop(listener);
    format!("http://{addr}/hook")
}

/// What admits a request to a path.
enum Credential {
    /// A Standard Webhooks signature under this key.
    Signature(Key),
    /// This header holding this value.
    Header { name: String, value: String },
}

struct Rule {
    credential: Credential,
    track: Option<Track>,
}

/// A waiter for the `want`-th arrival of one (kind, todo id); `take` forgets the
/// arrivals once it is answered.
struct Waiter {
    want: usize,
    take: bool,
    tx: oneshot::Sender<Instant>,
}

#[derive(Default)]
struct Arrivals {
    at: Vec<Instant>,
    waiters: Vec<Waiter>,
}

impl Arrivals {
    /// Answers the waiters whose arrival is here; whether one of them takes the
    /// arrivals (the entry is then forgotten).
    fn answer(&mut self) -> bool {
        let have = self.at.len();
        let mut taken = false;
        let (due, waiting): (Vec<Waiter>, Vec<Waiter>) = self.waiters.drain(..).partition(|w| w.want <= have);
        self.waiters = waiting;
        for w in due {
            taken |= w.take;
            let _ = w.tx.send(self.at[w.want - 1]);
        }
        taken
    }
}

/// A Gotify message as posted.
#[derive(Deserialize)]
struct Posted {
    title: String,
    message: String,
    priority: i64,
}

/// The fields of a notification arrivals are kept by.
#[derive(Deserialize)]
struct Notification {
    #[serde(rename = "type")]
    kind: String,
    todo_id: String,
}

struct Script {
    next: VecDeque<Reply>,
    then: Reply,
}

struct Shared {
    script: Mutex<Script>,
    refusal: Reply,
    gate: watch::Sender<bool>,
    keep: bool,
    seen: Mutex<Vec<Received>>,
    admitted: AtomicU64,
    refused: AtomicU64,
    first_refusal: Mutex<Option<String>>,
    rules: RwLock<HashMap<String, Vec<Rule>>>,
    arrivals: Mutex<HashMap<(String, String), Arrivals>>,
    tracked: AtomicU64,
    samples: Mutex<HashMap<String, Bytes>>,
    next_id: AtomicU64,
}

/// Whether a request may in, and the rule's tracking when it may.
enum Admission {
    In(Option<Track>),
    Out(HttpResponse, String),
}

impl Shared {
    fn refuse(&self, why: String) {
        self.refused.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut first) = self.first_refusal.lock() {
            first.get_or_insert(why);
        }
    }

    fn admit(&self, req: &HttpRequest, body: &[u8]) -> Admission {
        let Ok(rules) = self.rules.read() else {
            return Admission::Out(HttpResponse::InternalServerError().finish(), "receiver rules poisoned".into());
        };
        if rules.is_empty() {
            return Admission::In(None);
        }
        let path = req.path();
        let Some(rules) = rules.get(path) else {
            return Admission::Out(HttpResponse::NotFound().finish(), format!("a post to an unknown path {path}"));
        };
        let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok());
        let mut why = String::new();
        for rule in rules {
            match &rule.credential {
                Credential::Signature(key) => {
                    let now = chrono::Utc::now().timestamp();
                    let sig = (header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"));
                    match key.verify(sig.0, sig.1, sig.2, body, now) {
                        Ok(()) => return Admission::In(rule.track),
                        Err(e) => why = format!("{path}: {e}"),
                    }
                }
                Credential::Header { name, value } => {
                    if header(name) == Some(value.as_str()) {
                        return Admission::In(rule.track);
                    }
                    why = format!("{path}: a post without the token in {name}");
                }
            }
        }
        Admission::Out(respond_now(&self.refusal), why)
    }

    fn next_reply(&self) -> Reply {
        match self.script.lock() {
            Ok(mut s) => {
                let then = s.then.clone();
                s.next.pop_front().unwrap_or(then)
            }
            Err(_) => Reply::Status(500),
        }
    }

    fn arrived(&self, kind: String, todo: String, at: Instant, body: &Bytes) {
        if let Ok(mut samples) = self.samples.lock() {
            samples.entry(kind.clone()).or_insert_with(|| body.clone());
        }
        self.tracked.fetch_add(1, Ordering::SeqCst);
        let Ok(mut all) = self.arrivals.lock() else { return };
        let key = (kind, todo);
        let entry = all.entry(key.clone()).or_default();
        entry.at.push(at);
        if entry.answer() {
            all.remove(&key);
        }
    }
}

/// A status from a number the script holds (500 for one that is none).
fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The answer of a reply that needs neither waiting nor the request.
fn respond_now(reply: &Reply) -> HttpResponse {
    match reply {
        Reply::Status(code) | Reply::HeldThen(code) | Reply::Slow(_, code) => {
            HttpResponse::build(status(*code)).finish()
        }
        Reply::Json(code, body) => {
            HttpResponse::build(status(*code)).content_type("application/json").body(body.clone())
        }
        Reply::RedirectTo(to) => HttpResponse::Found().insert_header(("location", to.as_str())).finish(),
        Reply::Hang | Reply::Gotify => HttpResponse::NoContent().finish(),
    }
}

/// One request: admitted or refused, recorded, answered.
async fn receive(shared: web::Data<Shared>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let track = match shared.admit(&req, &body) {
        Admission::In(track) => track,
        Admission::Out(answer, why) => {
            shared.refuse(why);
            return answer;
        }
    };
    let at = Instant::now();
    shared.admitted.fetch_add(1, Ordering::SeqCst);
    if shared.keep
        && let Ok(mut seen) = shared.seen.lock()
    {
        seen.push(Received {
            method: req.method().to_string(),
            path: req.path().to_owned(),
            headers: req
                .headers()
                .iter()
                .map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap_or("<binary>").to_owned()))
                .collect(),
            body: body.to_vec(),
            at,
        });
    }
    let reply = shared.next_reply();
    let posted = match reply {
        Reply::Gotify => match serde_json::from_slice::<Posted>(&body) {
            Ok(p) => Some(p),
            Err(e) => {
                shared.refuse(format!("{}: a body that is not a Gotify message: {e}", req.path()));
                return HttpResponse::BadRequest().finish();
            }
        },
        _ => None,
    };
    match track {
        None => {}
        Some(Track::Notification) => match serde_json::from_slice::<Notification>(&body) {
            Ok(n) => shared.arrived(n.kind, n.todo_id, at, &body),
            Err(e) => shared.refuse(format!("{}: a body that is not a notification: {e}", req.path())),
        },
        Some(Track::GotifyMessage) => {
            let message = match &posted {
                Some(p) => todo_of(&p.message).map(str::to_owned),
                None => {
                    serde_json::from_slice::<Posted>(&body).ok().and_then(|p| todo_of(&p.message).map(str::to_owned))
                }
            };
            match message {
                Some(todo) => shared.arrived(GOTIFY_KIND.to_owned(), todo, at, &body),
                None => shared.refuse(format!("{}: a message without a todo link", req.path())),
            }
        }
    }
    match reply {
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            HttpResponse::NoContent().finish()
        }
        Reply::HeldThen(code) => {
            let _ = shared.gate.subscribe().wait_for(|open| *open).await;
            HttpResponse::build(status(code)).finish()
        }
        Reply::Slow(after, code) => {
            tokio::time::sleep(after).await;
            HttpResponse::build(status(code)).finish()
        }
        Reply::Gotify => {
            let id = shared.next_id.fetch_add(1, Ordering::SeqCst) + 1;
            let posted = posted.unwrap_or(Posted { title: String::new(), message: String::new(), priority: 0 });
            HttpResponse::Ok().json(serde_json::json!({
                "id": id,
                "appid": 1,
                "message": posted.message,
                "title": posted.title,
                "priority": posted.priority,
                "date": chrono::Utc::now().to_rfc3339(),
            }))
        }
        other => respond_now(&other),
    }
}

/// How a receiver is built ([`Receiver::builder`]).
pub struct Builder {
    workers: usize,
    script: Vec<Reply>,
    then: Reply,
    refusal: Reply,
    keep: bool,
}

impl Builder {
    /// Worker threads (1 unless told).
    pub fn workers(mut self, n: usize) -> Builder {
        self.workers = n.max(1);
        self
    }

    /// The answers to the first requests, one each, before [`Builder::then`]'s.
    pub fn script(mut self, replies: Vec<Reply>) -> Builder {
        self.script = replies;
        self
    }

    /// The answer to every request after the script's (`204` unless told).
    pub fn then(mut self, reply: Reply) -> Builder {
        self.then = reply;
        self
    }

    /// The answer to a request no rule of its path admits (`401` unless told).
    pub fn refusal(mut self, reply: Reply) -> Builder {
        self.refusal = reply;
        self
    }

    /// Whether every admitted request is kept whole (yes unless told; the tracked
    /// arrivals are kept either way).
    pub fn keep(mut self, keep: bool) -> Builder {
        self.keep = keep;
        self
    }

    /// Binds a free loopback port and starts the workers (on the current actix system).
    pub fn start(self) -> Result<Receiver, String> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("receiver: cannot bind: {e}"))?;
        let addr = listener.local_addr().map_err(|e| format!("receiver: {e}"))?;
        let shared = Arc::new(Shared {
            script: Mutex::new(Script { next: self.script.into(), then: self.then }),
            refusal: self.refusal,
            gate: watch::channel(false).0,
            keep: self.keep,
            seen: Mutex::new(Vec::new()),
            admitted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            first_refusal: Mutex::new(None),
            rules: RwLock::new(HashMap::new()),
            arrivals: Mutex::new(HashMap::new()),
            tracked: AtomicU64::new(0),
            samples: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
        });
        let data = web::Data::from(shared.clone());
        let server = HttpServer::new(move || App::new().app_data(data.clone()).default_service(web::to(receive)))
            .workers(self.workers)
            .disable_signals()
            .shutdown_timeout(1)
            .listen(listener)
            .map_err(|e| format!("receiver: {e}"))?
            .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Ok(Receiver { inner: Arc::new(Inner { addr, shared, handle }) })
    }
}

struct Inner {
    addr: SocketAddr,
    shared: Arc<Shared>,
    handle: actix_web::dev::ServerHandle,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The stop command is sent now; nothing needs to wait for it to complete.
        drop(self.handle.stop(false));
    }
}

/// The receiver. Clones share it; it stops when the last one is dropped, or at
/// [`Receiver::stop`].
#[derive(Clone)]
pub struct Receiver {
    inner: Arc<Inner>,
}

impl Receiver {
    /// A receiver to build: one worker, every request kept and answered `204`.
    pub fn builder() -> Builder {
        Builder { workers: 1, script: Vec::new(), then: Reply::Status(204), refusal: Reply::Status(401), keep: true }
    }

    /// A receiver that answers `204` to everything. Panics when it cannot start.
    pub async fn start() -> Receiver {
        Self::scripted(vec![], Reply::Status(204)).await
    }

    /// A receiver that answers the first requests as `script` says, then always `then`.
    /// Panics when it cannot start.
    pub async fn scripted(script: Vec<Reply>, then: Reply) -> Receiver {
        Self::builder().script(script).then(then).start().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Admits requests to `path` signed (Standard Webhooks) with `secret`, tracked as
    /// `track` says.
    pub fn admit_signed(&self, path: &str, secret: &str, track: Option<Track>) -> Result<(), String> {
        self.admit(path, Rule { credential: Credential::Signature(Key::from_secret(secret)?), track })
    }

    /// Admits requests to `path` whose header `name` holds `value`, tracked as `track`
    /// says.
    pub fn admit_header(&self, path: &str, name: &str, value: &str, track: Option<Track>) -> Result<(), String> {
        let credential = Credential::Header { name: name.to_ascii_lowercase(), value: value.to_owned() };
        self.admit(path, Rule { credential, track })
    }

    fn admit(&self, path: &str, rule: Rule) -> Result<(), String> {
        let mut rules = self.inner.shared.rules.write().map_err(|_| "receiver rules poisoned")?;
        rules.entry(path.to_owned()).or_default().push(rule);
        Ok(())
    }

    /// Releases every `HeldThen` answer, held or still to come.
    pub fn open(&self) {
        self.inner.shared.gate.send_replace(true);
    }

    /// The URL hooks point at: `http://127.0.0.1:<port>/hook`.
    pub fn url(&self) -> String {
        self.url_of("/hook")
    }

    /// The URL of `path` on the receiver.
    pub fn url_of(&self, path: &str) -> String {
        format!("http://{}{path}", self.inner.addr)
    }

    /// Its base URL (`http://127.0.0.1:<port>`), for a sink that appends its own path.
    pub fn base(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// Its address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.inner.addr.port()
    }

    /// Everything received so far (nothing when built not to keep requests).
    pub fn seen(&self) -> Vec<Received> {
        self.inner.shared.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The paths of everything received so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|r| r.path).collect()
    }

    /// How many requests were admitted so far (all of them without rules).
    pub fn count(&self) -> usize {
        self.inner.shared.admitted.load(Ordering::SeqCst) as usize
    }

    /// Waits (up to [`wait::DEADLINE`]) until at least `n` requests arrived; returns them
    /// all. Panics naming the notification types that did arrive.
    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        wait::wait_until(format!("{n} notifications"), wait::DEADLINE, async || {
            let seen = self.seen();
            if seen.len() >= n {
                return Ok(seen);
            }
            let kinds: Vec<String> = seen.iter().map(Received::kind).collect();
            Err(format!("{}: {kinds:?}", seen.len()))
        })
        .await
    }

    /// Refused requests so far, and the first refusal's reason.
    pub fn rejected(&self) -> (u64, Option<String>) {
        let first = self.inner.shared.first_refusal.lock().ok().and_then(|f| f.clone());
        (self.inner.shared.refused.load(Ordering::SeqCst), first)
    }

    /// The first tracked body of `kind`, if one arrived.
    pub fn sample(&self, kind: &str) -> Option<Bytes> {
        self.inner.shared.samples.lock().ok()?.get(kind).cloned()
    }

    /// Resolves with the arrival time of the `want`-th (at least the first) tracked
    /// `kind` request about `todo`, at once if it is already here; the arrivals stay
    /// (for [`Receiver::tally`]).
    pub fn expect(&self, kind: &str, todo: &str, want: usize) -> oneshot::Receiver<Instant> {
        self.wait_arrival(kind, todo, want, false)
    }

    /// [`Receiver::expect`] that forgets the (kind, todo)'s arrivals once it resolves:
    /// the next one waits for new arrivals (a todo announced again and again).
    pub fn take(&self, kind: &str, todo: &str, want: usize) -> oneshot::Receiver<Instant> {
        self.wait_arrival(kind, todo, want, true)
    }

    fn wait_arrival(&self, kind: &str, todo: &str, want: usize, take: bool) -> oneshot::Receiver<Instant> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut all) = self.inner.shared.arrivals.lock() {
            let key = (kind.to_owned(), todo.to_owned());
            let entry = all.entry(key.clone()).or_default();
            entry.waiters.push(Waiter { want: want.max(1), take, tx });
            if entry.answer() {
                all.remove(&key);
            }
        }
        rx
    }

    /// When each tracked `kind` request about `todo` arrived, in order (empty when none
    /// did).
    pub fn arrivals(&self, kind: &str, todo: &str) -> Vec<Instant> {
        let Ok(all) = self.inner.shared.arrivals.lock() else { return Vec::new() };
        all.get(&(kind.to_owned(), todo.to_owned())).map(|a| a.at.clone()).unwrap_or_default()
    }

    /// (kind, todo)s with at least one tracked arrival.
    pub fn distinct(&self) -> usize {
        self.inner.shared.arrivals.lock().map_or(0, |a| a.values().filter(|a| !a.at.is_empty()).count())
    }

    /// Tracked arrivals since the last [`Receiver::forget`] (every copy of every todo).
    pub fn tracked(&self) -> u64 {
        self.inner.shared.tracked.load(Ordering::SeqCst)
    }

    /// Waits until `n` (kind, todo)s have an arrival, or until none has come for
    /// `idle`; the count then.
    pub async fn wait_distinct(&self, n: usize, idle: Duration) -> usize {
        wait::settle(|| self.distinct() as u64, n as u64, idle).await as usize
    }

    /// Waits until `n` tracked arrivals came in all, or until none has come for `idle`;
    /// the count then.
    pub async fn wait_tracked(&self, n: u64, idle: Duration) -> u64 {
        wait::settle(|| self.tracked(), n, idle).await
    }

    /// How the `kind` arrivals of `expected` fared (each todo's due `copies` times),
    /// against every (`kind`) todo that arrived.
    pub fn tally(&self, kind: &str, expected: &[String], copies: u32) -> Tally {
        let Ok(all) = self.inner.shared.arrivals.lock() else { return Tally::default() };
        let mut t = Tally::default();
        for todo in expected {
            let Some(a) = all.get(&(kind.to_owned(), todo.clone())).filter(|a| !a.at.is_empty()) else {
                t.lost += u64::from(copies);
                continue;
            };
            let (count, first) = (a.at.len() as u32, a.at[0]);
            t.arrived += u64::from(count >= copies);
            t.lost += u64::from(copies.saturating_sub(count));
            t.duplicates += u64::from(count.saturating_sub(copies));
            t.first = Some(t.first.map_or(first, |f| f.min(first)));
            t.last = Some(t.last.map_or(first, |l| l.max(first)));
        }
        let wanted: std::collections::HashSet<&String> = expected.iter().collect();
        t.unexpected =
            all.iter().filter(|((k, todo), a)| k == kind && !a.at.is_empty() && !wanted.contains(todo)).count() as u64;
        t
    }

    /// Forgets tracked arrivals nobody waits for (between phases, so memory stays flat).
    pub fn forget_unclaimed(&self) {
        if let Ok(mut all) = self.inner.shared.arrivals.lock() {
            all.retain(|_, a| !a.waiters.is_empty());
        }
    }

    /// Forgets every tracked arrival and their count (between phases, once tallied).
    pub fn forget(&self) {
        if let Ok(mut all) = self.inner.shared.arrivals.lock() {
            all.clear();
            self.inner.shared.tracked.store(0, Ordering::SeqCst);
        }
    }

    /// Stops the workers (at once; clones then talk to a stopped server).
    pub async fn stop(&self) {
        self.inner.handle.stop(false).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_todo_id_is_read_from_the_board_link_at_the_end_of_the_message() {
        let m = "A todo on queue deploys became a dead letter.\n\nhttps://sb.example/todos/td_0a1b2c";
        assert_eq!(todo_of(m), Some("td_0a1b2c"));
        assert_eq!(todo_of("see https://sb.example/todos/td_9?x=1"), Some("td_9"));
        assert_eq!(todo_of("no link here"), None);
        assert_eq!(todo_of("https://sb.example/todos/"), None);
    }

    fn signed(key: &Key, body: &str) -> [(&'static str, String); 3] {
        let ts = chrono::Utc::now().timestamp();
        let id = format!("msg_{}", rand::random::<u32>());
        let sig = key.sign(&id, ts, body.as_bytes());
        [("webhook-id", id), ("webhook-timestamp", ts.to_string()), ("webhook-signature", sig)]
    }

    async fn post(url: &str, headers: &[(&str, String)], body: &str) -> u16 {
        let mut req = awc::Client::default().post(url);
        for (n, v) in headers {
            req = req.insert_header((*n, v.as_str()));
        }
        req.send_body(body.to_owned()).await.unwrap().status().as_u16()
    }

    #[actix_rt::test]
    async fn a_signed_receiver_admits_what_verifies_and_times_each_todos_arrivals() {
        let rx = Receiver::builder().keep(false).start().unwrap();
        let (key, secret) = Key::random().unwrap();
        rx.admit_signed("/hooks/a", &secret, Some(Track::Notification)).unwrap();
        let body = r#"{"type":"todo.ready","todo_id":"td_1"}"#;
        let first = rx.take("todo.ready", "td_1", 2);
        assert_eq!(post(&rx.url_of("/hooks/a"), &signed(&key, body), body).await, 204);
        assert_eq!(post(&rx.url_of("/hooks/a"), &signed(&key, body), body).await, 204);
        first.await.unwrap();
        // Taken: the next wait is for new arrivals.
        let mut next = rx.take("todo.ready", "td_1", 1);
        assert!(next.try_recv().is_err());
        let (other, _) = Key::random().unwrap();
        assert_eq!(post(&rx.url_of("/hooks/a"), &signed(&other, body), body).await, 401);
        assert_eq!(post(&rx.url_of("/hooks/b"), &signed(&key, body), body).await, 404);
        assert_eq!(rx.count(), 2);
        assert_eq!(rx.rejected().0, 2);
        assert!(rx.rejected().1.unwrap().contains("/hooks/a"), "{:?}", rx.rejected());
        assert!(rx.seen().is_empty(), "nothing kept whole");
        assert_eq!(rx.sample("todo.ready").as_deref(), Some(body.as_bytes()));
    }

    #[actix_rt::test]
    async fn a_gotify_receiver_answers_the_stored_message_and_tallies_by_the_board_link() {
        let rx = Receiver::builder().then(Reply::Gotify).start().unwrap();
        rx.admit_header("/message", "X-Gotify-Key", "sink", Some(Track::GotifyMessage)).unwrap();
        rx.admit_header("/message", "X-Gotify-Key", "ceiling", None).unwrap();
        let message = |todo: &str| format!(r#"{{"title":"t","message":"dead https://sb/todos/{todo}","priority":5}}"#);
        let key = |t: &str| [("x-gotify-key", t.to_owned())];
        assert_eq!(post(&rx.url_of("/message"), &key("sink"), &message("td_1")).await, 200);
        assert_eq!(post(&rx.url_of("/message"), &key("sink"), &message("td_1")).await, 200);
        assert_eq!(post(&rx.url_of("/message"), &key("ceiling"), &message("td_2")).await, 200);
        assert_eq!(post(&rx.url_of("/message"), &key("nobody"), &message("td_3")).await, 401);
        assert_eq!(post(&rx.url_of("/message"), &key("sink"), "{}").await, 400);
        rx.expect(GOTIFY_KIND, "td_1", 1).await.unwrap();
        let tally = rx.tally(GOTIFY_KIND, &["td_1".into(), "td_4".into()], 1);
        assert_eq!((tally.arrived, tally.lost, tally.duplicates, tally.unexpected), (1, 1, 1, 0));
        assert_eq!((rx.distinct(), rx.tracked(), rx.count()), (1, 2, 4));
        assert_eq!(rx.paths(), ["/message"; 4]);
    }
}
