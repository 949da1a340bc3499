//! What the agent's `notifications` verbs take and answer (grant `notifications`, never
//! implied): its owner's sinks, by name, in the endpoint's own owner scope. The answers
//! are the operator routes' shapes ([`super::sink_dto`]); no answer carries a secret.

use serde::Deserialize;
use utoipa::ToSchema;

use super::sink_dto::{SinkList, SinkView, SubscriptionBody, Subscriptions, TestAnswer};
use crate::domain::ids::ConnectionId;
use crate::error::Result;
use crate::service::Services;
use crate::sinks::rules::vocabulary::{AppriseMode, SinkKind};
use crate::sinks::service::agent as agent_sinks;
use crate::sinks::service::{SinkSpec, Subscription};
use crate::store::endpoints::AgentPrincipal;

/// A sink to create or replace under the name in the path. It posts to its connection's
/// destination, which only a human admin of the owner sets: an agent never chooses
/// where a secret goes.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PutSinkBody {
    /// An existing connection of the endpoint's owner, bound to a destination (else
    /// `reference_out_of_scope`, or 409 while it is unbound). Its secret is never read
    /// back.
    pub connection_id: ConnectionId,
    /// `gotify` or `apprise`; absent: the connection's kind (a different kind is
    /// `reference_out_of_scope`).
    pub kind: Option<SinkKind>,
    /// Optional, for clients that still send it: must be the connection's destination
    /// (normalised), else 422 `destination_mismatch` and nothing changes.
    pub base_url: Option<String>,
    /// Apprise only: `key` (default) or `urls` (which must pass the scheme allowlist).
    pub apprise_mode: Option<AppriseMode>,
    /// A new sink: default true. A replaced sink: absent leaves it as it was.
    pub enabled: Option<bool>,
    /// Its whole subscription list (as `PUT …/subscriptions` takes it; none may have
    /// `include_excerpt: true`, 403 `forbidden`). Absent: a new sink hears
    /// `todo.dead_lettered` and `relay.exhausted`, a replaced one keeps its own; `[]`:
    /// it hears nothing.
    #[serde(default)]
    pub subscriptions: Option<Vec<SubscriptionBody>>,
}

/// What `GET /api/v1/agent/sinks` and the MCP tool `list_sinks` answer.
pub async fn list_answer(s: &Services, me: &AgentPrincipal) -> Result<SinkList> {
    let rows = agent_sinks::list(s, me).await?;
    Ok(SinkList { sinks: rows.into_iter().map(SinkView::from).collect() })
}

/// What `PUT /api/v1/agent/sinks/{name}` and the MCP tool `set_sink` answer, and whether
/// it created the sink.
pub async fn put_answer(s: &Services, me: &AgentPrincipal, name: &str, b: PutSinkBody) -> Result<(SinkView, bool)> {
    let spec = SinkSpec {
        kind: b.kind,
        base_url: b.base_url,
        connection_id: b.connection_id,
        apprise_mode: b.apprise_mode,
        enabled: b.enabled,
    };
    let subs = b.subscriptions.map(|subs| subs.into_iter().map(Subscription::from).collect());
    let (row, created) = agent_sinks::put(s, me, name, spec, subs).await?;
    Ok((SinkView::from(row), created))
}

/// What `POST /api/v1/agent/sinks/{name}/test` and the MCP tool `test_sink` answer.
pub async fn test_answer(s: &Services, me: &AgentPrincipal, name: &str) -> Result<TestAnswer> {
    Ok(TestAnswer::from(agent_sinks::test(s, me, name).await?))
}

/// What `PUT /api/v1/agent/sinks/{name}/subscriptions` and the MCP tool
/// `set_sink_subscriptions` answer.
pub async fn subscriptions_answer(
    s: &Services,
    me: &AgentPrincipal,
    name: &str,
    body: Subscriptions,
) -> Result<Subscriptions> {
    let subs = body.subscriptions.into_iter().map(Subscription::from).collect();
    Ok(Subscriptions::from(agent_sinks::set_subscriptions(s, me, name, subs).await?))
}
