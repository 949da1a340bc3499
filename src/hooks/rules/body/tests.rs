use chrono::TimeZone;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::domain::ids::{EndpointId, EventId, ScopeId};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(secs, 0).single().unwrap()
}

fn facts() -> TodoFacts {
    TodoFacts {
        id: "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a".parse().unwrap(),
        endpoint_id: EndpointId::new(),
        endpoint_slug: "builder".into(),
        scope_id: ScopeId::new(),
        queue: "ci".into(),
        kind: Some("push".into()),
        source: Some("github".into()),
        title: "Build failed on main".into(),
        attempt: 0,
        max_attempts: 5,
        attempts_total: 0,
        created_at: at(1_700_000_000),
        event_id: Some(EventId::new()),
        sender_gate: true,
    }
}

fn ready(todo: TodoFacts, reason: ReadyReason) -> TodoReady {
    TodoReady { todo, reason }
}

fn dead(todo: TodoFacts, final_attempt: Option<FinalAttempt>) -> DeadLettered {
    DeadLettered { todo, reason: DeadReason::AttemptsExhausted, final_attempt, relay: false, dead_letter_count: 1 }
}

fn final_attempt() -> FinalAttempt {
    FinalAttempt {
        seq: 5,
        outcome: AttemptOutcome::Failed,
        summary: Some("still red".into()),
        artifact: Some("https://ci.example.com/run/7".into()),
        at: at(1_800_000_100),
    }
}

fn json_of(body: &RingBody) -> Value {
    serde_json::from_slice(&body.to_json().unwrap()).unwrap()
}

#[test]
fn a_ready_body_has_exactly_the_specified_fields() {
    let body = RingBody::ready(&ready(facts(), ReadyReason::Created), at(1_800_000_000));
    assert_eq!(body.event_type(), HookEvent::Ready);
    assert_eq!(
        json_of(&body),
        json!({
            "type": "todo.ready",
            "reason": "created",
            "todo_id": "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a",
            "queue": "ci",
            "kind": "push",
            "source": "github",
            "summary": "Build failed on main",
            "endpoint": "builder",
            "attempt": 0,
            "created_at": "2027-01-15T08:00:00Z",
        })
    );
}

#[test]
fn a_requeued_ready_body_carries_the_attempt_counter() {
    let mut todo = facts();
    todo.attempt = 2;
    let body = json_of(&RingBody::ready(&ready(todo, ReadyReason::Requeued), at(0)));
    assert_eq!(body["reason"], "requeued");
    assert_eq!(body["attempt"], 2);
}

#[test]
fn a_ready_body_omits_absent_or_empty_kind_and_source() {
    let mut todo = facts();
    todo.kind = None;
    todo.source = Some("\u{7}".into()); // only a control character: empty once neutralised
    let body = json_of(&RingBody::ready(&ready(todo, ReadyReason::Created), at(0)));
    let object = body.as_object().unwrap();
    assert!(!object.contains_key("kind"));
    assert!(!object.contains_key("source"));
    assert_eq!(object.len(), 8);
}

#[test]
fn sender_text_in_a_ready_body_is_neutralised_and_cut() {
    let mut todo = facts();
    todo.title = format!("line one\nline two</CHANNEL>{}", "é".repeat(400));
    todo.kind = Some(format!("k\u{1b}[0m{}", "x".repeat(200)));
    todo.source = Some("a\r\nb".into());
    let body = json_of(&RingBody::ready(&ready(todo, ReadyReason::Created), at(0)));
    let summary = body["summary"].as_str().unwrap();
    assert!(summary.starts_with("line one line two«/channel»é"));
    assert_eq!(summary.chars().count(), 200);
    assert_eq!(body["kind"].as_str().unwrap().chars().count(), 128);
    assert!(body["kind"].as_str().unwrap().starts_with("k[0mxx"));
    assert_eq!(body["source"], "a  b");
}

#[test]
fn a_dead_letter_body_has_exactly_the_specified_fields() {
    let mut todo = facts();
    todo.attempts_total = 5;
    let body = RingBody::dead_lettered(&dead(todo, Some(final_attempt())), at(1_800_000_000));
    assert_eq!(body.event_type(), HookEvent::DeadLettered);
    assert_eq!(
        json_of(&body),
        json!({
            "type": "todo.dead_lettered",
            "todo_id": "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a",
            "source": "github",
            "kind": "push",
            "queue": "ci",
            "endpoint": "builder",
            "created_at": "2027-01-15T08:00:00Z",
            "reason": "attempts_exhausted",
            "attempts_total": 5,
            "final_attempt": {
                "seq": 5,
                "outcome": "failed",
                "summary": "still red",
                "artifact": "https://ci.example.com/run/7",
                "at": "2027-01-15T08:01:40Z",
            },
        })
    );
}

#[test]
fn a_dead_letter_body_keeps_absent_fields_as_null() {
    let mut todo = facts();
    todo.kind = None;
    todo.source = Some(String::new());
    let reaped =
        FinalAttempt { outcome: AttemptOutcome::LeaseExpired, summary: None, artifact: None, ..final_attempt() };
    let mut signal = dead(todo, Some(reaped));
    signal.reason = DeadReason::LeaseExpired;
    let body = json_of(&RingBody::dead_lettered(&signal, at(0)));
    assert_eq!(body["source"], Value::Null);
    assert_eq!(body["kind"], Value::Null);
    assert_eq!(body["reason"], "lease_expired");
    assert_eq!(body["final_attempt"]["summary"], Value::Null);
    assert_eq!(body["final_attempt"]["artifact"], Value::Null);
    assert_eq!(body.as_object().unwrap().len(), 10);

    let none = json_of(&RingBody::dead_lettered(&dead(facts(), None), at(0)));
    assert_eq!(none["final_attempt"], Value::Null);
    assert_eq!(none.as_object().unwrap().len(), 10);
}

#[test]
fn agent_text_in_a_dead_letter_body_is_neutralised() {
    let attempt = FinalAttempt {
        summary: Some(format!("oops\n</channel>\u{0}{}", "s".repeat(300))),
        artifact: Some("https://x.example/</channel>".into()),
        ..final_attempt()
    };
    let body = json_of(&RingBody::dead_lettered(&dead(facts(), Some(attempt)), at(0)));
    let summary = body["final_attempt"]["summary"].as_str().unwrap();
    assert!(summary.starts_with("oops «/channel»sss"));
    assert_eq!(summary.chars().count(), 200);
    assert_eq!(body["final_attempt"]["artifact"], "https://x.example/«/channel»");
}

#[test]
fn times_are_rfc3339_utc_with_sub_seconds_only_when_present() {
    let precise = Utc.timestamp_opt(1_800_000_000, 123_456_000).single().unwrap();
    let body = json_of(&RingBody::ready(&ready(facts(), ReadyReason::Created), precise));
    assert_eq!(body["created_at"], "2027-01-15T08:00:00.123456Z");
}

#[test]
fn hook_events_speak_their_wire_names() {
    assert_eq!(HookEvent::Ready.as_str(), "todo.ready");
    assert_eq!(HookEvent::DeadLettered.as_str(), "todo.dead_lettered");
    assert_eq!("todo.dead_lettered".parse::<HookEvent>().unwrap(), HookEvent::DeadLettered);
}

/// Every field at its cap, in four-byte characters: the longest body a dead letter can
/// produce.
fn widest_dead_letter() -> DeadLettered {
    let wide = |n: usize| "🚀".repeat(n + 10);
    let mut todo = facts();
    todo.queue = wide(64);
    todo.endpoint_slug = wide(63);
    todo.kind = Some(wide(128));
    todo.source = Some(wide(128));
    todo.attempts_total = i32::MIN;
    let attempt = FinalAttempt {
        seq: i32::MIN,
        outcome: AttemptOutcome::InterruptExpired,
        summary: Some(wide(200)),
        artifact: Some(wide(512)),
        at: DateTime::<Utc>::MAX_UTC,
    };
    DeadLettered { reason: DeadReason::AttemptsExhausted, ..dead(todo, Some(attempt)) }
}

#[test]
fn a_dead_letter_with_every_field_at_its_cap_fits_in_4096_bytes_by_cutting_the_summary() {
    let body = RingBody::dead_lettered(&widest_dead_letter(), DateTime::<Utc>::MAX_UTC);
    let uncut = serde_json::to_vec(&body).unwrap().len();
    assert!(uncut > MAX_BODY_BYTES, "the caps alone must be able to overflow, or this test proves nothing ({uncut})");

    let bytes = body.to_json().unwrap();
    assert!(bytes.len() <= MAX_BODY_BYTES);
    assert!(bytes.len() > MAX_BODY_BYTES - 4, "cuts only what it must");
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    let summary = value["final_attempt"]["summary"].as_str().unwrap().chars().count();
    assert!(summary < 200);
    assert_eq!(value["kind"].as_str().unwrap().chars().count(), 128);
    assert_eq!(value["source"].as_str().unwrap().chars().count(), 128);
    assert_eq!(value["final_attempt"]["artifact"].as_str().unwrap().chars().count(), 512);
    assert_eq!(body.to_json().unwrap(), bytes, "the same body always gives the same bytes");
}

#[test]
fn escaped_quotes_count_towards_the_limit() {
    let mut signal = widest_dead_letter();
    if let Some(f) = signal.final_attempt.as_mut() {
        f.artifact = Some("\"".repeat(512));
    }
    let body = RingBody::dead_lettered(&signal, at(0));
    let bytes = body.to_json().unwrap();
    assert!(bytes.len() <= MAX_BODY_BYTES);
    let value: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(value["final_attempt"]["artifact"].as_str().unwrap().len(), 512);
}

#[test]
fn a_ready_body_with_every_field_at_its_cap_needs_no_cut() {
    let wide = |n: usize| "🚀".repeat(n + 10);
    let mut todo = facts();
    todo.queue = wide(64);
    todo.endpoint_slug = wide(63);
    todo.kind = Some(wide(128));
    todo.source = Some(wide(128));
    todo.title = wide(200);
    todo.attempt = i32::MIN;
    let body = RingBody::ready(&ready(todo, ReadyReason::Requeued), DateTime::<Utc>::MAX_UTC);
    let bytes = body.to_json().unwrap();
    assert_eq!(bytes, serde_json::to_vec(&body).unwrap());
    assert!(bytes.len() <= MAX_BODY_BYTES);
}

fn arbitrary_text() -> impl Strategy<Value = String> {
    prop_oneof![any::<String>(), "[🚀\"\\\\\\n<>/a-zA-Z]{0,700}", "(?i:</channel>){0,60}"]
}

fn optional_text() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(arbitrary_text())
}

prop_compose! {
    fn arbitrary_facts()(
        queue in arbitrary_text(), slug in arbitrary_text(), kind in optional_text(),
        source in optional_text(), title in arbitrary_text(), attempt in any::<i32>(), total in any::<i32>(),
    ) -> TodoFacts {
        TodoFacts { queue, endpoint_slug: slug, kind, source, title, attempt, attempts_total: total, ..facts() }
    }
}

const READY_KEYS: &[&str] =
    &["type", "reason", "todo_id", "queue", "kind", "source", "summary", "endpoint", "attempt", "created_at"];
const DEAD_KEYS: &[&str] = &[
    "type",
    "todo_id",
    "source",
    "kind",
    "queue",
    "endpoint",
    "created_at",
    "reason",
    "attempts_total",
    "final_attempt",
];

fn assert_clean(value: &Value) {
    match value {
        Value::String(s) => {
            assert!(s.chars().all(|c| !c.is_control()) && !s.to_ascii_lowercase().contains("</channel>"))
        }
        Value::Object(o) => o.values().for_each(assert_clean),
        _ => {}
    }
}

proptest! {
    #[test]
    fn every_ready_body_is_small_clean_json_with_only_known_fields(todo in arbitrary_facts()) {
        let bytes = RingBody::ready(&ready(todo, ReadyReason::Created), at(0)).to_json().unwrap();
        prop_assert!(bytes.len() <= MAX_BODY_BYTES);
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert!(value.as_object().unwrap().keys().all(|k| READY_KEYS.contains(&k.as_str())));
        prop_assert_eq!(&value["type"], "todo.ready");
        assert_clean(&value);
    }

    #[test]
    fn every_dead_letter_body_is_small_clean_json_with_only_known_fields(
        todo in arbitrary_facts(), summary in optional_text(), artifact in optional_text(), seq in any::<i32>(),
        with_attempt in any::<bool>(),
    ) {
        let attempt = with_attempt.then(|| FinalAttempt { seq, summary, artifact, ..final_attempt() });
        let bytes = RingBody::dead_lettered(&dead(todo, attempt), at(0)).to_json().unwrap();
        prop_assert!(bytes.len() <= MAX_BODY_BYTES);
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        let keys: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        prop_assert_eq!(keys.len(), DEAD_KEYS.len());
        prop_assert!(keys.iter().all(|k| DEAD_KEYS.contains(k)));
        prop_assert_eq!(&value["type"], "todo.dead_lettered");
        assert_clean(&value);
    }
}
