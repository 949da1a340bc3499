//! The agent verbs as MCP tools at `/mcp/{slug}` (issue 15), against the real app and
//! PostgreSQL. The client is the official Python SDK (`tests/mcp/client.py`, in the
//! virtualenv `scripts/test` installs): it connects over Streamable HTTP, lists the tools
//! and calls them as an agent runtime would. Checks of the wire itself (status codes
//! before any MCP exchange, what a stream carries, a property-based fuzz of arguments)
//! post JSON-RPC directly ([`Wire`]).

mod auth;
mod drain;
mod fuzz;
mod limits;
mod parity;
mod rules;
mod schemas;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use testkit::mcp::Wire;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::{Ep, TestApp};

/// The Python of the virtualenv `scripts/test` installs the MCP SDK into (or the one
/// `SWITCHBOARD_MCP_PYTHON` names). Missing, the tests fail: they never skip.
fn python() -> PathBuf {
    let path = std::env::var_os("SWITCHBOARD_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-venv/bin/python"));
    assert!(
        path.is_file(),
        "the MCP SDK's Python is not at {}: run scripts/test, which installs the pinned `mcp` into \
         target/mcp-venv (or set SWITCHBOARD_MCP_PYTHON)",
        path.display()
    );
    path
}

/// The MCP URL of endpoint `slug` on `app`.
pub fn mcp_url(app: &TestApp, slug: &str) -> String {
    format!("{}/mcp/{slug}", app.base)
}

/// How the SDK connects.
#[derive(Clone, Copy)]
pub enum Mode {
    /// The initialize handshake: a session (`Mcp-Session-Id`).
    Legacy,
    /// The SDK's default: the 2026-07-28 revision, no session.
    Auto,
}

/// One MCP client (the SDK in a child process), connected; commands go one a line.
pub struct Client {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

/// The most a command may take (a long-poll claim waits up to 30 s).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

impl Client {
    /// Connects to `url` with `token` as the bearer.
    pub async fn connect(url: &str, token: &str, mode: Mode) -> Client {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
        let mode = match mode {
            Mode::Legacy => "legacy",
            Mode::Auto => "auto",
        };
        let mut child = tokio::process::Command::new(python())
            .arg(script)
            .args([url, mode])
            .env("MCP_TOKEN", token)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the MCP client");
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut client = Client { child, stdin, lines };
        let hello = client.send(json!({"op": "hello"})).await;
        assert!(hello["protocol_version"].is_string(), "not connected: {hello}");
        client
    }

    /// Sends one command; its answer.
    pub async fn send(&mut self, command: Value) -> Value {
        let line = format!("{command}\n");
        self.stdin.write_all(line.as_bytes()).await.expect("write to the MCP client");
        let answer = tokio::time::timeout(COMMAND_TIMEOUT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("the MCP client did not answer {command}"))
            .expect("read from the MCP client");
        match answer {
            Some(line) => serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}")),
            None => panic!("the MCP client ended (see its stderr above) on {command}: {:?}", self.child.try_wait()),
        }
    }

    /// The negotiated protocol version.
    pub async fn protocol_version(&mut self) -> String {
        self.send(json!({"op": "hello"})).await["protocol_version"].as_str().unwrap().to_owned()
    }

    /// `tools/list`: the tools as listed.
    pub async fn tools(&mut self) -> Vec<Value> {
        let answer = self.send(json!({"op": "list_tools"})).await;
        answer["tools"].as_array().unwrap_or_else(|| panic!("{answer}")).clone()
    }

    /// The names `tools/list` gives, sorted.
    pub async fn tool_names(&mut self) -> Vec<String> {
        let mut names: Vec<String> =
            self.tools().await.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
        names.sort();
        names
    }

    /// `tools/call`: `{is_error, text, structured}`.
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.send(json!({"op": "call", "tool": tool, "arguments": arguments})).await;
        assert!(answer.get("exception").is_none(), "{tool} {arguments}: {answer}");
        answer
    }

    /// `tools/call` that must succeed: its structured content.
    pub async fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.call(tool, arguments.clone()).await;
        assert_eq!(answer["is_error"], false, "{tool} {arguments}: {answer}");
        answer["structured"].clone()
    }

    /// `tools/call` that must be refused: its text, which starts with the error code.
    pub async fn refused(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.call(tool, arguments.clone()).await;
        assert_eq!(answer["is_error"], true, "{tool} {arguments}: {answer}");
        answer["text"].as_str().unwrap().to_owned()
    }
}

/// The tools a default-grant endpoint sees: the drain family's verbs, the batch forms of
/// two of them (`complete_many`, `fail_many`: grants `complete` and `fail`), and presence,
/// which every endpoint may set (SPEC 5).
pub const DEFAULT_TOOLS: &[&str] = &[
    "claim",
    "claim_next",
    "clock_in",
    "clock_out",
    "complete",
    "complete_many",
    "fail",
    "fail_many",
    "get_todo",
    "heartbeat",
    "list_todos",
    "release",
];

/// The client name the tests' `initialize` requests carry.
const CLIENT_NAME: &str = "switchboard-tests";

/// JSON-RPC posted directly ([`Wire`], testkit's), for what the SDK hides: statuses
/// before any MCP exchange, what a stream carries, and many calls fast (the fuzz). A
/// wire to endpoint `ep`'s `/mcp/{slug}` on `app`.
pub fn wire_to(app: &TestApp, slug: &str, ep: &Ep) -> Wire {
    Wire::new(&mcp_url(app, slug), &ep.token, CLIENT_NAME, COMMAND_TIMEOUT)
}

/// A handshake-revision `initialize` request.
pub fn initialize_request() -> Value {
    testkit::mcp::initialize_request(CLIENT_NAME)
}

/// The error code a refused tool call's text starts with.
pub fn code_of(text: &str) -> &str {
    text.split_once(':').map(|(code, _)| code).unwrap_or(text)
}
