use chrono::Duration;
use serde_json::json;

use super::*;
use crate::board::todos::fixtures::{attempt, now, todo};
use crate::domain::todo_state::{AttemptDisposition, AttemptOutcome};

const TOKEN: &str = "csrf-token-value";

fn view<'a>(t: &'a TodoRow, attempts: &'a [AttemptRow]) -> TodoDetailView<'a> {
    TodoDetailView {
        todo: t,
        endpoint: "ci-runner",
        attempts,
        now: now(),
        back_pill: Pill::Dead,
        back_search: "main",
        told: &[],
    }
}

fn dead_todo() -> TodoRow {
    let mut t = todo(TodoState::Failed);
    t.attempt = 5;
    t.attempts_total = 5;
    t.dead_reason = Some(DeadReason::AttemptsExhausted);
    t.dead_lettered_at = Some(now() - Duration::minutes(2));
    t.dead_letter_count = 2;
    t
}

#[test]
fn a_dead_letter_says_why_and_when_it_died_and_offers_retry_now_with_the_token() {
    let t = dead_todo();
    let html = todo_detail(&view(&t, &[]), TOKEN).into_string();
    assert!(html.contains("dead letter"));
    assert!(html.contains("attempts exhausted, <time"));
    assert!(html.contains("(it has died 2 times)"));
    assert!(html.contains("5 of 5; 5 in all"));
    assert!(html.contains(&format!("action=\"/todos/{}/retry\"", t.id)));
    assert!(html.contains(&format!("name=\"{CSRF_FIELD}\" value=\"{TOKEN}\"")));
    assert!(html.contains("<input type=\"hidden\" name=\"q\" value=\"main\">"));
    assert!(html.contains("href=\"/todos?filter=dead&amp;q=main\""));
}

#[test]
fn retry_now_is_offered_for_failed_todos_only_and_never_for_a_revoked_endpoint_or_quarantine() {
    let claimed = todo(TodoState::Claimed);
    assert!(!todo_detail(&view(&claimed, &[]), TOKEN).into_string().contains("Retry now"));
    let mut parked = todo(TodoState::Failed);
    parked.next_retry_at = Some(now() + Duration::seconds(90));
    let html = todo_detail(&view(&parked, &[]), TOKEN).into_string();
    assert!(html.contains("Retry now") && html.contains("instead of waiting for the scheduled retry"));
    assert!(html.contains("due in 2 min"));
    let mut revoked = dead_todo();
    revoked.dead_reason = Some(DeadReason::EndpointRevoked);
    let html = todo_detail(&view(&revoked, &[]), TOKEN).into_string();
    assert!(!html.contains("method=\"post\"") && html.contains("endpoint was revoked"));
    let mut held = dead_todo();
    held.queue = "quarantine".into();
    assert!(!todo_detail(&view(&held, &[]), TOKEN).into_string().contains("method=\"post\""));
}

#[test]
fn a_claimed_todo_shows_its_lease() {
    let mut t = todo(TodoState::Claimed);
    t.claimed_at = Some(now() - Duration::minutes(3));
    t.lease_expires_at = Some(now() + Duration::minutes(2));
    let html = todo_detail(&view(&t, &[]), TOKEN).into_string();
    assert!(html.contains("held since <time"));
    assert!(html.contains(">3 min ago</time>; ends in 2 min (2026-11-30 03:02:00 UTC)"), "{html}");
}

#[test]
fn the_timeline_lists_attempts_newest_first_with_outcome_summary_and_a_safe_artifact_link() {
    let mut t = dead_todo();
    t.attempts_total = 25;
    let mut last = attempt(t.id, 25, Some("step 3:\n  exit status 1 <stderr>"));
    last.outcome = Some(AttemptOutcome::Failed);
    last.disposition = Some(AttemptDisposition::DeadLettered);
    last.artifact = Some("https://ci.example.com/runs/9?a=1&b=2".into());
    let mut earlier = attempt(t.id, 24, None);
    earlier.artifact = Some("mcp://cairn/abc".into());
    earlier.relay = true;
    let attempts = [last, earlier];
    let html = todo_detail(&view(&t, &attempts), TOKEN).into_string();
    assert!(html.contains("The newest 2 of 25, newest first."));
    let (first, second) = (html.find("#25").unwrap(), html.find("#24").unwrap());
    assert!(first < second, "newest first");
    assert!(html.contains("failed</span> → dead-lettered"));
    assert!(html.contains("step 3:\n  exit status 1 &lt;stderr&gt;"));
    assert!(
        html.contains("<a href=\"https://ci.example.com/runs/9?a=1&amp;b=2\" rel=\"noopener noreferrer nofollow\">")
    );
    assert!(html.contains("<code>mcp://cairn/abc</code>"), "not a link");
    assert!(html.contains("relay"));
    assert!(html.contains("harness/box/claude/run-7"));
}

#[test]
fn an_open_attempt_shows_when_its_lease_ends() {
    let t = todo(TodoState::Claimed);
    let mut open = attempt(t.id, 1, None);
    open.ended_at = None;
    open.outcome = None;
    open.disposition = None;
    open.lease_expires_at = now() + Duration::minutes(10);
    let attempts = [open];
    let html = todo_detail(&view(&t, &attempts), TOKEN).into_string();
    assert!(html.contains("sb-outcome-open") && html.contains("lease ends in 10 min"));
}

#[test]
fn result_payload_and_work_order_are_shown_escaped_and_big_json_is_cut() {
    let mut t = todo(TodoState::Done);
    t.result = Some(json!({"note": "</pre><script>x</script>"}));
    t.work_order = Some("<b>do it</b>".into());
    t.payload = Some(json!({"blob": "y".repeat(70 * 1024)}));
    t.payload_size = 70 * 1024;
    let html = todo_detail(&view(&t, &[]), TOKEN).into_string();
    assert!(!html.contains("<script>") && !html.contains("<b>do"));
    assert!(html.contains("&lt;/pre&gt;&lt;script&gt;"));
    assert!(html.contains("Payload (71680 bytes)"));
    assert!(html.contains("Cut at 64 KiB of 70 KiB."));
    assert!(html.contains("Never claimed."));
}

#[test]
fn the_title_is_escaped() {
    let mut t = todo(TodoState::Pending);
    t.title = "<img src=x onerror=alert(1)>".into();
    let html = todo_detail(&view(&t, &[]), TOKEN).into_string();
    assert!(!html.contains("<img") && html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

#[test]
fn a_todo_goes_back_to_the_pill_it_is_listed_under() {
    assert_eq!(home_pill(&dead_todo()), Pill::Dead);
    let mut retrying = todo(TodoState::Failed);
    retrying.next_retry_at = Some(now() + Duration::minutes(1));
    assert_eq!(home_pill(&retrying), Pill::Failed);
    assert_eq!(home_pill(&todo(TodoState::Pending)), Pill::Pending);
    assert_eq!(home_pill(&todo(TodoState::Done)), Pill::Done);
    assert_eq!(home_pill(&todo(TodoState::InputRequired)), Pill::All);
    let mut held = todo(TodoState::Pending);
    held.queue = QUARANTINE_QUEUE.into();
    assert_eq!(home_pill(&held), Pill::All);
}
