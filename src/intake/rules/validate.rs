//! Checking a rule set before it is saved: parsing from JSON with errors that name the
//! rule, then the limits and names that the types alone cannot enforce.

use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde_json::Value;

use super::model::{Condition, Match, Route, RoutingRule, RuleAction, RuleSet, RuleTarget, Test};
use crate::domain::ids::EndpointId;
use crate::domain::text::{QUARANTINE_QUEUE, json_has_nul, valid_queue_name};

/// Most rules a webhook may have.
pub const MAX_RULES: usize = 32;
/// Longest rule, as compact JSON, in bytes.
pub const RULE_MAX_BYTES: usize = 4_096;
/// Deepest nesting of `all` / `any` groups in one rule (a bare condition is depth 0).
pub const MAX_GROUP_DEPTH: usize = 8;
/// Most endpoints one queue action may fan out to.
pub const MAX_ENDPOINTS: usize = 16;
/// Most `*` in one glob. The glob matcher recurses once per `*` and its work grows with
/// their number, and a single match cannot be interrupted by the time budget.
pub const GLOB_MAX_STARS: usize = 16;
/// Longest glob pattern (with [`super::evaluate::GLOB_SUBJECT_MAX_BYTES`], this bounds
/// the cost of one match).
pub const GLOB_MAX_BYTES: usize = 256;
/// Deepest JSON accepted anywhere in a rule set: serde_json's own parsing limit, so only
/// values built in code (never parsed ones) can exceed it.
pub const JSON_MAX_DEPTH: usize = 128;

/// Which rule an error is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleRef {
    /// The rule set as a whole (its shape, or the number of rules).
    Set,
    /// A rule whose id is missing or unusable, by its position (from 0).
    Index(usize),
    /// A rule by its id.
    Id(String),
}

impl fmt::Display for RuleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleRef::Set => f.write_str("rules"),
            RuleRef::Index(index) => write!(f, "rule at index {index}"),
            RuleRef::Id(id) => write!(f, "rule {id:?}"),
        }
    }
}

/// Why a rule set was refused, e.g. `rule "to-builds": action needs exactly one of
/// queue, drop, quarantine`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{rule}: {reason}")]
pub struct RuleError {
    /// The rule at fault.
    pub rule: RuleRef,
    /// What is wrong with it, as a sentence fragment.
    pub reason: String,
}

impl RuleError {
    fn new(rule: RuleRef, reason: impl Into<String>) -> Self {
        RuleError { rule, reason: reason.into() }
    }
}

/// Turns a request body into a [`RuleSet`], naming the rule (by id when it has a usable
/// one, else by index) whose shape is wrong. It does not apply the limits: call
/// [`validate()`] next.
pub fn parse(value: &Value) -> Result<RuleSet, RuleError> {
    // Checked first and without recursion, so that serde's recursive descent below only
    // ever sees what serde_json itself could have parsed.
    if json_depth(value) > JSON_MAX_DEPTH {
        return Err(RuleError::new(RuleRef::Set, format!("JSON nests deeper than {JSON_MAX_DEPTH} levels")));
    }
    let Value::Object(top) = value else {
        return Err(RuleError::new(RuleRef::Set, "expected an object {\"rules\": [...]}"));
    };
    if let Some(key) = top.keys().find(|key| *key != "rules") {
        return Err(RuleError::new(RuleRef::Set, format!("unknown field {}", quoted(key))));
    }
    let Some(Value::Array(items)) = top.get("rules") else {
        return Err(RuleError::new(RuleRef::Set, "\"rules\" must be an array"));
    };
    let rules = items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            RoutingRule::deserialize(item).map_err(|e| RuleError::new(raw_rule_ref(index, item), e.to_string()))
        })
        .collect::<Result<_, _>>()?;
    Ok(RuleSet { rules })
}

/// Applies the save-time limits: at most 32 rules, unique plain ids, rules of at most
/// 4 096 bytes, groups non-empty and at most 8 deep, conditions well-formed, queue
/// actions on valid non-reserved queues with at most 16 endpoint ids, and no
/// `notify_severity` without `notify`. The first problem found is reported.
pub fn validate(rules: &RuleSet) -> Result<(), RuleError> {
    if rules.rules.len() > MAX_RULES {
        let reason = format!("{} rules given; at most {MAX_RULES} are allowed", rules.rules.len());
        return Err(RuleError::new(RuleRef::Set, reason));
    }
    let mut seen = HashSet::new();
    for (index, rule) in rules.rules.iter().enumerate() {
        if !valid_rule_id(&rule.id) {
            return Err(RuleError::new(RuleRef::Index(index), "id must be 1–64 of A–Z, a–z, 0–9, _ and -"));
        }
        let named = || RuleRef::Id(rule.id.clone());
        if !seen.insert(rule.id.as_str()) {
            return Err(RuleError::new(named(), "id is already used by an earlier rule"));
        }
        check_rule(rule).map_err(|reason| RuleError::new(named(), reason))?;
    }
    Ok(())
}

/// Whether `id` is 1–64 of `[A-Za-z0-9_-]`.
pub fn valid_rule_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn check_rule(rule: &RoutingRule) -> Result<(), String> {
    // The match goes first: its depth check guards the recursive serializer below.
    check_match(&rule.matcher)?;
    let size = serde_json::to_vec(rule).map_err(|e| e.to_string())?.len();
    if size > RULE_MAX_BYTES {
        return Err(format!("rule is {size} bytes of JSON; at most {RULE_MAX_BYTES} are allowed"));
    }
    check_action(&rule.action)
}

/// Walks a match without recursion: depth, empty groups, then every condition.
fn check_match(matcher: &Match) -> Result<(), String> {
    let mut pending = vec![(matcher, 0usize)];
    while let Some((current, depth)) = pending.pop() {
        match current {
            Match::All(members) | Match::Any(members) => {
                if depth == MAX_GROUP_DEPTH {
                    return Err(too_deep());
                }
                if members.is_empty() {
                    return Err(empty_group(current));
                }
                pending.extend(members.iter().rev().map(|member| (member, depth + 1)));
            }
            Match::Condition(condition) => {
                prepare_condition(condition)?;
            }
        }
    }
    Ok(())
}

/// The reason given for a group nested more than [`MAX_GROUP_DEPTH`] deep.
pub(super) fn too_deep() -> String {
    format!("all/any groups nest deeper than {MAX_GROUP_DEPTH}")
}

/// The reason given for an empty group (`all: []` would match everything, `any: []`
/// nothing; both are almost certainly mistakes).
pub(super) fn empty_group(group: &Match) -> String {
    let kind = if matches!(group, Match::Any(_)) { "any" } else { "all" };
    format!("an {kind} group must not be empty")
}

/// Checks one condition and compiles its glob, if it has one. Evaluation calls this
/// too, so that an unvalidated rule faults instead of misbehaving.
pub(super) fn prepare_condition(condition: &Condition) -> Result<Option<glob::Pattern>, String> {
    let is_header = match &condition.target {
        RuleTarget::Pointer(pointer) if !valid_pointer(pointer) => {
            return Err(format!(
                "pointer {} must be empty or start with \"/\", and use ~ only in ~0 or ~1",
                quoted(pointer)
            ));
        }
        RuleTarget::Pointer(_) => false,
        RuleTarget::Header(name) if !is_token(name) => {
            return Err(format!("header name {} is not a valid HTTP token", quoted(name)));
        }
        RuleTarget::Header(_) => true,
    };
    match &condition.test {
        Test::Equals(value) if is_header && !value.is_string() => Err("a header's equals must be a string".into()),
        Test::Equals(value) if json_depth(value) > JSON_MAX_DEPTH => {
            Err(format!("equals nests deeper than {JSON_MAX_DEPTH} levels"))
        }
        // PostgreSQL cannot store U+0000, so a rule holding it could never be saved.
        Test::Equals(value) if json_has_nul(value) => Err("equals holds U+0000".into()),
        Test::Glob(pattern) => compile_glob(pattern).map(Some),
        Test::Equals(_) | Test::Exists(_) => Ok(None),
    }
}

fn compile_glob(pattern: &str) -> Result<glob::Pattern, String> {
    if pattern.len() > GLOB_MAX_BYTES {
        return Err(format!("glob is longer than {GLOB_MAX_BYTES} bytes"));
    }
    if pattern.matches('*').count() > GLOB_MAX_STARS {
        return Err(format!("glob {} has more than {GLOB_MAX_STARS} *", quoted(pattern)));
    }
    if pattern.contains('\0') {
        return Err("glob holds U+0000".into());
    }
    glob::Pattern::new(pattern).map_err(|e| format!("glob {} does not compile: {}", quoted(pattern), e.msg))
}

fn check_action(action: &RuleAction) -> Result<(), String> {
    if let Route::Queue { queue, endpoints, work_order } = &action.route {
        if queue == QUARANTINE_QUEUE {
            return Err("queue \"quarantine\" is reserved; use \"quarantine\": true".into());
        }
        if !valid_queue_name(queue) {
            return Err(format!(
                "queue {} must be 1–64 of a–z, 0–9, ., _ and -, starting with a letter or digit",
                quoted(queue)
            ));
        }
        if endpoints.len() > MAX_ENDPOINTS {
            return Err(format!("{} endpoints given; at most {MAX_ENDPOINTS} are allowed", endpoints.len()));
        }
        for (index, endpoint) in endpoints.iter().enumerate() {
            if EndpointId::from_str(endpoint).is_err() {
                return Err(format!("endpoints[{index}] is not an endpoint id"));
            }
            if endpoints[..index].contains(endpoint) {
                return Err(format!("endpoints[{index}] repeats an earlier endpoint"));
            }
        }
        if work_order.as_deref().is_some_and(|w| w.contains('\0')) {
            return Err("work_order holds U+0000".into());
        }
    }
    match (&action.sink, action.severity) {
        (None, Some(_)) => Err("notify_severity needs notify".into()),
        (Some(sink), _) if sink.is_empty() || sink.chars().any(char::is_control) => {
            Err("notify must name a sink: not empty, no control characters".into())
        }
        _ => Ok(()),
    }
}

/// The [`RuleRef`] for a rule that failed to parse: its id when that is usable.
fn raw_rule_ref(index: usize, item: &Value) -> RuleRef {
    match item.get("id").and_then(Value::as_str) {
        Some(id) if valid_rule_id(id) => RuleRef::Id(id.to_owned()),
        _ => RuleRef::Index(index),
    }
}

/// Whether `pointer` is an RFC 6901 JSON pointer: empty, or `/`-led with `~` only in
/// the escapes `~0` and `~1`. serde_json would quietly accept a stray `~`.
fn valid_pointer(pointer: &str) -> bool {
    let escapes_ok = pointer.split('~').skip(1).all(|rest| rest.starts_with(['0', '1']));
    (pointer.is_empty() || pointer.starts_with('/')) && escapes_ok && !pointer.contains('\0')
}

/// Whether `name` is an HTTP token (RFC 9110 §5.6.2), the grammar of header names.
fn is_token(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// How deeply `value` nests (a scalar is 1), measured without recursion.
pub(super) fn json_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 1usize)];
    while let Some((current, depth)) = pending.pop() {
        deepest = deepest.max(depth);
        match current {
            Value::Array(items) => pending.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(fields) => pending.extend(fields.values().map(|field| (field, depth + 1))),
            _ => {}
        }
    }
    deepest
}

/// Sender-chosen text quoted for an error message, cut to 64 characters.
fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(64).collect();
    if cut.len() < text.len() { format!("{cut:?}…") } else { format!("{cut:?}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const EP: &str = "ep_0123456789abcdef0123456789abcdef";

    fn one_rule(matcher: Value, action: Value) -> Value {
        json!({"rules": [{"id": "r1", "match": matcher, "action": action}]})
    }

    /// Parses and validates; returns the refusal as a message.
    fn refusal(body: Value) -> String {
        parse(&body).and_then(|set| validate(&set)).expect_err("should be refused").to_string()
    }

    fn accepted(body: Value) {
        let set = parse(&body).expect("parses");
        validate(&set).expect("validates");
    }

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!({"pointer": "/a", "exists": true}), |inner, _| json!({"any": [inner]}))
    }

    #[test]
    fn parse_names_the_rule_by_id_when_it_can_and_by_index_otherwise() {
        let by_id = json!({"rules": [{"id": "to-builds", "match": {"pointer": "", "exists": true},
                                      "action": {"queue": "builds", "drop": true}}]});
        assert_eq!(refusal(by_id), "rule \"to-builds\": action needs exactly one of queue, drop, quarantine");
        let ok = json!({"id": "ok", "match": {"pointer": "", "exists": true}, "action": {"drop": true}});
        let by_index = json!({"rules": [ok, {"id": "bad id!", "match": {}, "action": {"drop": true}}]});
        assert!(refusal(by_index).starts_with("rule at index 1: "));
        let missing = json!({"rules": [{"match": {"pointer": "", "exists": true}, "action": {"drop": true}}]});
        assert_eq!(refusal(missing), "rule at index 0: missing field `id`");
    }

    #[test]
    fn parse_wants_an_object_with_only_a_rules_array() {
        assert_eq!(refusal(json!([])), "rules: expected an object {\"rules\": [...]}");
        assert_eq!(refusal(json!({})), "rules: \"rules\" must be an array");
        assert_eq!(refusal(json!({"rules": {}})), "rules: \"rules\" must be an array");
        assert_eq!(refusal(json!({"rules": [], "default": 1})), "rules: unknown field \"default\"");
        accepted(json!({"rules": []}));
    }

    #[test]
    fn parse_refuses_json_deeper_than_serde_json_could_have_parsed() {
        let deep = (0..200).fold(json!(1), |inner, _| json!([inner]));
        let body = one_rule(json!({"pointer": "/a", "equals": deep}), json!({"drop": true}));
        assert_eq!(refusal(body), "rules: JSON nests deeper than 128 levels");
    }

    #[test]
    fn more_than_32_rules_are_refused() {
        let rule = |i: usize| {
            json!({"id": format!("r{i}"),
                   "match": {"pointer": "", "exists": true}, "action": {"drop": true}})
        };
        accepted(json!({"rules": (0..32).map(rule).collect::<Vec<_>>()}));
        let too_many = json!({"rules": (0..33).map(rule).collect::<Vec<_>>()});
        assert_eq!(refusal(too_many), "rules: 33 rules given; at most 32 are allowed");
    }

    #[test]
    fn a_rule_over_4096_bytes_of_json_is_refused() {
        let big = one_rule(json!({"pointer": "/a", "equals": "x".repeat(4_100)}), json!({"drop": true}));
        let message = refusal(big);
        assert!(
            message.starts_with("rule \"r1\": rule is ") && message.ends_with("at most 4096 are allowed"),
            "{message}"
        );
        accepted(one_rule(json!({"pointer": "/a", "equals": "x".repeat(3_900)}), json!({"drop": true})));
    }

    #[test]
    fn ids_must_be_plain_short_and_unique() {
        let rule = |id: &str| json!({"id": id, "match": {"pointer": "", "exists": true}, "action": {"drop": true}});
        assert_eq!(
            refusal(json!({"rules": [rule("a"), rule("")]})),
            "rule at index 1: id must be 1–64 of A–Z, a–z, 0–9, _ and -"
        );
        assert!(refusal(json!({"rules": [rule(&"a".repeat(65))]})).starts_with("rule at index 0: id must be"));
        assert!(refusal(json!({"rules": [rule("a.b")]})).starts_with("rule at index 0: id must be"));
        assert_eq!(
            refusal(json!({"rules": [rule("Same_1"), rule("Same_1")]})),
            "rule \"Same_1\": id is already used by an earlier rule"
        );
        accepted(json!({"rules": [rule(&"A-z_9".repeat(12))]}));
    }

    #[test]
    fn groups_nest_at_most_eight_deep() {
        accepted(one_rule(nested(8), json!({"drop": true})));
        assert_eq!(
            refusal(one_rule(nested(9), json!({"drop": true}))),
            "rule \"r1\": all/any groups nest deeper than 8"
        );
    }

    #[test]
    fn empty_groups_are_refused() {
        assert_eq!(
            refusal(one_rule(json!({"all": []}), json!({"drop": true}))),
            "rule \"r1\": an all group must not be empty"
        );
        let inner = json!({"all": [{"pointer": "", "exists": true}, {"any": []}]});
        assert_eq!(refusal(one_rule(inner, json!({"drop": true}))), "rule \"r1\": an any group must not be empty");
    }

    #[test]
    fn globs_must_compile_and_stay_small() {
        let bad = refusal(one_rule(json!({"header": "X-Event", "glob": "push["}), json!({"drop": true})));
        assert!(bad.starts_with("rule \"r1\": glob \"push[\" does not compile"), "{bad}");
        let recursive = refusal(one_rule(json!({"pointer": "/a", "glob": "a**"}), json!({"drop": true})));
        assert!(recursive.contains("does not compile"), "{recursive}");
        let stars = refusal(one_rule(json!({"pointer": "/a", "glob": "*a".repeat(17)}), json!({"drop": true})));
        assert!(stars.ends_with("has more than 16 *"), "{stars}");
        accepted(one_rule(json!({"pointer": "/a", "glob": "*a".repeat(16)}), json!({"drop": true})));
    }

    #[test]
    fn header_names_must_be_tokens() {
        let spaced = refusal(one_rule(json!({"header": "X Event", "exists": true}), json!({"drop": true})));
        assert_eq!(spaced, "rule \"r1\": header name \"X Event\" is not a valid HTTP token");
        assert!(refusal(one_rule(json!({"header": "", "exists": true}), json!({"drop": true}))).contains("HTTP token"));
        assert!(
            refusal(one_rule(json!({"header": "X:", "exists": true}), json!({"drop": true}))).contains("HTTP token")
        );
        accepted(one_rule(json!({"header": "x-hub-signature-256", "exists": true}), json!({"drop": true})));
    }

    #[test]
    fn pointers_must_be_empty_or_slash_led_with_proper_escapes() {
        let relative = refusal(one_rule(json!({"pointer": "kind", "exists": true}), json!({"drop": true})));
        assert!(relative.starts_with("rule \"r1\": pointer \"kind\" must be empty or start with \"/\""), "{relative}");
        assert!(
            refusal(one_rule(json!({"pointer": "/a~2b", "exists": true}), json!({"drop": true}))).contains("~0 or ~1")
        );
        assert!(
            refusal(one_rule(json!({"pointer": "/a~", "exists": true}), json!({"drop": true}))).contains("~0 or ~1")
        );
        accepted(one_rule(json!({"pointer": "", "exists": true}), json!({"drop": true})));
        accepted(one_rule(json!({"pointer": "/a~0b/c~1d/0", "exists": true}), json!({"drop": true})));
    }

    #[test]
    fn a_header_equals_must_be_a_string() {
        let number = refusal(one_rule(json!({"header": "X-Count", "equals": 3}), json!({"drop": true})));
        assert_eq!(number, "rule \"r1\": a header's equals must be a string");
        accepted(one_rule(json!({"pointer": "/count", "equals": 3}), json!({"drop": true})));
    }

    #[test]
    fn nul_characters_are_refused_because_they_cannot_be_stored() {
        let cond = json!({"pointer": "", "exists": true});
        assert!(
            refusal(one_rule(json!({"pointer": "/a", "equals": {"k": "\u{0}"}}), json!({"drop": true})))
                .contains("U+0000")
        );
        assert!(
            refusal(one_rule(json!({"pointer": "/a", "glob": "a\u{0}"}), json!({"drop": true}))).contains("U+0000")
        );
        assert!(refusal(one_rule(cond, json!({"queue": "q", "work_order": "a\u{0}"}))).contains("U+0000"));
    }

    #[test]
    fn queue_names_must_be_valid_and_not_the_quarantine_queue() {
        let cond = json!({"pointer": "", "exists": true});
        let upper = refusal(one_rule(cond.clone(), json!({"queue": "Builds"})));
        assert!(upper.starts_with("rule \"r1\": queue \"Builds\" must be 1–64 of a–z"), "{upper}");
        assert!(refusal(one_rule(cond.clone(), json!({"queue": ""}))).contains("must be 1–64"));
        assert!(refusal(one_rule(cond.clone(), json!({"queue": ".x"}))).contains("must be 1–64"));
        let reserved = refusal(one_rule(cond.clone(), json!({"queue": "quarantine"})));
        assert_eq!(reserved, "rule \"r1\": queue \"quarantine\" is reserved; use \"quarantine\": true");
        accepted(one_rule(cond, json!({"queue": "ci.v2_x-1", "work_order": "Build and report."})));
    }

    #[test]
    fn endpoints_are_at_most_sixteen_distinct_endpoint_ids() {
        let cond = json!({"pointer": "", "exists": true});
        let ids: Vec<String> = (0..17).map(|i| format!("ep_{i:032x}")).collect();
        accepted(one_rule(cond.clone(), json!({"queue": "q", "endpoints": ids[..16]})));
        let many = refusal(one_rule(cond.clone(), json!({"queue": "q", "endpoints": ids})));
        assert_eq!(many, "rule \"r1\": 17 endpoints given; at most 16 are allowed");
        let slug = refusal(one_rule(cond.clone(), json!({"queue": "q", "endpoints": [EP, "agent-1"]})));
        assert_eq!(slug, "rule \"r1\": endpoints[1] is not an endpoint id");
        let twice = refusal(one_rule(cond, json!({"queue": "q", "endpoints": [EP, EP]})));
        assert_eq!(twice, "rule \"r1\": endpoints[1] repeats an earlier endpoint");
    }

    #[test]
    fn notify_severity_needs_notify_and_notify_needs_a_name() {
        let cond = json!({"pointer": "", "exists": true});
        let orphan = refusal(one_rule(cond.clone(), json!({"drop": true, "notify_severity": "high"})));
        assert_eq!(orphan, "rule \"r1\": notify_severity needs notify");
        assert!(refusal(one_rule(cond.clone(), json!({"drop": true, "notify": ""}))).contains("must name a sink"));
        assert!(refusal(one_rule(cond.clone(), json!({"drop": true, "notify": "a\nb"}))).contains("must name a sink"));
        accepted(one_rule(cond, json!({"drop": true, "notify": "phone", "notify_severity": "low"})));
    }

    #[test]
    fn long_sender_text_is_cut_in_messages() {
        let long = format!("x{}", " ".repeat(200));
        let message = refusal(one_rule(json!({"header": long, "exists": true}), json!({"drop": true})));
        assert!(message.len() < 160, "{message}");
    }

    #[test]
    fn json_depth_counts_scalars_as_one() {
        assert_eq!(json_depth(&json!(1)), 1);
        assert_eq!(json_depth(&json!({"a": [1, {"b": []}]})), 4);
    }
}
