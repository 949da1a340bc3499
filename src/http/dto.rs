//! The JSON shapes of the API: request bodies and response views. Views are built
//! from store rows here, so no handler decides field names on its own. Shapes that
//! carry a token or lease token do not implement Debug, so they cannot be logged.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::models::{AttemptRow, EndpointRow, TodoRow};
use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, TodoId, WebhookId};
use crate::domain::todo_state::{
    AttemptDisposition, AttemptOutcome, DeadReason, EndpointState, InterruptState, Presence, TodoState,
};
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::store::dead_letters::DeadLetter;
use crate::store::webhooks::{CreatedWebhook, WebhookRow};

/// A todo as listed (no payload).
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoView {
    pub id: TodoId,
    pub queue: String,
    pub source: Option<String>,
    pub kind: Option<String>,
    pub title: String,
    pub state: TodoState,
    pub attempt: i32,
    pub max_attempts: i32,
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Always present; null unless a retry is scheduled.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// Failed with no retry scheduled.
    pub dead_letter: bool,
    pub dead_reason: Option<DeadReason>,
    pub dead_lettered_at: Option<DateTime<Utc>>,
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    pub interrupt_reason: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub payload_size: i32,
}

impl From<&TodoRow> for TodoView {
    fn from(t: &TodoRow) -> Self {
        TodoView {
            id: t.id,
            queue: t.queue.clone(),
            source: t.source.clone(),
            kind: t.kind.clone(),
            title: t.title.clone(),
            state: t.state,
            attempt: t.attempt,
            max_attempts: t.max_attempts,
            lease_expires_at: t.lease_expires_at,
            next_retry_at: t.next_retry_at,
            dead_letter: t.is_dead_letter(),
            dead_reason: t.dead_reason,
            dead_lettered_at: t.dead_lettered_at,
            interrupt_expires_at: t.interrupt_expires_at,
            interrupt_reason: t.interrupt_reason.clone(),
            created_at: t.created_at,
            updated_at: t.updated_at,
            payload_size: t.payload_size,
        }
    }
}

/// A todo with its payload, result and (where asked for) attempts.
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoDetail {
    #[serde(flatten)]
    pub todo: TodoView,
    pub payload: Option<serde_json::Value>,
    pub result: Option<serde_json::Value>,
    pub attempts_total: i32,
    /// Instructions a routing rule attached for the agent.
    pub work_order: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts: Option<Vec<AttemptView>>,
}

impl TodoDetail {
    /// The detail view, with attempts when given.
    pub fn new(t: &TodoRow, attempts: Option<&[AttemptRow]>) -> Self {
        TodoDetail {
            todo: t.into(),
            payload: t.payload.clone(),
            result: t.result.clone(),
            attempts_total: t.attempts_total,
            work_order: t.work_order.clone(),
            attempts: attempts.map(|a| a.iter().map(AttemptView::from).collect()),
        }
    }
}

/// One attempt of a todo.
#[derive(Debug, Serialize, ToSchema)]
pub struct AttemptView {
    pub seq: i32,
    pub claimant: Option<String>,
    pub relay: bool,
    pub claimed_at: DateTime<Utc>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub lease_expires_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub outcome: Option<AttemptOutcome>,
    pub disposition: Option<AttemptDisposition>,
    pub summary: Option<String>,
    pub summary_truncated: bool,
    pub artifact: Option<String>,
}

impl From<&AttemptRow> for AttemptView {
    fn from(a: &AttemptRow) -> Self {
        AttemptView {
            seq: a.seq,
            claimant: a.claimant.clone(),
            relay: a.relay,
            claimed_at: a.claimed_at,
            last_heartbeat_at: a.last_heartbeat_at,
            lease_expires_at: a.lease_expires_at,
            ended_at: a.ended_at,
            outcome: a.outcome,
            disposition: a.disposition,
            summary: a.summary.clone(),
            summary_truncated: a.summary_truncated,
            artifact: a.artifact.clone(),
        }
    }
}

/// `GET /api/v1/agent/todos` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct TodoList {
    pub todos: Vec<TodoView>,
}

/// `claim_next` / `claim` request.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimBody {
    /// Only this queue (claim_next).
    pub queue: Option<String>,
    /// 1–86 400.
    pub lease_ttl_seconds: Option<i32>,
    /// Who is claiming (≤128 bytes).
    pub claimant: Option<String>,
    /// Marks the attempt as a relay attempt.
    #[serde(default)]
    pub relay: bool,
}

/// A claim's answer; `{ "empty": true }` when nothing was claimable.
#[derive(Serialize, ToSchema)]
pub struct ClaimAnswer {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoDetail>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt_seq: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts_total: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_attempts: Option<Vec<AttemptView>>,
    pub empty: bool,
}

/// Heartbeat request.
#[derive(Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatBody {
    pub lease_ttl_seconds: Option<i32>,
    pub lease_token: Option<String>,
}

/// Complete / fail / release request.
#[derive(Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishBody {
    pub result: Option<serde_json::Value>,
    pub summary: Option<String>,
    /// An https URL or `mcp://cairn/<id>`.
    pub artifact: Option<String>,
    pub lease_token: Option<String>,
}

/// Interrupt request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InterruptBody {
    pub state: InterruptState,
    /// 1–604 800; default 3 600.
    pub wait_seconds: Option<i32>,
    pub reason: Option<String>,
    pub lease_token: Option<String>,
}

/// Resume request.
#[derive(Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    pub lease_ttl_seconds: Option<i32>,
    pub lease_token: Option<String>,
}

/// create_todo request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTodoBody {
    pub queue: String,
    pub title: String,
    pub kind: Option<String>,
    pub payload: Option<serde_json::Value>,
    pub idempotency_key: Option<String>,
    /// 1–100; default 5.
    pub max_attempts: Option<i32>,
}

/// create_todo answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedTodo {
    #[serde(flatten)]
    pub todo: TodoDetail,
    /// False when an existing live todo with the same idempotency key was returned.
    pub created: bool,
}

/// Presence answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct PresenceView {
    pub endpoint: String,
    pub presence: Presence,
    pub changed_at: Option<DateTime<Utc>>,
}

/// Vend request (operator API).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VendBody {
    pub slug: String,
    /// `team:<name>`; default the caller's own scope.
    pub owner: Option<String>,
    pub grants: Option<Vec<Verb>>,
    /// 60–86 400.
    pub default_lease_seconds: Option<i32>,
    pub expires_at: Option<DateTime<Utc>>,
}

impl From<VendBody> for crate::service::endpoints::Vend {
    fn from(b: VendBody) -> Self {
        crate::service::endpoints::Vend {
            slug: b.slug,
            owner: b.owner,
            grants: b.grants,
            default_lease_seconds: b.default_lease_seconds,
            expires_at: b.expires_at,
        }
    }
}

/// Vend answer: the token is shown here once.
#[derive(Serialize, ToSchema)]
pub struct VendedView {
    pub id: EndpointId,
    pub slug: String,
    pub token: String,
    pub grants: Vec<Verb>,
}

/// An endpoint as listed (never its token).
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointView {
    pub id: EndpointId,
    pub slug: String,
    pub token_prefix: String,
    pub grants: Vec<Verb>,
    pub state: EndpointState,
    pub revoked_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
    pub default_lease_seconds: Option<i32>,
    pub presence: Presence,
    pub created_at: DateTime<Utc>,
}

impl From<&EndpointRow> for EndpointView {
    fn from(e: &EndpointRow) -> Self {
        EndpointView {
            id: e.id,
            slug: e.slug.clone(),
            token_prefix: e.token_prefix.clone(),
            grants: e.verbs(),
            state: e.state,
            revoked_at: e.revoked_at,
            expires_at: e.expires_at,
            default_lease_seconds: e.default_lease_seconds,
            presence: e.presence,
            created_at: e.created_at,
        }
    }
}

/// Endpoint list.
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointList {
    pub endpoints: Vec<EndpointView>,
}

/// Revocation answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevokedView {
    pub id: EndpointId,
    pub revoked: bool,
    /// Live todos that became dead letters (`endpoint_revoked`).
    pub dead_lettered: i64,
}

/// Operator fail / retry request.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorActionBody {
    pub summary: Option<String>,
}

/// The attempt that closed with the dead-lettering.
#[derive(Debug, Serialize, ToSchema)]
pub struct FinalAttemptView {
    pub seq: i32,
    pub outcome: AttemptOutcome,
    pub summary: Option<String>,
    pub artifact: Option<String>,
    pub at: DateTime<Utc>,
}

/// One dead letter.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadLetterView {
    pub id: TodoId,
    pub queue: String,
    /// Endpoint slug.
    pub endpoint: String,
    pub endpoint_id: EndpointId,
    pub title: String,
    pub source: Option<String>,
    pub kind: Option<String>,
    pub reason: DeadReason,
    pub attempts_total: i32,
    pub max_attempts: i32,
    pub dead_letter_count: i32,
    pub final_attempt: Option<FinalAttemptView>,
    pub dead_lettered_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

impl From<DeadLetter> for DeadLetterView {
    fn from(d: DeadLetter) -> Self {
        let final_attempt = match (d.final_seq, d.final_outcome, d.final_at) {
            (Some(seq), Some(outcome), Some(at)) => {
                Some(FinalAttemptView { seq, outcome, summary: d.final_summary, artifact: d.final_artifact, at })
            }
            _ => None,
        };
        DeadLetterView {
            id: d.id,
            queue: d.queue,
            endpoint: d.endpoint,
            endpoint_id: d.endpoint_id,
            title: d.title,
            source: d.source,
            kind: d.kind,
            reason: d.reason,
            attempts_total: d.attempts_total,
            max_attempts: d.max_attempts,
            dead_letter_count: d.dead_letter_count,
            final_attempt,
            dead_lettered_at: d.dead_lettered_at,
            created_at: d.created_at,
        }
    }
}

/// Dead-letter list.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadLetterList {
    pub dead_letters: Vec<DeadLetterView>,
}

/// Webhook creation request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    pub endpoint_id: EndpointId,
    pub source_type: SourceType,
    /// Default queue for deliveries no rule routes elsewhere.
    pub queue: String,
    /// 1–100; default 5.
    pub max_attempts: Option<i32>,
    /// `{"logins": [...]}` or `{"allow_all": true}`; absent trusts no one (GitHub/Gitea).
    pub trusted_actors: Option<TrustedActors>,
    /// A secret the provider supplies; absent: Switchboard generates one.
    pub secret: Option<String>,
    /// A signed source that cannot sign: routed in trust mode `open`, never announced.
    pub unverified: Option<bool>,
}

impl From<CreateWebhookBody> for crate::service::webhooks::CreateWebhook {
    fn from(b: CreateWebhookBody) -> Self {
        crate::service::webhooks::CreateWebhook {
            endpoint_id: b.endpoint_id,
            source_type: b.source_type,
            queue: b.queue,
            max_attempts: b.max_attempts,
            trusted_actors: b.trusted_actors,
            secret: b.secret,
            unverified: b.unverified.unwrap_or(false),
        }
    }
}

/// Webhook creation answer: the ingest token and signing secret are shown here once.
#[derive(Serialize, ToSchema)]
pub struct CreatedWebhookView {
    pub id: WebhookId,
    pub ingest_url: String,
    pub ingest_token: String,
    pub signing_secret: Option<String>,
}

impl CreatedWebhookView {
    /// The answer for a webhook just created (the operator API and the CLI print the same).
    pub fn new(created: CreatedWebhook, base_url: &str) -> Self {
        CreatedWebhookView {
            id: created.webhook.id,
            ingest_url: created.ingest_url(base_url),
            ingest_token: created.ingest_token,
            signing_secret: created.signing_secret,
        }
    }
}

/// A webhook as listed.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView {
    pub id: WebhookId,
    pub endpoint_id: EndpointId,
    pub source_type: SourceType,
    pub queue: String,
    pub max_attempts: i32,
    pub ingest_token_prefix: String,
    pub secret_fingerprint: Option<String>,
    pub unverified: bool,
    pub trusted_actors: Option<serde_json::Value>,
    pub rules: serde_json::Value,
    /// Deliveries refused (bad or missing signature, stale timestamp).
    pub refused_deliveries: i64,
    pub created_at: DateTime<Utc>,
}

impl From<&WebhookRow> for WebhookView {
    fn from(w: &WebhookRow) -> Self {
        WebhookView {
            id: w.id,
            endpoint_id: w.endpoint_id,
            source_type: w.source_type,
            queue: w.queue.clone(),
            max_attempts: w.max_attempts,
            ingest_token_prefix: w.ingest_token_prefix.clone(),
            secret_fingerprint: w.secret_fingerprint.clone(),
            unverified: w.unverified,
            trusted_actors: w.trusted_actors.clone(),
            rules: w.rules.clone(),
            refused_deliveries: w.refused_deliveries,
            created_at: w.created_at,
        }
    }
}

/// Webhook list.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    pub webhooks: Vec<WebhookView>,
}
