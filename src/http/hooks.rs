//! Hooks on the API, the part operator and agent routes share: the JSON shapes
//! (the actions themselves are [`crate::hooks::service`]).
//! Answers show a hook's URL with its query redacted; the signing secret appears only
//! in the create and rotate answers, which do not implement Debug.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::domain::ids::{EndpointId, HookId};
use crate::hooks::rules::hook::{HookDisabledReason, redact_url};
use crate::hooks::service::NewHook;
use crate::hooks::statements::{CreatedHook, HookRow, RotatedHook};

/// Hook creation request.
#[derive(Debug, Deserialize, ToSchema, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateHookBody {
    /// Where notifications are posted: https (http only with `SWITCHBOARD_PUSH_ALLOW_HTTP`),
    /// at most 2 048 bytes, no user name or password.
    pub url: String,
    /// Only todos on these queues (at most 32; duplicates collapse); absent or empty:
    /// every queue.
    pub queues: Option<Vec<String>>,
}

impl From<CreateHookBody> for NewHook {
    fn from(b: CreateHookBody) -> Self {
        NewHook { url: b.url, queues: b.queues.unwrap_or_default() }
    }
}

/// Hook creation answer: the signing secret is shown here once.
#[derive(Serialize, ToSchema)]
pub struct CreatedHookView {
    /// The hook's id (`nh_…`).
    pub id: HookId,
    /// The URL with its query redacted.
    pub url: String,
    /// The queue filter as saved (duplicates collapsed); empty: every queue.
    pub queues: Vec<String>,
    /// Whether it delivers (a new hook does).
    pub enabled: bool,
    /// `whsec_` + base64 of 32 bytes; verify `webhook-signature` with it.
    pub signing_secret: String,
}

impl From<CreatedHook> for CreatedHookView {
    fn from(c: CreatedHook) -> Self {
        CreatedHookView {
            id: c.hook.id,
            url: redact_url(&c.hook.url),
            queues: c.hook.queues,
            enabled: c.hook.enabled,
            signing_secret: c.signing_secret,
        }
    }
}

/// How a hook's deliveries have been going.
#[derive(Debug, Serialize, ToSchema)]
pub struct HookHealthView {
    /// Failed deliveries in a row; the 10th disables the hook.
    pub consecutive_failures: i32,
    /// HTTP status of the last delivery's final attempt; null if it got no response (or
    /// nothing was sent yet).
    pub last_status: Option<i32>,
    /// `redirect`, `client_error`, `server_error`, `timeout`, `network`, `tls`,
    /// `rejected_ssrf` (the outbound guard refused the URL's own text) or
    /// `forbidden_target` (it refused where the URL's host points, or the host does not
    /// resolve: one class for every such cause); null after a success.
    pub last_error: Option<String>,
    /// When the last delivery ended; null before the first.
    pub last_attempt_at: Option<DateTime<Utc>>,
}

/// A hook as listed (never its secrets).
#[derive(Debug, Serialize, ToSchema)]
pub struct HookView {
    /// The hook's id (`nh_…`).
    pub id: HookId,
    /// The endpoint whose todos it announces.
    pub endpoint_id: EndpointId,
    /// The URL with its query redacted.
    pub url: String,
    /// Queue filter; empty: every queue.
    pub queues: Vec<String>,
    /// Whether it delivers.
    pub enabled: bool,
    /// Why it does not deliver; null while enabled.
    pub disabled_reason: Option<HookDisabledReason>,
    /// How its deliveries have been going.
    pub health: HookHealthView,
    /// While set, deliveries are signed with the previous secret too.
    pub previous_secret_valid_until: Option<DateTime<Utc>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

impl From<&HookRow> for HookView {
    fn from(h: &HookRow) -> Self {
        HookView {
            id: h.id,
            endpoint_id: h.endpoint_id,
            url: redact_url(&h.url),
            queues: h.queues.clone(),
            enabled: h.enabled,
            disabled_reason: h.disabled_reason,
            health: HookHealthView {
                consecutive_failures: h.consecutive_failures,
                last_status: h.last_status,
                last_error: h.last_error.clone(),
                last_attempt_at: h.last_attempt_at,
            },
            previous_secret_valid_until: h.previous_secret_valid_until(Utc::now()),
            created_at: h.created_at,
        }
    }
}

/// The per-endpoint ceiling.
#[derive(Debug, Serialize, ToSchema)]
pub struct HookCeilingView {
    /// `SWITCHBOARD_NOTIFY_HOOK_MAX`.
    pub max: u32,
    /// Hooks the endpoint holds.
    pub used: usize,
}

/// An endpoint's hooks and its ceiling.
#[derive(Debug, Serialize, ToSchema)]
pub struct HookList {
    /// The endpoint's hooks, oldest first.
    pub hooks: Vec<HookView>,
    /// How many hooks the endpoint may hold, and holds.
    pub ceiling: HookCeilingView,
}

impl HookList {
    /// The listing of `rows` under a ceiling of `max`.
    pub fn new(rows: &[HookRow], max: u32) -> Self {
        HookList {
            hooks: rows.iter().map(HookView::from).collect(),
            ceiling: HookCeilingView { max, used: rows.len() },
        }
    }
}

/// Rotation answer: the new secret is shown here once.
#[derive(Serialize, ToSchema)]
pub struct RotatedHookView {
    /// The rotated hook.
    pub hook_id: HookId,
    /// The new secret (`whsec_` + base64 of 32 random bytes), shown only in this answer;
    /// verify `webhook-signature` with it.
    pub signing_secret: String,
    /// Until then deliveries carry a signature with the previous secret as well.
    pub previous_secret_valid_until: Option<DateTime<Utc>>,
    /// Whether the hook delivers (a rotation re-enables a hook failures disabled).
    pub enabled: bool,
}

impl From<RotatedHook> for RotatedHookView {
    fn from(r: RotatedHook) -> Self {
        RotatedHookView {
            hook_id: r.hook.id,
            previous_secret_valid_until: r.hook.previous_valid_until,
            enabled: r.hook.enabled,
            signing_secret: r.signing_secret,
        }
    }
}

/// Deletion answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeletedHookView {
    /// The deleted hook.
    pub hook_id: HookId,
    /// Always true: nothing more is sent to it.
    pub deleted: bool,
}
