//! An agent of the seeded endpoint over MCP (Streamable HTTP at `/mcp/{slug}`): one
//! claim_next → complete cycle is two `tools/call` requests in a session opened once
//! (initialize, then initialized). The JSON-RPC is written here with the bench's own
//! HTTP client: the benchmark measures the server, not a client library.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::BenchResult;
use crate::database::{QUEUE, Seeded};
use crate::load::BatchWork;

/// The protocol revision the agent opens its session with.
const PROTOCOL: &str = "2025-06-18";

/// One MCP agent with its own keep-alive connection and session.
pub struct McpAgent {
    client: awc::Client,
    url: String,
    authorization: String,
    session: tokio::sync::OnceCell<String>,
    next_id: Cell<u64>,
    /// Every session the window's agents opened, to be closed after it (the server holds
    /// at most 32 per endpoint; a later window's agents would be refused).
    opened: Sessions,
}

/// The sessions a window's agents opened.
pub type Sessions = Rc<RefCell<Vec<String>>>;

impl McpAgent {
    /// An agent of the seeded endpoint against the server at `base`; the session it opens
    /// is added to `opened`.
    pub fn new(base: &str, seeded: &Seeded, opened: &Sessions) -> McpAgent {
        McpAgent {
            client: awc::Client::builder().timeout(Duration::from_secs(30)).finish(),
            url: format!("{base}/mcp/{}", seeded.cycles_slug),
            authorization: format!("Bearer {}", seeded.cycles_token),
            session: tokio::sync::OnceCell::new(),
            next_id: Cell::new(1),
            opened: opened.clone(),
        }
    }

    /// POSTs one JSON-RPC message (in the session, once there is one): the session id
    /// the server set, if any, and the message it answered (from JSON or an SSE event).
    async fn post(&self, session: Option<&str>, message: &Value) -> BenchResult<(Option<String>, Option<Value>)> {
        let mut req = self
            .client
            .post(&self.url)
            .insert_header(("authorization", self.authorization.as_str()))
            .insert_header(("accept", "application/json, text/event-stream"))
            .insert_header(("content-type", "application/json"));
        if let Some(s) = session {
            req = req.insert_header(("mcp-session-id", s)).insert_header(("mcp-protocol-version", PROTOCOL));
        }
        let mut resp = req.send_body(message.to_string()).await.map_err(|e| format!("mcp: {e}"))?;
        let id = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let bytes = resp.body().limit(16 << 20).await.map_err(|e| format!("mcp body: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("mcp answered {}: {}", resp.status(), String::from_utf8_lossy(&bytes)));
        }
        Ok((id, answer_of(&bytes)?))
    }

    /// The session, opened on first use.
    async fn session(&self) -> BenchResult<&str> {
        self.session
            .get_or_try_init(|| async {
                let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                               "clientInfo": {"name": "switchboard-bench", "version": "0"}}});
                let (id, _) = self.post(None, &init).await?;
                let id = id.ok_or("initialize set no Mcp-Session-Id")?;
                self.opened.borrow_mut().push(id.clone());
                self.post(Some(&id), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
                Ok::<_, String>(id)
            })
            .await
            .map(String::as_str)
    }

    /// Calls `tool`: its structured content, or the refusal's text as an error.
    async fn call(&self, tool: &str, arguments: Value) -> BenchResult<Value> {
        let session = self.session().await?;
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}});
        let (_, answer) = self.post(Some(session), &call).await?;
        let answer = answer.ok_or_else(|| format!("{tool}: no answer"))?;
        let result = answer.get("result").ok_or_else(|| format!("{tool}: {answer}"))?;
        if result["isError"] == true {
            return Err(format!("{tool} refused: {}", result["content"][0]["text"]));
        }
        Ok(result["structuredContent"].clone())
    }
}

/// Ends every session in `opened` (DELETE with its `Mcp-Session-Id`, as a client that
/// is done does), so the next window starts with none open.
pub async fn close_sessions(base: &str, seeded: &Seeded, opened: &Sessions) -> BenchResult<()> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let url = format!("{base}/mcp/{}", seeded.cycles_slug);
    let ids: Vec<String> = opened.borrow_mut().drain(..).collect();
    for id in ids {
        let resp = client
            .delete(&url)
            .insert_header(("authorization", format!("Bearer {}", seeded.cycles_token)))
            .insert_header(("mcp-session-id", id.as_str()))
            .insert_header(("mcp-protocol-version", PROTOCOL))
            .send()
            .await
            .map_err(|e| format!("mcp delete: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("mcp delete answered {}", resp.status()));
        }
    }
    Ok(())
}

/// The JSON-RPC message of an answer body: JSON, or the data of its SSE events.
fn answer_of(body: &[u8]) -> BenchResult<Option<Value>> {
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        return Ok(None);
    }
    if let Ok(v) = serde_json::from_str(&text) {
        return Ok(Some(v));
    }
    let data: String =
        text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|d| !d.is_empty()).collect();
    serde_json::from_str(&data).map(Some).map_err(|e| format!("mcp answer {e}: {text}"))
}

impl BatchWork for McpAgent {
    fn units(&self) -> u64 {
        1
    }

    fn once(&self) -> Pin<Box<dyn std::future::Future<Output = BenchResult<u64>> + '_>> {
        Box::pin(async move {
            let claimed = self.call("claim_next", json!({ "queue": QUEUE })).await?;
            let (Some(id), Some(lease_token)) = (claimed["todo"]["id"].as_str(), claimed["lease_token"].as_str())
            else {
                return if claimed["empty"] == true {
                    Ok(0)
                } else {
                    Err(format!("claim_next answered neither a todo nor empty: {claimed}"))
                };
            };
            self.call("complete", json!({ "id": id, "lease_token": lease_token })).await?;
            Ok(1)
        })
    }
}
