//! The local receiver: an HTTP server inside the bench process on 127.0.0.1 (actix-web
//! workers on threads of their own, so the clients' thread never delays a timestamp).
//! Each hook posts to `/hooks/<name>`; the receiver verifies the Standard Webhooks
//! signature with that hook's secret and only then takes the arrival time ("holds a
//! verified POST"). Anything that does not verify is answered 401 and counted.
//!
//! Arrivals of notifications are kept per (type, todo id), so that the benchmark can
//! wait for "the dead letter of this todo" or "all H hooks' copies of this todo.ready",
//! whether they arrive before or after it starts waiting.

use std::collections::HashMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use actix_web::dev::ServerHandle;
use actix_web::web::{self, Bytes};
use actix_web::{App, HttpRequest, HttpResponse, HttpServer};
use serde::Deserialize;
use tokio::sync::oneshot;

use crate::BenchResult;
use crate::signature::Key;

/// Worker threads of the receiver.
const WORKERS: usize = 2;

/// A path the receiver answers: its key, and whether its posts are notifications whose
/// arrivals are kept (the ceiling's posts are only counted).
#[derive(Clone)]
struct Route {
    key: Key,
    track: bool,
}

/// The arrivals of one (type, todo id), and who waits for how many of them.
#[derive(Default)]
struct Arrivals {
    at: Vec<Instant>,
    waiter: Option<(usize, oneshot::Sender<Instant>)>,
}

#[derive(Default)]
struct Shared {
    routes: RwLock<HashMap<String, Route>>,
    verified: AtomicU64,
    rejected: AtomicU64,
    first_rejection: Mutex<Option<String>>,
    arrivals: Mutex<HashMap<(String, String), Arrivals>>,
    samples: Mutex<HashMap<String, Bytes>>,
}

/// The fields of a notification the receiver keys arrivals by.
#[derive(Deserialize)]
struct Notification {
    #[serde(rename = "type")]
    kind: String,
    todo_id: String,
}

impl Shared {
    fn reject(&self, why: String) {
        self.rejected.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut first) = self.first_rejection.lock() {
            first.get_or_insert(why);
        }
    }

    fn arrived(&self, n: Notification, at: Instant, body: &Bytes) {
        if let Ok(mut samples) = self.samples.lock() {
            samples.entry(n.kind.clone()).or_insert_with(|| body.clone());
        }
        let Ok(mut all) = self.arrivals.lock() else { return };
        let key = (n.kind, n.todo_id);
        let complete = {
            let entry = all.entry(key.clone()).or_default();
            entry.at.push(at);
            entry.waiter.as_ref().is_some_and(|(want, _)| entry.at.len() >= *want)
        };
        if complete
            && let Some(entry) = all.remove(&key)
            && let Some((want, tx)) = entry.waiter
        {
            let _ = tx.send(entry.at[want - 1]);
        }
    }
}

/// The receiver. Clones share it; stop it once with [`Receiver::stop`].
#[derive(Clone)]
pub struct Receiver {
    shared: Arc<Shared>,
    handle: ServerHandle,
    base: String,
}

impl Receiver {
    /// Binds a free loopback port and starts the workers.
    pub fn start() -> BenchResult<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("receiver: cannot bind: {e}"))?;
        let port = listener.local_addr().map_err(|e| format!("receiver: {e}"))?.port();
        let shared = Arc::new(Shared::default());
        let data = web::Data::from(shared.clone());
        let server =
            HttpServer::new(move || App::new().app_data(data.clone()).route("/hooks/{name}", web::post().to(receive)))
                .workers(WORKERS)
                .disable_signals()
                .shutdown_timeout(1)
                .listen(listener)
                .map_err(|e| format!("receiver: {e}"))?
                .run();
        let handle = server.handle();
        actix_rt::spawn(server);
        Ok(Receiver { shared, handle, base: format!("http://127.0.0.1:{port}") })
    }

    /// The URL of path `name`, answered once [`Receiver::route`] gave it a key.
    pub fn url(&self, name: &str) -> String {
        format!("{}/hooks/{name}", self.base)
    }

    /// Answers posts to `name` signed with `secret`; `track` keeps their arrivals.
    pub fn route(&self, name: &str, secret: &str, track: bool) -> BenchResult<()> {
        let key = Key::from_secret(secret)?;
        let mut routes = self.shared.routes.write().map_err(|_| "receiver routes poisoned")?;
        routes.insert(name.to_owned(), Route { key, track });
        Ok(())
    }

    /// Verified posts so far (every path).
    pub fn verified(&self) -> u64 {
        self.shared.verified.load(Ordering::SeqCst)
    }

    /// Refused posts so far, and the first refusal's reason.
    pub fn rejected(&self) -> (u64, Option<String>) {
        let first = self.shared.first_rejection.lock().ok().and_then(|f| f.clone());
        (self.shared.rejected.load(Ordering::SeqCst), first)
    }

    /// The first verified body of notification type `kind`, if one arrived.
    pub fn sample(&self, kind: &str) -> Option<Bytes> {
        self.shared.samples.lock().ok()?.get(kind).cloned()
    }

    /// Resolves with the arrival time of the `want`-th verified `kind` notification
    /// about `todo` (at once if it is already here).
    pub fn expect(&self, kind: &str, todo: &str, want: usize) -> oneshot::Receiver<Instant> {
        let (tx, rx) = oneshot::channel();
        let want = want.max(1);
        if let Ok(mut all) = self.shared.arrivals.lock() {
            let key = (kind.to_owned(), todo.to_owned());
            let entry = all.entry(key.clone()).or_default();
            if entry.at.len() >= want {
                let at = entry.at[want - 1];
                all.remove(&key);
                let _ = tx.send(at);
            } else {
                entry.waiter = Some((want, tx));
            }
        }
        rx
    }

    /// Forgets arrivals nobody waits for (between phases, so memory stays flat).
    pub fn forget_unclaimed(&self) {
        if let Ok(mut all) = self.shared.arrivals.lock() {
            all.retain(|_, a| a.waiter.is_some());
        }
    }

    /// Stops the workers.
    pub async fn stop(self) {
        self.handle.stop(false).await;
    }
}

/// One post: verified with its path's key, then timed and recorded.
async fn receive(shared: web::Data<Shared>, name: web::Path<String>, req: HttpRequest, body: Bytes) -> HttpResponse {
    let route = shared.routes.read().ok().and_then(|r| r.get(name.as_str()).cloned());
    let Some(route) = route else {
        shared.reject(format!("a post to an unknown path /hooks/{name}"));
        return HttpResponse::NotFound().finish();
    };
    let header = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok());
    let now = chrono::Utc::now().timestamp();
    let verdict =
        route.key.verify(header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"), &body, now);
    if let Err(why) = verdict {
        shared.reject(format!("/hooks/{name}: {why}"));
        return HttpResponse::Unauthorized().finish();
    }
    let at = Instant::now();
    shared.verified.fetch_add(1, Ordering::SeqCst);
    if route.track {
        match serde_json::from_slice::<Notification>(&body) {
            Ok(n) => shared.arrived(n, at, &body),
            Err(e) => shared.reject(format!("/hooks/{name}: a verified body that is not a notification: {e}")),
        }
    }
    HttpResponse::NoContent().finish()
}
