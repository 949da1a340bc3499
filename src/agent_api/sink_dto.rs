//! The JSON shapes of a notification sink that the agent's `notifications` verbs and
//! the operator's sink routes both answer (and take): a sink, the list, its
//! subscriptions, and what a test found (a cairn connection's test answers it too). No
//! shape carries a secret.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::{ConnectionId, EndpointId, SinkId, WebhookId};
use crate::hooks::rules::hook::redact_url;
use crate::sinks::rules::vocabulary::{AppriseMode, Severity, SinkEvent, SinkKind};
use crate::sinks::service::{self as sinks, Subscription};
use crate::sinks::statements::{SinkRow, SubscriptionRow};

/// A sink as answered.
#[derive(Debug, Serialize, ToSchema)]
pub struct SinkView {
    /// The sink's id.
    pub id: SinkId,
    /// Its name.
    pub name: String,
    /// `gotify` or `apprise`.
    pub kind: SinkKind,
    /// Where it posts: its connection's destination, its query redacted.
    pub base_url: String,
    /// The connection it posts with.
    pub connection_id: ConnectionId,
    /// Apprise only: `key` or `urls`; null for gotify.
    pub apprise_mode: Option<AppriseMode>,
    /// Whether notifications go out.
    pub enabled: bool,
    /// Messages per hour.
    pub budget_per_hour: i32,
    /// Messages at once.
    pub burst: i32,
    /// When it was added.
    pub created_at: DateTime<Utc>,
}

impl From<SinkRow> for SinkView {
    fn from(r: SinkRow) -> Self {
        SinkView {
            id: r.id,
            name: r.name,
            kind: r.kind,
            base_url: redact_url(&r.base_url),
            connection_id: r.connection_id,
            apprise_mode: r.apprise_mode,
            enabled: r.enabled,
            budget_per_hour: r.budget_per_hour,
            burst: r.burst,
            created_at: r.created_at,
        }
    }
}

/// A sink just created, with the subscriptions it was created with (the default,
/// `todo.dead_lettered` and `relay.exhausted`, unless the create body named its own).
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedSinkView {
    /// The sink.
    #[serde(flatten)]
    pub sink: SinkView,
    /// Its subscriptions, in order; empty: it hears nothing.
    pub subscriptions: Vec<SubscriptionBody>,
}

impl From<(SinkRow, Vec<SubscriptionRow>)> for CreatedSinkView {
    fn from((row, subs): (SinkRow, Vec<SubscriptionRow>)) -> Self {
        CreatedSinkView {
            sink: SinkView::from(row),
            subscriptions: subs.into_iter().map(SubscriptionBody::from).collect(),
        }
    }
}

/// Every sink in the caller's scopes.
#[derive(Debug, Serialize, ToSchema)]
pub struct SinkList {
    /// By name.
    pub sinks: Vec<SinkView>,
}

/// One subscription.
#[derive(Debug, Deserialize, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionBody {
    /// The events it matches: `todo.dead_lettered`, `relay.exhausted`,
    /// `delivery.quarantined`, `rule.notify`, `digest`, `agent.notify` (1–16).
    pub events: Vec<SinkEvent>,
    /// Only todos on these queues (absent or empty: any).
    #[serde(default)]
    pub queues: Vec<String>,
    /// Only these endpoints of the sink's owner (absent or empty: any).
    #[serde(default)]
    pub endpoint_ids: Vec<EndpointId>,
    /// Only these webhooks of the sink's owner (absent or empty: any).
    #[serde(default)]
    pub webhook_ids: Vec<WebhookId>,
    /// Events below it are not sent; default `low`.
    pub min_severity: Option<Severity>,
    /// Messages carry up to 280 characters of the subject's body, labelled as
    /// sender-written; default false.
    pub include_excerpt: Option<bool>,
}

impl From<SubscriptionRow> for SubscriptionBody {
    fn from(r: SubscriptionRow) -> Self {
        SubscriptionBody {
            events: r.events,
            queues: r.queues,
            endpoint_ids: r.endpoint_ids,
            webhook_ids: r.webhook_ids,
            min_severity: Some(r.min_severity),
            include_excerpt: Some(r.include_excerpt),
        }
    }
}

impl From<SubscriptionBody> for Subscription {
    fn from(b: SubscriptionBody) -> Self {
        Subscription {
            events: b.events,
            queues: b.queues,
            endpoint_ids: b.endpoint_ids,
            webhook_ids: b.webhook_ids,
            min_severity: b.min_severity,
            include_excerpt: b.include_excerpt,
        }
    }
}

/// A sink's subscriptions, in order.
#[derive(Debug, Deserialize, Serialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Subscriptions {
    /// At most 32; an empty list subscribes to nothing.
    pub subscriptions: Vec<SubscriptionBody>,
}

impl From<Vec<SubscriptionRow>> for Subscriptions {
    fn from(rows: Vec<SubscriptionRow>) -> Self {
        Subscriptions { subscriptions: rows.into_iter().map(SubscriptionBody::from).collect() }
    }
}

/// What a test found: a sink's test send, or a cairn connection's whoami.
#[derive(Debug, Serialize, ToSchema)]
pub struct TestAnswer {
    /// Whether it passed: the sink took the message, or the Cairn knew the token.
    pub ok: bool,
    /// Why not: `code` is the error class (`auth`, `not_found`, `server_error`,
    /// `timeout`, `network`, `tls`, `rejected_ssrf`, `forbidden_target`, `forbidden_scheme`,
    /// `partial`, `configuration`, …); never a secret. `forbidden_target` (the host does
    /// not resolve, or resolves to an address the instance does not call) has one
    /// message for every cause.
    pub error: Option<TestError>,
    /// A sink's test only, present when the sink holds no subscription: that it hears
    /// nothing, so a passing test does not mean anyone will be woken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A failed test send's class and explanation.
#[derive(Debug, Serialize, ToSchema)]
pub struct TestError {
    /// The error class.
    pub code: &'static str,
    /// What it means.
    pub message: String,
}

impl From<sinks::TestResult> for TestAnswer {
    fn from(found: sinks::TestResult) -> Self {
        match found {
            None => TestAnswer { ok: true, error: None, warning: None },
            Some((code, message)) => TestAnswer { ok: false, error: Some(TestError { code, message }), warning: None },
        }
    }
}

impl From<sinks::TestSend> for TestAnswer {
    fn from(t: sinks::TestSend) -> Self {
        TestAnswer {
            warning: (t.subscriptions == 0).then(|| sinks::HEARS_NOTHING.to_owned()),
            ..TestAnswer::from(t.found)
        }
    }
}
