//! Turning a verified delivery into the todos it becomes: the trusted-actor gate, then
//! the webhook's rules (first match wins), with the default queue when none matches.
//! Pure: the handler gathers the inputs and the store records the outcome.

use serde_json::Value;

use super::rules::{Route, RoutingDecision};
use crate::domain::ids::EndpointId;
use crate::domain::new_todo::NewTodo;
use crate::domain::text::{QUARANTINE_QUEUE, TITLE_MAX_BYTES, scrub_nul_json, strip_controls, truncate_bytes};
use crate::domain::todo_state::{Disposition, QuarantineReason};

/// What a delivery becomes.
#[derive(Debug, Clone)]
pub struct Routed {
    /// The event's disposition.
    pub disposition: Disposition,
    /// The todos to create (none for a drop).
    pub todos: Vec<NewTodo>,
    /// The rule that decided, if one did.
    pub rule_id: Option<String>,
}

/// The facts about a delivery that routing needs.
#[derive(Debug, Clone)]
pub struct Inputs<'a> {
    /// The webhook's endpoint (quarantine lives there too).
    pub endpoint_id: EndpointId,
    /// Its default queue.
    pub default_queue: &'a str,
    /// Its attempt cap for new todos.
    pub max_attempts: i32,
    /// Source type label.
    pub source: &'a str,
    /// Provider event type.
    pub event_type: Option<&'a str>,
    /// The body as JSON, when it is JSON.
    pub body: Option<&'a Value>,
    /// The raw body as text (for a body that is not JSON).
    pub raw_text: &'a str,
}

/// Decides what a delivery becomes. `trusted` is the trusted-actor verdict; `decision`
/// is the rules' verdict (ignored for an untrusted sender, whose delivery is held).
/// `fan_out` are the extra endpoints a queue rule named, already limited to those the
/// webhook's owner may reach.
pub fn route(inputs: &Inputs, trusted: bool, decision: &RoutingDecision, fan_out: &[EndpointId]) -> Routed {
    if !trusted {
        return held(inputs, QuarantineReason::UntrustedActor, None);
    }
    match decision {
        RoutingDecision::NoMatch => Routed {
            disposition: Disposition::Routed,
            todos: vec![todo(inputs, inputs.endpoint_id, inputs.default_queue)],
            rule_id: None,
        },
        RoutingDecision::Fault { rule_id, .. } => {
            let mut r = held(inputs, QuarantineReason::RuleFault, Some(rule_id.clone()));
            r.disposition = Disposition::Faulted;
            r
        }
        RoutingDecision::Matched { rule_id, action } => match &action.route {
            Route::Drop => {
                Routed { disposition: Disposition::Dropped, todos: Vec::new(), rule_id: Some(rule_id.clone()) }
            }
            Route::Quarantine => held(inputs, QuarantineReason::RuleAction, Some(rule_id.clone())),
            Route::Queue { queue, work_order, .. } => {
                let mut targets = vec![inputs.endpoint_id];
                for e in fan_out {
                    if !targets.contains(e) {
                        targets.push(*e);
                    }
                }
                Routed {
                    disposition: Disposition::Routed,
                    todos: targets
                        .into_iter()
                        .map(|e| NewTodo { work_order: work_order.clone(), ..todo(inputs, e, queue) })
                        .collect(),
                    rule_id: Some(rule_id.clone()),
                }
            }
        },
    }
}

fn held(inputs: &Inputs, reason: QuarantineReason, rule_id: Option<String>) -> Routed {
    let mut t = todo(inputs, inputs.endpoint_id, QUARANTINE_QUEUE);
    t.quarantine_reason = Some(reason);
    Routed { disposition: Disposition::Quarantined, todos: vec![t], rule_id }
}

/// A todo for one target; its event id is filled in when the delivery is recorded.
fn todo(inputs: &Inputs, endpoint: EndpointId, queue: &str) -> NewTodo {
    let payload = match inputs.body {
        Some(v) => scrub_nul_json(v.clone()),
        // Providers send what they send: a body that is not JSON travels as text.
        None => serde_json::json!({ "raw_body": inputs.raw_text.replace('\0', "\u{fffd}") }),
    };
    NewTodo {
        // A label that is nothing but control characters is no label at all.
        kind: inputs.event_type.map(|k| label(k, 128)).filter(|k| !k.trim().is_empty()),
        source: Some(inputs.source.to_owned()),
        payload: Some(payload),
        max_attempts: Some(inputs.max_attempts),
        ..NewTodo::new(endpoint, queue, title(inputs))
    }
}

/// A readable title: `<source> <event type>`, or just the source.
fn title(inputs: &Inputs) -> String {
    let raw = match inputs.event_type {
        Some(kind) => format!("{} {kind}", inputs.source),
        None => format!("{} delivery", inputs.source),
    };
    label(&raw, TITLE_MAX_BYTES)
}

fn label(raw: &str, max: usize) -> String {
    truncate_bytes(&strip_controls(raw).replace('\0', ""), max).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::rules::{RuleAction, RuleSet, parse};
    use serde_json::json;

    fn inputs<'a>(body: Option<&'a Value>) -> Inputs<'a> {
        Inputs {
            endpoint_id: EndpointId(uuid::Uuid::nil()),
            default_queue: "inbox",
            max_attempts: 3,
            source: "github",
            event_type: Some("push"),
            body,
            raw_text: "",
        }
    }

    fn action(route: serde_json::Value) -> RuleAction {
        let rules: RuleSet =
            parse(&json!({"rules": [{"id": "r", "match": {"header": "x", "exists": true}, "action": route}]})).unwrap();
        rules.rules[0].action.clone()
    }

    #[test]
    fn no_matching_rule_routes_to_the_default_queue() {
        let body = json!({"a": 1});
        let r = route(&inputs(Some(&body)), true, &RoutingDecision::NoMatch, &[]);
        assert_eq!(r.disposition, Disposition::Routed);
        assert_eq!(r.todos.len(), 1);
        assert_eq!((r.todos[0].queue.as_str(), r.todos[0].title.as_str()), ("inbox", "github push"));
        assert_eq!(r.todos[0].payload, Some(body));
        assert_eq!(r.todos[0].max_attempts, Some(3));
    }

    #[test]
    fn an_untrusted_sender_is_held_whatever_the_rules_say() {
        let r = route(&inputs(None), false, &RoutingDecision::NoMatch, &[]);
        assert_eq!(r.disposition, Disposition::Quarantined);
        assert_eq!(r.todos[0].queue, QUARANTINE_QUEUE);
        assert_eq!(r.todos[0].quarantine_reason, Some(QuarantineReason::UntrustedActor));
    }

    #[test]
    fn a_faulting_rule_quarantines_and_a_drop_creates_nothing() {
        let fault = RoutingDecision::Fault { rule_id: "r".into(), reason: "x".into() };
        let r = route(&inputs(None), true, &fault, &[]);
        assert_eq!(
            (r.disposition, r.todos[0].quarantine_reason),
            (Disposition::Faulted, Some(QuarantineReason::RuleFault))
        );
        let drop = RoutingDecision::Matched { rule_id: "r".into(), action: action(json!({"drop": true})) };
        let r = route(&inputs(None), true, &drop, &[]);
        assert_eq!((r.disposition, r.todos.len()), (Disposition::Dropped, 0));
    }

    #[test]
    fn a_queue_rule_fans_out_once_per_endpoint() {
        let other = EndpointId(uuid::Uuid::from_u128(7));
        let matched = RoutingDecision::Matched { rule_id: "r".into(), action: action(json!({"queue": "builds"})) };
        let r = route(&inputs(None), true, &matched, &[other, other]);
        let targets: Vec<_> = r.todos.iter().map(|t| (t.endpoint_id, t.queue.as_str())).collect();
        assert_eq!(targets, vec![(EndpointId(uuid::Uuid::nil()), "builds"), (other, "builds")]);
        assert_eq!(r.rule_id.as_deref(), Some("r"));
    }

    #[test]
    fn a_body_that_is_not_json_travels_as_text() {
        let mut i = inputs(None);
        i.raw_text = "not json";
        let r = route(&i, true, &RoutingDecision::NoMatch, &[]);
        assert_eq!(r.todos[0].payload, Some(json!({"raw_body": "not json"})));
    }
}
