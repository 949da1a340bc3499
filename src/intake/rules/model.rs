//! The routing-rule wire format (SPEC §13) as typed values. Shapes the types cannot hold
//! (two actions at once, a condition with two tests) are refused while parsing; limits
//! and names are checked by [`super::validate()`].

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::sinks::rules::vocabulary::Severity;

/// A webhook's routing rules, evaluated in order; the first match wins.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSet {
    /// The rules, in evaluation order.
    pub rules: Vec<RoutingRule>,
}

/// One rule: when `matcher` holds for a delivery, `action` decides where it goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingRule {
    /// Names the rule in errors, traces and notification dedup keys.
    pub id: String,
    /// What the delivery must satisfy (`match` on the wire).
    #[serde(rename = "match")]
    pub matcher: Match,
    /// What happens to a matching delivery.
    pub action: RuleAction,
}

/// What a rule tests: one condition, or a group of matches that nests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawMatch", into = "RawMatch")]
pub enum Match {
    /// Holds when every member holds (`{"all": […]}`).
    All(Vec<Match>),
    /// Holds when at least one member holds (`{"any": […]}`).
    Any(Vec<Match>),
    /// A single test on one part of the delivery.
    Condition(Condition),
}

/// One test on one part of the delivery.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The part of the delivery looked at.
    pub target: RuleTarget,
    /// What is asked of it.
    pub test: Test,
}

/// The part of a delivery a condition looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTarget {
    /// An RFC 6901 JSON pointer into the body (`""` is the whole body).
    Pointer(String),
    /// A request header, named case-insensitively.
    Header(String),
}

/// What a condition asks of its target.
#[derive(Debug, Clone, PartialEq)]
pub enum Test {
    /// Equal as JSON values (pointers) or as exact strings (headers).
    Equals(Value),
    /// Matches a glob pattern (`*`, `?`, `[ab]`); a pointer target must be a string.
    Glob(String),
    /// Present (`true`) or absent (`false`).
    Exists(bool),
}

/// What a matching rule does with the delivery: a route, plus an optional notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawAction", into = "RawAction")]
pub struct RuleAction {
    /// Where the delivery goes.
    pub route: Route,
    /// The notification sink to tell (by name, in the webhook's scope): `notify` on the
    /// wire.
    pub sink: Option<String>,
    /// How loud that notification is; `normal` when left out: `notify_severity` on the
    /// wire.
    pub severity: Option<Severity>,
}

impl RuleAction {
    /// The sink to tell and the severity to use, when the rule tells one at all.
    pub fn notification(&self) -> Option<(&str, Severity)> {
        let severity = self.severity.unwrap_or(Severity::Normal);
        self.sink.as_deref().map(|sink| (sink, severity))
    }
}

/// Where a matched delivery goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Becomes a todo on `queue`.
    Queue {
        /// The queue name.
        queue: String,
        /// Granted endpoints to fan out to (ids as strings); empty means none named.
        endpoints: Vec<String>,
        /// Instructions stored with the todo for the agent.
        work_order: Option<String>,
    },
    /// Recorded as an event and otherwise ignored.
    Drop,
    /// Held in the reserved `quarantine` queue for a human.
    Quarantine,
}

/// The flat wire shape of a match. Every key is optional here so that a wrong mix is
/// reported as a sentence rather than serde's "did not match any variant".
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    all: Option<Vec<Match>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    any: Option<Vec<Match>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pointer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    header: Option<String>,
    // `"equals": null` is a real test (the value is JSON null), so presence is kept
    // apart from absence.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    equals: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    glob: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exists: Option<bool>,
}

/// Deserializes a key that is present, whatever its value (null included).
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl TryFrom<RawMatch> for Match {
    type Error = &'static str;

    fn try_from(raw: RawMatch) -> Result<Self, Self::Error> {
        let heads = [raw.all.is_some(), raw.any.is_some(), raw.pointer.is_some(), raw.header.is_some()];
        if heads.iter().filter(|h| **h).count() != 1 {
            return Err("a match needs exactly one of all, any, pointer, header");
        }
        let tests = [raw.equals.is_some(), raw.glob.is_some(), raw.exists.is_some()];
        let test_count = tests.iter().filter(|t| **t).count();
        let group = match (raw.all, raw.any) {
            (Some(members), _) => Some(Match::All(members)),
            (_, Some(members)) => Some(Match::Any(members)),
            (None, None) => None,
        };
        if let Some(group) = group {
            if test_count != 0 {
                return Err("an all or any group takes no equals, glob or exists");
            }
            return Ok(group);
        }
        if test_count != 1 {
            return Err("a condition needs exactly one of equals, glob, exists");
        }
        let target = match (raw.pointer, raw.header) {
            (Some(pointer), _) => RuleTarget::Pointer(pointer),
            (_, Some(header)) => RuleTarget::Header(header),
            (None, None) => unreachable!("exactly one head is present"),
        };
        let test = match (raw.equals, raw.glob, raw.exists) {
            (Some(value), _, _) => Test::Equals(value),
            (_, Some(pattern), _) => Test::Glob(pattern),
            (_, _, Some(wanted)) => Test::Exists(wanted),
            (None, None, None) => unreachable!("exactly one test is present"),
        };
        Ok(Match::Condition(Condition { target, test }))
    }
}

impl From<Match> for RawMatch {
    fn from(matcher: Match) -> Self {
        let condition = match matcher {
            Match::All(members) => return RawMatch { all: Some(members), ..RawMatch::default() },
            Match::Any(members) => return RawMatch { any: Some(members), ..RawMatch::default() },
            Match::Condition(condition) => condition,
        };
        let mut raw = RawMatch::default();
        match condition.target {
            RuleTarget::Pointer(pointer) => raw.pointer = Some(pointer),
            RuleTarget::Header(header) => raw.header = Some(header),
        }
        match condition.test {
            Test::Equals(value) => raw.equals = Some(value),
            Test::Glob(pattern) => raw.glob = Some(pattern),
            Test::Exists(wanted) => raw.exists = Some(wanted),
        }
        raw
    }
}

/// The flat wire shape of an action, for the same reason as [`RawMatch`].
#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAction {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    queue: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoints: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    work_order: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    drop: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    quarantine: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    notify: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    notify_severity: Option<Severity>,
}

impl TryFrom<RawAction> for RuleAction {
    type Error = &'static str;

    fn try_from(raw: RawAction) -> Result<Self, Self::Error> {
        // `drop: false` is refused rather than ignored: a reader would take it to mean
        // something, and it means nothing.
        if raw.drop == Some(false) || raw.quarantine == Some(false) {
            return Err("drop and quarantine may only be true; leave them out otherwise");
        }
        let routes = [raw.queue.is_some(), raw.drop.is_some(), raw.quarantine.is_some()];
        if routes.iter().filter(|r| **r).count() != 1 {
            return Err("action needs exactly one of queue, drop, quarantine");
        }
        let route = match raw.queue {
            Some(queue) => {
                Route::Queue { queue, endpoints: raw.endpoints.unwrap_or_default(), work_order: raw.work_order }
            }
            None if raw.endpoints.is_some() || raw.work_order.is_some() => {
                return Err("endpoints and work_order go only with queue");
            }
            None if raw.drop.is_some() => Route::Drop,
            None => Route::Quarantine,
        };
        Ok(RuleAction { route, sink: raw.notify, severity: raw.notify_severity })
    }
}

impl From<RuleAction> for RawAction {
    fn from(action: RuleAction) -> Self {
        let mut raw = RawAction { notify: action.sink, notify_severity: action.severity, ..RawAction::default() };
        match action.route {
            Route::Queue { queue, endpoints, work_order } => {
                raw.queue = Some(queue);
                raw.endpoints = (!endpoints.is_empty()).then_some(endpoints);
                raw.work_order = work_order;
            }
            Route::Drop => raw.drop = Some(true),
            Route::Quarantine => raw.quarantine = Some(true),
        }
        raw
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matcher(value: Value) -> Result<Match, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    fn action(value: Value) -> Result<RuleAction, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn a_condition_names_one_target_and_one_test() {
        let parsed = matcher(json!({"header": "X-Event", "glob": "push*"})).unwrap();
        let expected = Condition { target: RuleTarget::Header("X-Event".into()), test: Test::Glob("push*".into()) };
        assert_eq!(parsed, Match::Condition(expected));
        let two_tests = matcher(json!({"pointer": "/a", "equals": 1, "exists": true})).unwrap_err();
        assert!(two_tests.contains("exactly one of equals, glob, exists"), "{two_tests}");
        let two_targets = matcher(json!({"pointer": "/a", "header": "X", "exists": true})).unwrap_err();
        assert!(two_targets.contains("exactly one of all, any, pointer, header"), "{two_targets}");
        assert!(matcher(json!({"pointer": "/a"})).is_err());
        assert!(matcher(json!({})).is_err());
    }

    #[test]
    fn equals_null_is_a_test_not_a_missing_key() {
        let parsed = matcher(json!({"pointer": "/a", "equals": null})).unwrap();
        let Match::Condition(condition) = parsed else { panic!("not a condition") };
        assert_eq!(condition.test, Test::Equals(Value::Null));
    }

    #[test]
    fn groups_nest_and_take_no_test_keys() {
        let parsed = matcher(json!({"any": [{"all": [{"pointer": "", "exists": true}]}]})).unwrap();
        let leaf = Match::Condition(Condition { target: RuleTarget::Pointer(String::new()), test: Test::Exists(true) });
        assert_eq!(parsed, Match::Any(vec![Match::All(vec![leaf])]));
        assert!(matcher(json!({"all": [], "any": []})).is_err());
        assert!(matcher(json!({"all": [], "equals": 1})).unwrap_err().contains("group takes no"));
    }

    #[test]
    fn unknown_keys_are_refused_everywhere() {
        assert!(matcher(json!({"pointer": "/a", "exists": true, "regex": "x"})).unwrap_err().contains("unknown field"));
        assert!(action(json!({"drop": true, "why": "x"})).unwrap_err().contains("unknown field"));
        let rule = json!({"id": "a", "match": {"pointer": "", "exists": true}, "action": {"drop": true}, "x": 1});
        assert!(serde_json::from_value::<RoutingRule>(rule).is_err());
        assert!(serde_json::from_value::<RuleSet>(json!({"rules": [], "default": "x"})).is_err());
    }

    #[test]
    fn an_action_has_exactly_one_route() {
        assert_eq!(action(json!({"drop": true})).unwrap().route, Route::Drop);
        assert_eq!(action(json!({"quarantine": true})).unwrap().route, Route::Quarantine);
        let queued = action(json!({"queue": "builds", "endpoints": ["ep_1"], "work_order": "build it"})).unwrap();
        let expected = Route::Queue {
            queue: "builds".into(),
            endpoints: vec!["ep_1".into()],
            work_order: Some("build it".into()),
        };
        assert_eq!(queued.route, expected);
        let both = action(json!({"queue": "builds", "drop": true})).unwrap_err();
        assert!(both.contains("action needs exactly one of queue, drop, quarantine"), "{both}");
        assert!(action(json!({"notify": "phone"})).unwrap_err().contains("exactly one of queue"));
    }

    #[test]
    fn false_routes_and_stray_queue_options_are_refused() {
        assert!(action(json!({"drop": false})).unwrap_err().contains("may only be true"));
        assert!(action(json!({"queue": "a", "quarantine": false})).unwrap_err().contains("may only be true"));
        assert!(action(json!({"drop": true, "endpoints": []})).unwrap_err().contains("only with queue"));
        assert!(action(json!({"quarantine": true, "work_order": "x"})).unwrap_err().contains("only with queue"));
    }

    #[test]
    fn notify_is_additive_and_defaults_to_normal_severity() {
        let loud = action(json!({"drop": true, "notify": "phone", "notify_severity": "high"})).unwrap();
        assert_eq!(loud.notification(), Some(("phone", Severity::High)));
        let plain = action(json!({"quarantine": true, "notify": "phone"})).unwrap();
        assert_eq!(plain.notification(), Some(("phone", Severity::Normal)));
        assert_eq!(action(json!({"drop": true})).unwrap().notification(), None);
        assert!(action(json!({"drop": true, "notify": "p", "notify_severity": "urgent"})).is_err());
    }

    #[test]
    fn serializing_gives_back_the_wire_form() {
        let wire = json!({"id": "r",
                          "match": {"all": [{"pointer": "/n", "equals": null}, {"header": "X", "glob": "a?"}]},
                          "action": {"queue": "q", "notify": "s", "notify_severity": "low"}});
        let rule: RoutingRule = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(serde_json::to_value(&rule).unwrap(), wire);
    }
}
