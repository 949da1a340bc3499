//! The integration-test harness: a real PostgreSQL database per test, cloned from a
//! migrated template, and the real application spawned on port 0 and driven over HTTP.
//! Signals the store emits are recorded by a real actix actor. Waiting for something to
//! happen goes through [`wait`].

pub mod tcp_gate;
pub mod wait;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use actix::{Actor, Addr, Context, Handler, Message};
use awc::http::StatusCode;
use serde_json::Value;
use sha2::{Digest, Sha256};
use switchboard::config::Settings;
use switchboard::domain::grants::Verb;
use switchboard::domain::ids::{EndpointId, HumanId, ScopeId, TodoId};
use switchboard::startup::Application;
use switchboard::store::Store;
use switchboard::store::endpoints::VendEndpoint;
use switchboard::store::signals::{DeadLettered, Emitter, Signal, TodoReady};

/// The server that holds test databases.
pub fn admin_url() -> String {
    std::env::var("SWITCHBOARD_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// Prefix of the test databases' names: `sbt_<pid>_<n>` (and `sbt_template_<hash>`).
const DB_PREFIX: &str = "sbt_";

fn url_for(db: &str) -> String {
    testkit::db::url_for(&admin_url(), db)
}

async fn admin_client() -> tokio_postgres::Client {
    testkit::db::connect(&admin_url())
        .await
        .unwrap_or_else(|e| panic!("{e}: the test PostgreSQL at {} (run scripts/test)", admin_url()))
}

/// Name of the migrated template: it changes whenever a migration does.
fn template_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut entries: Vec<_> = walk(&dir);
        entries.sort();
        let mut h = Sha256::new();
        for p in entries {
            h.update(p.to_string_lossy().as_bytes());
            h.update(std::fs::read(&p).unwrap_or_default());
        }
        format!("sbt_template_{}", &hex::encode(h.finalize())[..16])
    })
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

static TEMPLATE_READY: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
static COUNTER: AtomicU32 = AtomicU32::new(0);

async fn ensure_template() {
    TEMPLATE_READY
        .get_or_init(|| async {
            let admin = admin_client().await;
            // Serialise template creation across test processes too.
            admin.execute("SELECT pg_advisory_lock(727274)", &[]).await.expect("advisory lock");
            drop_stale_databases(&admin).await;
            let name = template_name();
            let exists = admin
                .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
                .await
                .expect("query")
                .is_some();
            if !exists {
                let building = format!("{name}_building");
                admin.execute(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"), &[]).await.expect("drop");
                admin.execute(&format!("CREATE DATABASE {building}"), &[]).await.expect("create template");
                switchboard::db::run_migrations(&url_for(&building)).await.expect("migrate template");
                admin
                    .execute(&format!("ALTER DATABASE {building} RENAME TO {name}"), &[])
                    .await
                    .expect("rename template");
            }
            admin.execute("SELECT pg_advisory_unlock(727274)", &[]).await.expect("advisory unlock");
        })
        .await;
}

/// Drops databases left by test processes that are gone (and old templates).
async fn drop_stale_databases(admin: &tokio_postgres::Client) {
    // A template of other migrations may belong to another checkout testing right now
    // (a worktree, a branch): only one untouched for an hour is stale. A database
    // another process drops meanwhile has no file left to stat (`missing_ok`).
    let rows = admin
        .query(
            "SELECT datname, coalesce((now() - (pg_stat_file('base/' || oid || '/PG_VERSION', true)).modification) \
                                      > interval '1 hour', false) \
             FROM pg_database WHERE datname LIKE 'sbt\\_%'",
            &[],
        )
        .await
        .expect("list dbs");
    for row in rows {
        let name: String = row.get(0);
        let old: bool = row.get(1);
        let stale = if let Some(rest) = name.strip_prefix("sbt_template_") {
            old && !name.ends_with("_building") && rest != &template_name()["sbt_template_".len()..]
        } else {
            testkit::db::owner_gone(&name, DB_PREFIX)
        };
        if stale {
            let _ = testkit::db::drop_database(admin, &name).await;
        }
    }
}

/// A fresh database for one test, dropped when the test ends.
pub struct TestDb {
    /// Its connection URL.
    pub url: String,
    /// Its name (`sbt_<pid>_<n>`).
    pub name: String,
}

impl TestDb {
    /// Clones the migrated template.
    pub async fn new() -> TestDb {
        ensure_template().await;
        let name = format!("{DB_PREFIX}{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let admin = admin_client().await;
        let mut tries = 0;
        loop {
            match admin.execute(&format!("CREATE DATABASE {name} TEMPLATE {}", template_name()), &[]).await {
                Ok(_) => break,
                // Another CREATE from the same template can briefly hold it: nothing says
                // when it lets go, so the CREATE is retried, each time a little later.
                Err(e) if tries < 20 => {
                    tries += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(50 * tries)).await;
                }
                Err(e) => panic!("create test database: {e}"),
            }
        }
        TestDb { url: url_for(&name), name }
    }

    /// A store over this database with its own pool.
    pub fn store(&self, emitter: Emitter) -> Store {
        Store::new(switchboard::db::pool(&self.url, 8).expect("pool"), emitter)
    }

    /// Runs SQL directly (for simulating the passage of time).
    pub async fn exec(&self, sql: &str) -> u64 {
        let session = self.session().await;
        // `{e:?}`: the Display form of a database error is just "db error".
        session.client.execute(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"))
    }

    /// The text of an EXPLAIN.
    pub async fn plan(&self, explain: &str) -> String {
        self.lines(explain).await
    }

    /// The rows of a query returning one text column, one line each.
    pub async fn lines(&self, sql: &str) -> String {
        self.session().await.lines(sql).await
    }

    /// A connection of its own, open while the session is kept. [`TestDb::exec`],
    /// [`TestDb::count`] and [`TestDb::plan`] open one a call; a loop that looks at the
    /// database without pause keeps one instead, since a connection a look (each left to
    /// close in the background) could run the server out of connections.
    pub async fn session(&self) -> DbSession {
        let (client, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls).await.expect("connect");
        actix_rt::spawn(async move {
            let _ = conn.await;
        });
        DbSession { client }
    }

    /// Runs a query returning one i64.
    pub async fn count(&self, sql: &str) -> i64 {
        self.session().await.count(sql).await
    }

    /// A transaction of its own that holds what `sql` locks until
    /// [`DbSession::commit`] (or until the session is dropped).
    pub async fn hold(&self, sql: &str) -> DbSession {
        let session = self.session().await;
        session.client.batch_execute(&format!("BEGIN; {sql}")).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        session
    }
}

/// A connection to a test database held open ([`TestDb::session`]).
pub struct DbSession {
    client: tokio_postgres::Client,
}

impl DbSession {
    /// Runs a query returning one i64.
    pub async fn count(&self, sql: &str) -> i64 {
        self.client.query_one(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e:?}")).get(0)
    }

    /// The rows of a query returning one text column, one line each.
    pub async fn lines(&self, sql: &str) -> String {
        let rows = self.client.query(sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        rows.iter().map(|r| r.get::<_, String>(0)).collect::<Vec<_>>().join("\n")
    }

    /// Commits the session's transaction ([`TestDb::hold`]), letting go of its locks.
    pub async fn commit(&self) {
        self.client.batch_execute("COMMIT").await.expect("commit");
    }

    /// Runs SQL that may be refused: the SQLSTATE of the refusal, or `None` if it ran.
    pub async fn refusal(&self, sql: &str) -> Option<String> {
        match self.client.batch_execute(sql).await {
            Ok(()) => None,
            Err(e) => Some(e.code().map_or_else(|| format!("no SQLSTATE: {e:?}"), |c| c.code().to_owned())),
        }
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Drop runs outside async context; use a private runtime on a thread.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                if let Ok(admin) = testkit::db::connect(&admin_url()).await {
                    let _ = testkit::db::drop_database(&admin, &name).await;
                }
            });
        })
        .join();
    }
}

/// Records every signal the store emits, in order.
#[derive(Default)]
pub struct Recorder {
    seen: Arc<Mutex<Vec<Signal>>>,
}

/// Waits until every signal sent before it has been recorded.
#[derive(Message)]
#[rtype(result = "()")]
struct Flush;

impl Actor for Recorder {
    type Context = Context<Self>;
}

/// The store never blocks on a full mailbox: it drops and counts. A recorder that must
/// see everything gets room for every signal a test produces.
const RECORDER_MAILBOX: usize = 100_000;

impl Handler<TodoReady> for Recorder {
    type Result = ();
    fn handle(&mut self, m: TodoReady, _: &mut Context<Self>) {
        self.seen.lock().unwrap().push(Signal::Ready(m));
    }
}

impl Handler<DeadLettered> for Recorder {
    type Result = ();
    fn handle(&mut self, m: DeadLettered, _: &mut Context<Self>) {
        self.seen.lock().unwrap().push(Signal::DeadLettered(m));
    }
}

impl Handler<Flush> for Recorder {
    type Result = ();
    fn handle(&mut self, _: Flush, _: &mut Context<Self>) {}
}

/// A handle on a running recorder.
#[derive(Clone)]
pub struct Signals {
    addr: Addr<Recorder>,
    seen: Arc<Mutex<Vec<Signal>>>,
}

impl Signals {
    /// Starts a recorder.
    pub fn start() -> Signals {
        let recorder = Recorder::default();
        let seen = recorder.seen.clone();
        // Room for every signal from the first one (`started` runs only once polled).
        let mut ctx = Context::new();
        ctx.set_mailbox_capacity(RECORDER_MAILBOX);
        Signals { addr: ctx.run(recorder), seen }
    }

    /// An emitter that sends to this recorder.
    pub fn emitter(&self) -> Emitter {
        Emitter::to(self.addr.clone().recipient(), self.addr.clone().recipient())
    }

    /// Everything recorded so far (after letting the mailbox drain), then forgets it.
    pub async fn take(&self) -> Vec<Signal> {
        self.addr.send(Flush).await.expect("recorder alive");
        std::mem::take(&mut *self.seen.lock().unwrap())
    }

    /// The `TodoReady` signals recorded so far (drained).
    pub async fn take_ready(&self) -> Vec<TodoReady> {
        self.take().await.into_iter().filter_map(|s| if let Signal::Ready(r) = s { Some(r) } else { None }).collect()
    }

    /// The `DeadLettered` signals recorded so far (drained).
    pub async fn take_dead(&self) -> Vec<DeadLettered> {
        self.take()
            .await
            .into_iter()
            .filter_map(|s| if let Signal::DeadLettered(d) = s { Some(d) } else { None })
            .collect()
    }
}

/// A human with an operator token.
#[derive(Debug, Clone)]
pub struct Owner {
    pub id: HumanId,
    pub scope: ScopeId,
    pub token: String,
}

/// An endpoint with its token.
#[derive(Debug, Clone)]
pub struct Ep {
    pub id: EndpointId,
    pub token: String,
}

/// The real application on a random port, with its own database and signal recorder.
pub struct TestApp {
    pub base: String,
    pub db: TestDb,
    pub store: Store,
    pub signals: Signals,
    pub client: awc::Client,
    handle: actix_web::dev::ServerHandle,
    /// The hook dispatcher (none with hooks switched off).
    pub dispatcher: Option<Addr<switchboard::hooks::worker::Dispatcher>>,
}

/// A connection of the test's own to `db` (outside the app's pool).
pub async fn connect(db: &TestDb) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(async move {
        let _ = conn.await;
    });
    client
}

/// Settings for a test server: port 0, and sweeps slow enough that tests drive them.
pub fn test_settings(db: &TestDb) -> Settings {
    let mut s = Settings::from_env().expect("settings");
    s.database_url = Some(db.url.clone());
    // Whatever the environment says: a direct URL elsewhere would take the listener and
    // migrations away from the test's database.
    s.direct_database_url = None;
    s.addr = "127.0.0.1:0".parse().unwrap();
    s.lease_reaper_interval_ms = 3_600_000;
    s.interrupt_reaper_interval_ms = 3_600_000;
    s.retry_scheduler_interval_ms = 3_600_000;
    s.endpoint_expiry_interval_ms = 3_600_000;
    // Retention's first pass comes a minute after start-up: off, so that it never
    // deletes a long test's aged rows (tests/it/retention.rs turns it on).
    s.retention_days = 0;
    s.db_pool_size = 8;
    s.workers = Some(2);
    s
}

impl TestApp {
    /// Spawns the app with test settings.
    pub async fn spawn() -> TestApp {
        Self::spawn_with(|_| {}).await
    }

    /// Spawns the app after adjusting its settings.
    pub async fn spawn_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
        Self::spawn_with_lookup(adjust, switchboard::outbound::SystemLookup).await
    }

    /// Spawns the app after adjusting its settings, its outbound guard resolving host
    /// names through `lookup` (scripted DNS).
    pub async fn spawn_with_lookup(
        adjust: impl FnOnce(&mut Settings),
        lookup: impl switchboard::outbound::Lookup,
    ) -> TestApp {
        // Opt-in server logs for a test run (`SWITCHBOARD_TEST_LOG=warn`, say): a 500
        // under load says why in them, and nowhere else.
        if let Ok(filter) = std::env::var("SWITCHBOARD_TEST_LOG") {
            switchboard::telemetry::init(&filter, switchboard::config::LogFormat::Text);
        }
        let db = TestDb::new().await;
        let mut settings = test_settings(&db);
        adjust(&mut settings);
        let signals = Signals::start();
        let app =
            Application::build_with_lookup(&settings, &db.url, signals.emitter(), lookup).await.expect("build app");
        let base = format!("http://127.0.0.1:{}", app.port());
        let store = app.store().clone();
        let handle = app.handle();
        let dispatcher = app.hook_dispatcher();
        actix_rt::spawn(app.run_until_stopped());
        // Idle connections kept less long than the server's 5 s keep-alive: reusing one
        // the server is closing fails the request (seen after a slow browser test).
        let connector = awc::Connector::new().conn_keep_alive(Duration::from_secs(2));
        let client = awc::Client::builder().connector(connector).timeout(Duration::from_secs(30)).finish();
        TestApp { base, db, store, signals, client, handle, dispatcher }
    }

    /// Stops the server (its workers stop with it); the database stays.
    pub async fn stop(&self) {
        self.handle.stop(false).await;
    }

    /// The common fixture: the app, an owner `a@example.com` and their endpoint
    /// `worker` granted every agent verb.
    pub async fn with_worker() -> (TestApp, Owner, Ep) {
        let app = Self::spawn().await;
        let owner = app.owner("a@example.com").await;
        let ep = app.agent(owner.scope, "worker").await;
        (app, owner, ep)
    }

    /// A human with an operator token.
    pub async fn owner(&self, email: &str) -> Owner {
        let h = self.store.create_human(email, "Test Human", None).await.expect("create human");
        Owner { id: h.human.id, scope: h.scope, token: h.token }
    }

    /// An endpoint owned by `scope` with `grants` (empty: the drain family).
    pub async fn endpoint(&self, scope: ScopeId, slug: &str, grants: &[Verb]) -> Ep {
        let v = self
            .store
            .vend_endpoint(VendEndpoint {
                scope,
                slug: slug.into(),
                grants: grants.to_vec(),
                default_lease_seconds: None,
                expires_at: None,
            })
            .await
            .expect("vend");
        Ep { id: v.endpoint.id, token: v.token }
    }

    /// An endpoint that may do everything an agent can.
    pub async fn agent(&self, scope: ScopeId, slug: &str) -> Ep {
        self.endpoint(scope, slug, Verb::ALL).await
    }

    /// Sends a request; returns status and JSON body (Null when empty or not JSON).
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> (StatusCode, Value) {
        let method: awc::http::Method = method.parse().unwrap();
        let mut req = self.client.request(method, format!("{}{}", self.base, path));
        if let Some(t) = token {
            req = req.insert_header(("Authorization", format!("Bearer {t}")));
        }
        let mut resp = match body {
            Some(b) => req.send_json(b).await,
            None => req.send().await,
        }
        .expect("request");
        let bytes = resp.body().limit(16 * 1024 * 1024).await.expect("body");
        (resp.status(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Sends raw bytes with a content type.
    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        content_type: &str,
        body: Vec<u8>,
    ) -> (StatusCode, Value) {
        let method: awc::http::Method = method.parse().unwrap();
        let mut req =
            self.client.request(method, format!("{}{}", self.base, path)).insert_header(("content-type", content_type));
        if let Some(t) = token {
            req = req.insert_header(("Authorization", format!("Bearer {t}")));
        }
        let mut resp = req.send_body(body).await.expect("request");
        let bytes = resp.body().limit(16 * 1024 * 1024).await.expect("body");
        (resp.status(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// POST with a JSON body.
    pub async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.call("POST", path, Some(token), Some(&body)).await
    }

    /// GET.
    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.call("GET", path, Some(token), None).await
    }

    /// Creates a todo through the agent API; returns its id.
    pub async fn create_todo(&self, ep: &Ep, queue: &str, title: &str) -> TodoId {
        let (s, b) =
            self.post("/api/v1/agent/todos", &ep.token, serde_json::json!({"queue": queue, "title": title})).await;
        assert_eq!(s, StatusCode::CREATED, "{b}");
        b["id"].as_str().unwrap().parse().unwrap()
    }

    /// Claims the next todo; returns the answer body.
    pub async fn claim_next(&self, ep: &Ep) -> Value {
        let (s, b) = self.post("/api/v1/agent/todos/claim-next", &ep.token, serde_json::json!({})).await;
        assert_eq!(s, StatusCode::OK, "{b}");
        b
    }

    /// The whole `GET /metrics` text, read with the bearer `token` the app was started
    /// with.
    pub async fn metrics_text(&self, token: &str) -> String {
        let mut resp = self
            .client
            .get(format!("{}/metrics", self.base))
            .insert_header(("Authorization", format!("Bearer {token}")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        String::from_utf8(resp.body().limit(1 << 22).await.unwrap().to_vec()).unwrap()
    }

    /// The value of one metrics series (`name{labels}`), read from `GET /metrics` with
    /// the bearer `token` the app was started with.
    pub async fn metric(&self, token: &str, series: &str) -> u64 {
        metric_at(&self.client, &self.base, token, series).await
    }

    /// Makes a claimed todo's lease lapse (time travel by SQL).
    pub async fn lapse_lease(&self, id: TodoId) {
        self.db
            .exec(&format!("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = '{}'", id.0))
            .await;
    }

    /// Makes an interrupted todo's interrupt lease lapse.
    pub async fn lapse_interrupt(&self, id: TodoId) {
        self.db
            .exec(&format!("UPDATE todos SET interrupt_expires_at = now() - interval '1 second' WHERE id = '{}'", id.0))
            .await;
    }

    /// Makes a scheduled retry due.
    pub async fn make_retry_due(&self, id: TodoId) {
        self.db
            .exec(&format!("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = '{}'", id.0))
            .await;
    }
}

/// The value of one metrics series (`name{labels}`) of the instance at `base`, read from
/// `GET /metrics` with the bearer `token` it was started with.
pub async fn metric_at(client: &awc::Client, base: &str, token: &str, series: &str) -> u64 {
    let mut resp = client
        .get(format!("{base}/metrics"))
        .insert_header(("Authorization", format!("Bearer {token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let text = String::from_utf8(resp.body().await.unwrap().to_vec()).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(series) && l[series.len()..].starts_with(' '))
        .unwrap_or_else(|| panic!("no {series} in\n{text}"));
    line[series.len() + 1..].trim().parse().unwrap()
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Stop the server without waiting; the database is dropped right after.
        // The stop command is sent when `stop` is called; the returned future only
        // reports completion, which nothing here needs to wait for.
        drop(self.handle.stop(false));
    }
}

impl TestDb {
    /// A new database with nothing in it (no migrations), dropped when the test ends:
    /// what a first deployment finds.
    pub async fn empty() -> TestDb {
        ensure_template().await;
        let name = format!("{DB_PREFIX}{}_{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        admin_client().await.execute(&format!("CREATE DATABASE {name}"), &[]).await.expect("create empty database");
        TestDb { url: url_for(&name), name }
    }
}
