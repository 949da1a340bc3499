//! A Gotify-contract receiver inside the bench process on 127.0.0.1 (actix-web workers
//! on threads of their own, so the bench's clients never delay a timestamp), for the
//! outbox benchmark. It answers `POST /message` as a Gotify server does: the
//! application token in `X-Gotify-Key`, a JSON body `{title, message, priority}`, and a
//! 200 answer holding the stored message object (`{id, appid, message, title,
//! priority, date}`). A wrong or missing token is answered 401 and counted; so is a
//! body without the three fields.
//!
//! Two tokens are accepted: the sink's (its messages are notifications: each is kept
//! by the todo id of its Board link `…/todos/{id}`, with how many times it arrived and
//! when first) and the ceiling's (plain POSTs from the bench: parsed and answered the
//! same way, only counted), so that both sides cost the receiver the same.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::dev::ServerHandle;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use serde::Deserialize;
use tokio::sync::oneshot;

use crate::BenchResult;

/// Worker threads of the receiver (as the notify-hook receiver).
pub const WORKERS: usize = 2;

/// The Gotify header carrying the application token.
const TOKEN_HEADER: &str = "x-gotify-key";

/// What the receiver kept of one todo's messages.
struct Arrival {
    count: u32,
    first: Instant,
}

#[derive(Default)]
struct Shared {
    sink_token: String,
    ceiling_token: String,
    next_id: AtomicU64,
    messages: AtomicU64,
    ceiling: AtomicU64,
    rejected: AtomicU64,
    first_rejection: Mutex<Option<String>>,
    arrivals: Mutex<HashMap<String, Arrival>>,
    waiters: Mutex<HashMap<String, oneshot::Sender<Instant>>>,
    sample: Mutex<Option<Bytes>>,
}

/// A Gotify message as posted.
#[derive(Deserialize)]
struct Posted {
    title: String,
    message: String,
    priority: i64,
}

impl Shared {
    fn reject(&self, why: String) {
        self.rejected.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut first) = self.first_rejection.lock() {
            first.get_or_insert(why);
        }
    }

    fn arrived(&self, todo: String, at: Instant, body: &Bytes) {
        if let Ok(mut sample) = self.sample.lock() {
            sample.get_or_insert_with(|| body.clone());
        }
        self.messages.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut all) = self.arrivals.lock() {
            all.entry(todo.clone()).and_modify(|a| a.count += 1).or_insert(Arrival { count: 1, first: at });
        }
        if let Ok(mut waiters) = self.waiters.lock()
            && let Some(tx) = waiters.remove(&todo)
        {
            let _ = tx.send(at);
        }
    }
}

/// The todo id of a message's Board link: what follows the last `/todos/`, up to the
/// first character that cannot be in an id.
pub fn todo_of(message: &str) -> Option<&str> {
    let (_, rest) = message.rsplit_once("/todos/")?;
    let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// How the expected messages fared.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Tally {
    /// Expected todos all of whose copies arrived.
    pub arrived: u64,
    /// Expected copies that never arrived.
    pub lost: u64,
    /// Copies beyond the expected ones for an expected todo.
    pub duplicates: u64,
    /// Todos with a message that were not expected.
    pub unexpected: u64,
    /// The earliest first arrival among the expected todos.
    pub first: Option<Instant>,
    /// The latest first arrival among them: when the receiver held one of each.
    pub last: Option<Instant>,
}

/// The receiver. Clones share it; stop it once with [`GotifyReceiver::stop`].
#[derive(Clone)]
pub struct GotifyReceiver {
    shared: Arc<Shared>,
    handle: ServerHandle,
    base: String,
}

/// A token that looks like a Gotify application token (15 characters).
fn app_token() -> String {
    format!("A{}", &hex::encode(rand::random::<[u8; 8]>())[..14])
}

impl GotifyReceiver {
    /// Binds a free loopback port and starts the workers, with fresh tokens.
    pub fn start() -> BenchResult<GotifyReceiver> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("gotify receiver: cannot bind: {e}"))?;
        let port = listener.local_addr().map_err(|e| format!("gotify receiver: {e}"))?.port();
        let shared = Arc::new(Shared { sink_token: app_token(), ceiling_token: app_token(), ..Shared::default() });
        let data = web::Data::from(shared.clone());
        let server =
            HttpServer::new(move || App::new().app_data(data.clone()).route("/message", web::post().to(receive)))
                .workers(WORKERS)
                .disable_signals()
                .shutdown_timeout(1)
                .listen(listener)
                .map_err(|e| format!("gotify receiver: {e}"))?
                .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Ok(GotifyReceiver { shared, handle, base: format!("http://127.0.0.1:{port}") })
    }

    /// `http://127.0.0.1:<port>`: a sink's base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The application token the sinks' connection holds.
    pub fn sink_token(&self) -> &str {
        &self.shared.sink_token
    }

    /// The token of the ceiling's plain POSTs.
    pub fn ceiling_token(&self) -> &str {
        &self.shared.ceiling_token
    }

    /// Todos with at least one message so far.
    pub fn distinct(&self) -> usize {
        self.shared.arrivals.lock().map_or(0, |a| a.len())
    }

    /// Refused posts so far, and the first refusal's reason.
    pub fn rejected(&self) -> (u64, Option<String>) {
        let first = self.shared.first_rejection.lock().ok().and_then(|f| f.clone());
        (self.shared.rejected.load(Ordering::SeqCst), first)
    }

    /// The first notification body that arrived (what the ceiling posts).
    pub fn sample(&self) -> Option<Bytes> {
        self.shared.sample.lock().ok()?.clone()
    }

    /// Resolves with the first arrival of `todo`'s message (at once if it is here).
    pub fn expect(&self, todo: &str) -> oneshot::Receiver<Instant> {
        let (tx, rx) = oneshot::channel();
        // Registered before looking, so an arrival in between is not missed.
        if let Ok(mut waiters) = self.shared.waiters.lock() {
            waiters.insert(todo.to_owned(), tx);
        }
        let here = self.shared.arrivals.lock().ok().and_then(|a| a.get(todo).map(|a| a.first));
        if let Some(at) = here
            && let Ok(mut waiters) = self.shared.waiters.lock()
            && let Some(tx) = waiters.remove(todo)
        {
            let _ = tx.send(at);
        }
        rx
    }

    /// Waits until `n` todos have a message, or until none has arrived for `idle`; the
    /// count then.
    pub async fn wait_distinct(&self, n: usize, idle: Duration) -> usize {
        wait_for(|| self.distinct() as u64, n as u64, idle).await as usize
    }

    /// Waits until `n` messages arrived in all, or until none has arrived for `idle`;
    /// the count then.
    pub async fn wait_messages(&self, n: u64, idle: Duration) -> u64 {
        wait_for(|| self.messages(), n, idle).await
    }

    /// How the messages of `expected` fared (each todo's message due `copies` times:
    /// once per subscribed sink), against everything that arrived.
    pub fn tally(&self, expected: &[String], copies: u32) -> Tally {
        let Ok(all) = self.shared.arrivals.lock() else { return Tally::default() };
        let mut t = Tally::default();
        for todo in expected {
            let Some(a) = all.get(todo) else {
                t.lost += u64::from(copies);
                continue;
            };
            t.arrived += u64::from(a.count >= copies);
            t.lost += u64::from(copies.saturating_sub(a.count));
            t.duplicates += u64::from(a.count.saturating_sub(copies));
            t.first = Some(t.first.map_or(a.first, |f| f.min(a.first)));
            t.last = Some(t.last.map_or(a.first, |l| l.max(a.first)));
        }
        let wanted: std::collections::HashSet<&String> = expected.iter().collect();
        t.unexpected = all.keys().filter(|k| !wanted.contains(k)).count() as u64;
        t
    }

    /// Messages that arrived in all (every copy of every todo).
    pub fn messages(&self) -> u64 {
        self.shared.messages.load(Ordering::SeqCst)
    }

    /// Forgets every arrival (between phases, once they are tallied).
    pub fn forget(&self) {
        if let Ok(mut all) = self.shared.arrivals.lock() {
            all.clear();
            self.shared.messages.store(0, Ordering::SeqCst);
        }
    }

    /// Stops the workers.
    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// Polls `count` until it reaches `n` or stops moving for `idle`; its value then.
async fn wait_for(count: impl Fn() -> u64, n: u64, idle: Duration) -> u64 {
    let (mut last, mut since) = (count(), Instant::now());
    loop {
        let have = count();
        if have >= n {
            return have;
        }
        if have != last {
            (last, since) = (have, Instant::now());
        } else if since.elapsed() >= idle {
            return have;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// One post: the token checked, the body parsed, the message stored and answered.
async fn receive(shared: web::Data<Shared>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let token = req.headers().get(TOKEN_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let tracked = token == shared.sink_token;
    if !tracked && token != shared.ceiling_token {
        shared.reject("a post without the application token".into());
        return HttpResponse::Unauthorized().json(serde_json::json!({
            "error": "Unauthorized", "errorCode": 401, "errorDescription": "you need to provide a valid access token",
        }));
    }
    let at = Instant::now();
    let posted: Posted = match serde_json::from_slice(&body) {
        Ok(p) => p,
        Err(e) => {
            shared.reject(format!("a body that is not a Gotify message: {e}"));
            return HttpResponse::BadRequest().finish();
        }
    };
    if tracked {
        match todo_of(&posted.message) {
            Some(todo) => shared.arrived(todo.to_owned(), at, &body),
            None => shared.reject("a message without a todo link".into()),
        }
    } else {
        shared.ceiling.fetch_add(1, Ordering::SeqCst);
    }
    let id = shared.next_id.fetch_add(1, Ordering::SeqCst) + 1;
    HttpResponse::Ok().json(serde_json::json!({
        "id": id,
        "appid": 1,
        "message": posted.message,
        "title": posted.title,
        "priority": posted.priority,
        "date": chrono::Utc::now().to_rfc3339(),
    }))
}

/// The ceiling's client: plain POSTs of one Gotify body, with the ceiling's token, on
/// its own keep-alive connection.
pub struct Poster {
    client: awc::Client,
    url: String,
    token: String,
    body: Bytes,
}

impl Poster {
    /// A poster of `body` (a real notification body) to `receiver`.
    pub fn new(receiver: &GotifyReceiver, body: &Bytes) -> Poster {
        Poster {
            client: awc::Client::builder().timeout(Duration::from_secs(30)).finish(),
            url: format!("{}/message", receiver.base()),
            token: receiver.ceiling_token().to_owned(),
            body: body.clone(),
        }
    }

    /// One POST; anything but a 200 is an error.
    pub async fn post(&self) -> BenchResult<()> {
        let mut resp = self
            .client
            .post(&self.url)
            .insert_header(("content-type", "application/json"))
            .insert_header(("X-Gotify-Key", self.token.as_str()))
            .send_body(self.body.clone())
            .await
            .map_err(|e| format!("plain POST: {e}"))?;
        // Read the answer to the end so the connection can be reused.
        let _ = resp.body().await.map_err(|e| format!("plain POST answer: {e}"))?;
        if resp.status().as_u16() != 200 {
            return Err(format!("the receiver answered a plain POST with {}", resp.status()));
        }
        Ok(())
    }
}

impl crate::load::Work for Poster {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.post())
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
}
