//! A worker's claim: dead letters' records (one row per subscribed sink, sent straight
//! from the record and written once with the answer) and due rows of the sinks it is not
//! already draining, committed before anything is sent, split into one share per sink
//! (and a share for each sink whose held rows nobody has claimed, so its budget is asked
//! again).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use super::OutboxDeps;
use super::drain::{SinkShare, record_and_settle, undeliverable};
use super::tally::Tally;
use crate::domain::ids::SinkId;
use crate::error::Result;
use crate::sinks::statements::outbox::{CLAIM_BATCH, ClaimedEvents, OutboxRow, Record, SendOutcome};

/// What one claim took.
pub struct OutboxClaim {
    /// Rows handed to drains now, and records deleted: whether claiming again at once can
    /// find more to do.
    pub progress: usize,
    /// One share per sink to drain now.
    pub shares: Vec<SinkShare>,
    /// One share per sink in `draining` that fresh rows were claimed for: drained as
    /// soon as the sink's drain ends.
    pub waiting: Vec<SinkShare>,
}

/// Claims due rows, skipping the sinks in `draining` and `waiting` (a share claimed
/// for them waits for their drain), for at most `room` sinks; a dead letter's rows for a
/// draining sink with no share waiting become its waiting share, rows of sinks with one
/// already and of sinks past the room are given back uncounted, and rows whose sink was
/// deleted end `undeliverable`.
pub async fn claim(deps: &OutboxDeps, draining: &[SinkId], waiting: &[SinkId], room: usize) -> Result<OutboxClaim> {
    let store = &deps.store;
    let busy: Vec<SinkId> = draining.iter().chain(waiting).copied().collect();
    // Taken before the claims, so the drain's window never outlasts the database's. A
    // claim of dead letters' records that fails must not stop the rest of the outbox: it
    // is logged and tried again at the next claim.
    let claimed_at = Instant::now();
    let mut events = match store.claim_outbox_events(CLAIM_BATCH).await {
        Ok(events) => events,
        Err(e) => {
            tracing::warn!(error = %e, "outbox: recorded dead letters were not claimed; will retry");
            ClaimedEvents::default()
        }
    };
    let fresh_count = events.rows.len() + events.settled.len();
    let known = Arc::new(std::mem::take(&mut events.facts));
    let tally = Tally::of(&events.rows);
    let settled_count = events.settled.len();
    tally.restore(events.settled);
    let rows = match store.claim_outbox(&busy).await {
        Ok(rows) => rows,
        Err(e) if fresh_count > 0 => {
            tracing::warn!(error = %e, "outbox: due rows were not claimed; next claim");
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let mut progress = rows.len() + settled_count;
    // A record's row for a sink this worker is draining waits for that drain (its claim
    // has time: the window is checked before each attempt); for a sink that already has
    // a share waiting it is written pending, for the outbox's claim.
    let (busy_rows, fresh): (Vec<OutboxRow>, Vec<OutboxRow>) =
        events.rows.into_iter().partition(|row| row.sink_id.is_some_and(|sink| busy.contains(&sink)));
    let (wait, held_back): (Vec<OutboxRow>, Vec<OutboxRow>) =
        busy_rows.into_iter().partition(|row| row.sink_id.is_some_and(|sink| !waiting.contains(&sink)));
    progress += fresh.len();
    // Oldest first: the claims' statements return rows in no particular order, and the
    // budget sends the first rows of a share alone and holds the rest.
    let mut ordered: Vec<OutboxRow> = fresh.into_iter().chain(rows).collect();
    ordered.sort_by_key(|row| (row.created_at, row.id));
    let (by_sink, orphans, mut over) = split(ordered, room);
    over.extend(held_back);
    let mut waiting: BTreeMap<SinkId, Vec<OutboxRow>> = BTreeMap::new();
    for row in wait {
        if let Some(sink) = row.sink_id {
            waiting.entry(sink).or_default().push(row);
        }
    }
    // From here on the rows are claimed: whatever fails, the shares are drained (what is
    // not recorded lapses and is claimed again).
    let mut records = undeliverable(&orphans, "sink_gone");
    records.extend(over.iter().map(|row| Record::of(row, SendOutcome::GivenBack)));
    if let Err(e) = record_and_settle(store, &tally, &records).await {
        tracing::warn!(error = %e, "outbox: rows past this claim's room were not given back; their claim lapses");
    }
    let mut shares: Vec<SinkShare> = by_sink
        .into_iter()
        .map(|(sink, due)| SinkShare { sink, due, claimed_at, tally: tally.clone(), known: known.clone() })
        .collect();
    if shares.len() < room {
        let mut skip: Vec<SinkId> = busy.to_vec();
        skip.extend(shares.iter().map(|share| share.sink));
        match store.sinks_with_held(&skip).await {
            Ok(held) => {
                for sink in held.into_iter().take(room - shares.len()) {
                    shares.push(SinkShare {
                        sink,
                        due: Vec::new(),
                        claimed_at,
                        tally: tally.clone(),
                        known: known.clone(),
                    });
                }
            }
            Err(e) => tracing::warn!(error = %e, "outbox: sinks with held rows were not looked up; next claim"),
        }
    }
    let waiting = waiting
        .into_iter()
        .map(|(sink, due)| SinkShare { sink, due, claimed_at, tally: tally.clone(), known: known.clone() })
        .collect();
    Ok(OutboxClaim { progress, shares, waiting })
}

/// Claimed rows by sink for the first `room` sinks (in claim order), the rows whose
/// sink is gone, and the rows of sinks past `room`.
fn split(rows: Vec<OutboxRow>, room: usize) -> (BTreeMap<SinkId, Vec<OutboxRow>>, Vec<OutboxRow>, Vec<OutboxRow>) {
    let mut by_sink: BTreeMap<SinkId, Vec<OutboxRow>> = BTreeMap::new();
    let mut orphans = Vec::new();
    let mut over = Vec::new();
    for row in rows {
        match row.sink_id {
            None => orphans.push(row),
            Some(sink) if by_sink.contains_key(&sink) || by_sink.len() < room => {
                by_sink.entry(sink).or_default().push(row)
            }
            Some(_) => over.push(row),
        }
    }
    (by_sink, orphans, over)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(sink: Option<SinkId>) -> OutboxRow {
        OutboxRow::test_row(sink)
    }

    #[test]
    fn rows_of_sinks_past_the_room_are_set_apart_and_a_sink_in_the_room_keeps_all_its_rows() {
        let (a, b, c) = (SinkId::new(), SinkId::new(), SinkId::new());
        let rows = vec![row(Some(a)), row(Some(b)), row(None), row(Some(c)), row(Some(a)), row(Some(c))];
        let (by_sink, orphans, over) = split(rows, 2);
        assert_eq!(by_sink.keys().copied().collect::<Vec<_>>().len(), 2);
        assert_eq!(by_sink[&a].len(), 2);
        assert_eq!(by_sink[&b].len(), 1);
        assert_eq!(orphans.len(), 1);
        assert_eq!(over.len(), 2);
        assert!(over.iter().all(|r| r.sink_id == Some(c)));
    }
}
