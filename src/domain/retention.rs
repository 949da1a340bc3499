//! Retention's decisions: which todos are history, how old they must be before they
//! go, and when the pruner runs. The store writes [`prunable`] in SQL
//! (`store::retention`), and an integration test pins that both agree on every state.

use std::time::Duration;

use super::todo_state::TodoState;

/// Default age after which terminal rows go (the earlier implementation's 30 days).
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// Longest retention the settings accept (100 years: "keep everything" without 0's
/// meaning, which is "off").
pub const MAX_RETENTION_DAYS: u32 = 36_500;
/// Rows deleted per statement: as small as the sweeps' batches, so a claim on the same
/// table never waits long behind one.
pub const RETENTION_BATCH: i64 = 500;
/// The first prune after start-up waits at most this long. Waiting a whole interval
/// (an hour by default) would mean a service redeployed more often than that never
/// prunes at all.
pub const FIRST_RUN_AT_MOST: Duration = Duration::from_secs(60);

/// The age past which terminal rows are pruned, from the `SWITCHBOARD_RETENTION_DAYS`
/// setting; `None` (retention off, nothing is ever pruned) for 0.
pub fn max_age(days: u32) -> Option<Duration> {
    (days > 0).then(|| Duration::from_secs(u64::from(days.min(MAX_RETENTION_DAYS)) * 86_400))
}

/// Whether a todo is history that retention may prune once its last change is old
/// enough: done, canceled, or a dead letter (failed with no retry scheduled). Live work
/// (pending, claimed, interrupted, failed with a retry scheduled) never is. On the
/// quarantine queue that means a held delivery (pending) stays and a closed one
/// (released or discarded: done) ages out like any other finished row.
pub fn prunable(state: TodoState, retry_scheduled: bool) -> bool {
    match state {
        TodoState::Done | TodoState::Canceled => true,
        TodoState::Failed => !retry_scheduled,
        TodoState::Pending | TodoState::Claimed | TodoState::InputRequired | TodoState::AuthRequired => false,
    }
}

/// How long after start-up the first prune runs: one interval, but never more than
/// [`FIRST_RUN_AT_MOST`].
pub fn first_run_after(interval: Duration) -> Duration {
    interval.min(FIRST_RUN_AT_MOST)
}

/// Whether a batch that deleted `deleted` rows may have left more behind it.
pub fn batch_was_full(deleted: usize) -> bool {
    deleted as i64 >= RETENTION_BATCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_days_turns_retention_off_and_other_values_are_whole_days() {
        assert_eq!(max_age(0), None);
        assert_eq!(max_age(30), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(max_age(u32::MAX), Some(Duration::from_secs(u64::from(MAX_RETENTION_DAYS) * 86_400)));
    }

    #[test]
    fn only_done_canceled_and_dead_letters_are_history() {
        use TodoState::*;
        for (state, retry, expected) in [
            (Done, false, true),
            (Canceled, false, true),
            (Failed, false, true),
            (Failed, true, false),
            (Pending, false, false),
            (Claimed, false, false),
            (InputRequired, false, false),
            (AuthRequired, false, false),
        ] {
            assert_eq!(prunable(state, retry), expected, "{state:?} retry={retry}");
        }
    }

    #[test]
    fn the_first_prune_runs_within_a_minute_of_start_up() {
        assert_eq!(first_run_after(Duration::from_secs(3600)), FIRST_RUN_AT_MOST);
        assert_eq!(first_run_after(Duration::from_millis(50)), Duration::from_millis(50));
    }

    #[test]
    fn a_short_batch_ends_the_pass() {
        assert!(batch_was_full(500));
        assert!(!batch_was_full(499));
        assert!(!batch_was_full(0));
    }
}
