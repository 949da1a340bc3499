//! JSON-RPC over MCP's Streamable HTTP (`POST /mcp/{slug}`), posted directly: a session
//! opened with `initialize` then `notifications/initialized` (its `Mcp-Session-Id` and
//! `MCP-Protocol-Version` sent with every later request), `tools/call`, and a `DELETE`
//! that ends the session. What the tests use to see the wire itself (statuses before any
//! MCP exchange, what a stream carries, many calls fast), and the benchmark's MCP agent.

use std::time::Duration;

use awc::http::StatusCode;
use serde_json::{Value, json};

/// The protocol revision sessions are opened with.
pub const PROTOCOL: &str = "2025-06-18";

/// The most an answer may weigh.
const ANSWER_LIMIT: usize = 16 << 20;

/// A handshake-revision `initialize` request from client `name`.
pub fn initialize_request(name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
           "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                      "clientInfo": {"name": name, "version": "0"}}})
}

/// What one POST answered.
pub struct Posted {
    /// The HTTP status.
    pub status: StatusCode,
    /// The `Mcp-Session-Id` it set, if any.
    pub session: Option<String>,
    /// The body, as sent.
    pub body: Vec<u8>,
}

impl Posted {
    /// The JSON-RPC message it carried, if any: the body itself, or the data of its SSE
    /// events.
    pub fn answer(&self) -> Result<Option<Value>, String> {
        let text = String::from_utf8_lossy(&self.body);
        if text.trim().is_empty() {
            return Ok(None);
        }
        if let Ok(v) = serde_json::from_str(&text) {
            return Ok(Some(v));
        }
        let data: String =
            text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).filter(|d| !d.is_empty()).collect();
        serde_json::from_str(&data).map(Some).map_err(|e| format!("{e}: {text}"))
    }

    /// The JSON-RPC message it carried; panics when it carried none.
    pub fn message(&self) -> Value {
        match self.answer() {
            Ok(Some(v)) => v,
            Ok(None) => panic!("an empty answer ({})", self.status),
            Err(e) => panic!("{e}"),
        }
    }

    /// The body as text, for a failure message.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// One client of one endpoint's MCP URL, on its own keep-alive connection.
pub struct Wire {
    url: String,
    authorization: String,
    client: awc::Client,
    name: String,
    /// The session, once initialized.
    pub session: Option<String>,
}

impl Wire {
    /// A wire to `url` (`…/mcp/{slug}`) with `token` as the bearer, each request given
    /// up after `timeout`; `name` is the client's in `initialize`.
    pub fn new(url: &str, token: &str, name: &str, timeout: Duration) -> Wire {
        Wire {
            url: url.to_owned(),
            authorization: format!("Bearer {token}"),
            client: awc::Client::builder().timeout(timeout).finish(),
            name: name.to_owned(),
            session: None,
        }
    }

    /// This wire's `initialize` request.
    pub fn initialize_request(&self) -> Value {
        initialize_request(&self.name)
    }

    /// POSTs `body` (bytes) in this wire's session, if it has one.
    pub async fn post_bytes(&self, body: Vec<u8>) -> Result<Posted, String> {
        self.post_in(self.session.as_deref(), body).await
    }

    /// POSTs one JSON-RPC message in this wire's session, if it has one.
    pub async fn post(&self, message: &Value) -> Result<Posted, String> {
        self.post_bytes(message.to_string().into_bytes()).await
    }

    /// POSTs `body` in `session` (none: outside any).
    pub async fn post_in(&self, session: Option<&str>, body: Vec<u8>) -> Result<Posted, String> {
        let mut req = self
            .client
            .post(&self.url)
            .insert_header(("Authorization", self.authorization.as_str()))
            .insert_header(("Accept", "application/json, text/event-stream"))
            .insert_header(("Content-Type", "application/json"));
        if let Some(s) = session {
            req = req.insert_header(("Mcp-Session-Id", s)).insert_header(("MCP-Protocol-Version", PROTOCOL));
        }
        let mut resp = req.send_body(body).await.map_err(|e| format!("POST to /mcp: {e}"))?;
        let session = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let body = resp.body().limit(ANSWER_LIMIT).await.map_err(|e| format!("/mcp answer: {e}"))?.to_vec();
        Ok(Posted { status: resp.status(), session, body })
    }

    /// Opens a session without keeping it (initialize answered 200 with a session id,
    /// then initialized answered 202): the session id and the answer to initialize.
    pub async fn open_session(&self) -> Result<(String, Posted), String> {
        let posted = self.post_in(None, self.initialize_request().to_string().into_bytes()).await?;
        if posted.status != StatusCode::OK {
            return Err(format!("initialize answered {}: {}", posted.status, posted.text()));
        }
        let session = posted.session.clone().ok_or("initialize set no Mcp-Session-Id")?;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let done = self.post_in(Some(&session), initialized.to_string().into_bytes()).await?;
        if done.status != StatusCode::ACCEPTED {
            return Err(format!("initialized answered {}: {}", done.status, done.text()));
        }
        Ok((session, posted))
    }

    /// Opens a session and keeps it: the answer to initialize.
    pub async fn initialize(&mut self) -> Result<Posted, String> {
        let (session, posted) = self.open_session().await?;
        self.session = Some(session);
        Ok(posted)
    }

    /// Calls `tool` in `session` as request `id`: the HTTP status and the JSON-RPC
    /// answer (`Null` unless the status is 200).
    pub async fn call_in(
        &self,
        session: Option<&str>,
        id: u64,
        tool: &str,
        arguments: Value,
    ) -> Result<(StatusCode, Value), String> {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}});
        let posted = self.post_in(session, call.to_string().into_bytes()).await?;
        let status = posted.status;
        if status != StatusCode::OK {
            return Ok((status, Value::Null));
        }
        Ok((status, posted.answer()?.ok_or_else(|| format!("{tool}: an empty answer"))?))
    }

    /// [`Wire::call_in`] this wire's session.
    pub async fn call(&self, id: u64, tool: &str, arguments: Value) -> Result<(StatusCode, Value), String> {
        self.call_in(self.session.as_deref(), id, tool, arguments).await
    }

    /// Ends `session` (DELETE with its `Mcp-Session-Id`, as a client that is done does).
    pub async fn close(&self, session: &str) -> Result<(), String> {
        let resp = self
            .client
            .delete(&self.url)
            .insert_header(("Authorization", self.authorization.as_str()))
            .insert_header(("Mcp-Session-Id", session))
            .insert_header(("MCP-Protocol-Version", PROTOCOL))
            .send()
            .await
            .map_err(|e| format!("DELETE /mcp: {e}"))?;
        if !resp.status().is_success() {
            return Err(format!("DELETE /mcp answered {}", resp.status()));
        }
        Ok(())
    }
}

/// A successful tool call's structured content, or the refusal's text (or the JSON-RPC
/// error) as an error.
pub fn structured(tool: &str, status: StatusCode, answer: &Value) -> Result<Value, String> {
    if status != StatusCode::OK {
        return Err(format!("{tool}: /mcp answered {status}"));
    }
    let result = answer.get("result").ok_or_else(|| format!("{tool}: {answer}"))?;
    if result["isError"] == true {
        return Err(format!("{tool} refused: {}", result["content"][0]["text"]));
    }
    Ok(result["structuredContent"].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posted(body: &str) -> Posted {
        Posted { status: StatusCode::OK, session: None, body: body.as_bytes().to_vec() }
    }

    #[test]
    fn an_answer_is_read_from_json_or_from_sse_events() {
        assert_eq!(posted(r#"{"id":1}"#).answer(), Ok(Some(json!({"id": 1}))));
        assert_eq!(posted("event: message\ndata: {\"id\":2}\n\n").answer(), Ok(Some(json!({"id": 2}))));
        assert_eq!(posted("  ").answer(), Ok(None));
        assert!(posted("data: {").answer().is_err());
    }

    #[test]
    fn a_refused_call_is_an_error_with_its_text() {
        let ok = json!({"result": {"structuredContent": {"empty": true}}});
        assert_eq!(structured("t", StatusCode::OK, &ok), Ok(json!({"empty": true})));
        let refused = json!({"result": {"isError": true, "content": [{"text": "forbidden: no"}]}});
        assert_eq!(structured("t", StatusCode::OK, &refused), Err("t refused: \"forbidden: no\"".into()));
        assert!(structured("t", StatusCode::NOT_FOUND, &Value::Null).is_err());
    }
}
