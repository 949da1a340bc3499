//! The MCP handler rmcp runs for each session (or each stateless call): `tools/list`
//! gives the tools the calling endpoint may call now; `tools/call` checks the grant,
//! calls the tool, and answers the route's answer body as structured content with its
//! JSON text, or a refusal as a tool error whose text starts with the error code.

use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use rmcp_actix_web::transport::on_request_extensions;
use serde_json::json;

use super::args::Args;
use super::calls::{ToolAnswer, call};
use super::descriptions::INSTRUCTIONS;
use super::gate::ToolCaller;
use super::local::Local;
use super::table::Tools;
use super::tools::ToolName;
use crate::error::Error;
use crate::service::Principal;
use crate::service::permissions::check;

/// The handler: the tool table, shared, and the arbiter for thread-bound work.
#[derive(Clone)]
pub struct ToolServer {
    tools: Arc<Tools>,
    local: Local,
}

impl ToolServer {
    /// A handler over the whole tool table.
    pub fn new(local: Local) -> Self {
        ToolServer { tools: Arc::new(Tools::new()), local }
    }
}

/// The caller the gate authenticated for this HTTP request.
fn caller(context: &RequestContext<RoleServer>) -> Result<ToolCaller, McpError> {
    on_request_extensions(&context.extensions)
        .and_then(|e| e.get::<ToolCaller>())
        .cloned()
        // The gate runs before every request; a request without its caller is a bug.
        .ok_or_else(|| McpError::internal_error("no authenticated caller", None))
}

/// A refusal as a tool error: the text starts with the error code, the structured
/// content is the REST error envelope.
fn refused(error: &Error) -> CallToolResult {
    match error {
        Error::Internal(internal) => internal.log("mcp tool"),
        Error::Unavailable(cause) => tracing::warn!(cause = %cause, "dependency unavailable"),
        _ => {}
    }
    let body = error.body();
    let mut text = if body.message.starts_with(&format!("{}:", body.code)) {
        body.message.clone()
    } else {
        format!("{}: {}", body.code, body.message)
    };
    if let Some(secs) = error.retry_after() {
        text.push_str(&format!(" (retry after {secs} s)"));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({ "error": body }));
    result
}

fn answered(answer: ToolAnswer) -> CallToolResult {
    match answer {
        ToolAnswer::Body(value) => CallToolResult::structured(value),
        ToolAnswer::Done(what) => CallToolResult::success(vec![ContentBlock::text(what)]),
    }
}

impl ServerHandler for ToolServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("switchboard", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let caller = caller(&context)?;
        // Grants change at any time: the list is this caller's, now, and kept by no one.
        Ok(ListToolsResult::with_all_items(self.tools.granted(&caller.me))
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let caller = caller(&context)?;
        let Some(tool) = ToolName::parse(&request.name) else {
            return Err(McpError::invalid_params(format!("no tool named {:?}", request.name), None));
        };
        // The grant first, as of this request: a verb the endpoint lacks is `forbidden`
        // whatever its arguments (the service checks again).
        if let Err(e) = check(tool.action(), Principal::Endpoint(&caller.me), None) {
            return Ok(refused(&e).into());
        }
        // A cancelled call (the client sent `notifications/cancelled`, or hung up) ends
        // here, as a REST request whose client left is dropped: a claim_next waiting for
        // work gives up its place. rmcp only signals the token; the call must stop itself.
        let outcome = tokio::select! {
            outcome = call(tool, &self.local, caller, Args::new(request.arguments)) => outcome,
            () = context.ct.cancelled() => {
                return Ok(CallToolResult::error(vec![ContentBlock::text("cancelled: the client cancelled the call")]).into());
            }
        };
        Ok(match outcome {
            Ok(answer) => answered(answer),
            Err(e) => refused(&e),
        }
        .into())
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.get(name)
    }
}
