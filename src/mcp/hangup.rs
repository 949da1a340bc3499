//! A tool call in a session whose client hangs up before its answer is cancelled, as the
//! REST API drops a request whose client left: a `claim_next` waiting for work gives up
//! its place instead of claiming a todo nobody will receive. (rmcp cancels a stateless
//! call itself when its connection goes; a session's call runs in the session's worker,
//! which only a `notifications/cancelled` stops, so that is what is sent for the client.)

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::web::Bytes;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::{SessionId, SessionManager};
use serde_json::{Value, json};

use super::sessions::Sessions;

/// The session call a response answers: whom to tell if its client hangs up.
pub struct Call {
    /// The session.
    pub session: SessionId,
    /// The JSON-RPC id of the request.
    pub id: Value,
    /// The sessions, to send the cancellation into.
    pub sessions: Arc<Sessions>,
}

impl Call {
    /// The `tools/call` request `body` of the session `session`, if it is one.
    pub fn of(body: &[u8], session: &str, sessions: Arc<Sessions>) -> Option<Call> {
        let message: Value = serde_json::from_slice(body).ok()?;
        if message.get("method")?.as_str()? != "tools/call" {
            return None;
        }
        let id = message.get("id")?.clone();
        Some(Call { session: session.into(), id, sessions })
    }

    fn cancel(self) {
        let notice = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": self.id, "reason": "the client hung up"}});
        let Ok(message) = serde_json::from_value::<ClientJsonRpcMessage>(notice) else { return };
        actix_web::rt::spawn(async move {
            // A session that ended meanwhile has nothing left to cancel.
            let _ = self.sessions.accept_message(&self.session, message).await;
        });
    }
}

/// A response body that cancels its call when dropped before its end.
pub struct Watched {
    body: BoxBody,
    call: Option<Call>,
}

impl Watched {
    /// `body`, answering `call`.
    pub fn new(body: BoxBody, call: Option<Call>) -> Self {
        Watched { body, call }
    }
}

impl MessageBody for Watched {
    type Error = Box<dyn std::error::Error>;

    fn size(&self) -> BodySize {
        self.body.size()
    }

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, Self::Error>>> {
        let next = Pin::new(&mut self.body).poll_next(cx);
        if let Poll::Ready(None) = next {
            // Answered in full: nothing to cancel.
            self.call = None;
        }
        next
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(call) = self.call.take() {
            call.cancel();
        }
    }
}
