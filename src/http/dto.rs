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
    /// The todo's id (`td_…`).
    pub id: TodoId,
    /// The queue on its endpoint that holds it.
    pub queue: String,
    /// Where it came from: the webhook's source type (`github`, `gitea`, `stripe`,
    /// `standard`, `generic`) for a delivery, `agent` for a todo an agent created.
    pub source: Option<String>,
    /// The delivery's event type, or the label the creating agent gave (≤128 bytes); null
    /// when there is none.
    pub kind: Option<String>,
    /// One line for humans: `<source> <event type>` (or `<source> delivery`) for a
    /// delivery, or the creating agent's title (≤1 024 bytes).
    pub title: String,
    /// Where it is in its life; a dead letter is `failed` with `dead_letter` true.
    pub state: TodoState,
    /// Attempts counted against `max_attempts`: a claim takes one, a release gives it back,
    /// an operator's retry-now resets it to 0.
    pub attempt: i32,
    /// The attempt cap (1–100, default 5): a fail, or a lapsed lease or interrupt lease, on
    /// this attempt makes the todo a dead letter.
    pub max_attempts: i32,
    /// When the current claim's lease lapses unless a heartbeat extends it; null unless
    /// `claimed`.
    pub lease_expires_at: Option<DateTime<Utc>>,
    /// Always present; null unless a retry is scheduled.
    pub next_retry_at: Option<DateTime<Utc>>,
    /// Failed with no retry scheduled.
    pub dead_letter: bool,
    /// Why it stopped being retried; null unless `dead_letter`.
    pub dead_reason: Option<DeadReason>,
    /// When it became a dead letter; null unless `dead_letter`.
    pub dead_lettered_at: Option<DateTime<Utc>>,
    /// When the interrupt lease lapses unless the holder heartbeats or resumes; null unless
    /// `input_required` or `auth_required`.
    pub interrupt_expires_at: Option<DateTime<Utc>>,
    /// The agent's note on what it is waiting for (control characters removed, at most
    /// 1 024 bytes); null unless interrupted with one.
    pub interrupt_reason: Option<String>,
    /// When it was created; claim-next takes the oldest pending todo first.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Size of the payload as JSON text, in bytes (0 without one); listings leave the
    /// payload itself out.
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
    /// The todo's fields, as listed.
    #[serde(flatten)]
    pub todo: TodoView,
    /// The JSON the todo carries for the agent: a delivery's body (a body that is not JSON
    /// as `{"raw_body": "…"}`) or what the creating agent sent; null without one.
    pub payload: Option<serde_json::Value>,
    /// The JSON reported with `complete` (or with a `fail`); null if none was, and cleared
    /// by an operator's retry-now.
    pub result: Option<serde_json::Value>,
    /// Claims ever made: the length of its attempt history, which retry-now does not reset.
    pub attempts_total: i32,
    /// Instructions a routing rule attached for the agent.
    pub work_order: Option<String>,
    /// Its latest 20 attempts, newest first; only in the answer of a get by id, absent
    /// elsewhere.
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
    /// Attempt number within the todo, from 1; never reused.
    pub seq: i32,
    /// Who claimed, as the claimer labelled itself (control characters removed, at most 128
    /// bytes); null without a label.
    pub claimant: Option<String>,
    /// A relay attempt: claimed with `relay: true`, or with a claimant label of the form
    /// `harness/<host>/<harness>/run-<n>`.
    pub relay: bool,
    /// When the attempt began.
    pub claimed_at: DateTime<Utc>,
    /// The latest heartbeat or resume; null if there was none.
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// When its lease lapses (or lapsed); while the todo is interrupted, the interrupt
    /// lease.
    pub lease_expires_at: DateTime<Utc>,
    /// When it closed; null while open (a todo has at most one open attempt).
    pub ended_at: Option<DateTime<Utc>>,
    /// How it ended; null while open.
    pub outcome: Option<AttemptOutcome>,
    /// What its end did to the todo; null while open.
    pub disposition: Option<AttemptDisposition>,
    /// The note left when it ended (by the agent, or an operator's fail), at most 2 048
    /// bytes; null without one.
    pub summary: Option<String>,
    /// Whether `summary` was cut to 2 048 bytes.
    pub summary_truncated: bool,
    /// Where the attempt's output is: an https URL or `mcp://cairn/<id>`; null if none was
    /// given.
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
    /// This endpoint's drainable todos, newest first, without payloads.
    pub todos: Vec<TodoView>,
}

/// `claim_next` / `claim` request.
#[derive(Debug, Default, Deserialize, ToSchema, schemars::JsonSchema)]
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
    /// claim_next only: claim up to this many todos (1–100) in one transaction, oldest
    /// first. Absent or 1: one claim, answered as without it (`ClaimAnswer`); above 1: the
    /// batch answer (`BatchClaimAnswer`, `{claims, empty}`).
    #[schema(minimum = 1, maximum = 100)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<i32>,
    /// Long-poll (claim_next only), 0–30 s: when nothing is claimable, hold the request
    /// until work arrives on a queue this claim may take (then claim it) or the time is
    /// up (then answer as an empty claim does, `deferred` included). Absent or 0: answer at
    /// once. Out of range: 422 `invalid_argument`, nothing claimed. The longest-waiting
    /// request is served first; past the instance's bound on waiting requests
    /// (`SWITCHBOARD_LONG_POLL_MAX_WAITERS`), past the owner's fair share of them
    /// (`SWITCHBOARD_LONG_POLL_RESERVE_PERCENT`), or while the server stops, the answer
    /// comes at once.
    #[schema(minimum = 0, maximum = 30)]
    #[schemars(range(min = 0, max = 30))]
    pub wait_seconds: Option<i32>,
}

/// A claim's answer; `{ "empty": true }` when nothing was claimed, with `deferred` when an
/// admission budget held back work.
#[derive(Serialize, ToSchema)]
// No other field, in the document too: claim_next's answer is this or a
// `BatchClaimAnswer`, and only `claims` tells them apart.
#[serde(deny_unknown_fields)]
pub struct ClaimAnswer {
    /// The claimed todo with its payload (its history is in `prior_attempts`); absent when
    /// `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub todo: Option<TodoDetail>,
    /// This claim's lease token (16 random bytes, base64url), shown only here: pass it to
    /// heartbeat, complete, fail, release, interrupt and resume so a stale holder is
    /// refused. Absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_token: Option<String>,
    /// The number of the attempt this claim opened; absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt_seq: Option<i32>,
    /// Claims ever made of the todo, this one included; absent when `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempts_total: Option<i32>,
    /// Up to five earlier attempts, newest first (empty on a first claim); absent when
    /// `empty`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prior_attempts: Option<Vec<AttemptView>>,
    /// True when nothing was claimed; every field above is then absent.
    pub empty: bool,
    /// Present when `empty` because an admission budget of the queue held back work that
    /// was there to claim: `paused`, `in_flight_full` (its `max_in_flight` todos are
    /// claimed) or `window_exhausted` (its `per_hour` claims of this clock hour are
    /// spent). Try again later; this is not an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<crate::domain::admission::Deferral>,
}

/// Heartbeat request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeartbeatBody {
    /// New lease from now, 1–86 400 s; absent: the endpoint's default lease, else 300 s. On
    /// an interrupted todo it renews the interrupt lease instead (absent: by the
    /// interrupt's `wait_seconds`).
    pub lease_ttl_seconds: Option<i32>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Complete / fail / release request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FinishBody {
    /// JSON to keep as the todo's result: `complete` sets it (absent: null), `fail`
    /// replaces the earlier result only when given, `release` ignores it.
    pub result: Option<serde_json::Value>,
    /// A note for the attempt history, cut to 2 048 bytes.
    pub summary: Option<String>,
    /// An https URL or `mcp://cairn/<id>`.
    pub artifact: Option<String>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Interrupt request.
#[derive(Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InterruptBody {
    /// What the todo waits on: `input_required` (a human's input) or `auth_required` (an
    /// authorisation).
    pub state: InterruptState,
    /// 1–604 800; default 3 600.
    pub wait_seconds: Option<i32>,
    /// What it is waiting for, for humans; control characters are removed and it is cut to
    /// 1 024 bytes.
    pub reason: Option<String>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// Resume request.
#[derive(Default, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeBody {
    /// Length of the fresh lease, 1–86 400 s; absent: the endpoint's default lease, else
    /// 300 s.
    pub lease_ttl_seconds: Option<i32>,
    /// The lease token from the claim; when given it must match the current lease (else 409
    /// `conflict`), which fences off a holder whose lease was taken over.
    pub lease_token: Option<String>,
}

/// create_todo request.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTodoBody {
    /// One of this endpoint's queues: 1–64 of `a-z`, `0-9`, `.`, `_` or `-`, starting with
    /// a letter or digit; not `quarantine`.
    pub queue: String,
    /// One line for humans, 1–1 024 bytes.
    pub title: String,
    /// A free-form label, 1–128 bytes.
    pub kind: Option<String>,
    /// Any JSON, for the agent that claims it.
    pub payload: Option<serde_json::Value>,
    /// 1–256 bytes. While a live todo of this endpoint holds the key, creating again
    /// returns that todo (`created: false`) instead of a new one; done, canceled and
    /// dead-lettered todos release it.
    pub idempotency_key: Option<String>,
    /// 1–100; default 5.
    pub max_attempts: Option<i32>,
}

impl From<CreateTodoBody> for crate::service::agent::NewAgentTodo {
    fn from(b: CreateTodoBody) -> Self {
        crate::service::agent::NewAgentTodo {
            queue: b.queue,
            title: b.title,
            kind: b.kind,
            payload: b.payload,
            idempotency_key: b.idempotency_key,
            max_attempts: b.max_attempts,
        }
    }
}

/// create_todo answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedTodo {
    /// The new todo, or the live one that already holds the idempotency key.
    #[serde(flatten)]
    pub todo: TodoDetail,
    /// False when an existing live todo with the same idempotency key was returned.
    pub created: bool,
}

/// Presence answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct PresenceView {
    /// The endpoint's slug.
    pub endpoint: String,
    /// `in` after a clock-in, `out` after a clock-out.
    pub presence: Presence,
    /// When presence was last set: the time of this call.
    pub changed_at: Option<DateTime<Utc>>,
}

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
