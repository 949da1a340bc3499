//! Which dead-letter records a claim still owes rows for. A record claimed straight
//! from `outbox_events` may name several sinks, drained side by side; it is deleted only
//! once every one of its sinks' rows is written (committed), so a worker that dies
//! between two sinks leaves the record to be claimed again for the sinks still owed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::sinks::statements::outbox::{OutboxRow, Record};

/// Rows still owed per record of one claim, and the records every row of which is
/// written but that are not deleted yet.
#[derive(Debug, Clone, Default)]
pub struct Tally(Arc<Mutex<Counts>>);

#[derive(Debug, Default)]
struct Counts {
    owed: HashMap<i64, usize>,
    settled: Vec<i64>,
}

impl Tally {
    /// The tally of a claim's fresh rows.
    pub fn of<'a>(rows: impl IntoIterator<Item = &'a OutboxRow>) -> Tally {
        let mut counts = Counts::default();
        for event in rows.into_iter().filter_map(|row| row.event_ref) {
            *counts.owed.entry(event).or_default() += 1;
        }
        Tally(Arc::new(Mutex::new(counts)))
    }

    fn counts(&self) -> MutexGuard<'_, Counts> {
        // A panic elsewhere while holding the lock leaves counts that are still whole
        // (each change is one map update).
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts the fresh rows of `records` as written (their statement committed).
    pub fn written(&self, records: &[Record]) {
        self.written_refs(records.iter().filter_map(|r| r.fresh.map(|f| f.event_ref)));
    }

    /// Counts rows of these records as written.
    pub fn written_refs(&self, refs: impl IntoIterator<Item = i64>) {
        let mut counts = self.counts();
        for event in refs {
            if let Some(owed) = counts.owed.get_mut(&event) {
                *owed = owed.saturating_sub(1);
                if *owed == 0 {
                    counts.owed.remove(&event);
                    counts.settled.push(event);
                }
            }
        }
    }

    /// Takes the records that are owed nothing more, to delete (given back with
    /// [`Tally::restore`] if the deletion fails).
    pub fn take_settled(&self) -> Vec<i64> {
        std::mem::take(&mut self.counts().settled)
    }

    /// Puts records whose deletion failed back, for the next statement to delete.
    pub fn restore(&self, settled: Vec<i64>) {
        self.counts().settled.extend(settled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::SinkId;
    use crate::sinks::rules::vocabulary::OutboxStatus;
    use crate::sinks::statements::outbox::SendOutcome;

    fn fresh(event: i64, sink: SinkId) -> OutboxRow {
        OutboxRow {
            event_ref: Some(event),
            record_scope: Some(crate::domain::ids::ScopeId::new()),
            todo_id: Some(crate::domain::ids::TodoId::new()),
            endpoint_id: Some(crate::domain::ids::EndpointId::new()),
            dead_letter_count: Some(1),
            ..OutboxRow::test_row(Some(sink))
        }
    }

    #[test]
    fn a_record_is_settled_only_once_every_sinks_row_is_written() {
        let (a, b) = (SinkId::new(), SinkId::new());
        let rows = [fresh(1, a), fresh(1, b), fresh(2, a)];
        let tally = Tally::of(&rows);
        let sent = |row: &OutboxRow| Record::of(row, SendOutcome::Done(OutboxStatus::Sent, None));
        tally.written(&[sent(&rows[0]), sent(&rows[2])]);
        assert_eq!(tally.take_settled(), vec![2], "record 1 still owes sink b's row");
        tally.written(&[sent(&rows[1])]);
        assert_eq!(tally.take_settled(), vec![1]);
        assert!(tally.take_settled().is_empty(), "taken once");
    }

    #[test]
    fn rows_already_in_the_table_and_repeats_change_nothing() {
        let sink = SinkId::new();
        let rows = [fresh(7, sink)];
        let tally = Tally::of(&rows);
        let claimed = OutboxRow { event_ref: None, ..fresh(8, sink) };
        tally.written(&[Record::of(&claimed, SendOutcome::GivenBack)]);
        assert!(tally.take_settled().is_empty());
        tally.written_refs([7, 7]);
        assert_eq!(tally.take_settled(), vec![7]);
        tally.restore(vec![7]);
        assert_eq!(tally.take_settled(), vec![7], "a failed deletion is tried again");
    }
}
