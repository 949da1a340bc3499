//! The open attempt a claimed or interrupted todo holds on its row, as the detail
//! pages (Board and API) show it: `TodoRow::open_attempt` and `history_with_open`.

use chrono::{Duration, Utc};

use super::fixtures::{attempt, todo};
use crate::db::models::TodoRow;
use crate::domain::todo_state::TodoState;

fn claimed(seq: i32) -> TodoRow {
    let mut t = todo(TodoState::Claimed);
    t.attempts_total = seq;
    t.claimed_at = Some(Utc::now());
    t.lease_expires_at = Some(Utc::now() + Duration::minutes(5));
    t.attempt_claimant = Some("worker-3".into());
    t.attempt_relay = true;
    t
}

#[test]
fn a_claimed_todo_holds_its_open_attempt_with_the_claims_facts() {
    let t = claimed(3);
    let open = t.open_attempt().expect("open");
    assert_eq!((open.todo_id, open.seq, open.claimant.as_deref(), open.relay), (t.id, 3, Some("worker-3"), true));
    assert_eq!((open.claimed_at, open.lease_expires_at), (t.claimed_at.unwrap(), t.lease_expires_at.unwrap()));
    assert!(open.ended_at.is_none() && open.outcome.is_none() && open.disposition.is_none());
}

#[test]
fn an_interrupted_todos_open_attempt_runs_on_the_interrupt_lease() {
    let mut t = claimed(1);
    t.state = TodoState::InputRequired;
    t.lease_expires_at = None;
    t.interrupt_expires_at = Some(Utc::now() + Duration::hours(1));
    assert_eq!(t.open_attempt().map(|a| a.lease_expires_at), t.interrupt_expires_at);
}

#[test]
fn a_todo_not_held_by_a_claim_has_no_open_attempt() {
    for state in [TodoState::Pending, TodoState::Done, TodoState::Failed, TodoState::Canceled] {
        let mut t = claimed(2);
        t.state = state;
        assert!(t.open_attempt().is_none(), "{state:?}");
    }
    let mut never = claimed(0);
    never.claimed_at = None;
    assert!(never.open_attempt().is_none(), "no claim was ever made");
}

#[test]
fn the_history_shows_the_open_attempt_first_once_and_within_the_limit() {
    let t = claimed(3);
    let stored = vec![attempt(t.id, 2, None), attempt(t.id, 1, None)];
    let shown = t.history_with_open(stored.clone(), 20);
    assert_eq!(shown.iter().map(|a| a.seq).collect::<Vec<_>>(), [3, 2, 1]);
    assert!(shown[0].ended_at.is_none());
    assert_eq!(t.history_with_open(stored, 2).iter().map(|a| a.seq).collect::<Vec<_>>(), [3, 2]);
    // An earlier release stored the open attempt as a row: that row is shown, once.
    let mut legacy = attempt(t.id, 3, None);
    legacy.ended_at = None;
    let shown = t.history_with_open(vec![legacy, attempt(t.id, 2, None)], 20);
    assert_eq!(shown.iter().map(|a| a.seq).collect::<Vec<_>>(), [3, 2]);
    assert_eq!(shown[0].claimant.as_deref(), Some("harness/box/claude/run-7"));
}
