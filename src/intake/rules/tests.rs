//! Cross-cutting tests: the SPEC's own example end to end, and the fuzz targets
//! (property tests) for evaluation and validation.

use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::sinks::rules::vocabulary::Severity;

const EP: &str = "ep_0123456789abcdef0123456789abcdef";

fn spec_example() -> Value {
    json!({"rules": [
      {"id": "to-builds",
       "match": {"all": [{"pointer": "/kind", "equals": "build"},
                         {"header": "X-Event", "glob": "push*"},
                         {"pointer": "/pull_request", "exists": true}]},
       "action": {"queue": "builds", "endpoints": [EP], "notify": "phone", "notify_severity": "high"}},
      {"id": "drop-pings", "match": {"any": [{"header": "X-Event", "equals": "ping"}]}, "action": {"drop": true}}
    ]})
}

fn delivery(event: &str, body: Option<Value>) -> Envelope {
    Envelope {
        source: "github".into(),
        event_type: Some(event.into()),
        headers: vec![("x-event".into(), event.into()), ("Content-Type".into(), "application/json".into())],
        body,
    }
}

#[test]
fn the_spec_example_parses_validates_and_decides_as_described() {
    let rules = parse(&spec_example()).expect("the example parses");
    validate(&rules).expect("the example validates");
    assert_eq!(serde_json::to_value(&rules).unwrap(), spec_example(), "the wire form round-trips");

    let build = delivery("push", Some(json!({"kind": "build", "pull_request": {"number": 7}})));
    let RoutingDecision::Matched { rule_id, action } = evaluate(&rules, &build, DEFAULT_BUDGET) else {
        panic!("a build push should match");
    };
    assert_eq!(rule_id, "to-builds");
    let expected = Route::Queue { queue: "builds".into(), endpoints: vec![EP.into()], work_order: None };
    assert_eq!(action.route, expected);
    assert_eq!(action.notification(), Some(("phone", Severity::High)));

    let ping = evaluate(&rules, &delivery("ping", None), DEFAULT_BUDGET);
    let RoutingDecision::Matched { rule_id, action } = ping else { panic!("a ping should match") };
    assert_eq!((rule_id.as_str(), action.route), ("drop-pings", Route::Drop));

    // Each of the three conditions is needed; missing any one falls through to the
    // webhook's default queue.
    let no_pr = delivery("push", Some(json!({"kind": "build"})));
    let other_kind = delivery("push", Some(json!({"kind": "deploy", "pull_request": {}})));
    let other_event = delivery("issues", Some(json!({"kind": "build", "pull_request": {}})));
    let not_json = delivery("push", None);
    for envelope in [no_pr, other_kind, other_event, not_json] {
        assert_eq!(evaluate(&rules, &envelope, DEFAULT_BUDGET), RoutingDecision::NoMatch, "{envelope:?}");
    }
}

#[test]
fn errors_read_as_one_line_naming_the_rule() {
    let error = RuleError {
        rule: RuleRef::Id("to-builds".into()),
        reason: "action needs exactly one of queue, drop, quarantine".into(),
    };
    assert_eq!(error.to_string(), "rule \"to-builds\": action needs exactly one of queue, drop, quarantine");
    assert_eq!(RuleError { rule: RuleRef::Index(3), reason: "x".into() }.to_string(), "rule at index 3: x");
    assert_eq!(RuleError { rule: RuleRef::Set, reason: "x".into() }.to_string(), "rules: x");
}

// ---- strategies -------------------------------------------------------------------

/// Arbitrary JSON, a few levels deep, with keys that pointers below can reach.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-c0-9*?/~\\[\\]]{0,6}".prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::btree_map("[a-c0-9~/]{0,3}", inner, 0..5)
                .prop_map(|fields| Value::Object(fields.into_iter().collect())),
        ]
    })
}

fn any_pointer() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => Just(String::new()),
        6 => "(/[a-c0-9]{1,3}){1,3}",
        2 => "(/[a-c01~]{0,2}){0,2}",
        1 => any::<String>(),
    ]
}

fn any_header_name() -> impl Strategy<Value = String> {
    prop_oneof![6 => "[Xx]-[A-Ca-c]{1,2}", 1 => "[ -~]{0,4}", 1 => any::<String>()]
}

fn any_glob() -> impl Strategy<Value = String> {
    prop_oneof![4 => "[a-c*?]{0,6}", 2 => "[a-c0-9*?/!\\[\\]-]{0,10}", 1 => "(\\*[a-c]){10,20}", 1 => any::<String>()]
}

fn any_condition() -> impl Strategy<Value = Match> {
    let target =
        prop_oneof![any_pointer().prop_map(RuleTarget::Pointer), any_header_name().prop_map(RuleTarget::Header)];
    let test = prop_oneof![
        1 => any_json().prop_map(Test::Equals),
        2 => "[a-c*?]{0,4}".prop_map(|text| Test::Equals(Value::from(text))),
        3 => any_glob().prop_map(Test::Glob),
        2 => any::<bool>().prop_map(Test::Exists),
    ];
    (target, test).prop_map(|(target, test)| Match::Condition(Condition { target, test }))
}

/// Match trees: bushy ones from `prop_recursive`, plus chains up to 13 groups deep so
/// that nesting past the limit of 8 is exercised often.
fn any_match() -> impl Strategy<Value = Match> {
    let bushy = any_condition().prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            1 => Just(Match::All(Vec::new())),
            12 => vec(inner.clone(), 1..4).prop_map(Match::All),
            12 => vec(inner, 1..4).prop_map(Match::Any),
        ]
    });
    let chain = (any_condition(), vec(any::<bool>(), 0..14)).prop_map(|(leaf, kinds)| {
        kinds
            .into_iter()
            .fold(leaf, |inner, is_any| if is_any { Match::Any(vec![inner]) } else { Match::All(vec![inner]) })
    });
    prop_oneof![bushy, chain]
}

fn any_action() -> impl Strategy<Value = RuleAction> {
    let endpoint = prop_oneof![8 => "ep_[0-9a-f]{32}", 1 => Just(EP.to_owned()), 1 => "[a-z_]{0,8}"];
    let route = prop_oneof![
        ("[a-z0-9][a-z0-9.]{0,4}|[a-z.]{0,2}|quarantine", vec(endpoint, 0..18), proptest::option::of("[ -~]{0,8}"))
            .prop_map(|(queue, endpoints, work_order)| Route::Queue { queue, endpoints, work_order }),
        Just(Route::Drop),
        Just(Route::Quarantine),
    ];
    let severity = proptest::option::of(prop_oneof![Just(Severity::Low), Just(Severity::Normal), Just(Severity::High)]);
    (route, proptest::option::of("[a-z\n]{0,4}"), severity).prop_map(|(route, sink, severity)| RuleAction {
        route,
        sink,
        severity,
    })
}

fn any_rule_set() -> impl Strategy<Value = RuleSet> {
    let id = prop_oneof![9 => "[A-Za-z0-9_-]{1,6}", 1 => "[ -~]{0,3}"];
    let rule = (id, any_match(), any_action()).prop_map(|(id, matcher, action)| RoutingRule { id, matcher, action });
    vec(rule, 0..6).prop_map(|rules| RuleSet { rules })
}

fn any_envelope() -> impl Strategy<Value = Envelope> {
    let header = (any_header_name(), prop_oneof!["[a-c*?]{0,4}", any::<String>()]);
    (vec(header, 0..5), proptest::option::weighted(0.9, any_json())).prop_map(|(headers, body)| Envelope {
        source: "generic".into(),
        event_type: None,
        headers,
        body,
    })
}

/// Rule-set-shaped JSON with arbitrary JSON spliced in at every level, so that the
/// parser's error paths are reached, not just its first `expected an object`.
fn rule_set_shaped_json() -> impl Strategy<Value = Value> {
    let match_json = prop_oneof![
        12 => any_match().prop_map(|m| serde_json::to_value(m).unwrap()),
        1 => any_json(),
        1 => (any_json(), any_json()).prop_map(|(a, b)| json!({"all": [a], "equals": b})),
        1 => (any_pointer(), any_json()).prop_map(|(p, v)| json!({"pointer": p, "equals": v, "glob": "*"})),
    ];
    let action_json = prop_oneof![
        12 => any_action().prop_map(|a| serde_json::to_value(a).unwrap()),
        1 => any_json(),
        1 => (any_json(), any_json()).prop_map(|(q, d)| json!({"queue": q, "drop": d})),
    ];
    let id_json = prop_oneof![12 => "[A-Za-z0-9_-]{1,6}".prop_map(Value::from), 1 => any_json()];
    let rule = (id_json, match_json, action_json, proptest::bool::weighted(0.05)).prop_map(|(id, m, a, extra)| {
        let mut rule = json!({"id": id, "match": m, "action": a});
        if extra {
            rule["extra"] = json!(1);
        }
        rule
    });
    prop_oneof![6 => vec(rule, 0..5).prop_map(|rules| json!({"rules": rules})), 1 => any_json()]
}

// ---- properties -------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The fuzz target: evaluation never panics, whatever the rules, headers and body.
    /// A rule set that validates never faults except on time.
    #[test]
    fn evaluate_never_panics_and_faults_on_valid_rules_only_for_time(
        rules in any_rule_set(),
        envelope in any_envelope(),
        tight in any::<bool>(),
    ) {
        let budget = if tight { Duration::from_micros(50) } else { Duration::from_secs(10) };
        let decision = evaluate(&rules, &envelope, budget);
        if validate(&rules).is_ok()
            && let RoutingDecision::Fault { reason, .. } = &decision
        {
            prop_assert_eq!(reason.as_str(), BUDGET_EXCEEDED);
        }
    }

    /// Validation never panics on anything fed through the parse helper.
    #[test]
    fn parse_and_validate_never_panic_on_arbitrary_json(value in rule_set_shaped_json()) {
        if let Ok(rules) = parse(&value) {
            let _ = validate(&rules);
        }
    }

    /// Every rule set the types can hold survives the wire: serialize, parse, compare.
    #[test]
    fn typed_rule_sets_round_trip_through_parse(rules in any_rule_set()) {
        let wire = serde_json::to_value(&rules).unwrap();
        prop_assert_eq!(parse(&wire), Ok(rules));
    }
}
