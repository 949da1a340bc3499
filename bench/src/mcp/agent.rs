//! An agent of the seeded endpoint over MCP (Streamable HTTP at `/mcp/{slug}`): one
//! claim_next → complete cycle is two `tools/call` requests in a session opened once
//! (initialize, then initialized). The JSON-RPC is posted directly (testkit's wire, as
//! the tests post it): the benchmark measures the server, not a client library.

use std::cell::{Cell, RefCell};
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};
use testkit::mcp::{Wire, structured};

use crate::BenchResult;
use crate::database::{QUEUE, Seeded};
use crate::load::BatchWork;

/// The client name the agents' `initialize` requests carry.
const CLIENT_NAME: &str = "switchboard-bench";

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// One MCP agent with its own keep-alive connection and session.
pub struct McpAgent {
    wire: Wire,
    session: tokio::sync::OnceCell<String>,
    next_id: Cell<u64>,
    /// Every session the window's agents opened, to be closed after it (the server holds
    /// at most 32 per endpoint; a later window's agents would be refused).
    opened: Sessions,
}

/// The sessions a window's agents opened.
pub type Sessions = Rc<RefCell<Vec<String>>>;

/// A wire to the seeded endpoint's MCP URL on the server at `base`.
fn wire(base: &str, seeded: &Seeded) -> Wire {
    Wire::new(&format!("{base}/mcp/{}", seeded.cycles_slug), &seeded.cycles_token, CLIENT_NAME, TIMEOUT)
}

impl McpAgent {
    /// An agent of the seeded endpoint against the server at `base`; the session it opens
    /// is added to `opened`.
    pub fn new(base: &str, seeded: &Seeded, opened: &Sessions) -> McpAgent {
        McpAgent {
            wire: wire(base, seeded),
            session: tokio::sync::OnceCell::new(),
            next_id: Cell::new(1),
            opened: opened.clone(),
        }
    }

    /// The session, opened on first use.
    async fn session(&self) -> BenchResult<&str> {
        self.session
            .get_or_try_init(|| async {
                let (id, _) = self.wire.open_session().await.map_err(|e| format!("mcp: {e}"))?;
                self.opened.borrow_mut().push(id.clone());
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
        let (status, answer) = self.wire.call_in(Some(session), id, tool, arguments).await?;
        structured(tool, status, &answer)
    }
}

/// Ends every session in `opened` (DELETE with its `Mcp-Session-Id`, as a client that
/// is done does), so the next window starts with none open.
pub async fn close_sessions(base: &str, seeded: &Seeded, opened: &Sessions) -> BenchResult<()> {
    let wire = wire(base, seeded);
    let ids: Vec<String> = opened.borrow_mut().drain(..).collect();
    for id in ids {
        wire.close(&id).await?;
    }
    Ok(())
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
