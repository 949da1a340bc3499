//! The first hour on this machine: the README's "Try it on this machine" recipe on the
//! real binary. With only the recipe's settings (read from the README's
//! `sh walkthrough-serve` line) and the embedded default, a notify hook and a Gotify sink
//! pointing at loopback receivers are accepted, and one dead letter (of work a signed
//! GitHub delivery made) reaches both.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use testkit::receiver::{Receiver, Reply, Track, todo_of};

use crate::harness::wait::wait_until;

const BIN: &str = env!("CARGO_BIN_EXE_switchboard");

/// The README, as the reader sees it.
const README: &str = include_str!("../../README.md");

/// The Gotify app token of the connection (what the receiver admits as `X-Gotify-Key`).
const GOTIFY_TOKEN: &str = "gotify-app-token";

/// Long enough for an outbox send and a hook delivery on a loaded machine.
const ARRIVAL_DEADLINE: Duration = Duration::from_secs(30);

/// The recipe's settings: the `SWITCHBOARD_*=value` words that open the README's one
/// `sh walkthrough-serve` line.
fn recipe_settings() -> Vec<(String, String)> {
    let mut blocks = README.split("\n```sh walkthrough-serve\n").skip(1);
    let block = blocks.next().expect("README.md has a ```sh walkthrough-serve block");
    assert!(blocks.next().is_none(), "README.md has one ```sh walkthrough-serve block");
    let line = block.lines().next().unwrap();
    let settings: Vec<(String, String)> = line
        .split_whitespace()
        .map_while(|word| word.split_once('=').filter(|(name, _)| name.starts_with("SWITCHBOARD_")))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect();
    assert!(!settings.is_empty(), "the walkthrough-serve line opens with its settings: {line}");
    settings
}

/// A `switchboard serve` of the built binary on the embedded default, stopped (SIGTERM,
/// so it stops its cluster) and its data dir removed when dropped.
struct Serve {
    child: Child,
    data: PathBuf,
    base: String,
    operator: String,
    agent: String,
}

impl Serve {
    /// Starts it with only `settings` among the SWITCHBOARD_* variables, besides its data
    /// dir and port 0; waits for the demo credentials it prints.
    fn start(settings: &[(String, String)]) -> Serve {
        let data = std::env::temp_dir().join(format!("sb-first-hour-{}-{}", std::process::id(), suffix()));
        std::fs::create_dir_all(&data).unwrap();
        let mut cmd = Command::new(BIN);
        for (name, _) in std::env::vars().filter(|(name, _)| name.starts_with("SWITCHBOARD_")) {
            cmd.env_remove(name);
        }
        cmd.envs(settings.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("SWITCHBOARD_DATA_DIR", &data)
            .env("SWITCHBOARD_ADDR", "127.0.0.1:0")
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn switchboard serve");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut serve = Serve { child, data, base: String::new(), operator: String::new(), agent: String::new() };
        let started = Instant::now();
        while serve.base.is_empty() || serve.operator.is_empty() || serve.agent.is_empty() {
            assert!(started.elapsed() < Duration::from_secs(90), "serve printed no demo credentials");
            let line = lines.next().expect("serve's stdout open until it prints the demo").unwrap();
            // Found by their shape, not their labels: the first URL's origin, the first
            // operator token (sbo_…) and the first agent token (sbk_…).
            for word in line.split_whitespace() {
                if serve.base.is_empty()
                    && let Some(rest) = word.strip_prefix("http://")
                {
                    serve.base = format!("http://{}", rest.split('/').next().unwrap_or_default());
                } else if serve.operator.is_empty() && word.starts_with("sbo_") {
                    serve.operator = word.trim_end_matches('\'').to_owned();
                } else if serve.agent.is_empty() && word.starts_with("sbk_") {
                    serve.agent = word.trim_end_matches('\'').to_owned();
                }
            }
        }
        // Keep reading, so a later line never blocks the server on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        serve
    }

    /// `method path` with `token` and an optional JSON body: the status and the answer.
    async fn call(&self, method: &str, path: &str, token: &str, body: Option<Value>) -> (u16, Value) {
        let client = awc::Client::default();
        let req = client
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .insert_header(("Authorization", format!("Bearer {token}")));
        let mut resp = match body {
            Some(body) => req.send_json(&body).await.unwrap(),
            None => req.send().await.unwrap(),
        };
        let bytes = resp.body().await.unwrap();
        (resp.status().as_u16(), serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

/// The hex HMAC-SHA256 of `body` under `secret` (GitHub prefixes it with `sha256=`).
fn hmac_hex(secret: &str, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

fn suffix() -> String {
    switchboard::domain::ids::TodoId::new().to_string()[3..11].to_owned()
}

#[actix_web::test]
async fn with_only_the_recipes_settings_a_dead_letter_rings_a_loopback_hook_and_reaches_a_loopback_gotify() {
    let settings = recipe_settings();
    let hook_rx = Receiver::start().await;
    let gotify_rx = Receiver::scripted(vec![], Reply::Gotify).await;
    gotify_rx.admit_header("/message", "X-Gotify-Key", GOTIFY_TOKEN, Some(Track::GotifyMessage)).unwrap();
    let serve = Serve::start(&settings);
    let (op, agent) = (serve.operator.clone(), serve.agent.clone());

    let (s, endpoints) = serve.call("GET", "/api/v1/endpoints", &op, None).await;
    assert_eq!(s, 200, "{endpoints}");
    let ep = endpoints["endpoints"][0]["id"].as_str().expect("the demo endpoint").to_owned();

    // The README's bodies, pointed at the test's receivers.
    let conn = json!({"name": "phone", "kind": "gotify", "secret": GOTIFY_TOKEN, "base_url": gotify_rx.base()});
    let (s, conn) = serve.call("POST", "/api/v1/connections", &op, Some(conn)).await;
    assert_eq!(s, 201, "a connection to a loopback http:// destination: {conn}");
    let sink = json!({"name": "phone", "kind": "gotify", "connection_id": conn["id"]});
    let (s, sink) = serve.call("POST", "/api/v1/sinks", &op, Some(sink)).await;
    assert_eq!(s, 201, "a sink through it: {sink}");
    let sink_id = sink["id"].as_str().unwrap();
    let subs = json!({"subscriptions": [{"events": ["todo.dead_lettered"], "min_severity": "high"}]});
    let (s, b) = serve.call("PUT", &format!("/api/v1/sinks/{sink_id}/subscriptions"), &op, Some(subs)).await;
    assert_eq!(s, 200, "{b}");
    let hook = json!({"url": hook_rx.url(), "queues": ["builds"]});
    let (s, hook) = serve.call("POST", &format!("/api/v1/endpoints/{ep}/hooks"), &op, Some(hook)).await;
    assert_eq!(s, 201, "a hook at a loopback http:// URL: {hook}");
    // From now on the hook receiver admits only requests signed with the hook's secret.
    hook_rx.admit_signed("/hook", hook["signing_secret"].as_str().unwrap(), Some(Track::Notification)).unwrap();

    // Hooks ring only for work whose delivery passed the sender gate (an agent's own todo
    // rings nothing), so the work arrives as the walkthrough's signed GitHub delivery.
    let webhook = json!({"endpoint_id": ep, "source_type": "github", "queue": "builds", "max_attempts": 1,
                         "trusted_actors": {"logins": ["octocat"]}});
    let (s, webhook) = serve.call("POST", "/api/v1/webhooks", &op, Some(webhook)).await;
    assert_eq!(s, 201, "a signed webhook: {webhook}");
    let body =
        json!({"action": "completed", "workflow_run": {"conclusion": "failure"}, "sender": {"login": "octocat"}});
    let body = body.to_string();
    let signature = format!("sha256={}", hmac_hex(webhook["signing_secret"].as_str().unwrap(), body.as_bytes()));
    let mut resp = awc::Client::default()
        .post(webhook["ingest_url"].as_str().unwrap())
        .insert_header(("content-type", "application/json"))
        .insert_header(("X-GitHub-Event", "workflow_run"))
        .insert_header(("X-GitHub-Delivery", "first-hour-1"))
        .insert_header(("X-Hub-Signature-256", signature))
        .send_body(body)
        .await
        .unwrap();
    let delivered: Value = serde_json::from_slice(&resp.body().await.unwrap()).unwrap();
    assert_eq!((resp.status().as_u16(), delivered["disposition"].as_str()), (202, Some("routed")), "{delivered}");
    let id = delivered["todos"][0].as_str().unwrap().to_owned();
    let (s, claim) =
        serve.call("POST", "/api/v1/agent/todos/claim-next", &agent, Some(json!({"queue": "builds"}))).await;
    assert_eq!((s, claim["todo"]["id"].as_str()), (200, Some(id.as_str())), "{claim}");
    let fail = json!({"lease_token": claim["lease_token"], "summary": "the tests need a database"});
    let (s, failed) = serve.call("POST", &format!("/api/v1/agent/todos/{id}/fail"), &agent, Some(fail)).await;
    assert_eq!((s, failed["dead_reason"].as_str()), (200, Some("attempts_exhausted")), "{failed}");

    wait_until("a signed todo.dead_lettered at the hook receiver", ARRIVAL_DEADLINE, async || {
        let seen = hook_rx.seen();
        if seen.iter().any(|r| r.kind() == "todo.dead_lettered" && r.todo_id() == id) {
            return Ok(());
        }
        Err(format!("{:?}, refused {:?}", seen.iter().map(|r| r.kind()).collect::<Vec<_>>(), hook_rx.rejected()))
    })
    .await;
    let message = wait_until("the dead-letter message at the Gotify receiver", ARRIVAL_DEADLINE, async || {
        let seen = gotify_rx.seen();
        seen.iter()
            .map(|r| r.json())
            .find(|m| m["message"].as_str().and_then(todo_of) == Some(id.as_str()))
            .ok_or_else(|| format!("{} messages, refused {:?}", seen.len(), gotify_rx.rejected()))
    })
    .await;
    assert!(message["message"].as_str().unwrap().contains("attempts_exhausted"), "{message}");
    assert_eq!(hook_rx.rejected().0, 0, "every notification carried the hook's signature");
    assert_eq!(gotify_rx.rejected().0, 0, "every message carried the connection's app token");
}
