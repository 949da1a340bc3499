//! Notification sinks: which connection of the same scope (Gotify, or an Apprise API
//! server) an owner's notifications go out with, within which budget, and for which
//! events (subscriptions). A sink's destination is its connection's: a sink never
//! chooses where a secret goes (a base URL it names must be that destination, else
//! `destination_mismatch`). Team admins manage a team's sinks; every member sees them.
//! Every destination passes the outbound guard when its connection is saved and on
//! every dial. The checks and the scoped cores here are shared with the agent's
//! `notifications` verbs ([`super::agent_sinks`]), which act in the endpoint's own
//! owner scope.

pub mod agent;
pub mod connections;
pub mod owner_page;

use crate::domain::ids::{ConnectionId, EndpointId, HumanId, ScopeId, SinkId, WebhookId};
use crate::domain::text::valid_queue_name;
use crate::error::{Error, Result};
use crate::service::Services;
use crate::service::owners::scope_to_create_in;
use crate::service::permissions::{Action, Place, check};
use crate::service::principal::Principal;
use crate::sinks::rules::vocabulary::{AppriseMode, ConnectionKind, Severity, SinkEvent, SinkKind};
use crate::sinks::service::connections::{checked_name, unbound};
use crate::sinks::statements::{NewSink, NewSubscription, SinkChange, SinkRow, SubscriptionRow};
use crate::store::tenancy::Reach;

/// What a new sink is to be.
#[derive(Debug, Clone)]
pub struct CreateSink {
    /// Unique in the owner scope, 1–100 characters.
    pub name: String,
    /// What the sink is, its name and owner aside.
    pub spec: SinkSpec,
    /// `team:T` or an email the caller administers; none: their own scope.
    pub owner: Option<String>,
    /// Its subscriptions, checked as [`set_subscriptions`] checks them; none: the
    /// default ([`default_subscriptions`]), so that a new sink hears dead letters;
    /// `Some(vec![])`: none at all.
    pub subscriptions: Option<Vec<Subscription>>,
}

/// What a new sink hears unless its creator says otherwise (SPEC 13): the dead letters
/// (`todo.dead_lettered`, `relay.exhausted`) of every queue of its owner, without
/// excerpts. A sink that hears nothing would pass its test send and still never wake
/// anyone.
pub fn default_subscriptions() -> Vec<Subscription> {
    vec![Subscription {
        events: vec![SinkEvent::DeadLettered, SinkEvent::RelayExhausted],
        min_severity: Some(Severity::Low),
        include_excerpt: Some(false),
        ..Subscription::default()
    }]
}

/// Adds a sink in the caller's scope (or a team they administer), posting with one of
/// that scope's bound connections to its destination, with its subscriptions (the
/// default when none are given) written in the same transaction. Nothing is stored
/// when anything is refused (see [`resolved`] and [`checked_subscriptions`]).
pub async fn create(s: &Services, who: &Reach, c: CreateSink) -> Result<(SinkRow, Vec<SubscriptionRow>)> {
    let subs = checked_subscriptions(c.subscriptions.unwrap_or_else(default_subscriptions))?;
    let scope = scope_to_create_in(s, who, c.owner.as_deref(), Action::CreateSink).await?;
    let checked = resolved(s, scope, &c.name, c.spec).await?;
    s.store.create_sink(new_sink(s, scope, checked, Some(who.human)), s.sinks.max, subs).await
}

/// What a sink is to be, its name and owner aside: what the operator's create and the
/// agent's create-or-replace both take.
#[derive(Debug, Clone)]
pub struct SinkSpec {
    /// Gotify or Apprise; none: the connection's kind.
    pub kind: Option<SinkKind>,
    /// Where it posts, for a client that still names it: must be the connection's
    /// destination (`destination_mismatch` otherwise); none takes the connection's.
    pub base_url: Option<String>,
    /// A bound connection of the same scope and kind.
    pub connection_id: ConnectionId,
    /// Apprise only; default `key`.
    pub apprise_mode: Option<AppriseMode>,
    /// Default true for a new sink; none leaves a replaced sink as it was.
    pub enabled: Option<bool>,
}

/// A sink's name and spec, checked against its scope: whoever asks gets the same checks.
#[derive(Debug, Clone)]
pub(super) struct CheckedSink {
    name: String,
    kind: SinkKind,
    connection_id: ConnectionId,
    apprise_mode: Option<AppriseMode>,
    enabled: Option<bool>,
}

/// Checks a sink for `scope`: its name; its connection, which must be the scope's, of the
/// sink's kind (`reference_out_of_scope`) and bound to a destination (`conflict`); a base
/// URL it names, which must be that destination (`destination_mismatch`); its mode
/// against its kind; and a stateless Apprise connection's URLs against the scheme
/// allowlist (`forbidden_scheme`). The store takes the destination from the connection
/// again in the statement that writes the sink, so a rotation racing this check still
/// leaves the sink on its connection's destination.
pub(super) async fn resolved(s: &Services, scope: ScopeId, name: &str, spec: SinkSpec) -> Result<CheckedSink> {
    let name = checked_name(name)?;
    let out_of_scope = || {
        Error::ReferenceOutOfScope(format!(
            "reference_out_of_scope: connection {} is unknown, another owner's, or not a {} connection",
            spec.connection_id,
            spec.kind.map_or("gotify or apprise", SinkKind::as_str)
        ))
    };
    let connection = match s.store.connection_in(&[scope], spec.connection_id).await {
        Ok(c) => c,
        Err(Error::NotFound) => return Err(out_of_scope()),
        Err(e) => return Err(e),
    };
    let kind = match (connection.kind, spec.kind) {
        (ConnectionKind::Gotify, None | Some(SinkKind::Gotify)) => SinkKind::Gotify,
        (ConnectionKind::Apprise, None | Some(SinkKind::Apprise)) => SinkKind::Apprise,
        _ => return Err(out_of_scope()),
    };
    let destination = match (connection.bound, connection.base_url.as_deref()) {
        (true, Some(destination)) => destination,
        _ => return Err(unbound()),
    };
    if let Some(asked) = spec.base_url.as_deref()
        && !crate::sinks::rules::destination::same(asked, destination)
    {
        return Err(Error::DestinationMismatch(
            "base_url is not the destination of the connection: a sink posts only where its connection is bound \
             (omit base_url; an admin changes a connection's destination by rotating it with its secret)"
                .into(),
        ));
    }
    let apprise_mode = match (kind, spec.apprise_mode) {
        (SinkKind::Apprise, mode) => Some(mode.unwrap_or(AppriseMode::Key)),
        (SinkKind::Gotify, None) => None,
        (SinkKind::Gotify, Some(_)) => return Err(Error::invalid("apprise_mode", "only an apprise sink has a mode")),
    };
    if apprise_mode == Some(AppriseMode::Urls) {
        let urls = s.store.connection_secret(&s.vault, scope, spec.connection_id).await?;
        s.sinks.schemes.check(&urls).map_err(connections::scheme_refusal)?;
    }
    Ok(CheckedSink { name, kind, connection_id: spec.connection_id, apprise_mode, enabled: spec.enabled })
}

/// The row to store for `sink` in `scope`, with the instance's default budget.
fn new_sink(s: &Services, scope: ScopeId, sink: CheckedSink, by: Option<HumanId>) -> NewSink {
    // Both are bounded far below i32::MAX by the settings' parsers.
    let budget = i32::try_from(s.sinks.budget_per_hour).unwrap_or(i32::MAX);
    let burst = i32::try_from(s.sinks.burst).unwrap_or(i32::MAX);
    NewSink {
        scope,
        name: sink.name,
        kind: sink.kind,
        connection_id: sink.connection_id,
        apprise_mode: sink.apprise_mode,
        enabled: sink.enabled.unwrap_or(true),
        budget_per_hour: budget,
        burst,
        by,
    }
}

/// Creates the sink of `scope` named as `sink` is, or replaces that sink's kind,
/// connection (and so destination), mode and (when given) `enabled`, keeping its budget
/// and subscriptions (their payload excerpts dropped: those are the owner's to turn on);
/// answers it and whether it was created. `subs` (checked) replaces its subscriptions
/// when given; otherwise a created sink gets [`default_subscriptions`]. Written as an
/// agent's (`by` none): the upgrade never trusts such a sink's destination.
pub(super) async fn put_in(
    s: &Services,
    scope: ScopeId,
    sink: CheckedSink,
    subs: Option<Vec<NewSubscription>>,
) -> Result<(SinkRow, bool)> {
    let keep_enabled = sink.enabled.is_none();
    let on_create = checked_subscriptions(default_subscriptions())?;
    s.store.put_sink(new_sink(s, scope, sink, None), keep_enabled, s.sinks.max, subs, on_create).await
}

/// Every sink in the caller's scopes.
pub async fn list(s: &Services, who: &Reach) -> Result<Vec<SinkRow>> {
    check(Action::ListSinks, Principal::Human(who), None)?;
    s.store.list_sinks(&who.scope_ids()).await
}

/// How many subscriptions each sink in the caller's scopes holds (none listed: none).
pub async fn subscription_counts(s: &Services, who: &Reach) -> Result<std::collections::HashMap<SinkId, i64>> {
    check(Action::ListSinks, Principal::Human(who), None)?;
    s.store.subscription_counts(&who.scope_ids()).await
}

/// A sink the caller may act on with `action` (404 outside their scopes, 403 for a
/// member where the action takes an admin).
async fn sink_for(s: &Services, who: &Reach, action: Action, id: SinkId) -> Result<SinkRow> {
    let sink = s.store.sink_in(&who.scope_ids(), id).await?;
    check(action, Principal::Human(who), Some(Place::scope(sink.scope_id)))?;
    Ok(sink)
}

/// Switches a sink on or off or changes its budget, for an admin of its scope.
pub async fn update(s: &Services, who: &Reach, id: SinkId, change: SinkChange) -> Result<SinkRow> {
    let within = |v: i32, max: u32| u32::try_from(v).is_ok_and(|v| (1..=max).contains(&v));
    if change.budget_per_hour.is_some_and(|b| !within(b, s.sinks.budget_max_per_hour)) {
        let max = s.sinks.budget_max_per_hour;
        return Err(Error::invalid("budget_per_hour", format!("must be between 1 and {max}")));
    }
    if change.burst.is_some_and(|b| !within(b, s.sinks.burst_max)) {
        return Err(Error::invalid("burst", format!("must be between 1 and {}", s.sinks.burst_max)));
    }
    let sink = sink_for(s, who, Action::UpdateSink, id).await?;
    s.store.update_sink(sink.scope_id, id, change).await
}

/// Deletes a sink and its subscriptions, for an admin of its scope.
pub async fn delete(s: &Services, who: &Reach, id: SinkId) -> Result<()> {
    let sink = sink_for(s, who, Action::DeleteSink, id).await?;
    s.store.delete_sink(sink.scope_id, id).await
}

/// One subscription as asked for.
#[derive(Debug, Clone, Default)]
pub struct Subscription {
    /// The events (at least one).
    pub events: Vec<SinkEvent>,
    /// Only these queues.
    pub queues: Vec<String>,
    /// Only these endpoints (of the sink's scope).
    pub endpoint_ids: Vec<EndpointId>,
    /// Only these webhooks (of the sink's scope).
    pub webhook_ids: Vec<WebhookId>,
    /// Default low.
    pub min_severity: Option<Severity>,
    /// Default false.
    pub include_excerpt: Option<bool>,
}

/// Most subscriptions one sink holds.
pub const MAX_SUBSCRIPTIONS: usize = 32;

/// Replaces a sink's subscriptions, for an admin of its scope. Every endpoint and
/// webhook a filter names must be the sink's scope's (`reference_out_of_scope`).
pub async fn set_subscriptions(
    s: &Services,
    who: &Reach,
    id: SinkId,
    subs: Vec<Subscription>,
) -> Result<Vec<SubscriptionRow>> {
    let checked = checked_subscriptions(subs)?;
    let sink = sink_for(s, who, Action::SetSubscriptions, id).await?;
    s.store.set_subscriptions(sink.scope_id, id, checked).await
}

/// Checks a subscription list, whoever sets it: at most [`MAX_SUBSCRIPTIONS`], 1–16
/// events each, at most 32 of each filter, queue names that are queue names.
pub(super) fn checked_subscriptions(subs: Vec<Subscription>) -> Result<Vec<NewSubscription>> {
    if subs.len() > MAX_SUBSCRIPTIONS {
        return Err(Error::invalid("subscriptions", format!("at most {MAX_SUBSCRIPTIONS}")));
    }
    let mut checked = Vec::with_capacity(subs.len());
    for (i, sub) in subs.into_iter().enumerate() {
        let at = |field: &str| format!("subscriptions[{i}].{field}");
        let mut events = sub.events;
        events.dedup();
        if events.is_empty() || events.len() > 16 {
            return Err(Error::invalid(&at("events"), "name 1–16 event types"));
        }
        if sub.queues.len() > 32 || sub.endpoint_ids.len() > 32 || sub.webhook_ids.len() > 32 {
            return Err(Error::invalid(&at("filters"), "at most 32 queues, endpoints and webhooks each"));
        }
        if let Some(q) = sub.queues.iter().find(|q| !valid_queue_name(q)) {
            let shown: String = q.chars().filter(|c| !c.is_control()).take(64).collect();
            return Err(Error::invalid(&at("queues"), format!("{shown:?} is not a queue name")));
        }
        checked.push(NewSubscription {
            events,
            queues: sub.queues,
            endpoint_ids: sub.endpoint_ids,
            webhook_ids: sub.webhook_ids,
            min_severity: sub.min_severity.unwrap_or(Severity::Low),
            include_excerpt: sub.include_excerpt.unwrap_or(false),
        });
    }
    Ok(checked)
}

/// A sink's subscriptions, for any member of its scope.
pub async fn subscriptions(s: &Services, who: &Reach, id: SinkId) -> Result<(SinkRow, Vec<SubscriptionRow>)> {
    let sink = sink_for(s, who, Action::ShowSubscriptions, id).await?;
    let subs = s.store.subscriptions_of(&[sink.scope_id], id).await?;
    Ok((sink, subs))
}

/// Test sends a sink takes per minute (SPEC 10).
pub const TEST_SENDS_PER_MINUTE: i32 = 6;

/// What a test send found: `None` when the sink took the message, else the error's
/// class and a message that names no secret.
pub type TestResult = Option<(&'static str, String)>;

/// A sink's test send: what it found, and whether the sink hears anything at all (a
/// test that passes on a sink with no subscription must not read as "you will be woken").
#[derive(Debug, Clone)]
pub struct TestSend {
    /// What the send found.
    pub found: TestResult,
    /// How many subscriptions the sink holds; 0: it hears nothing.
    pub subscriptions: usize,
}

/// What a test answer says of a sink with no subscription.
pub const HEARS_NOTHING: &str = "this sink has no subscription, so it hears nothing: no dead letter or other event \
     reaches it until its subscriptions name some (PUT /api/v1/sinks/{id}/subscriptions, or its page on the Board)";

/// Sends one harmless test message to a sink, for an admin of its scope: past the
/// budget and the subscriptions, never past the outbound guard; at most
/// [`TEST_SENDS_PER_MINUTE`] a minute per sink (`rate_limited`, across instances).
pub async fn test(s: &Services, who: &Reach, id: SinkId) -> Result<TestSend> {
    let sink = sink_for(s, who, Action::TestSink, id).await?;
    test_sink(s, &sink).await
}

/// The test send of `sink`, once the caller may make it, with how many subscriptions
/// the sink holds.
pub(super) async fn test_sink(s: &Services, sink: &SinkRow) -> Result<TestSend> {
    let found = post_test(s, sink).await?;
    let subscriptions = s.store.subscriptions_of(&[sink.scope_id], sink.id).await?.len();
    Ok(TestSend { found, subscriptions })
}

/// The test message of `sink`: counted against the minute's limit, then posted with
/// the connection's secret (which never leaves this call).
async fn post_test(s: &Services, sink: &SinkRow) -> Result<TestResult> {
    use crate::sinks::rules::content::test_message;
    use crate::sinks::rules::outcome::{ErrorClass, SinkAnswer};
    if let Err(wait) = s.store.count_sink_test(sink.scope_id, sink.id, TEST_SENDS_PER_MINUTE).await? {
        return Err(Error::rate_limited(format!("at most {TEST_SENDS_PER_MINUTE} test sends a minute per sink"), wait));
    }
    // The secret comes with the one destination it may go to; the sink's own copy of the
    // URL is never what is dialled.
    let Some(credential) = s.store.bound_credential(&s.vault, sink.scope_id, sink.connection_id).await? else {
        return Err(unbound());
    };
    let target = crate::sinks::clients::post::SinkTarget {
        kind: sink.kind,
        base_url: &credential.destination,
        secret: &credential.secret,
        apprise_mode: sink.apprise_mode,
    };
    // The scheme policy of now, not of when the URLs were stored.
    if let Some(refused) = crate::sinks::clients::post::scheme_refusal(&target, &s.sinks.schemes) {
        return Ok(Some((refused.code(), refused.to_string())));
    }
    let message = test_message(&sink.name, &s.base_url);
    let client = s.guard.client();
    Ok(match crate::sinks::clients::post::post(&client, &target, &message).await {
        SinkAnswer::Sent => None,
        SinkAnswer::Partial => {
            Some(("partial", "the Apprise server reached only some of its targets (424)".to_owned()))
        }
        SinkAnswer::ConfigurationError => {
            Some(("configuration", "the Apprise server has no usable configuration for this key (204)".to_owned()))
        }
        // One message for every cause that depends on where the host points.
        SinkAnswer::Permanent(ErrorClass::ForbiddenTarget) => {
            Some((ErrorClass::ForbiddenTarget.as_str(), crate::outbound::refusal::FORBIDDEN_TARGET_MESSAGE.to_owned()))
        }
        SinkAnswer::Permanent(ErrorClass::RejectedSsrf) => {
            Some((ErrorClass::RejectedSsrf.as_str(), crate::outbound::refusal::REJECTED_URL_MESSAGE.to_owned()))
        }
        SinkAnswer::Retryable(class) | SinkAnswer::Permanent(class) => {
            Some((class.as_str(), format!("the sink answered with an error of class {}", class.as_str())))
        }
    })
}

/// A sink's send log, newest first, for any member of its scope.
pub async fn sends(
    s: &Services,
    who: &Reach,
    id: SinkId,
    limit: i64,
) -> Result<Vec<crate::sinks::statements::outbox::SendRow>> {
    let sink = sink_for(s, who, Action::ListSinkSends, id).await?;
    s.store.sink_sends(&[sink.scope_id], id, limit).await
}
