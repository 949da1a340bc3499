//! Plain rows for the page bodies' unit tests.

use chrono::{DateTime, Duration, Utc};

use crate::db::models::{AttemptRow, TodoRow};
use crate::domain::ids::{EndpointId, ScopeId, TodoId};
use crate::domain::pills::{PillCount, PillCounts};
use crate::domain::todo_state::{AttemptDisposition, AttemptOutcome, DeadReason, TodoState};
use crate::store::board::TodoListing;
use crate::store::dead_letters::DeadLetter;

/// A fixed "now".
pub fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-30T03:00:00Z").unwrap().with_timezone(&Utc)
}

/// Counts with every pill distinct.
pub fn counts() -> PillCounts {
    PillCounts {
        all: PillCount::AtLeast(10_000),
        pending: PillCount::Exact(1_234),
        claimed: PillCount::Exact(7),
        done: PillCount::Exact(8_000),
        failed: PillCount::Exact(3),
        dead: PillCount::Exact(42),
    }
}

/// A dead letter that died 5 minutes before [`now`].
pub fn dead_letter(title: &str, summary: Option<&str>) -> DeadLetter {
    let at = now() - Duration::minutes(5);
    DeadLetter {
        id: TodoId::new(),
        queue: "builds".into(),
        endpoint_id: EndpointId::new(),
        endpoint: "ci-runner".into(),
        title: title.into(),
        source: Some("github".into()),
        kind: Some("push".into()),
        reason: DeadReason::AttemptsExhausted,
        attempts_total: 5,
        max_attempts: 5,
        dead_letter_count: 1,
        dead_lettered_at: at,
        created_at: at - Duration::hours(1),
        final_seq: Some(5),
        final_outcome: Some(AttemptOutcome::Failed),
        final_summary: summary.map(str::to_owned),
        final_artifact: None,
        final_at: Some(at),
    }
}

/// A listed todo in `state`.
pub fn listing(title: &str, state: TodoState) -> TodoListing {
    TodoListing {
        id: TodoId::new(),
        endpoint_id: EndpointId::new(),
        endpoint: "ci-runner".into(),
        queue: "builds".into(),
        title: title.into(),
        source: None,
        kind: None,
        state,
        attempt: 1,
        max_attempts: 5,
        attempts_total: 1,
        created_at: now() - Duration::hours(2),
        updated_at: now() - Duration::hours(1),
        lease_expires_at: (state == TodoState::Claimed).then(|| now() + Duration::minutes(4)),
        interrupt_expires_at: None,
        next_retry_at: None,
        dead_reason: None,
        dead_lettered_at: None,
    }
}

/// A todo row in `state`, created an hour before [`now`].
pub fn todo(state: TodoState) -> TodoRow {
    TodoRow {
        id: TodoId::new(),
        endpoint_id: EndpointId::new(),
        scope_id: ScopeId::new(),
        queue: "builds".into(),
        source: Some("github".into()),
        kind: Some("push".into()),
        title: "Build main".into(),
        payload: None,
        payload_size: 0,
        event_id: None,
        idempotency_key: None,
        state,
        attempt: 0,
        max_attempts: 5,
        attempts_total: 0,
        claimed_by: None,
        lease_expires_at: None,
        lease_token_hash: None,
        interrupt_reason: None,
        interrupt_expires_at: None,
        interrupt_wait_seconds: None,
        next_retry_at: None,
        result: None,
        dead_reason: None,
        dead_lettered_at: None,
        dead_letter_count: 0,
        created_at: now() - Duration::hours(1),
        updated_at: now() - Duration::minutes(1),
        claimed_at: None,
        completed_at: None,
        quarantine_reason: None,
        work_order: None,
        attempt_claimant: None,
        attempt_relay: false,
        attempt_heartbeat_at: None,
        attempt_ended_at: None,
        attempt_lease_expires_at: None,
        attempt_summary: None,
        attempt_summary_truncated: false,
        attempt_artifact: None,
    }
}

/// A closed attempt `seq` of `todo`.
pub fn attempt(todo: TodoId, seq: i32, summary: Option<&str>) -> AttemptRow {
    let claimed = now() - Duration::minutes(30 - i64::from(seq));
    AttemptRow {
        todo_id: todo,
        seq,
        claimer_endpoint_id: None,
        claimant: Some("harness/box/claude/run-7".into()),
        relay: false,
        claimed_at: claimed,
        last_heartbeat_at: None,
        lease_expires_at: claimed + Duration::minutes(5),
        ended_at: Some(claimed + Duration::minutes(1)),
        outcome: Some(AttemptOutcome::Failed),
        disposition: Some(AttemptDisposition::RetryScheduled),
        summary: summary.map(str::to_owned),
        summary_truncated: false,
        artifact: None,
    }
}
