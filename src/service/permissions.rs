//! Who may do what: every action the API and the Board offer, and the one rule each
//! obeys. This table is the permission model; the services check it
//! ([`check`]) before they touch the store, every route names its action
//! ([`crate::web::routes::Entry`]), and the permission test walks every route of
//! both surfaces against it (`tests/it/permissions`). The README's permission table is
//! this one, in prose.
//!
//! Tenancy, whatever the rule: a human's reach is the scopes they belong to, an
//! endpoint's reach is itself. A resource outside the caller's reach answers exactly
//! like one that does not exist (404), never 403, so no answer tells anyone what other
//! people own. 403 is kept for a caller who can see the resource but may not do this to
//! it: a team member who is not an admin, an endpoint without the verb.

use crate::domain::grants::Verb;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::error::{Error, Result};

use super::principal::Principal;

/// Who may perform an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Anyone: the route checks a credential of its own (an ingest token, the metrics
    /// token, a password) or none at all.
    Open,
    /// Any signed-in human; what they see is limited to their scopes.
    Human,
    /// A member of the resource's scope, in any role.
    Member,
    /// An admin of the resource's scope (everyone is the admin of their personal
    /// scope). A member who is not an admin is refused (403).
    Admin,
    /// An endpoint token granted this verb, on its own endpoint's resources. Without
    /// the grant: 403.
    Grant(Verb),
    /// Any valid endpoint token, for its own endpoint.
    Endpoint,
}

/// Every action a caller can ask for, on either surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Vend an endpoint (its token shown once), in one's own scope or a team one administers.
    VendEndpoint,
    /// List the endpoints in one's scopes.
    ListEndpoints,
    /// See one endpoint with its webhooks and hooks.
    ShowEndpoint,
    /// Revoke an endpoint: its token stops working, its live work becomes dead letters.
    RevokeEndpoint,
    /// Let another owner's webhooks fan out onto an endpoint.
    GrantFanout,
    /// Withdraw a fan-out grant.
    RevokeFanout,
    /// Create a webhook on an endpoint (ingest token and signing secret shown once).
    CreateWebhook,
    /// List the webhooks in one's scopes.
    ListWebhooks,
    /// See one webhook and its rules.
    ShowWebhook,
    /// Replace a webhook's routing rules.
    SaveRules,
    /// Try rules on a sample delivery; changes nothing.
    DryRunRules,
    /// Add a hook to an endpoint (signing secret shown once).
    CreateHook,
    /// List hooks with their health.
    ListHooks,
    /// Replace a hook's signing secret.
    RotateHook,
    /// Switch a hook on.
    EnableHook,
    /// Switch a hook off.
    DisableHook,
    /// Delete a hook.
    DeleteHook,
    /// An agent adds a hook to its own endpoint.
    AgentCreateHook,
    /// An agent lists its own endpoint's hooks.
    AgentListHooks,
    /// An agent rotates one of its own hooks' secret.
    AgentRotateHook,
    /// An agent deletes one of its own hooks.
    AgentDeleteHook,
    /// An agent lists its owner's sinks (grant `notifications`).
    AgentListSinks,
    /// An agent adds or replaces a sink of its owner's, by name (grant `notifications`).
    AgentPutSink,
    /// An agent deletes a sink of its owner's (grant `notifications`).
    AgentDeleteSink,
    /// An agent sends a sink of its owner's a test message (grant `notifications`).
    AgentTestSink,
    /// An agent replaces a sink's subscriptions (grant `notifications`).
    AgentSetSubscriptions,
    /// An agent pages its owner through the owner's subscribed sinks (grant `notify_owner`).
    PageOwner,
    /// Store a credential in the connection vault (write-only).
    CreateConnection,
    /// List connections (names, kinds, fingerprints; never a secret).
    ListConnections,
    /// Replace a connection's secret.
    RotateConnection,
    /// Delete a connection no sink uses.
    DeleteConnection,
    /// Test a cairn connection (one whoami call to its Cairn).
    TestConnection,
    /// Add a notification sink.
    CreateSink,
    /// List sinks.
    ListSinks,
    /// Switch a sink on or off, or change its budget.
    UpdateSink,
    /// Delete a sink and its subscriptions.
    DeleteSink,
    /// Send a sink one harmless test message.
    TestSink,
    /// Replace a sink's subscriptions.
    SetSubscriptions,
    /// See a sink's subscriptions.
    ShowSubscriptions,
    /// See a sink's delivery log.
    ListSinkSends,
    /// Schedule a queue digest.
    CreateDigest,
    /// List digests.
    ListDigests,
    /// See one digest with its recent send times.
    ShowDigest,
    /// Change a digest.
    UpdateDigest,
    /// Delete a digest.
    DeleteDigest,
    /// Measure and write a digest now, sending nothing.
    PreviewDigest,
    /// List deliveries held in quarantine.
    ListHeld,
    /// See one held delivery with its payload.
    ShowHeld,
    /// Release a held delivery: routed again, its sender trusted.
    ReleaseHeld,
    /// Discard a held delivery.
    DiscardHeld,
    /// See one todo with its attempts.
    ShowTodo,
    /// The Board's Todos view: the pills, their counts and one pill's list.
    ListTodos,
    /// List dead letters.
    ListDeadLetters,
    /// Fail a todo as an operator (a retry below the cap, a dead letter at it).
    OperatorFail,
    /// Retry a failed todo now, its attempt counter reset.
    RetryNow,
    /// Retry every dead letter matching a search.
    BulkRetry,
    /// Pause or resume a queue of an endpoint, or change its admission limits.
    SetAdmission,
    /// See the admission budgets of an endpoint's queues.
    ListAdmission,
    /// The Queues overview: where every queue in reach stands.
    ListQueues,
    /// One queue's page: how it stands and its last day.
    ShowQueue,
    /// An agent lists its endpoint's drainable todos.
    AgentListTodos,
    /// An agent reads one of its endpoint's todos.
    AgentGetTodo,
    /// An agent creates a todo on its endpoint.
    AgentCreateTodo,
    /// An agent creates many todos on its endpoint in one transaction.
    AgentCreateTodos,
    /// Claim the oldest pending todo.
    ClaimNext,
    /// Claim one todo by id.
    Claim,
    /// Extend a lease.
    Heartbeat,
    /// Complete a claimed todo.
    Complete,
    /// Complete many claimed todos in one transaction.
    CompleteMany,
    /// Fail a claimed todo.
    Fail,
    /// Fail many claimed todos in one transaction.
    FailMany,
    /// Hand a claimed todo back.
    Release,
    /// Interrupt a claimed todo.
    Interrupt,
    /// Resume an interrupted todo.
    Resume,
    /// An agent says it is working its queues.
    ClockIn,
    /// An agent says it has stopped.
    ClockOut,
    /// A provider delivers a webhook (the ingest token is the credential).
    Ingest,
    /// Liveness and readiness probes.
    Health,
    /// Scrape the metrics (the metrics token is the credential).
    ScrapeMetrics,
    /// Read the OpenAPI document.
    ReadApiDocument,
    /// The Board's sign-in form and its submission (the password is the credential).
    SignIn,
    /// End one's Board session.
    SignOut,
    /// The Board's stylesheet and its home redirect.
    BoardAssets,
}

impl Action {
    /// The rule `self` obeys. Exhaustive on purpose: a new action does not compile
    /// until it has a rule.
    pub fn rule(self) -> Rule {
        use Action::*;
        match self {
            ListEndpoints | ListWebhooks | ListHeld | ListTodos | ListDeadLetters | ListConnections | ListSinks
            | ListDigests | ListQueues => Rule::Human,
            ShowEndpoint | ShowWebhook | DryRunRules | ListHooks | ShowHeld | ShowTodo | ShowSubscriptions
            | ListSinkSends | ShowDigest | PreviewDigest | ListAdmission | ShowQueue => Rule::Member,
            CreateDigest | UpdateDigest | DeleteDigest => Rule::Admin,
            VendEndpoint | RevokeEndpoint | GrantFanout | RevokeFanout | CreateWebhook | SaveRules | CreateHook
            | RotateHook | EnableHook | DisableHook | DeleteHook | ReleaseHeld | DiscardHeld | CreateConnection
            | RotateConnection | DeleteConnection | TestConnection | CreateSink | UpdateSink | DeleteSink
            | TestSink | SetSubscriptions | SetAdmission => Rule::Admin,
            // Operator fail and retries move work that any member may see and drain;
            // they change no configuration, so membership is enough.
            OperatorFail | RetryNow | BulkRetry => Rule::Member,
            AgentCreateHook | AgentListHooks | AgentRotateHook | AgentDeleteHook => Rule::Grant(Verb::ManageHooks),
            AgentListSinks | AgentPutSink | AgentDeleteSink | AgentTestSink | AgentSetSubscriptions => {
                Rule::Grant(Verb::Notifications)
            }
            PageOwner => Rule::Grant(Verb::PageOwner),
            AgentListTodos => Rule::Grant(Verb::ListTodos),
            AgentGetTodo => Rule::Grant(Verb::GetTodo),
            AgentCreateTodo | AgentCreateTodos => Rule::Grant(Verb::CreateTodo),
            ClaimNext => Rule::Grant(Verb::ClaimNext),
            Claim => Rule::Grant(Verb::Claim),
            Heartbeat => Rule::Grant(Verb::Heartbeat),
            Complete | CompleteMany => Rule::Grant(Verb::Complete),
            Fail | FailMany => Rule::Grant(Verb::Fail),
            Release => Rule::Grant(Verb::Release),
            Interrupt | Resume => Rule::Grant(Verb::Interrupt),
            ClockIn | ClockOut => Rule::Endpoint,
            Ingest | Health | ScrapeMetrics | ReadApiDocument | SignIn | SignOut | BoardAssets => Rule::Open,
        }
    }

    /// What the action does, as a refusal can say it ("only a team admin may …").
    pub fn describe(self) -> &'static str {
        use Action::*;
        match self {
            VendEndpoint => "vend endpoints for this owner",
            ListEndpoints => "list endpoints",
            ShowEndpoint => "see this endpoint",
            RevokeEndpoint => "revoke the team's endpoints",
            GrantFanout | RevokeFanout => "change the endpoint's fan-out grants",
            CreateWebhook => "add webhooks to the team's endpoints",
            ListWebhooks => "list webhooks",
            ShowWebhook => "see this webhook",
            SaveRules => "change the team's rules",
            DryRunRules => "try this webhook's rules",
            CreateHook | RotateHook | EnableHook | DisableHook | DeleteHook => "change the team's notify hooks",
            ListHooks => "see this endpoint's notify hooks",
            AgentCreateHook | AgentListHooks | AgentRotateHook | AgentDeleteHook => "manage notify hooks",
            AgentListSinks | AgentPutSink | AgentDeleteSink | AgentTestSink | AgentSetSubscriptions => {
                "manage the owner's notification sinks"
            }
            PageOwner => "page the owner",
            CreateConnection | RotateConnection | DeleteConnection => "manage the team's connections",
            ListConnections => "list connections",
            TestConnection => "test the team's connections",
            CreateSink | UpdateSink | DeleteSink | SetSubscriptions => "manage the team's sinks",
            TestSink => "test the team's sinks",
            ListSinks => "list sinks",
            ShowSubscriptions => "see this sink's subscriptions",
            ListSinkSends => "see this sink's deliveries",
            CreateDigest | UpdateDigest | DeleteDigest => "manage the team's digests",
            ListDigests => "list digests",
            ShowDigest => "see this digest",
            PreviewDigest => "preview this digest",
            ListHeld => "list held deliveries",
            ShowHeld => "see this held delivery",
            ReleaseHeld | DiscardHeld => "release or discard the team's held deliveries",
            ShowTodo | AgentGetTodo => "see this todo",
            ListTodos | AgentListTodos => "list todos",
            ListDeadLetters => "list dead letters",
            OperatorFail => "fail this todo",
            RetryNow | BulkRetry => "retry dead letters",
            SetAdmission => "pause the team's queues or change their admission limits",
            ListAdmission => "see this endpoint's queue admission",
            ListQueues => "list queues",
            ShowQueue => "see this queue",
            AgentCreateTodo | AgentCreateTodos => "create todos",
            ClaimNext | Claim => "claim todos",
            Heartbeat => "extend leases",
            Complete | CompleteMany => "complete todos",
            Fail | FailMany => "fail todos",
            Release => "release todos",
            Interrupt | Resume => "interrupt and resume todos",
            ClockIn | ClockOut => "clock in and out",
            Ingest => "deliver webhooks",
            Health => "probe health",
            ScrapeMetrics => "scrape metrics",
            ReadApiDocument => "read the API document",
            SignIn => "sign in",
            SignOut => "sign out",
            BoardAssets => "load the Board's assets",
        }
    }
}

/// Where a resource lives: the scope that owns it and, for an endpoint's own
/// resources, the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The owning scope.
    pub scope: ScopeId,
    /// The endpoint it belongs to, when it belongs to one.
    pub endpoint: Option<EndpointId>,
}

impl Place {
    /// A resource of `scope` that belongs to no particular endpoint.
    pub fn scope(scope: ScopeId) -> Self {
        Place { scope, endpoint: None }
    }

    /// A resource of `endpoint`, owned by `scope`.
    pub fn endpoint(scope: ScopeId, endpoint: EndpointId) -> Self {
        Place { scope, endpoint: Some(endpoint) }
    }
}

/// Whether `who` may perform `action` on a resource at `at` (none: an action on no
/// particular resource, such as a listing). Refuses with 404 when the resource is out
/// of the caller's reach, 403 when it is within reach but the rule is not met, 401
/// never (the adapters authenticate before they call).
pub fn check(action: Action, who: Principal<'_>, at: Option<Place>) -> Result<()> {
    match (action.rule(), who) {
        (Rule::Open, _) => Ok(()),
        (Rule::Human, Principal::Human(_)) => Ok(()),
        (Rule::Member, Principal::Human(reach)) => match at {
            Some(place) if !reach.reaches(place.scope) => Err(Error::NotFound),
            _ => Ok(()),
        },
        (Rule::Admin, Principal::Human(reach)) => match at {
            Some(place) if !reach.reaches(place.scope) => Err(Error::NotFound),
            Some(place) if !reach.is_admin_of(place.scope) => {
                Err(Error::Forbidden(format!("only a team admin may {}", action.describe())))
            }
            _ => Ok(()),
        },
        (Rule::Grant(verb), Principal::Endpoint(me)) => {
            if !me.may(verb) {
                return Err(Error::Forbidden(format!("this endpoint is not granted {verb}")));
            }
            own(me, at)
        }
        (Rule::Endpoint, Principal::Endpoint(me)) => own(me, at),
        (Rule::Human | Rule::Member | Rule::Admin, Principal::Endpoint(_)) => {
            Err(Error::Forbidden(format!("an endpoint token may not {}", action.describe())))
        }
        (Rule::Grant(_) | Rule::Endpoint, Principal::Human(_)) => {
            Err(Error::Forbidden(format!("only an endpoint token may {}", action.describe())))
        }
    }
}

/// An endpoint reaches its own resources only; anything else is not found.
fn own(me: &crate::store::endpoints::AgentPrincipal, at: Option<Place>) -> Result<()> {
    match at {
        Some(place) if place.scope != me.scope_id || place.endpoint.is_some_and(|e| e != me.endpoint_id) => {
            Err(Error::NotFound)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
