//! The JSON shapes of the operator API: request bodies and response views for
//! endpoints, operator todo actions, dead letters and webhooks. Views are built from
//! store rows here, so no handler decides field names on its own. Shapes that carry a
//! token do not implement Debug, so they cannot be logged. The shapes the agent verbs
//! answer (a todo among them, which operator routes answer too) are
//! [`crate::agent_api`]'s.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::db::models::EndpointRow;
use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, TodoId, WebhookId};
use crate::domain::todo_state::{AttemptOutcome, DeadReason, EndpointState, Presence};
use crate::domain::vocabulary::Phase;
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::store::dead_letters::DeadLetter;
use crate::store::webhooks::{CreatedWebhook, WebhookRow};

/// Vend request (operator API).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VendBody {
    /// Unique name, 1–63 of `a-z`, `0-9`, `_` or `-`, starting with a letter or digit;
    /// notifications name the endpoint by it.
    pub slug: String,
    /// `team:<name>` or a human's email, naming an owner the caller administers;
    /// absent: the caller's own scope.
    pub owner: Option<String>,
    /// The verbs its token may use; absent or empty: the drain family (`list_todos`,
    /// `get_todo`, `claim`, `claim_next`, `heartbeat`, `complete`, `fail`, `release`).
    /// `notify_hooks`, `notifications` and `notify_owner` are never implied.
    pub grants: Option<Vec<Verb>>,
    /// 60–86 400.
    pub default_lease_seconds: Option<i32>,
    /// When its token stops working on its own; the endpoint is then revoked as by an
    /// operator (its live todos become dead letters). Absent: never.
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
    /// The new endpoint's id (`ep_…`).
    pub id: EndpointId,
    /// Its slug.
    pub slug: String,
    /// The agent's bearer token (`sbk_…`), shown only in this answer: only its hash is
    /// kept, so it cannot be shown again.
    pub token: String,
    /// The verbs it was granted (the drain family when none were named).
    pub grants: Vec<Verb>,
}

/// An endpoint as listed (never its token).
#[derive(Debug, Serialize, ToSchema)]
pub struct EndpointView {
    /// The endpoint's id (`ep_…`).
    pub id: EndpointId,
    /// Its unique name.
    pub slug: String,
    /// The token's first characters (`sbk_` and 6 more), to recognise it; never the token.
    pub token_prefix: String,
    /// The verbs its token may use.
    pub grants: Vec<Verb>,
    /// `active`, or `revoked` (by an operator, or by the sweep once `expires_at` passed): a
    /// revoked token no longer authenticates.
    pub state: EndpointState,
    /// When it was revoked; null while active.
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it stops working on its own; null: never.
    pub expires_at: Option<DateTime<Utc>>,
    /// Lease length for claims that name none (60–86 400 s); null: 300 s.
    pub default_lease_seconds: Option<i32>,
    /// Whether its agent last clocked in or out.
    pub presence: Presence,
    /// When it was vended.
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
    /// Endpoints in every scope the caller belongs to, newest first.
    pub endpoints: Vec<EndpointView>,
}

/// Revocation answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct RevokedView {
    /// The revoked endpoint.
    pub id: EndpointId,
    /// Always true: its token no longer authenticates.
    pub revoked: bool,
    /// Live todos that became dead letters (`endpoint_revoked`).
    pub dead_lettered: i64,
}

/// Operator fail / retry request.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorActionBody {
    /// On a fail, a note recorded on the attempt it closes, if one is open (cut to 2 048
    /// bytes); a retry ignores it.
    pub summary: Option<String>,
}

/// The attempt that closed with the dead-lettering.
#[derive(Debug, Serialize, ToSchema)]
pub struct FinalAttemptView {
    /// Its attempt number.
    pub seq: i32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The note left on it (at most 2 048 bytes); null without one.
    pub summary: Option<String>,
    /// Where its output is (an https URL or `mcp://cairn/<id>`); null without one.
    pub artifact: Option<String>,
    /// When it closed, which is when the todo became a dead letter.
    pub at: DateTime<Utc>,
}

/// One dead letter.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeadLetterView {
    /// The todo's id (`td_…`).
    pub id: TodoId,
    /// The queue it was on.
    pub queue: String,
    /// Endpoint slug.
    pub endpoint: String,
    /// The endpoint that holds it.
    pub endpoint_id: EndpointId,
    /// Its title (sender- or agent-written).
    pub title: String,
    /// Where it came from: the webhook's source type, or `agent`.
    pub source: Option<String>,
    /// The delivery's event type or the agent's label; null without one.
    pub kind: Option<String>,
    /// Why it stopped being retried.
    pub reason: DeadReason,
    /// The same as `reason`, under the name a todo answer gives it.
    pub dead_reason: DeadReason,
    /// Always `dead`: the Board's word for a todo with no retry left (the API's
    /// `state` of such a todo is `failed`, with `dead_letter: true`).
    pub phase: Phase,
    /// Claims ever made of it.
    pub attempts_total: i32,
    /// Its attempt cap.
    pub max_attempts: i32,
    /// How many times it has been dead-lettered (a todo retried now can die again).
    pub dead_letter_count: i32,
    /// The attempt the dead-lettering closed; null when it closed none (a revocation of
    /// pending work, an operator's fail of a todo nobody held).
    pub final_attempt: Option<FinalAttemptView>,
    /// When it became a dead letter; the listing is newest first by this.
    pub dead_lettered_at: DateTime<Utc>,
    /// When the todo was created.
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
            dead_reason: d.reason,
            phase: Phase::Dead,
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
    /// Dead letters across the caller's scopes, newest first, at most `limit`.
    pub dead_letters: Vec<DeadLetterView>,
}

/// Webhook creation request.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateWebhookBody {
    /// The endpoint whose queues receive its todos: active, and in a scope the caller
    /// administers.
    pub endpoint_id: EndpointId,
    /// How deliveries are verified: `github`, `gitea`, `stripe` and `standard` check a
    /// signature; with `generic` the ingest URL is the only credential.
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
    /// The webhook's id (`wh_…`).
    pub id: WebhookId,
    /// Where the provider posts deliveries: `{base_url}/webhooks/w/{ingest_token}`.
    pub ingest_url: String,
    /// The ingest token (`sbw_…`), the last segment of `ingest_url` and, for `generic`, the
    /// only credential; shown only in this answer.
    pub ingest_token: String,
    /// The secret signatures are checked with, to configure at the provider: the one
    /// supplied, else a generated `whsec_…`; shown only in this answer. Null for `generic`
    /// and `unverified` webhooks.
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
    /// The webhook's id (`wh_…`).
    pub id: WebhookId,
    /// The endpoint whose queues receive its todos.
    pub endpoint_id: EndpointId,
    /// How its deliveries are verified.
    pub source_type: SourceType,
    /// Default queue for deliveries no rule routes elsewhere.
    pub queue: String,
    /// Attempt cap of the todos it creates (1–100).
    pub max_attempts: i32,
    /// The ingest token's first characters (`sbw_` and 6 more), to recognise it; never the
    /// token.
    pub ingest_token_prefix: String,
    /// First 12 hex characters of the signing secret's SHA-256, to tell secrets apart; null
    /// without a secret (`generic`, `unverified`).
    pub secret_fingerprint: Option<String>,
    /// A signed source type that does not check signatures: deliveries are routed in trust
    /// mode `open` and never ring or announce.
    pub unverified: bool,
    /// Senders of a GitHub or Gitea delivery whose work is routed (`{"logins": [...]}` or
    /// `{"allow_all": true}`); null trusts no one, so their deliveries go to quarantine.
    /// Other sources have no sender to judge.
    pub trusted_actors: Option<serde_json::Value>,
    /// Routing rules as saved (`{"rules": [...]}`), tried in order; the first match wins,
    /// and a delivery no rule matches goes to `queue`.
    pub rules: serde_json::Value,
    /// Deliveries refused (bad or missing signature, stale timestamp).
    pub refused_deliveries: i64,
    /// When it was created.
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
    /// Webhooks in every scope the caller belongs to, newest first.
    pub webhooks: Vec<WebhookView>,
}
