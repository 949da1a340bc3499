//! A clean start with only the README: the embedded default keeps its demo credentials
//! and master key in its data dir, CLI commands never create a database, the address
//! is bound before any database work, and log lines carry no colour codes off a
//! terminal.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::TestDb;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// A cold debug binary bringing up (or reusing) an embedded cluster on a busy machine.
const START_WITHIN: Duration = Duration::from_secs(120);

/// The binary with only the given SWITCHBOARD_* variables set, run in `dir`.
fn command(env: &[(&str, &str)], args: &[&str], dir: Option<&Path>) -> Command {
    let mut cmd = Command::new(BIN);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
        cmd.env_remove(k);
    }
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    cmd.envs(env.iter().copied()).args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd
}

/// Runs to the end, or is killed after `limit` (a refusal that broke would otherwise
/// serve for ever): exit code (-1 when killed) and stderr.
fn run_within(env: &[(&str, &str)], args: &[&str], limit: Duration) -> (i32, String) {
    let mut child = command(env, args, None).spawn().expect("run switchboard");
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("wait for switchboard").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let out = child.wait_with_output().expect("its output");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Runs to the end: exit code and stderr.
fn run(env: &[(&str, &str)], args: &[&str], dir: Option<&Path>) -> (i32, String) {
    let out = command(env, args, dir).output().expect("run switchboard");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn tempdir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{}", std::process::id(), rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the embedded default prints at start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Banner {
    base: String,
    password: String,
    operator: String,
    slug: String,
    agent: String,
    mcp: String,
}

/// A running `serve`, stopped by SIGTERM when dropped (or by [`Serve::stop`]).
struct Serve {
    child: Child,
    banner: Banner,
    stderr: mpsc::Receiver<String>,
}

impl Serve {
    /// Starts `serve` and waits for its start-up lines (the demo's, on the embedded
    /// default); `Err` with its stderr when it exits first.
    fn start(env: &[(&str, &str)], args: &[&str]) -> Result<Serve, String> {
        let mut child = command(env, args, None).spawn().expect("spawn serve");
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let (err_tx, err_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = err_tx.send(text);
        });
        let embedded = !env.iter().any(|(k, _)| *k == "SWITCHBOARD_DATABASE_URL");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut banner = Banner::default();
            let mut sent = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let line = line.trim();
                let field = |prefix: &str| {
                    line.strip_prefix(prefix).and_then(|rest| rest.split_whitespace().next()).map(str::to_owned)
                };
                if let Some(v) = field("Switchboard is running at ") {
                    banner.base = v;
                } else if let Some(v) = field("password ") {
                    banner.password = v;
                } else if let Some(v) = field("operator ") {
                    banner.operator = v;
                } else if let Some(v) = field("endpoint ") {
                    banner.slug = v;
                } else if let Some(v) = field("agent token ") {
                    banner.agent = v;
                } else if let Some(v) = field("mcp ") {
                    banner.mcp = v;
                }
                let complete = !banner.base.is_empty() && (!embedded || !banner.mcp.is_empty());
                if complete && !sent {
                    let _ = tx.send(banner.clone());
                    sent = true;
                }
            }
        });
        match rx.recv_timeout(START_WITHIN) {
            Ok(banner) => Ok(Serve { child, banner, stderr: err_rx }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(err_rx.recv_timeout(Duration::from_secs(10)).unwrap_or_default())
            }
        }
    }

    /// Stops it (SIGTERM), asserts a clean exit, and returns what it logged.
    fn stop(mut self) -> String {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = self.child.wait().unwrap();
        assert!(status.success(), "serve exited {status}");
        self.stderr.recv_timeout(Duration::from_secs(30)).unwrap_or_default()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

fn embedded_env(data: &Path) -> Vec<(&'static str, String)> {
    vec![("SWITCHBOARD_DATA_DIR", data.to_str().unwrap().to_owned()), ("SWITCHBOARD_LOG", "warn".to_owned())]
}

fn as_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Status of an authenticated GET.
async fn get(base: &str, path: &str, token: &str) -> u16 {
    let client = awc::Client::default();
    let resp = client.get(format!("{base}{path}")).insert_header(("Authorization", format!("Bearer {token}")));
    resp.send().await.unwrap().status().as_u16()
}

/// The status lines of `/readyz` and `/healthz` as soon as `addr` accepts connections
/// (plain HTTP/1.0 from a thread of its own, while the test waits for the start-up lines).
fn first_answers(addr: &str) -> (String, String) {
    use std::io::Write;
    let status = |path: &str| -> std::io::Result<String> {
        let mut stream = std::net::TcpStream::connect(addr)?;
        write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer.lines().next().unwrap_or_default().to_owned())
    };
    let started = Instant::now();
    // Polled: nothing tells a test when a process has bound its address.
    loop {
        if let Ok(readyz) = status("/readyz") {
            return (readyz, status("/healthz").unwrap_or_else(|e| e.to_string()));
        }
        assert!(started.elapsed() < START_WITHIN, "{addr} never accepted a connection");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o777
}

#[actix_web::test]
async fn the_embedded_default_keeps_its_demo_credentials_and_key_across_restarts_rotates_them_on_reset_and_refuses_another_key()
 {
    let browser = testkit::board::browser();
    let data = tempdir("sb-first-run");
    let env = embedded_env(&data);
    let args = ["serve", "--addr", "127.0.0.1:0"];

    // First start on a port known beforehand (the others use port 0): the address is
    // answered at once, `/readyz` 503 while the cluster is created, then the demo works,
    // and a signed webhook is accepted with no key variable set.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let addr = format!("127.0.0.1:{port}");
    let early = std::thread::spawn({
        let addr = addr.clone();
        move || first_answers(&addr)
    });
    let first = Serve::start(&as_refs(&env), &["serve", "--addr", &addr]).expect("first start");
    let (readyz, healthz) = early.join().unwrap();
    assert!(readyz.contains(" 503 "), "/readyz while the database was being readied: {readyz}");
    assert!(healthz.contains(" 200 "), "/healthz while the database was being readied: {healthz}");
    let b1 = first.banner.clone();
    assert!(b1.mcp.ends_with(&format!("/mcp/{}", b1.slug)), "{b1:?}");
    assert_eq!(get(&b1.base, "/readyz", "-").await, 200);
    assert_eq!(get(&b1.base, "/api/v1/agent/todos", &b1.agent).await, 200, "the agent token");
    let client = awc::Client::default();
    let mut list = client
        .get(format!("{}/api/v1/endpoints", b1.base))
        .insert_header(("Authorization", format!("Bearer {}", b1.operator)))
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), 200, "the operator token");
    let endpoints: serde_json::Value = list.json().await.unwrap();
    let endpoint_id = endpoints["endpoints"][0]["id"].as_str().unwrap().to_owned();
    let mut created = client
        .post(format!("{}/api/v1/webhooks", b1.base))
        .insert_header(("Authorization", format!("Bearer {}", b1.operator)))
        .send_json(&json!({"endpoint_id": endpoint_id, "source_type": "github", "queue": "builds"}))
        .await
        .unwrap();
    assert_eq!(created.status(), 201, "a signed webhook without the variable: {:?}", created.body().await);
    let session = testkit::board::sign_in(&browser, &b1.base, "demo@switchboard.local", &b1.password)
        .await
        .expect("the printed Board password signs in");
    for file in ["secret.key", "demo.json"] {
        assert_eq!(mode(&data.join(file)), 0o600, "{file} is readable by its owner only");
    }
    let kept = std::fs::read_to_string(data.join("demo.json")).unwrap();
    assert!(kept.contains(&b1.agent) && kept.contains(&b1.operator) && kept.contains(&b1.password), "{kept}");
    let logged = first.stop();
    assert!(!logged.contains(&b1.agent) && !logged.contains(&b1.password), "credentials never reach the log");

    // Second start on the same data dir: the same credentials, and the session lives on.
    let second = Serve::start(&as_refs(&env), &args).expect("second start");
    let b2 = second.banner.clone();
    assert_eq!((&b2.operator, &b2.slug, &b2.agent, &b2.password), (&b1.operator, &b1.slug, &b1.agent, &b1.password));
    assert_eq!(get(&b2.base, "/api/v1/agent/todos", &b1.agent).await, 200);
    assert_eq!(get(&b2.base, "/api/v1/endpoints", &b1.operator).await, 200);
    let todos = testkit::board::get(&browser, &format!("{}/todos", b2.base), Some(&session.cookie)).await.unwrap();
    assert_eq!(todos.status, 200, "the Board session survived the restart");
    testkit::board::sign_in(&browser, &b2.base, "demo@switchboard.local", &b1.password)
        .await
        .expect("the same Board password signs in");
    second.stop();

    // `--reset-demo`: everything rotates; the old credentials stop working.
    let reset_args = ["serve", "--addr", "127.0.0.1:0", "--reset-demo"];
    let third = Serve::start(&as_refs(&env), &reset_args).expect("reset start");
    let b3 = third.banner.clone();
    assert!(b3.operator != b1.operator && b3.agent != b1.agent && b3.password != b1.password, "{b3:?}");
    assert_eq!(get(&b3.base, "/api/v1/agent/todos", &b1.agent).await, 401);
    assert_eq!(get(&b3.base, "/api/v1/endpoints", &b1.operator).await, 401);
    assert_eq!(get(&b3.base, "/api/v1/agent/todos", &b3.agent).await, 200);
    assert_eq!(get(&b3.base, "/api/v1/endpoints", &b3.operator).await, 200);
    let todos = testkit::board::get(&browser, &format!("{}/todos", b3.base), Some(&session.cookie)).await.unwrap();
    assert_eq!(todos.status, 303, "a reset ends the Board sessions");
    assert!(std::fs::read_to_string(data.join("demo.json")).unwrap().contains(&b3.agent), "the new ones are kept");
    third.stop();

    // The webhook's secret is sealed under secret.key: another key in force is refused.
    let mut other = env.clone();
    other.push(("SWITCHBOARD_SECRET_ENCRYPTION_KEY", hex::encode([7u8; 32])));
    let refused = Serve::start(&as_refs(&other), &args).err().expect("another key refused");
    let key_file = data.join("secret.key").canonicalize().unwrap();
    assert!(
        refused.contains(&key_file.display().to_string()) && refused.contains("SWITCHBOARD_SECRET_ENCRYPTION_KEY"),
        "names both sources: {refused}"
    );
    let _ = std::fs::remove_dir_all(&data);
}

#[actix_web::test]
async fn a_key_file_others_can_read_or_that_is_corrupt_stops_start_up_naming_it_before_any_database_work() {
    let data = tempdir("sb-keyfile");
    let key = data.join("secret.key");
    std::fs::write(&key, format!("{}\n", hex::encode([3u8; 32]))).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    // No server binaries either: were the key file not checked first, start-up would
    // stop on them instead (and never create a database meanwhile).
    let no_binaries = tempdir("sb-nobin");
    let mut env = embedded_env(&data);
    env.push(("SWITCHBOARD_PG_BIN_DIR", no_binaries.to_str().unwrap().to_owned()));
    let args = ["serve", "--addr", "127.0.0.1:0"];
    for (content, expected) in [(None, "readable by group or others"), (Some("not a key\n"), "corrupt")] {
        if let Some(content) = content {
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::fs::write(&key, content).unwrap();
        }
        let (code, err) = run(&as_refs(&env), &args, None);
        assert_ne!(code, 0, "{expected}: started");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{expected}: one line: {err}");
        assert!(lines[0].contains(&key.display().to_string()) && lines[0].contains(expected), "{err}");
        assert!(!data.join("pgdata").exists(), "{expected}: no database was created");
    }
    let _ = std::fs::remove_dir_all(&data);
    let _ = std::fs::remove_dir_all(&no_binaries);
}

#[actix_web::test]
async fn a_cli_command_in_an_empty_directory_creates_nothing_and_names_the_directory_and_the_variable() {
    let empty = tempdir("sb-empty");
    let commands: [&[&str]; 4] = [
        &["admin", "list-webhooks"],
        &["admin", "revoke-endpoint", "--slug", "demo"],
        &["digest", "preview", "--id", "dg_nothing"],
        &["migrate"],
    ];
    let started = Instant::now();
    for args in commands {
        let (code, err) = run(&[], args, Some(&empty));
        assert_ne!(code, 0, "{args:?} succeeded");
        let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line: {err}");
        let looked_in = empty.join(".switchboard").display().to_string();
        assert!(lines[0].contains(&looked_in) && lines[0].contains("SWITCHBOARD_DATABASE_URL"), "{args:?}: {err}");
        assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0, "{args:?} created something");
    }
    assert!(started.elapsed() < Duration::from_secs(30), "no database was brought up");
    let _ = std::fs::remove_dir_all(&empty);
}

#[actix_web::test]
async fn the_cli_says_what_it_did_not_find() {
    let db = TestDb::new().await;
    let env = [("SWITCHBOARD_DATABASE_URL", db.url.as_str())];
    let cases: [(&[&str], &str); 3] = [
        (&["admin", "revoke-endpoint", "--slug", "x"], r#"no endpoint with slug "x""#),
        (&["admin", "sink-deliveries", "--sink", "nope"], r#"no sink with id "nope""#),
        (&["digest", "preview", "--id", "dg_missing"], r#"no digest with id "dg_missing""#),
    ];
    for (args, expected) in cases {
        let (code, err) = run(&env, args, None);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

#[actix_web::test]
async fn serve_fails_at_once_naming_a_taken_address_and_creates_no_data_dir() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let parent = tempdir("sb-taken");
    let data = parent.join("data");
    let env = [("SWITCHBOARD_DATA_DIR", data.to_str().unwrap())];
    let started = Instant::now();
    let (code, err) = run(&env, &["serve", "--addr", &addr], None);
    assert_ne!(code, 0);
    assert!(err.contains(&addr), "names the address: {err}");
    assert!(started.elapsed() < Duration::from_secs(10), "failed fast: {:?}", started.elapsed());
    assert!(!data.exists(), "no data dir, no database");
    let _ = std::fs::remove_dir_all(&parent);
}

#[actix_web::test]
async fn reset_demo_is_refused_when_a_database_url_is_set() {
    let db = TestDb::new().await;
    let (code, err) = run(
        &[("SWITCHBOARD_DATABASE_URL", db.url.as_str())],
        &["serve", "--addr", "127.0.0.1:0", "--reset-demo"],
        None,
    );
    assert_ne!(code, 0);
    assert!(err.contains("--reset-demo") && err.contains("SWITCHBOARD_DATABASE_URL"), "{err}");
    assert_eq!(db.count("SELECT count(*) FROM humans").await, 0, "nothing was seeded");
}

#[actix_web::test]
async fn a_direct_database_url_without_a_database_url_is_refused_before_any_database_is_made() {
    let parent = tempdir("sb-listen-url");
    let data = parent.join("data");
    let env = [
        ("SWITCHBOARD_DATA_DIR", data.to_str().unwrap()),
        ("SWITCHBOARD_DIRECT_DATABASE_URL", "postgres://u:hunter2@127.0.0.1:5432/elsewhere"),
    ];
    for args in [&["serve", "--addr", "127.0.0.1:0"][..], &["migrate"][..]] {
        let (code, err) = run_within(&env, args, Duration::from_secs(60));
        assert_ne!(code, 0, "{args:?}");
        assert!(
            err.contains("SWITCHBOARD_DIRECT_DATABASE_URL is set without SWITCHBOARD_DATABASE_URL"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("hunter2"), "{args:?}: the password was printed: {err}");
        assert!(!data.exists(), "{args:?}: no data dir, no database");
    }
    let _ = std::fs::remove_dir_all(&parent);
}

#[actix_web::test]
async fn log_lines_written_to_a_pipe_carry_no_colour_codes() {
    let db = TestDb::new().await;
    let env = [("SWITCHBOARD_DATABASE_URL", db.url.as_str()), ("SWITCHBOARD_LOG", "info")];
    let serve = Serve::start(&env, &["serve", "--addr", "127.0.0.1:0"]).expect("start");
    assert_eq!(get(&serve.banner.base, "/readyz", "-").await, 200);
    let logged = serve.stop();
    assert!(logged.contains("listening"), "info lines were logged: {logged}");
    assert!(!logged.contains('\x1b'), "no escape byte in piped logs: {logged:?}");
}
