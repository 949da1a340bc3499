//! Start-up as a deployment does it, with the real `switchboard` binary: several replicas
//! (and the CLI's `migrate`) at once on a database nobody has migrated, an older binary
//! on a newer schema, and a database that cannot be reached; and the migrations that
//! build indexes on busy tables without stopping their writes.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::harness::TestDb;
use crate::harness::wait::{try_wait_until, wait_until};

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// One generous limit for every wait in this file: a cold debug binary on a busy
/// machine, migrating from nothing.
const READY_WITHIN: Duration = Duration::from_secs(90);

/// The binary with only `SWITCHBOARD_DATABASE_URL` set among our variables.
fn command(database_url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    cmd.env("SWITCHBOARD_DATABASE_URL", database_url)
        .env("SWITCHBOARD_LOG", "warn")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A `serve` process, stopped (SIGTERM, then waited for) when dropped.
struct Serve {
    child: Child,
    /// Where it says it listens, or everything it printed on stderr if it exited first.
    started: mpsc::Receiver<Result<String, String>>,
}

impl Serve {
    fn spawn(database_url: &str) -> Serve {
        let mut child =
            command(database_url, &["serve", "--addr", "127.0.0.1:0"]).spawn().expect("spawn switchboard serve");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (tx, started) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(base) = line.strip_prefix("Switchboard is running at ") {
                    let _ = tx.send(Ok(base.trim().to_owned()));
                    // Keep draining, so the server never blocks on a full pipe.
                    continue;
                }
            }
            // Stdout closed without the line: the process ended; say why.
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            let _ = tx.send(Err(err));
        });
        Serve { child, started }
    }

    /// The base URL once the process says it listens (or its stderr if it exited).
    fn base(&self, deadline: Instant) -> Result<String, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.started.recv_timeout(left).unwrap_or_else(|_| Err("no start-up line before the deadline".into()))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

/// Asks `/readyz` until it answers 200, or fails at `deadline`.
async fn ready(base: &str, deadline: Instant) -> Result<(), String> {
    let client = awc::Client::default();
    // Readiness is polled: the server offers no event to wait on before it is ready.
    let left = deadline.saturating_duration_since(Instant::now());
    try_wait_until(left, Duration::from_millis(100), async || match client.get(format!("{base}/readyz")).send().await {
        Ok(resp) if resp.status() == 200 => Ok(()),
        Ok(resp) => Err(resp.status().to_string()),
        Err(e) => Err(e.to_string()),
    })
    .await
    .map_err(|last| format!("{base}/readyz never answered 200 (last: {last})"))
}

/// Every instance says where it listens and answers `/readyz` 200.
async fn all_ready(instances: &[Serve], deadline: Instant) {
    let mut failures = Vec::new();
    for (i, serve) in instances.iter().enumerate() {
        match serve.base(deadline) {
            Ok(base) => {
                if let Err(e) = ready(&base, deadline).await {
                    failures.push(format!("instance {i}: {e}"));
                }
            }
            Err(stderr) => failures.push(format!("instance {i} exited: {}", stderr.trim())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How many migrations the binary carries (one directory each).
fn migration_count() -> i64 {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    std::fs::read_dir(dir).expect("migrations").flatten().filter(|e| e.path().is_dir()).count() as i64
}

#[actix_web::test]
async fn three_replicas_started_at_once_on_an_empty_database_all_become_ready() {
    let db = TestDb::empty().await;
    let deadline = Instant::now() + READY_WITHIN;
    let instances: Vec<Serve> = (0..3).map(|_| Serve::spawn(&db.url)).collect();
    all_ready(&instances, deadline).await;
    assert_eq!(db.count("SELECT count(*) FROM __diesel_schema_migrations").await, migration_count());
}

/// A login role of this test's that may connect to `db` but not create anything in it
/// (so migrations over its URL fail); its URL for `db`. Dropped with [`drop_role`].
async fn role_that_cannot_migrate(db: &TestDb) -> (String, String) {
    let role = format!("{}_pool", db.name);
    db.exec(&format!("CREATE ROLE {role} LOGIN PASSWORD 'pool-pw'")).await;
    // PostgreSQL 15 grants PUBLIC no CREATE on `public`; older servers did.
    db.exec("REVOKE CREATE ON SCHEMA public FROM PUBLIC").await;
    let mut url = url::Url::parse(&db.url).expect("a URL");
    url.set_username(&role).expect("a user");
    url.set_password(Some("pool-pw")).expect("a password");
    (role, url.into())
}

async fn drop_role(db: &TestDb, role: &str) {
    db.exec(&format!("DROP ROLE {role}")).await;
}

/// Migrations hold a session advisory lock, which a transaction pooler would break: with
/// a direct URL set they run over it, not over the database URL (whose role, here, may
/// not create anything: without the direct URL `migrate` fails).
#[actix_web::test]
async fn migrate_runs_over_the_direct_database_url_when_one_is_set() {
    let db = TestDb::empty().await;
    let (role, pooled) = role_that_cannot_migrate(&db).await;
    let without = command(&pooled, &["migrate"]).output().expect("run migrate");
    let stderr = String::from_utf8_lossy(&without.stderr);
    assert!(!without.status.success() && stderr.contains("permission denied"), "the control: {stderr}");

    let out = command(&pooled, &["migrate", "--json"])
        .env("SWITCHBOARD_DIRECT_DATABASE_URL", &db.url)
        .output()
        .expect("run migrate");
    assert!(out.status.success(), "migrate failed: {}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["applied"].as_array().expect("applied list").len() as i64, migration_count());
    assert_eq!(db.count("SELECT count(*) FROM __diesel_schema_migrations").await, migration_count());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pool-pw"));
    drop_role(&db, &role).await;
}

/// A direct URL that reaches another database than the database URL (a pooler's alias
/// naming another) is refused by `migrate` and by the server's start-up alike, naming
/// both databases, before anything is migrated.
#[actix_web::test]
async fn a_direct_database_url_reaching_another_database_is_refused_before_anything_is_migrated() {
    let (pooled, other) = (TestDb::empty().await, TestDb::empty().await);
    let out = command(&pooled.url, &["migrate"])
        .env("SWITCHBOARD_DIRECT_DATABASE_URL", &other.url)
        .output()
        .expect("run migrate");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "migrate exited 0");
    assert!(
        stderr.contains("SWITCHBOARD_DIRECT_DATABASE_URL reaches the database") && stderr.contains(&pooled.name),
        "{stderr}"
    );
    assert!(stderr.contains(&other.name), "{stderr}");

    let mut settings = crate::harness::test_settings(&pooled);
    settings.direct_database_url = Some(other.url.clone());
    let built =
        switchboard::startup::Application::build(&settings, &pooled.url, switchboard::store::signals::Emitter::none())
            .await;
    let refused = built.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(refused.contains("SWITCHBOARD_DIRECT_DATABASE_URL reaches the database"), "serve started: {refused}");
    for db in [&pooled, &other] {
        let migrated = "SELECT count(*) FROM pg_tables WHERE tablename = '__diesel_schema_migrations'";
        assert_eq!(db.count(migrated).await, 0, "{} was migrated", db.name);
    }
}

#[actix_web::test]
async fn the_cli_migrate_racing_a_starting_server_both_succeed() {
    let db = TestDb::empty().await;
    let deadline = Instant::now() + READY_WITHIN;
    let migrates: Vec<Child> =
        (0..2).map(|_| command(&db.url, &["migrate", "--json"]).spawn().expect("spawn migrate")).collect();
    let serve = Serve::spawn(&db.url);
    let mut applied = 0;
    for m in migrates {
        let out = m.wait_with_output().expect("wait migrate");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "migrate failed: {stderr}");
        let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        applied += answer["applied"].as_array().expect("applied list").len() as i64;
    }
    all_ready(std::slice::from_ref(&serve), deadline).await;
    let total = migration_count();
    assert!(applied <= total, "a migration was applied twice: {applied} of {total}");
    assert_eq!(db.count("SELECT count(*) FROM __diesel_schema_migrations").await, total);
}

#[actix_web::test]
async fn an_older_binary_starts_on_a_database_with_migrations_it_does_not_know() {
    let db = TestDb::new().await;
    // What a newer release leaves behind: a version this binary has never heard of.
    db.exec("INSERT INTO __diesel_schema_migrations (version) VALUES ('29991231000000')").await;
    let out = command(&db.url, &["migrate", "--json"]).output().expect("run migrate");
    assert!(out.status.success(), "migrate refused: {}", String::from_utf8_lossy(&out.stderr));
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["applied"], serde_json::json!([]));
    let deadline = Instant::now() + READY_WITHIN;
    all_ready(&[Serve::spawn(&db.url)], deadline).await;
}

#[actix_web::test]
async fn start_up_against_an_unreachable_database_names_host_port_and_cause_but_not_the_password() {
    // A port nothing listens on: bound, read, released.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://switchboard:hunter2-not-printed@127.0.0.1:{port}/switchboard");
    for args in [&["serve", "--addr", "127.0.0.1:0"][..], &["migrate"][..]] {
        let out = command(&url, args).output().expect("run switchboard");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} exited 0");
        assert!(stderr.contains("127.0.0.1") && stderr.contains(&port.to_string()), "{args:?}: {stderr}");
        assert!(stderr.to_lowercase().contains("connection refused"), "{args:?}: the cause: {stderr}");
        assert!(stderr.contains("database switchboard, user switchboard"), "{args:?}: whose: {stderr}");
        assert!(!stderr.contains("hunter2"), "{args:?}: the password was printed: {stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("hunter2"));
    }
}

/// The server itself refusing (FATAL: no such database) is named as the reason.
#[actix_web::test]
async fn start_up_against_a_database_that_does_not_exist_names_it_and_the_servers_refusal() {
    let name = format!("sb_no_such_database_{}", std::process::id());
    let url =
        crate::harness::admin_url().rsplit_once('/').map(|(server, _)| format!("{server}/{name}")).expect("a url");
    let out = command(&url, &["migrate"]).output().expect("run switchboard");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "migrate exited 0");
    assert!(stderr.contains(&format!("database {name}")), "the database named: {stderr}");
    assert!(stderr.contains(&format!("database \"{name}\" does not exist")), "the server's reason: {stderr}");
}

#[actix_web::test]
async fn two_instances_seeding_the_demo_at_once_both_succeed_with_one_demo_endpoint_and_the_same_credentials() {
    use switchboard::cli::serve::seed_demo;
    let app = crate::harness::TestApp::spawn().await;
    let dir = std::env::temp_dir().join(format!("sb-seed-{}-{}", std::process::id(), rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let kept = dir.join("demo.json");
    let (a, b) = tokio::join!(seed_demo(&app.store, Some(&kept), false), seed_demo(&app.store, Some(&kept), false));
    assert!(a.is_ok() && b.is_ok(), "{:?} / {:?}", a.as_ref().err(), b.as_ref().err());
    assert_eq!(a.unwrap(), b.unwrap(), "the later one found the credentials the earlier one kept");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(app.db.count("SELECT count(*) FROM humans").await, 1);
    assert_eq!(app.db.count("SELECT count(*) FROM endpoints").await, 1, "one demo endpoint, not demo-2");
}

#[actix_web::test]
async fn an_index_an_interrupted_concurrent_build_left_invalid_is_rebuilt_at_the_next_start() {
    let db = TestDb::new().await;
    let valid = "SELECT count(*) FROM pg_index WHERE indexrelid = 'todos_retention_idx'::regclass AND indisvalid";
    // What an instance killed during `CREATE INDEX CONCURRENTLY` leaves: the index
    // exists, invalid, and the re-run migration's `IF NOT EXISTS` would skip it.
    db.exec("UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'todos_retention_idx'::regclass").await;
    assert_eq!(db.count(valid).await, 0);
    switchboard::db::run_migrations(&db.url).await.expect("migrations");
    assert_eq!(db.count(valid).await, 1, "the invalid index was rebuilt");
}

/// The in-flight index's migration, as diesel records it.
const IN_FLIGHT_MIGRATION: &str = "20261201000022";
/// Whether `todos_in_flight_idx` exists and is valid (1) or not (0).
const IN_FLIGHT_VALID: &str =
    "SELECT count(*) FROM pg_index WHERE indexrelid = to_regclass('todos_in_flight_idx') AND indisvalid";

#[actix_web::test]
async fn the_in_flight_index_is_built_while_todos_keep_being_written() {
    let db = TestDb::new().await;
    // A database upgraded from before the index: 000022 still to run.
    db.exec("DROP INDEX todos_in_flight_idx").await;
    db.exec(&format!("DELETE FROM __diesel_schema_migrations WHERE version = '{IN_FLIGHT_MIGRATION}'")).await;
    // An instance of the previous version in the middle of a todo write.
    let (writer, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(conn);
    writer.batch_execute("BEGIN; LOCK TABLE todos IN ROW EXCLUSIVE MODE").await.unwrap();

    let url = db.url.clone();
    let migrating = actix_rt::spawn(async move { switchboard::db::run_migrations(&url).await });
    // The build waits for the open write (a concurrent build waits out older
    // transactions; a plain one would queue for its SHARE lock behind it).
    let building = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
        AND pid <> pg_backend_pid() AND query LIKE '%INDEX%todos_in_flight_idx%' AND wait_event_type = 'Lock'";
    wait_until("the index build to wait for the open write", READY_WITHIN, async || {
        assert!(!migrating.is_finished(), "the migration finished while a todo write was open");
        match db.count(building).await {
            0 => Err("no build waiting on a lock".into()),
            _ => Ok(()),
        }
    })
    .await;
    // Another todo write goes through meanwhile; behind a plain build's SHARE lock
    // request it would wait, and give up at its lock timeout.
    let (other, conn) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.unwrap();
    actix_rt::spawn(conn);
    other
        .batch_execute("BEGIN; SET LOCAL lock_timeout = '2s'; UPDATE todos SET title = title WHERE false; COMMIT")
        .await
        .expect("a todo write during the index build");

    writer.batch_execute("COMMIT").await.unwrap();
    let applied = migrating.await.unwrap().expect("migrations");
    assert_eq!(applied, [IN_FLIGHT_MIGRATION]);
    assert_eq!(db.count(IN_FLIGHT_VALID).await, 1, "the index is built and valid");
}

#[actix_web::test]
async fn a_database_that_got_the_in_flight_index_from_the_admission_migration_keeps_it() {
    let db = TestDb::new().await;
    // What a database migrated while 000017 still built the index looks like.
    db.exec(&format!("DELETE FROM __diesel_schema_migrations WHERE version = '{IN_FLIGHT_MIGRATION}'")).await;
    let applied = switchboard::db::run_migrations(&db.url).await.expect("migrations");
    assert_eq!(applied, [IN_FLIGHT_MIGRATION]);
    assert_eq!(db.count(IN_FLIGHT_VALID).await, 1);
}

/// Start-up asks the server which language it answers in (lost connections and changed
/// prepared statements are told apart by their English message text); this server's
/// messages are English, so the probe must say so and start-up warns of nothing.
#[actix_web::test]
async fn the_language_probe_finds_an_english_server_english() {
    use switchboard::db::failure::{errors_in_english, messages_in_english};
    let db = TestDb::new().await;
    let mut conn = switchboard::db::connect(&db.url).await.expect("connect");
    // What start-up asks (this server names its locale), and the failing statement it
    // falls back on when the setting is empty.
    assert_eq!(messages_in_english(&mut conn).await, Some(true));
    assert_eq!(errors_in_english(&mut conn).await, Some(true));
}
