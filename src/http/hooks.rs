//! Notify hooks on the API, the part operator and agent routes share: the settings
//! they obey (kill switch, ceiling, plain http), the JSON shapes, and the create path.
//! Answers show a hook's URL with its query redacted; the signing secret appears only
//! in the create and rotate answers, which do not implement Debug.

use actix_web::HttpResponse;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::AppState;
use crate::config::Settings;
use crate::domain::hooks::{HookDisabledReason, HookSpec, redact_url};
use crate::domain::ids::{EndpointId, HookId, ScopeId};
use crate::error::{Error, Result};
use crate::outbound::CheckError;
use crate::store::hooks::{CreatedHook, HookReach, HookRow, RotatedHook};
use crate::store::tenancy::Reach;

/// What the hook routes obey, from [`Settings`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookSettings {
    /// `SWITCHBOARD_NOTIFY_HOOKS_ENABLED`: the kill switch.
    pub enabled: bool,
    /// `SWITCHBOARD_NOTIFY_HOOK_MAX`: hooks per endpoint (0 also switches hooks off).
    pub max: u32,
    /// `SWITCHBOARD_PUSH_ALLOW_HTTP`: plain-http URLs are accepted.
    pub allow_http: bool,
}

impl HookSettings {
    /// The hook settings of `settings`.
    pub fn from_settings(settings: &Settings) -> Self {
        HookSettings {
            enabled: settings.notify_hooks_enabled,
            max: settings.notify_hook_max,
            allow_http: settings.push_allow_http,
        }
    }

    /// Whether hooks may be created at all (the kill switch is off and the ceiling above 0).
    pub fn accepting(&self) -> bool {
        self.enabled && self.max > 0
    }

    /// Refuses creation while hooks are switched off: `409 conflict` naming the setting
    /// (not 503, which would claim a passing outage and hide the message). Checked
    /// before the URL is, so a refused create costs no DNS lookup.
    pub fn refuse_when_off(&self) -> Result<()> {
        if self.accepting() {
            Ok(())
        } else {
            Err(Error::Conflict(
                "notify hooks are switched off on this instance \
                 (SWITCHBOARD_NOTIFY_HOOKS_ENABLED=false or SWITCHBOARD_NOTIFY_HOOK_MAX=0)"
                    .into(),
            ))
        }
    }
}

/// Hook creation request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateHookBody {
    /// Where notifications are posted: https (http only with `SWITCHBOARD_PUSH_ALLOW_HTTP`),
    /// at most 2 048 bytes, no user name or password.
    pub url: String,
    /// Only todos on these queues (at most 32; duplicates collapse); absent or empty:
    /// every queue.
    pub queues: Option<Vec<String>>,
}

/// Hook creation answer: the signing secret is shown here once.
#[derive(Serialize, ToSchema)]
pub struct CreatedHookView {
    pub id: HookId,
    /// The URL with its query redacted.
    pub url: String,
    pub queues: Vec<String>,
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
    pub last_status: Option<i32>,
    /// `redirect`, `client_error`, `server_error`, `timeout`, `network`, `tls` or
    /// `rejected_ssrf`; null after a success.
    pub last_error: Option<String>,
    pub last_attempt_at: Option<DateTime<Utc>>,
}

/// A hook as listed (never its secrets).
#[derive(Debug, Serialize, ToSchema)]
pub struct HookView {
    pub id: HookId,
    pub endpoint_id: EndpointId,
    /// The URL with its query redacted.
    pub url: String,
    pub queues: Vec<String>,
    pub enabled: bool,
    pub disabled_reason: Option<HookDisabledReason>,
    pub health: HookHealthView,
    /// While set, deliveries are signed with the previous secret too.
    pub previous_secret_valid_until: Option<DateTime<Utc>>,
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
    pub hooks: Vec<HookView>,
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
    pub hook_id: HookId,
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
    pub hook_id: HookId,
    pub deleted: bool,
}

/// The create path both route families take once they know whose endpoint it is:
/// kill switch, then the URL and queue checks, then the store (ceiling, sealing).
pub async fn create(
    state: &AppState,
    owner: ScopeId,
    endpoint: EndpointId,
    body: CreateHookBody,
) -> Result<HttpResponse> {
    let queues = body.queues.unwrap_or_default();
    let created = create_hook(state, owner, endpoint, &body.url, &queues).await?;
    Ok(HttpResponse::Created().json(CreatedHookView::from(created)))
}

/// Creates a hook on `endpoint` (owned by `owner`; the caller has checked both) for
/// the API and the Board alike: refused while hooks are switched off, then the URL and
/// queue checks, then the outbound guard at save time, then the store (ceiling,
/// sealing). The dispatcher's cache forgets the endpoint. The signing secret is in
/// the answer, once.
pub async fn create_hook(
    state: &AppState,
    owner: ScopeId,
    endpoint: EndpointId,
    url: &str,
    queues: &[String],
) -> Result<CreatedHook> {
    state.hooks.refuse_when_off()?;
    let spec =
        HookSpec::parse(url, queues, state.hooks.allow_http).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    // The same guard every delivery dials through: a private, loopback or metadata
    // target (unless allowlisted) is refused now, not only at the first attempt.
    state.guard.check(spec.url()).await.map_err(|e| match e {
        CheckError::Refused(refusal) => Error::InvalidArgument(format!("url: refused: {refusal}")),
        CheckError::Dns(_) => Error::InvalidArgument("url: its host does not resolve".into()),
    })?;
    let created = state.store.create_hook(&state.vault, owner, endpoint, &spec, state.hooks.max).await?;
    state.hook_cache.evict(endpoint);
    Ok(created)
}

/// Refuses unless `reach` administers `scope`: changing a team's hooks takes an admin.
pub fn require_admin(reach: &Reach, scope: ScopeId) -> Result<()> {
    if reach.is_admin_of(scope) {
        Ok(())
    } else {
        Err(Error::Forbidden("only a team admin may change the team's notify hooks".into()))
    }
}

/// A hook a human may change: in their scopes (else not found) and in one they
/// administer (else forbidden). Returns that scope, to change the hook under.
pub async fn changeable(state: &AppState, reach: &Reach, id: HookId) -> Result<ScopeId> {
    let scopes = reach.scope_ids();
    let (_, scope) = state.store.hook_in(HookReach::Scopes(&scopes), id).await?;
    require_admin(reach, scope)?;
    Ok(scope)
}

/// Rotates a hook in `scope` (new secret answered once); the dispatcher's cache
/// forgets its endpoint, since a rotation may re-enable a hook failures disabled.
pub async fn rotate(state: &AppState, scope: ScopeId, id: HookId) -> Result<RotatedHook> {
    let rotated = state.store.rotate_hook(&state.vault, HookReach::Scopes(&[scope]), id).await?;
    state.hook_cache.evict(rotated.hook.endpoint_id);
    Ok(rotated)
}

/// Switches a hook in `scope` on or off; the dispatcher's cache forgets its endpoint.
pub async fn set_enabled(state: &AppState, scope: ScopeId, id: HookId, enabled: bool) -> Result<HookRow> {
    let row = state.store.set_hook_enabled(HookReach::Scopes(&[scope]), id, enabled).await?;
    state.hook_cache.evict(row.endpoint_id);
    Ok(row)
}

/// Deletes a hook in `scope`; the dispatcher's cache is cleared.
pub async fn delete(state: &AppState, scope: ScopeId, id: HookId) -> Result<()> {
    state.store.delete_hook(HookReach::Scopes(&[scope]), id).await?;
    // A first attempt uses the dispatcher's cached match: it must not outlive the hook.
    state.hook_cache.clear();
    Ok(())
}
