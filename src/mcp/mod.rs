//! The agent verbs as MCP tools over Streamable HTTP, at `/mcp/{slug}` (SPEC 13, "MCP").
//!
//! A third adapter beside the REST API and the Board, importing neither. Every tool calls
//! the answer function its REST route returns too ([`crate::agent_api`]'s `*_answer`),
//! which calls the service layer: a verb cannot behave differently over MCP, and a
//! tool's result is the route's answer body. The protocol itself (initialize, `tools/list`, `tools/call`,
//! sessions, JSON or SSE answers, the stateless 2026-07-28 revision) is rmcp's, bridged
//! onto actix-web by rmcp-actix-web.
//!
//! | module | concern |
//! |---|---|
//! | [`gate`] | every HTTP request first: the endpoint's bearer (401 before any MCP exchange), the 1 MiB body, the session bounds |
//! | [`sessions`] | how many sessions are open, per endpoint, per owner scope and on this instance, and whose each is |
//! | [`hangup`] | a session's tool call whose client hung up is cancelled |
//! | [`server`] | the MCP handler: `tools/list` filtered by grants, `tools/call`, results and refusals |
//! | [`tools`] | the tool table: names, which action each performs, input schemas |
//! | [`descriptions`] | what each tool tells the model that calls it |
//! | [`table`] | the tools as `tools/list` gives them, built once |
//! | [`calls`] | a tool call to its verb's answer function |
//! | [`args`] | a tool's arguments read as its route's path and body |
//! | [`local`] | the one verb whose work is bound to its thread (`test_sink`) |
//!
//! What a session holds: the protocol handshake only (the client's version and
//! capabilities), in this instance's memory. Who calls is read from the bearer on every
//! HTTP request, and the grant is checked on every call, so a revoked token or a removed
//! grant refuses the next call on any instance. A client of the 2026-07-28 revision opens
//! no session: any instance serves any of its calls.

pub mod args;
pub mod calls;
pub mod descriptions;
pub mod gate;
pub mod hangup;
pub mod local;
pub mod server;
pub mod sessions;
pub mod table;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use actix_web::web;
use rmcp_actix_web::transport::StreamableHttpService;

use crate::config::Settings;
use crate::web::json_body::BODY_LIMIT;
use server::ToolServer;
use sessions::{Registry, Sessions};

/// Where the MCP endpoint of an endpoint slug is served.
pub const MCP_PATH: &str = "/mcp/{slug}";

/// The MCP URL of the endpoint `slug` under `base_url` (for the `serve` demo and the docs).
pub fn url(base_url: &str, slug: &str) -> String {
    format!("{}/mcp/{slug}", base_url.trim_end_matches('/'))
}

/// The MCP surface's limits (see [`crate::config`]).
#[derive(Debug, Clone, Copy)]
pub struct McpSettings {
    /// Sessions open at once on this instance.
    pub max_sessions: usize,
    /// Sessions one endpoint may hold open at once on this instance.
    pub max_sessions_per_endpoint: usize,
    /// The share of the sessions kept for other owner scopes than any one, in percent.
    pub reserve_percent: u8,
    /// A session without a request for this long is closed.
    pub session_idle: Duration,
}

impl McpSettings {
    /// The limits `settings` set.
    pub fn from_settings(settings: &Settings) -> Self {
        McpSettings {
            max_sessions: settings.mcp_max_sessions as usize,
            max_sessions_per_endpoint: settings.mcp_max_sessions_per_endpoint as usize,
            reserve_percent: settings.mcp_reserve_percent,
            session_idle: Duration::from_secs(u64::from(settings.mcp_session_idle_seconds)),
        }
    }
}

/// The MCP surface, built once at start-up and shared by every HTTP worker: its sessions
/// live here, so a session opened through one worker is found by a request on another.
#[derive(Clone)]
pub struct Mcp {
    transport: StreamableHttpService<ToolServer, Sessions>,
    registry: Arc<Registry>,
    sessions: Arc<Sessions>,
}

impl Mcp {
    /// The surface under `settings`' limits.
    pub fn new(settings: McpSettings) -> Self {
        let registry = Arc::new(Registry::new(
            settings.max_sessions,
            settings.max_sessions_per_endpoint,
            settings.reserve_percent,
        ));
        let sessions = Arc::new(Sessions::new(registry.clone(), settings.session_idle));
        let server = ToolServer::new(local::Local::start());
        let transport = StreamableHttpService::builder()
            .service_factory(Arc::new(move || Ok(server.clone())))
            .session_manager(sessions.clone())
            // Sessions for clients of the handshake revisions (they expect `Mcp-Session-Id`);
            // a 2026-07-28 client is served statelessly whatever this says.
            .stateful_mode(true)
            // A stateless call answers one JSON body; a session's answers are SSE streams.
            .json_response(true)
            // The gate already refused anything larger, with the REST envelope.
            .max_request_body_bytes(BODY_LIMIT)
            // rmcp's DNS-rebinding defence admits loopback `Host`s only, which would refuse
            // every deployment behind a real name. It protects servers that trust whoever
            // can reach them; every request here carries its bearer (which a rebound page
            // cannot send) and is refused without it, so the check is off.
            .allowed_hosts(Vec::new())
            // Nothing is written on a stream before its answer (no keep-alive comments, no
            // priming event): a claim_next waiting for work streams nothing until it answers.
            .disable_sse_keep_alive()
            .disable_sse_retry()
            .on_request_fn(gate::hand_over)
            .build();
        Mcp { transport, registry, sessions }
    }

    /// Mounts `/mcp/{slug}` behind the gate.
    pub fn routes(&self, cfg: &mut web::ServiceConfig) {
        cfg.service(
            self.transport
                .clone()
                .scope_with_path(MCP_PATH)
                .app_data(web::Data::from(self.registry.clone()))
                .app_data(web::Data::from(self.sessions.clone()))
                .wrap(actix_web::middleware::from_fn(gate::gate)),
        );
    }

    /// Sessions open on this instance now.
    pub fn open_sessions(&self) -> usize {
        self.registry.open()
    }
}
