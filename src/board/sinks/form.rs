//! The Sinks forms as posted, and how they become the services' requests. Only the
//! forms' own shapes are checked here (a kind, a number, JSON); everything else is the
//! services' validation. A secret is never kept to show a form again, never logged.

use serde::{Deserialize, Serialize};

use crate::domain::ids::{ConnectionId, EndpointId, WebhookId};
use crate::error::{Error, Result};
use crate::sinks::rules::vocabulary::{AppriseMode, ConnectionKind, Severity, SinkEvent, SinkKind};
use crate::sinks::service::connections::CreateConnection;
use crate::sinks::service::{CreateSink, SinkSpec, Subscription};
use crate::sinks::statements::{SinkChange, SubscriptionRow};

/// The new-connection form. Its Debug form hides the secret.
#[derive(Clone, Default, Deserialize)]
#[serde(default)]
pub struct ConnectionForm {
    /// The connection's name.
    pub name: String,
    /// `gotify`, `apprise` or `cairn`.
    pub kind: String,
    /// The credential (a password field; never shown back).
    pub secret: String,
    /// Where the secret may be sent (the Gotify server, the Apprise API server, the Cairn).
    pub base_url: String,
    /// The owner reference (empty: the human's own scope).
    pub owner: String,
}

impl std::fmt::Debug for ConnectionForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionForm").field("name", &self.name).field("kind", &self.kind).finish_non_exhaustive()
    }
}

fn owner_of(raw: &str) -> Option<String> {
    Some(raw.trim()).filter(|o| !o.is_empty()).map(str::to_owned)
}

impl ConnectionForm {
    /// The connection this form asks for.
    pub fn body(&self) -> Result<CreateConnection> {
        let kind: ConnectionKind =
            self.kind.trim().parse().map_err(|_| Error::invalid("kind", "choose gotify, apprise or cairn"))?;
        Ok(CreateConnection {
            name: self.name.clone(),
            kind,
            secret: self.secret.clone(),
            base_url: Some(self.base_url.trim()).filter(|u| !u.is_empty()).map(str::to_owned),
            owner: owner_of(&self.owner),
        })
    }

    /// What may be shown again after a refusal: everything but the secret.
    pub fn without_secret(&self) -> ConnectionForm {
        ConnectionForm { secret: String::new(), ..self.clone() }
    }
}

/// The rotate form. Its Debug form hides the secret.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct RotateForm {
    /// The replacement credential.
    pub secret: String,
    /// A new destination (empty: the connection keeps its own); binds an unbound one.
    pub base_url: String,
}

impl RotateForm {
    /// The destination to bind, if one was typed.
    pub fn destination(&self) -> Option<&str> {
        Some(self.base_url.trim()).filter(|u| !u.is_empty())
    }
}

impl std::fmt::Debug for RotateForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RotateForm").finish_non_exhaustive()
    }
}

/// The new-sink form, as typed (kept to show the form again after a refusal).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct SinkForm {
    /// The sink's name.
    pub name: String,
    /// `gotify` or `apprise`.
    pub kind: String,
    /// Not on the form any more (a sink posts to its connection's destination); a
    /// script that still posts it must post that destination.
    pub base_url: String,
    /// The connection's id.
    pub connection_id: String,
    /// Apprise only: `key` or `urls` (empty: the default).
    pub apprise_mode: String,
    /// The owner reference (empty: the human's own scope).
    pub owner: String,
}

impl SinkForm {
    /// The sink this form asks for.
    pub fn body(&self) -> Result<CreateSink> {
        let kind: SinkKind =
            self.kind.trim().parse().map_err(|_| Error::invalid("kind", "choose gotify or apprise"))?;
        let connection_id: ConnectionId =
            self.connection_id.trim().parse().map_err(|_| Error::invalid("connection", "choose a connection"))?;
        let apprise_mode = match self.apprise_mode.trim() {
            "" => None,
            raw => Some(raw.parse::<AppriseMode>().map_err(|_| Error::invalid("apprise_mode", "choose key or urls"))?),
        };
        let base_url = Some(self.base_url.trim()).filter(|u| !u.is_empty()).map(str::to_owned);
        let spec = SinkSpec { kind: Some(kind), base_url, connection_id, apprise_mode, enabled: None };
        Ok(CreateSink { name: self.name.clone(), spec, owner: owner_of(&self.owner), subscriptions: None })
    }
}

/// A change to a sink: the enable/disable buttons send `enabled`, the budget form
/// `budget_per_hour` and `burst`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UpdateForm {
    /// `true` or `false`.
    pub enabled: Option<String>,
    /// Messages per hour, as typed.
    pub budget_per_hour: Option<String>,
    /// Messages at once, as typed.
    pub burst: Option<String>,
}

fn number(field: &str, raw: Option<&str>) -> Result<Option<i32>> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(raw) => raw.parse().map(Some).map_err(|_| Error::invalid(field, "must be a whole number")),
    }
}

impl UpdateForm {
    /// The change this form asks for.
    pub fn change(&self) -> Result<SinkChange> {
        let enabled = match self.enabled.as_deref().map(str::trim) {
            None | Some("") => None,
            Some("true") => Some(true),
            Some("false") => Some(false),
            Some(_) => return Err(Error::invalid("enabled", "must be true or false")),
        };
        let budget_per_hour = number("budget_per_hour", self.budget_per_hour.as_deref())?;
        let burst = number("burst", self.burst.as_deref())?;
        if enabled.is_none() && budget_per_hour.is_none() && burst.is_none() {
            return Err(Error::invalid("sink", "nothing to change"));
        }
        Ok(SinkChange { enabled, budget_per_hour, burst })
    }
}

/// The subscriptions editor's one field.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SubscriptionsForm {
    /// `{"subscriptions": [...]}`, as the operator API takes it.
    pub subscriptions: String,
}

/// One subscription as the editor reads and writes it (the operator API's shape).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionDoc {
    /// The events it matches.
    pub events: Vec<SinkEvent>,
    /// Only todos on these queues.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Only these endpoints of the sink's owner.
    #[serde(default)]
    pub endpoint_ids: Vec<EndpointId>,
    /// Only these webhooks of the sink's owner.
    #[serde(default)]
    pub webhook_ids: Vec<WebhookId>,
    /// Events below it are not sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_severity: Option<Severity>,
    /// Whether messages carry an excerpt of the subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_excerpt: Option<bool>,
}

/// The editor's document.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SubscriptionsDoc {
    /// In order.
    pub subscriptions: Vec<SubscriptionDoc>,
}

impl SubscriptionsForm {
    /// The subscriptions the editor holds.
    pub fn subscriptions(&self) -> Result<Vec<Subscription>> {
        let raw = self.subscriptions.trim();
        if raw.is_empty() {
            return Err(Error::invalid(
                "subscriptions",
                "empty: to subscribe to nothing, save {\"subscriptions\": []}",
            ));
        }
        let doc: SubscriptionsDoc =
            serde_json::from_str(raw).map_err(|e| Error::invalid("subscriptions", format!("not valid: {e}")))?;
        Ok(doc
            .subscriptions
            .into_iter()
            .map(|d| Subscription {
                events: d.events,
                queues: d.queues,
                endpoint_ids: d.endpoint_ids,
                webhook_ids: d.webhook_ids,
                min_severity: d.min_severity,
                include_excerpt: d.include_excerpt,
            })
            .collect())
    }
}

/// Saved subscriptions as the editor shows them (pretty JSON).
pub fn saved_text(rows: &[SubscriptionRow]) -> String {
    let doc = SubscriptionsDoc {
        subscriptions: rows
            .iter()
            .map(|r| SubscriptionDoc {
                events: r.events.clone(),
                queues: r.queues.clone(),
                endpoint_ids: r.endpoint_ids.clone(),
                webhook_ids: r.webhook_ids.clone(),
                min_severity: Some(r.min_severity),
                include_excerpt: Some(r.include_excerpt),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{\"subscriptions\": []}".to_owned())
}
