//! Deciding where one delivery goes: rules in order, first match wins, under a time
//! budget. Nothing here recurses on rule or body shape, so a hostile rule set can
//! produce a fault but never a panic or a blown stack.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::model::{Condition, Match, RuleAction, RuleSet, RuleTarget, Test};
use super::validate::{MAX_GROUP_DEPTH, empty_group, prepare_condition, too_deep};

/// The time budget for one delivery's rules (the reference implementation's
/// per-event limit).
pub const DEFAULT_BUDGET: Duration = Duration::from_millis(250);

/// Longest text a glob is matched against. Glob matching cannot be interrupted by the
/// time budget and its cost grows with text × pattern length, so longer values simply
/// do not match (the pattern length is capped on save).
pub const GLOB_SUBJECT_MAX_BYTES: usize = 64 * 1024;

/// The fault reason when the budget runs out.
pub const BUDGET_EXCEEDED: &str = "evaluation exceeded its time budget";

/// What the rules see of a delivery.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Envelope {
    /// The webhook's source type (`github`, `stripe`, …).
    pub source: String,
    /// The provider's event type, when it names one.
    pub event_type: Option<String>,
    /// Request headers as received; names may repeat.
    pub headers: Vec<(String, String)>,
    /// The body, when it parsed as JSON; `None` makes every pointer condition false.
    pub body: Option<Value>,
}

/// Where the rules send a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoutingDecision {
    /// A rule matched: do its action.
    Matched {
        /// The first rule that matched.
        rule_id: String,
        /// Its action.
        action: RuleAction,
    },
    /// No rule matched: the webhook's default queue.
    NoMatch,
    /// A rule could not be evaluated: quarantine the delivery (`rule_fault`).
    Fault {
        /// The rule being evaluated when it failed.
        rule_id: String,
        /// Why it failed.
        reason: String,
    },
}

/// Runs `rules` in order against `envelope`; the first rule that matches decides. The
/// clock is checked before every condition, and running past `budget` is a fault (a
/// zero budget therefore faults at the first condition).
pub fn evaluate(rules: &RuleSet, envelope: &Envelope, budget: Duration) -> RoutingDecision {
    let started = Instant::now();
    for rule in &rules.rules {
        match holds(&rule.matcher, envelope, started, budget) {
            Ok(true) => return RoutingDecision::Matched { rule_id: rule.id.clone(), action: rule.action.clone() },
            Ok(false) => {}
            Err(reason) => return RoutingDecision::Fault { rule_id: rule.id.clone(), reason },
        }
    }
    RoutingDecision::NoMatch
}

/// A group being evaluated: its members, the next one to look at, and whether one true
/// member settles it (`any`) or one false member does (`all`).
struct Frame<'a> {
    members: &'a [Match],
    next: usize,
    is_any: bool,
}

/// Whether `matcher` holds, with short-circuiting, on an explicit stack.
fn holds(matcher: &Match, envelope: &Envelope, started: Instant, budget: Duration) -> Result<bool, String> {
    let mut stack: Vec<Frame<'_>> = Vec::new();
    let mut current = matcher;
    loop {
        // Descend until `current` yields a value.
        let value = match current {
            Match::All(members) | Match::Any(members) => {
                if stack.len() == MAX_GROUP_DEPTH {
                    return Err(too_deep());
                }
                let Some(first) = members.first() else { return Err(empty_group(current)) };
                stack.push(Frame { members, next: 1, is_any: matches!(current, Match::Any(_)) });
                current = first;
                continue;
            }
            Match::Condition(condition) => {
                if started.elapsed() >= budget {
                    return Err(BUDGET_EXCEEDED.to_owned());
                }
                condition_holds(condition, envelope)?
            }
        };
        // Climb while groups are settled, then move on to the next undecided member.
        loop {
            let Some(frame) = stack.last_mut() else { return Ok(value) };
            let settled = value == frame.is_any;
            if settled || frame.next == frame.members.len() {
                stack.pop();
                continue;
            }
            current = &frame.members[frame.next];
            frame.next += 1;
            break;
        }
    }
}

fn condition_holds(condition: &Condition, envelope: &Envelope) -> Result<bool, String> {
    let glob = prepare_condition(condition)?;
    match &condition.target {
        RuleTarget::Pointer(pointer) => {
            let Some(body) = &envelope.body else { return Ok(false) };
            let found = body.pointer(pointer);
            Ok(match &condition.test {
                Test::Exists(wanted) => found.is_some() == *wanted,
                Test::Equals(expected) => found.is_some_and(|value| json_equal(value, expected)),
                Test::Glob(_) => found
                    .and_then(Value::as_str)
                    .is_some_and(|text| text.len() <= GLOB_SUBJECT_MAX_BYTES && glob.is_some_and(|g| g.matches(text))),
            })
        }
        RuleTarget::Header(name) => {
            let mut values = envelope
                .headers
                .iter()
                .filter(|(header, _)| header.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str());
            Ok(match &condition.test {
                Test::Exists(wanted) => values.next().is_some() == *wanted,
                Test::Equals(expected) => expected.as_str().is_some_and(|wanted| values.any(|v| v == wanted)),
                Test::Glob(_) => {
                    glob.is_some_and(|g| values.any(|v| v.len() <= GLOB_SUBJECT_MAX_BYTES && g.matches(v)))
                }
            })
        }
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`), without recursion.
fn json_equal(left: &Value, right: &Value) -> bool {
    let mut pending = vec![(left, right)];
    while let Some(pair) = pending.pop() {
        match pair {
            (Value::Number(a), Value::Number(b)) => {
                let as_int = |n: &serde_json::Number| n.as_i64().map(i128::from).or(n.as_u64().map(i128::from));
                let same = match (as_int(a), as_int(b)) {
                    (Some(x), Some(y)) => x == y,
                    _ => matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y),
                };
                if !same {
                    return false;
                }
            }
            (Value::Array(a), Value::Array(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                pending.extend(a.iter().zip(b));
            }
            (Value::Object(a), Value::Object(b)) => {
                if a.len() != b.len() {
                    return false;
                }
                for (key, value) in a {
                    let Some(other) = b.get(key) else { return false };
                    pending.push((value, other));
                }
            }
            // Scalars of one kind, or values of different kinds: the derived equality
            // does not recurse here.
            (a, b) => {
                if a != b {
                    return false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::intake::rules::model::{Route, RoutingRule};
    use serde_json::json;

    const BUDGET: Duration = Duration::from_secs(5);

    fn rule(id: &str, matcher: Value) -> RoutingRule {
        let action = json!({"queue": format!("q-{}", id.to_lowercase())});
        serde_json::from_value(json!({"id": id, "match": matcher, "action": action})).expect("rule parses")
    }

    fn envelope(body: Value, headers: &[(&str, &str)]) -> Envelope {
        Envelope {
            source: "generic".into(),
            event_type: None,
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: Some(body),
        }
    }

    /// Whether a single-rule set built from `matcher` matches.
    fn matches(matcher: Value, envelope: &Envelope) -> bool {
        match evaluate(&RuleSet { rules: vec![rule("r", matcher)] }, envelope, BUDGET) {
            RoutingDecision::Matched { .. } => true,
            RoutingDecision::NoMatch => false,
            fault => panic!("unexpected {fault:?}"),
        }
    }

    fn fault_reason(rules: &RuleSet, envelope: &Envelope, budget: Duration) -> String {
        match evaluate(rules, envelope, budget) {
            RoutingDecision::Fault { reason, .. } => reason,
            other => panic!("expected a fault, got {other:?}"),
        }
    }

    #[test]
    fn pointer_equals_compares_json_values() {
        let body =
            envelope(json!({"kind": "build", "n": 1, "f": 1.0, "ok": true, "o": {"a": [1, "x"]}, "z": null}), &[]);
        assert!(matches(json!({"pointer": "/kind", "equals": "build"}), &body));
        assert!(!matches(json!({"pointer": "/kind", "equals": "Build"}), &body));
        assert!(matches(json!({"pointer": "/n", "equals": 1}), &body));
        assert!(matches(json!({"pointer": "/n", "equals": 1.0}), &body));
        assert!(matches(json!({"pointer": "/f", "equals": 1}), &body));
        assert!(!matches(json!({"pointer": "/n", "equals": "1"}), &body));
        assert!(!matches(json!({"pointer": "/n", "equals": 2}), &body));
        assert!(matches(json!({"pointer": "/ok", "equals": true}), &body));
        assert!(!matches(json!({"pointer": "/ok", "equals": false}), &body));
        assert!(matches(json!({"pointer": "/o", "equals": {"a": [1.0, "x"]}}), &body));
        assert!(!matches(json!({"pointer": "/o", "equals": {"a": [1, "x"], "b": 2}}), &body));
        assert!(!matches(json!({"pointer": "/o", "equals": {"a": ["x", 1]}}), &body));
        assert!(matches(json!({"pointer": "/o/a/1", "equals": "x"}), &body));
        assert!(matches(json!({"pointer": "/z", "equals": null}), &body));
        assert!(!matches(json!({"pointer": "/missing", "equals": null}), &body));
    }

    #[test]
    fn large_integers_compare_exactly() {
        let body = envelope(json!({"big": u64::MAX, "neg": i64::MIN}), &[]);
        assert!(matches(json!({"pointer": "/big", "equals": u64::MAX}), &body));
        assert!(!matches(json!({"pointer": "/big", "equals": u64::MAX - 1}), &body));
        assert!(matches(json!({"pointer": "/neg", "equals": i64::MIN}), &body));
    }

    #[test]
    fn pointer_globs_match_strings_only() {
        let body = envelope(json!({"ref": "refs/heads/main", "n": 7, "tag": "v1b"}), &[]);
        assert!(matches(json!({"pointer": "/ref", "glob": "refs/heads/*"}), &body));
        assert!(matches(json!({"pointer": "/ref", "glob": "*main"}), &body));
        assert!(!matches(json!({"pointer": "/ref", "glob": "refs/tags/*"}), &body));
        assert!(matches(json!({"pointer": "/tag", "glob": "v?b"}), &body));
        assert!(!matches(json!({"pointer": "/tag", "glob": "v?"}), &body));
        assert!(matches(json!({"pointer": "/tag", "glob": "v1[ab]"}), &body));
        assert!(!matches(json!({"pointer": "/tag", "glob": "v1[ac]"}), &body));
        assert!(!matches(json!({"pointer": "/n", "glob": "*"}), &body));
        assert!(!matches(json!({"pointer": "/missing", "glob": "*"}), &body));
    }

    #[test]
    fn pointer_exists_true_and_false() {
        let body = envelope(json!({"pull_request": {"id": 1}, "nothing": null, "a/b": 1, "m~n": 2}), &[]);
        assert!(matches(json!({"pointer": "/pull_request", "exists": true}), &body));
        assert!(matches(json!({"pointer": "/nothing", "exists": true}), &body));
        assert!(!matches(json!({"pointer": "/pull_request", "exists": false}), &body));
        assert!(matches(json!({"pointer": "/issue", "exists": false}), &body));
        assert!(matches(json!({"pointer": "/a~1b", "exists": true}), &body));
        assert!(matches(json!({"pointer": "/m~0n", "exists": true}), &body));
    }

    #[test]
    fn the_empty_pointer_names_the_whole_body() {
        assert!(matches(json!({"pointer": "", "equals": "ping"}), &envelope(json!("ping"), &[])));
        assert!(matches(json!({"pointer": "", "exists": true}), &envelope(json!({}), &[])));
    }

    #[test]
    fn without_a_json_body_every_pointer_condition_is_false() {
        let opaque = Envelope { body: None, ..envelope(json!(null), &[("X-Event", "push")]) };
        assert!(!matches(json!({"pointer": "", "exists": true}), &opaque));
        assert!(!matches(json!({"pointer": "/a", "exists": false}), &opaque));
        assert!(!matches(json!({"pointer": "/a", "equals": null}), &opaque));
        assert!(!matches(json!({"pointer": "/a", "glob": "*"}), &opaque));
        assert!(matches(json!({"header": "X-Event", "equals": "push"}), &opaque));
    }

    #[test]
    fn header_names_match_case_insensitively() {
        let delivery = envelope(json!({}), &[("x-github-event", "push")]);
        assert!(matches(json!({"header": "X-GitHub-Event", "equals": "push"}), &delivery));
        assert!(matches(json!({"header": "X-GITHUB-EVENT", "exists": true}), &delivery));
        assert!(!matches(json!({"header": "X-GitHub-Event", "equals": "PUSH"}), &delivery));
    }

    #[test]
    fn any_of_several_headers_with_one_name_may_match() {
        let delivery = envelope(json!({}), &[("X-Tag", "alpha"), ("Other", "beta"), ("x-tag", "beta")]);
        assert!(matches(json!({"header": "X-Tag", "equals": "alpha"}), &delivery));
        assert!(matches(json!({"header": "X-Tag", "equals": "beta"}), &delivery));
        assert!(matches(json!({"header": "X-Tag", "glob": "b*"}), &delivery));
        assert!(!matches(json!({"header": "X-Tag", "equals": "gamma"}), &delivery));
    }

    #[test]
    fn header_globs_and_exists() {
        let delivery = envelope(json!({}), &[("X-Event", "push_request")]);
        assert!(matches(json!({"header": "X-Event", "glob": "push*"}), &delivery));
        assert!(matches(json!({"header": "X-Event", "glob": "pus?_[rq]equest"}), &delivery));
        assert!(!matches(json!({"header": "X-Event", "glob": "pull*"}), &delivery));
        assert!(!matches(json!({"header": "X-Missing", "glob": "*"}), &delivery));
        assert!(matches(json!({"header": "X-Missing", "exists": false}), &delivery));
        assert!(!matches(json!({"header": "X-Event", "exists": false}), &delivery));
    }

    #[test]
    fn all_and_any_nest_and_short_circuit() {
        let delivery = envelope(json!({"kind": "build", "branch": "main"}), &[("X-Event", "push")]);
        let yes = json!({"pointer": "/kind", "equals": "build"});
        let no = json!({"pointer": "/kind", "equals": "deploy"});
        assert!(matches(json!({"all": [yes, {"any": [no, yes]}]}), &delivery));
        assert!(!matches(json!({"all": [yes, {"any": [no, no]}]}), &delivery));
        assert!(matches(json!({"any": [no, {"all": [yes, yes]}]}), &delivery));
        assert!(!matches(json!({"any": [no, {"all": [yes, no]}]}), &delivery));
        assert!(matches(json!({"any": [{"any": [{"all": [{"any": [no, yes]}]}]}]}), &delivery));
        // A settled group never reaches a later member, even a faulty one.
        let faulty = json!({"pointer": "/a", "glob": "a**"});
        assert!(matches(json!({"any": [yes, faulty]}), &delivery));
        assert!(!matches(json!({"all": [no, faulty]}), &delivery));
    }

    #[test]
    fn the_first_matching_rule_wins() {
        let delivery = envelope(json!({"kind": "build"}), &[]);
        let rules = RuleSet {
            rules: vec![
                rule("First", json!({"pointer": "/kind", "equals": "deploy"})),
                rule("Second", json!({"pointer": "/kind", "exists": true})),
                rule("Third", json!({"pointer": "", "exists": true})),
            ],
        };
        let RoutingDecision::Matched { rule_id, action } = evaluate(&rules, &delivery, BUDGET) else {
            panic!("no match")
        };
        assert_eq!(rule_id, "Second");
        assert!(matches!(action.route, Route::Queue { ref queue, .. } if queue == "q-second"));
    }

    #[test]
    fn nothing_matching_means_the_default_queue() {
        let rules = RuleSet { rules: vec![rule("a", json!({"header": "X-Event", "equals": "ping"}))] };
        assert_eq!(evaluate(&rules, &envelope(json!({}), &[]), BUDGET), RoutingDecision::NoMatch);
        assert_eq!(evaluate(&RuleSet::default(), &envelope(json!({}), &[]), BUDGET), RoutingDecision::NoMatch);
    }

    #[test]
    fn running_out_of_time_is_a_fault_of_the_rule_being_evaluated() {
        let rules = RuleSet { rules: vec![rule("slow", json!({"pointer": "", "exists": true}))] };
        let decision = evaluate(&rules, &envelope(json!({}), &[]), Duration::ZERO);
        assert_eq!(decision, RoutingDecision::Fault { rule_id: "slow".into(), reason: BUDGET_EXCEEDED.into() });
    }

    #[test]
    fn unvalidated_deep_nesting_faults_instead_of_recursing() {
        let leaf = Match::Condition(Condition { target: RuleTarget::Pointer(String::new()), test: Test::Exists(true) });
        let deep = (0..10_000).fold(leaf, |inner, _| Match::All(vec![inner]));
        let mut set = RuleSet { rules: vec![rule("deep", json!({"pointer": "", "exists": true}))] };
        set.rules[0].matcher = deep;
        assert_eq!(fault_reason(&set, &envelope(json!({}), &[]), BUDGET), "all/any groups nest deeper than 8");
        // Taken apart by hand: dropping 10 000 nested boxes recursively could itself
        // overflow a test thread's stack.
        let mut pending = vec![std::mem::replace(&mut set.rules[0].matcher, Match::Any(Vec::new()))];
        while let Some(next) = pending.pop() {
            if let Match::All(members) | Match::Any(members) = next {
                pending.extend(members);
            }
        }
    }

    #[test]
    fn unvalidated_faulty_conditions_fault() {
        let delivery = envelope(json!({"a": "x"}), &[]);
        let cases = [
            (json!({"pointer": "/a", "glob": "a["}), "does not compile"),
            (json!({"pointer": "/a", "glob": "*x".repeat(40)}), "more than 16 *"),
            (json!({"all": []}), "an all group must not be empty"),
            (json!({"any": [{"any": []}]}), "an any group must not be empty"),
            (json!({"pointer": "a", "exists": true}), "must be empty or start with \"/\""),
            (json!({"header": "a b", "exists": true}), "not a valid HTTP token"),
            (json!({"header": "X", "equals": 1}), "a header's equals must be a string"),
        ];
        for (matcher, expected) in cases {
            let reason = fault_reason(&RuleSet { rules: vec![rule("bad", matcher)] }, &delivery, BUDGET);
            assert!(reason.contains(expected), "{reason:?} should contain {expected:?}");
        }
    }
}

#[cfg(test)]
mod cost_tests {
    use super::*;
    use crate::intake::rules::parse;
    use serde_json::json;

    #[test]
    fn a_glob_never_runs_over_a_value_longer_than_64_kib() {
        let pattern = format!("*{}b", "a".repeat(200));
        let rules = parse(
            &json!({"rules": [{"id": "slow", "match": {"pointer": "/x", "glob": pattern}, "action": {"drop": true}}]}),
        )
        .unwrap();
        let body = json!({"x": "a".repeat(5 * 1024 * 1024)});
        let started = Instant::now();
        let decision = evaluate(&rules, &Envelope { body: Some(body), ..Envelope::default() }, DEFAULT_BUDGET);
        assert_eq!(decision, RoutingDecision::NoMatch);
        assert!(started.elapsed() < Duration::from_millis(200), "{:?}", started.elapsed());
    }
}
