//! Webhooks: create (ingest token and signing secret shown once), list, show, and
//! their routing rules (save, with the intake cache forgetting the webhook, and dry
//! run, which changes nothing).

use serde::Serialize;

use super::Services;
use super::permissions::{Action, Place, check};
use super::principal::Principal;
use crate::domain::ids::{EndpointId, WebhookId};
use crate::error::{Error, Result};
use crate::intake::rules::{self, Envelope, Route, RoutingDecision, RuleSet};
use crate::intake::trusted_senders::TrustedActors;
use crate::intake::verify::SourceType;
use crate::store::tenancy::Reach;
use crate::store::webhooks::{CreatedWebhook, NewWebhook, WebhookRow, trusted_actors_json};

/// What a new webhook is to be.
#[derive(Debug, Clone)]
pub struct CreateWebhook {
    /// The endpoint its deliveries become todos on.
    pub endpoint_id: EndpointId,
    /// Which provider sends it (and so how deliveries are verified).
    pub source_type: SourceType,
    /// Default queue for deliveries no rule routes elsewhere.
    pub queue: String,
    /// 1–100; default 5.
    pub max_attempts: Option<i32>,
    /// Whose deliveries are trusted; none trusts no one (GitHub/Gitea).
    pub trusted_actors: Option<TrustedActors>,
    /// A secret the provider supplies; none: one is generated.
    pub secret: Option<String>,
    /// A signed source that cannot sign: routed in trust mode `open`, never announced.
    pub unverified: bool,
}

/// Creates a webhook on an endpoint the caller administers: another scope's endpoint
/// is unknown (404), a team member who is not an admin is refused (403); the store
/// checks the queue, attempts and secret.
pub async fn create(s: &Services, who: &Reach, c: CreateWebhook) -> Result<CreatedWebhook> {
    let endpoint = s.store.endpoint_in(&who.scope_ids(), c.endpoint_id).await?;
    check(Action::CreateWebhook, Principal::Human(who), Some(Place::scope(endpoint.scope_id)))?;
    let trusted_actors = trusted_actors_json(c.trusted_actors.as_ref())?;
    s.store
        .create_webhook(
            &s.vault,
            NewWebhook {
                scope: endpoint.scope_id,
                endpoint_id: endpoint.id,
                source_type: c.source_type,
                queue: c.queue,
                max_attempts: c.max_attempts,
                trusted_actors,
                secret: c.secret,
                unverified: c.unverified,
            },
        )
        .await
}

/// Every webhook in the caller's scopes (never their credentials).
pub async fn list(s: &Services, who: &Reach) -> Result<Vec<WebhookRow>> {
    check(Action::ListWebhooks, Principal::Human(who), None)?;
    s.store.list_webhooks(&who.scope_ids()).await
}

/// One webhook in the caller's scopes (else 404).
pub async fn show(s: &Services, who: &Reach, id: WebhookId) -> Result<WebhookRow> {
    let webhook = s.store.webhook_in(&who.scope_ids(), id).await?;
    check(Action::ShowWebhook, Principal::Human(who), Some(Place::scope(webhook.scope_id)))?;
    Ok(webhook)
}

/// Parses and validates a rules body; every refusal names the rule and the reason.
fn checked_rules(body: &serde_json::Value) -> Result<RuleSet> {
    let set = rules::parse(body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    rules::validate(&set).map_err(|e| Error::InvalidArgument(e.to_string()))?;
    Ok(set)
}

/// Refuses a rule that fans out to an endpoint the webhook's owner may not reach
/// (`reference_out_of_scope`; a foreign endpoint reads like an unknown one).
async fn check_fan_out(s: &Services, webhook: &WebhookRow, set: &RuleSet) -> Result<()> {
    for rule in &set.rules {
        if let Route::Queue { endpoints, .. } = &rule.action.route {
            for raw in endpoints {
                let reachable = match raw.parse() {
                    Ok(id) => s.store.may_fan_out(webhook.scope_id, id).await?,
                    Err(_) => false,
                };
                if !reachable {
                    return Err(Error::ReferenceOutOfScope(format!(
                        "rule {:?}: reference_out_of_scope: endpoint {raw} is unknown or not granted to this webhook's owner",
                        rule.id
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Refuses a rule whose `notify` names a sink that is not the webhook's scope's (by id
/// `sk_…` or by name): `reference_out_of_scope`, as for an unknown one. Checked again
/// when the rule fires.
async fn check_rule_sinks(s: &Services, webhook: &WebhookRow, set: &RuleSet) -> Result<()> {
    for rule in &set.rules {
        let Some((sink, _)) = rule.action.notification() else { continue };
        let found = match sink.parse::<crate::domain::ids::SinkId>() {
            Ok(id) => match s.store.sink_in(&[webhook.scope_id], id).await {
                Ok(_) => true,
                Err(Error::NotFound) => false,
                Err(e) => return Err(e),
            },
            Err(_) => s.store.sink_named(webhook.scope_id, sink).await?.is_some(),
        };
        if !found {
            return Err(Error::ReferenceOutOfScope(format!(
                "rule {:?}: reference_out_of_scope: notify names a sink that is unknown or another owner's",
                rule.id
            )));
        }
    }
    Ok(())
}

/// Validates and saves a webhook's rules (`{"rules": [...]}`) for an admin of its
/// scope, and evicts the webhook from the intake cache. Invalid rules are refused (422)
/// and nothing is saved.
pub async fn save_rules(s: &Services, who: &Reach, id: WebhookId, body: &serde_json::Value) -> Result<WebhookRow> {
    let webhook = s.store.webhook_in(&who.scope_ids(), id).await?;
    check(Action::SaveRules, Principal::Human(who), Some(Place::scope(webhook.scope_id)))?;
    let set = checked_rules(body)?;
    check_fan_out(s, &webhook, &set).await?;
    check_rule_sinks(s, &webhook, &set).await?;
    let stored = serde_json::to_value(&set).map_err(|e| Error::internal_from("encoding rules", e))?;
    let row = s.store.set_webhook_rules(&[webhook.scope_id], webhook.id, stored).await?;
    s.webhook_cache.evict(row.id);
    Ok(row)
}

/// A sample delivery to try rules on.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Rules to try (`{"rules": [...]}`, validated like a save); none: the saved ones.
    pub rules: Option<serde_json::Value>,
    /// Sample headers.
    pub headers: Vec<(String, String)>,
    /// Sample JSON body.
    pub body: Option<serde_json::Value>,
}

/// What a dry run found.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct RuleTestAnswer {
    /// The rule that matched, if any.
    pub matched_rule: Option<String>,
    /// `queue`, `drop`, `quarantine` or `default_queue`; `fault` when a rule faulted.
    pub outcome: String,
    /// The queue a todo would land on (none for a drop).
    pub queue: Option<String>,
    /// Why a rule faulted, if one did.
    pub fault: Option<String>,
}

/// A dry run for any member of the webhook's scope: which rule matches a sample
/// delivery, and what would happen. Changes nothing.
pub async fn dry_run(s: &Services, who: &Reach, id: WebhookId, sample: Sample) -> Result<RuleTestAnswer> {
    let webhook = show(s, who, id).await?;
    check(Action::DryRunRules, Principal::Human(who), Some(Place::scope(webhook.scope_id)))?;
    let set = match sample.rules {
        Some(rules) => checked_rules(&rules)?,
        None => rules::parse(&webhook.rules).map_err(|e| Error::internal(format!("stored rules do not parse: {e}")))?,
    };
    let envelope = Envelope {
        source: webhook.source_type.to_string(),
        event_type: None,
        headers: sample.headers,
        body: sample.body,
    };
    Ok(match rules::evaluate(&set, &envelope, rules::DEFAULT_BUDGET) {
        RoutingDecision::NoMatch => RuleTestAnswer {
            matched_rule: None,
            outcome: "default_queue".into(),
            queue: Some(webhook.queue),
            fault: None,
        },
        RoutingDecision::Fault { rule_id, reason } => RuleTestAnswer {
            matched_rule: Some(rule_id),
            outcome: "fault".into(),
            queue: Some("quarantine".into()),
            fault: Some(reason),
        },
        RoutingDecision::Matched { rule_id, action } => {
            let (outcome, queue) = match action.route {
                Route::Queue { queue, .. } => ("queue", Some(queue)),
                Route::Drop => ("drop", None),
                Route::Quarantine => ("quarantine", Some("quarantine".to_owned())),
            };
            RuleTestAnswer { matched_rule: Some(rule_id), outcome: outcome.into(), queue, fault: None }
        }
    })
}
