//! Authentication answers are coherent across instances: a revoked or changed endpoint
//! token, a revoked operator token and an ended Board session stop working on the next
//! request on every instance, whoever made the change (another instance, the CLI, psql).
//!
//! Every instance here trusts a verified endpoint token for ten minutes, so only an
//! eviction, never the TTL, can make a cached token stop answering within a test.

mod endpoint_tokens;
mod listener;
mod operators;
mod webhooks;

use std::future::Future;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use awc::http::StatusCode;
use serde_json::Value;
use switchboard::config::Settings;
use switchboard::startup::Application;
use switchboard::store::signals::Emitter;

use crate::harness::wait::{Counter, wait_until_every};
use crate::harness::{Ep, TestApp, TestDb, test_settings};

/// How long every instance in these tests trusts a verified endpoint token.
pub const LONG_TTL_MS: u64 = 600_000;

/// The auth listener's session name in `pg_stat_activity`.
pub const AUTH_LISTENER: &str = switchboard::db::listen::LISTENER_SESSION_NAME;

/// The channel auth listeners acknowledge evictions on.
pub const AUTH_ACKS: &str = "switchboard_auth_acks";

/// The one generous limit every wait here has.
const WAIT: Duration = Duration::from_secs(15);

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(20);

/// The settings of this module's app: a token cache that outlives every test step.
pub(crate) fn long_ttl(s: &mut Settings) {
    s.auth_cache_ms = LONG_TTL_MS;
}

/// The application with the long TTL.
pub async fn spawn() -> TestApp {
    TestApp::spawn_with(long_ttl).await
}

/// A second instance of the application on `db` (same settings, its own pool, caches
/// and listeners), served on port 0.
pub struct Peer {
    pub base: String,
    handle: actix_web::dev::ServerHandle,
}

impl Peer {
    /// Starts it.
    pub async fn start(db: &TestDb) -> Peer {
        let mut settings = test_settings(db);
        long_ttl(&mut settings);
        let app = Application::build(&settings, &db.url, Emitter::none()).await.expect("build the second instance");
        let base = format!("http://127.0.0.1:{}", app.port());
        let handle = app.handle();
        actix_rt::spawn(app.run_until_stopped());
        Peer { base, handle }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
    }
}

/// Sends a request to the instance at `base`; its status and JSON body.
pub async fn call(base: &str, method: &str, path: &str, token: &str) -> (StatusCode, Value) {
    let client = awc::Client::builder().disable_redirects().timeout(Duration::from_secs(30)).finish();
    let mut req = client.request(method.parse().expect("method"), format!("{base}{path}"));
    req = req.insert_header(("Authorization", format!("Bearer {token}")));
    let mut resp = req.send().await.expect("request");
    let bytes = resp.body().limit(4 * 1024 * 1024).await.expect("body");
    (resp.status(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// The status of an agent's `GET /api/v1/agent/todos` (needs the `list_todos` grant).
pub async fn list_todos(base: &str, ep: &Ep) -> StatusCode {
    call(base, "GET", "/api/v1/agent/todos", &ep.token).await.0
}

/// Runs `switchboard admin <args> --json` against `database_url`; its one JSON object.
pub fn admin(database_url: &str, args: &[&str], stdin: Option<&str>) -> Value {
    use std::io::Write;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    cmd.env("SWITCHBOARD_DATABASE_URL", database_url).arg("admin").args(args).arg("--json");
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    if let Some(input) = stdin {
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wait");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "admin {args:?}: {stdout} {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_str(stdout.trim()).expect("one JSON object")
}

/// One connection to a test database, held, with the notifications it hears.
pub struct Sql {
    client: tokio_postgres::Client,
    heard: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<String>>,
}

impl Sql {
    /// Connects to `url`.
    pub async fn connect(url: &str) -> Sql {
        use futures_util::StreamExt;
        let (client, mut conn) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        actix_rt::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let tokio_postgres::AsyncMessage::Notification(n) = message {
                    let _ = tx.send(n.payload().to_owned());
                }
            }
        });
        Sql { client, heard: tokio::sync::Mutex::new(rx) }
    }

    /// Runs `sql`, which changes endpoint `id`, and waits until an instance's auth
    /// listener acknowledges that it forgot the endpoint (the CLI and the API wait for
    /// this themselves; a change by hand does not).
    pub async fn run_heard(&self, sql: &str, id: uuid::Uuid) {
        self.run_heard_as(sql, &id.to_string()).await;
    }

    /// Runs `sql` and waits until an instance's auth listener acknowledges `payload`
    /// (an endpoint id, or `webhook:<id>`).
    pub async fn run_heard_as(&self, sql: &str, payload: &str) {
        self.run(&format!("LISTEN {AUTH_ACKS}")).await;
        self.run(sql).await;
        let mut heard = self.heard.lock().await;
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, heard.recv()).await {
                Ok(Some(heard)) if heard == payload => break,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => panic!("no auth listener acknowledged the change to {payload}"),
            }
        }
        drop(heard);
        self.run(&format!("UNLISTEN {AUTH_ACKS}")).await;
    }

    /// Runs `sql` (one or more statements).
    pub async fn run(&self, sql: &str) {
        self.client.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Runs `sql` with triggers off (`session_replication_role = replica`), so nothing
    /// is announced: only a cache that asks the database sees such a change.
    pub async fn run_unannounced(&self, sql: &str) {
        self.run(&format!("BEGIN; SET LOCAL session_replication_role = replica; {sql}; COMMIT")).await;
    }

    /// The one i64 `sql` returns.
    pub async fn int(&self, sql: &str) -> i64 {
        self.client.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0)
    }
}

/// The `list_todos` grant of `ep`, withdrawn (`false`) or given back, unannounced.
pub async fn set_list_grant_unannounced(sql: &Sql, ep: &Ep, granted: bool) {
    let grants = if granted { "array_append(grants, 'list_todos')" } else { "array_remove(grants, 'list_todos')" };
    sql.run_unannounced(&format!("UPDATE endpoints SET grants = {grants} WHERE id = '{}'", ep.id.0)).await;
}

/// Waits until the instance at `base` answers `ep`'s token from its cache: a grant
/// withdrawn unannounced is then not seen. An instance serves from its cache only while
/// its change listener is current, so this also waits for that. When the withdrawal was
/// seen, the grant comes back announced: the answer without it may have been cached
/// meanwhile (the listener became current between the two requests).
pub async fn wait_until_cached(base: &str, sql: &Sql, ep: &Ep) {
    wait_until_every("the token to be served from the cache", WAIT, POLL, async || {
        let first = list_todos(base, ep).await;
        if first != StatusCode::OK {
            return Err(format!("list_todos answered {first}"));
        }
        set_list_grant_unannounced(sql, ep, false).await;
        match list_todos(base, ep).await {
            StatusCode::OK => {
                set_list_grant_unannounced(sql, ep, true).await;
                Ok(())
            }
            StatusCode::FORBIDDEN => {
                sql.run(&format!(
                    "UPDATE endpoints SET grants = array_append(grants, 'list_todos') WHERE id = '{}'",
                    ep.id.0
                ))
                .await;
                Err("a grant withdrawn unannounced was seen (asked of the database)".into())
            }
            other => panic!("unexpected {other}"),
        }
    })
    .await;
}

/// Waits until the instance at `base` answers `ep`'s token from the database: a grant
/// withdrawn unannounced is seen. Leaves the grant withdrawn.
pub async fn wait_until_asked_of_the_database(base: &str, sql: &Sql, ep: &Ep) {
    set_list_grant_unannounced(sql, ep, false).await;
    wait_until_every("a grant withdrawn unannounced to be seen (asked of the database)", WAIT, POLL, async || {
        match list_todos(base, ep).await {
            StatusCode::FORBIDDEN => Ok(()),
            other => Err(format!("list_todos answered {other}: the cache kept answering")),
        }
    })
    .await;
}

impl Counter for Sql {
    fn count(&self, sql: &str) -> impl Future<Output = i64> {
        self.int(sql)
    }
}
