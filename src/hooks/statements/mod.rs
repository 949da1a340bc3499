//! Hooks as stored: management (create under the ceiling, list, rotate, enable,
//! disable, delete) in [`manage`], and what a ring reads and writes (matching hooks,
//! the re-check before every attempt, health) in [`targets`]. Secrets are kept
//! sealed by the vault; the store never calls the network.

pub mod doorbells;
mod manage;
mod targets;

use chrono::{DateTime, Utc};
use diesel::prelude::*;

use crate::db::schema::notify_hooks;
use crate::domain::ids::{EndpointId, HookId, ScopeId};
use crate::hooks::rules::hook::{HookDisabledReason, redact_url};

pub use manage::{CreatedHook, RotatedHook};
pub use targets::HookTarget;

/// A hook as stored, without its secrets. Its Debug form redacts the URL's query.
#[derive(Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = notify_hooks, check_for_backend(diesel::pg::Pg))]
pub struct HookRow {
    /// The hook.
    pub id: HookId,
    /// The endpoint whose todos it announces.
    pub endpoint_id: EndpointId,
    /// Where rings go (its query may hold a credential: show it redacted).
    pub url: String,
    /// Queue filter; empty: every queue.
    pub queues: Vec<String>,
    /// Whether it rings.
    pub enabled: bool,
    /// Why not, when it does not.
    pub disabled_reason: Option<HookDisabledReason>,
    /// Until when the secret a rotation replaced still signs (may lie in the past
    /// until the sweep clears it).
    pub previous_valid_until: Option<DateTime<Utc>>,
    /// Failed rings in a row (reset by a success).
    pub consecutive_failures: i32,
    /// HTTP status of the last attempt, if it got one.
    pub last_status: Option<i32>,
    /// Class of the last failure (`timeout`, `network`, `server_error`, …); none after a success.
    pub last_error: Option<String>,
    /// When the last attempt ended.
    pub last_attempt_at: Option<DateTime<Utc>>,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
}

impl std::fmt::Debug for HookRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRow")
            .field("id", &self.id)
            .field("endpoint_id", &self.endpoint_id)
            .field("url", &redact_url(&self.url))
            .field("queues", &self.queues)
            .field("enabled", &self.enabled)
            .field("disabled_reason", &self.disabled_reason)
            .field("consecutive_failures", &self.consecutive_failures)
            .finish_non_exhaustive()
    }
}

impl HookRow {
    /// The end of the previous secret's grace, while it lasts.
    pub fn previous_secret_valid_until(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.previous_valid_until.filter(|until| *until > now)
    }
}

/// Whose hooks a caller may touch. Every management query takes one, first.
#[derive(Debug, Clone, Copy)]
pub enum HookReach<'a> {
    /// An operator: hooks on endpoints in any of these scopes.
    Scopes(&'a [ScopeId]),
    /// An agent: its own endpoint's hooks, nothing else in its scope.
    Endpoint {
        /// The endpoint's owner scope.
        scope: ScopeId,
        /// The endpoint.
        endpoint: EndpointId,
    },
}

impl HookReach<'_> {
    /// The binds of [`REACH_SQL`]: scope ids (`$1`) and the one endpoint, if any (`$2`).
    fn binds(self) -> (Vec<uuid::Uuid>, Option<uuid::Uuid>) {
        match self {
            HookReach::Scopes(scopes) => (scopes.iter().map(|s| s.0).collect(), None),
            HookReach::Endpoint { scope, endpoint } => (vec![scope.0], Some(endpoint.0)),
        }
    }
}

/// The reach condition on a `notify_hooks` row, binding `$1` (scope ids) and `$2`
/// (one endpoint or NULL): an operator sees hooks on endpoints in their scopes; an
/// agent its own endpoint's.
const REACH_SQL: &str = "notify_hooks.endpoint_id IN (SELECT e.id FROM endpoints e \
     WHERE e.scope_id = ANY($1) AND ($2::uuid IS NULL OR e.id = $2))";

/// [`REACH_SQL`] for a change (rotate, switch, delete): an agent changes only the hooks
/// an agent created. A hook a human put on its endpoint (or one an earlier release made,
/// which did not record who) it may list but not rotate, since a rotation answers the
/// new signing secret, with which it could sign doorbells that human's receiver trusts.
const CHANGE_SQL: &str = "notify_hooks.endpoint_id IN (SELECT e.id FROM endpoints e \
     WHERE e.scope_id = ANY($1) AND ($2::uuid IS NULL OR e.id = $2)) \
     AND ($2::uuid IS NULL OR notify_hooks.created_by_agent IS TRUE)";

/// The columns of [`HookRow`], for `RETURNING` and raw selects.
const HOOK_COLUMNS: &str = "notify_hooks.id, notify_hooks.endpoint_id, notify_hooks.url, notify_hooks.queues, \
     notify_hooks.enabled, notify_hooks.disabled_reason, notify_hooks.previous_valid_until, \
     notify_hooks.consecutive_failures, notify_hooks.last_status, notify_hooks.last_error, \
     notify_hooks.last_attempt_at, notify_hooks.created_at, notify_hooks.updated_at";
