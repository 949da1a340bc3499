//! No secret reaches a log line: the real binary serves with every log level on while
//! a connection is stored and rotated, a sink tested, and a dead letter sent to it; its
//! whole output is then searched for every secret and the payload.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::TestDb;
use crate::harness::wait::wait_until;
use testkit::receiver::{Receiver, Reply};

const GOTIFY_TOKEN: &str = "GoTiFy-SeCrEt-TOKEN-0001";
const ROTATED_TOKEN: &str = "GoTiFy-SeCrEt-TOKEN-0002";
const PAYLOAD_MARK: &str = "PAYLOAD-SHOULD-NEVER-BE-LOGGED";

/// `switchboard serve` on `db`, everything it prints collected.
pub(crate) struct Served {
    child: Child,
    output: Arc<Mutex<String>>,
    /// One message from each output reader once its stream has ended (all read).
    drained: std::sync::mpsc::Receiver<()>,
    pub(crate) base: String,
}

/// How long the output readers may take to read what is left once the process is gone.
const DRAIN_WITHIN: Duration = Duration::from_secs(10);

impl Served {
    pub(crate) fn start(db: &TestDb) -> Served {
        Self::start_with(db, &[])
    }

    /// Like [`Served::start`], with `extra` settings in its environment.
    pub(crate) fn start_with(db: &TestDb, extra: &[(&str, &str)]) -> Served {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchboard"));
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SWITCHBOARD_")) {
            cmd.env_remove(k);
        }
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let mut child = cmd
            .env("SWITCHBOARD_DATABASE_URL", &db.url)
            .env("SWITCHBOARD_LOG", "trace")
            .env("SWITCHBOARD_SECRET_ENCRYPTION_KEY", hex::encode([3u8; 32]))
            .env("SWITCHBOARD_PUSH_ALLOW_HTTP", "true")
            .env("SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS", "127.0.0.1/32")
            .env("SWITCHBOARD_OUTBOX_POLL_MS", "50")
            .args(["serve", "--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let output = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, drained) = std::sync::mpsc::channel();
        let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
        let (sink, out_done) = (output.clone(), done.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(base) = line.strip_prefix("Switchboard is running at ") {
                    let _ = tx.send(base.trim().to_owned());
                }
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
            let _ = out_done.send(());
        });
        let sink = output.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&line);
                sink.lock().unwrap().push('\n');
            }
            let _ = done.send(());
        });
        let base = rx.recv_timeout(Duration::from_secs(90)).expect("serve starts");
        Served { child, output, drained, base }
    }

    pub(crate) async fn call(&self, method: &str, path: &str, token: &str, body: Value) -> (u16, Value) {
        let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
        let mut resp = client
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .insert_header(("Authorization", format!("Bearer {token}")))
            .send_json(&body)
            .await
            .expect("request");
        let bytes = resp.body().limit(1 << 20).await.expect("body");
        (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// Kills the process outright (SIGKILL: no shutdown of any kind) and waits for it.
    pub(crate) fn kill(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }

    /// Stops the process and answers everything it printed: once it has exited, both
    /// output streams are read to their end.
    pub(crate) fn stop(mut self) -> String {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
        for read in 1..=2 {
            self.drained.recv_timeout(DRAIN_WITHIN).unwrap_or_else(|e| {
                panic!("waited {DRAIN_WITHIN:?} for the server's two output streams to end; {} ended ({e})", read - 1)
            });
        }
        self.output.lock().unwrap().clone()
    }
}

#[actix_web::test]
async fn no_secret_token_or_payload_reaches_the_logs_even_at_trace() {
    let db = TestDb::new().await;
    let store = db.store(switchboard::store::signals::Emitter::none());
    let human = store.create_human("a@example.com", "A", None).await.unwrap();
    let operator = human.token.clone();
    let rx = Receiver::scripted(vec![], Reply::Status(200)).await;
    let served = Served::start(&db);
    let body = json!({"name": "p", "kind": "gotify", "secret": GOTIFY_TOKEN, "base_url": rx.base()});
    let (s, c) = served.call("POST", "/api/v1/connections", &operator, body).await;
    assert_eq!(s, 201, "{c}");
    let cid = c["id"].as_str().unwrap().to_owned();
    let (s, _) = served
        .call("POST", &format!("/api/v1/connections/{cid}/rotate"), &operator, json!({"secret": ROTATED_TOKEN}))
        .await;
    assert_eq!(s, 200);
    let body = json!({"name": "s", "kind": "gotify", "base_url": rx.base(), "connection_id": cid});
    let (s, sink) = served.call("POST", "/api/v1/sinks", &operator, body).await;
    assert_eq!(s, 201, "{sink}");
    let sid = sink["id"].as_str().unwrap().to_owned();
    let (_, tested) = served.call("POST", &format!("/api/v1/sinks/{sid}/test"), &operator, json!({})).await;
    assert_eq!(tested["ok"], true, "{tested}");
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"]}]});
    assert_eq!(served.call("PUT", &format!("/api/v1/sinks/{sid}/subscriptions"), &operator, subs).await.0, 200);
    let grants = json!({"slug": "w", "grants": ["create_todo", "claim", "fail"]});
    let (s, ep) = served.call("POST", "/api/v1/endpoints", &operator, grants).await;
    assert_eq!(s, 201, "{ep}");
    let agent = ep["token"].as_str().unwrap().to_owned();
    let todo = json!({"queue": "q", "title": "t", "max_attempts": 1, "payload": {"mark": PAYLOAD_MARK}});
    let (_, created) = served.call("POST", "/api/v1/agent/todos", &agent, todo).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(served.call("POST", &format!("/api/v1/agent/todos/{id}/claim"), &agent, json!({})).await.0, 200);
    assert_eq!(served.call("POST", &format!("/api/v1/agent/todos/{id}/fail"), &agent, json!({})).await.0, 200);
    wait_until("the test message and the dead letter at the sink", Duration::from_secs(15), async || {
        let posted = rx.count();
        if posted >= 2 { Ok(()) } else { Err(format!("{posted} posts")) }
    })
    .await;
    assert_eq!(rx.seen()[1].header("x-gotify-key"), Some(ROTATED_TOKEN), "the rotated token was used");
    let logs = served.stop();
    assert!(logs.len() > 1000, "trace logging was on: {} bytes", logs.len());
    // The access log names the route's pattern (never the concrete path with its id)
    // when the filter keeps it; a filter that drops it skips the middleware (startup.rs).
    assert!(logs.contains("POST /api/v1/agent/todos/{id}/claim 200 "), "no access log line for the claim:\n{logs}");
    assert!(!logs.contains(&format!("/api/v1/agent/todos/{id}/claim")), "a concrete path reached the logs");
    for secret in [GOTIFY_TOKEN, ROTATED_TOKEN, operator.as_str(), agent.as_str(), PAYLOAD_MARK] {
        assert!(!logs.contains(secret), "{secret:?} reached the logs");
    }
}
