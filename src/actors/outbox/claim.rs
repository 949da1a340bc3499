//! A worker's claim: due rows of the sinks it is not already draining, committed before
//! anything is sent, split into one share per sink (and a share for each sink whose
//! held rows nobody has claimed, so its budget is asked again).

use std::collections::BTreeMap;
use std::time::Instant;

use super::OutboxDeps;
use super::drain::{SinkShare, undeliverable};
use crate::domain::ids::SinkId;
use crate::error::Result;
use crate::store::outbox::{CLAIM_BATCH, OutboxRow, Outcome, Record};

/// What one claim took.
pub struct Claim {
    /// Rows claimed and dead letters fanned out (0: nothing was waiting).
    pub claimed: usize,
    /// One share per sink to drain now.
    pub shares: Vec<SinkShare>,
}

/// Claims due rows, skipping the sinks in `busy`, for at most `room` sinks; rows of
/// sinks past that are given back uncounted, and rows whose sink was deleted end
/// `undeliverable`.
pub async fn claim(deps: &OutboxDeps, busy: &[SinkId], room: usize) -> Result<Claim> {
    let store = &deps.store;
    // Taken before the claim, so the drain's window never outlasts the database's claim.
    // Dead letters recorded since the last claim become their sinks' rows first. A
    // fan-out that fails must not stop the rest of the outbox: it is logged and tried
    // again at the next claim.
    let fanned_out = match store.fan_out_outbox(CLAIM_BATCH).await {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "outbox: recorded dead letters were not fanned out; will retry");
            0
        }
    };
    let claimed_at = Instant::now();
    let rows = store.claim_outbox(busy).await?;
    let claimed = rows.len() + fanned_out;
    let (by_sink, orphans, over) = split(rows, room);
    // From here on the rows are claimed: whatever fails, the shares are drained (what is
    // not recorded lapses and is claimed again).
    let mut records = undeliverable(&orphans, "sink_gone");
    records.extend(over.iter().map(|row| Record { id: row.id, attempts: row.attempts, outcome: Outcome::GivenBack }));
    if let Err(e) = store.record_outbox(&records).await {
        tracing::warn!(error = %e, "outbox: rows past this claim's room were not given back; their claim lapses");
    }
    let mut shares: Vec<SinkShare> =
        by_sink.into_iter().map(|(sink, due)| SinkShare { sink, due, claimed_at }).collect();
    if shares.len() < room {
        let mut skip: Vec<SinkId> = busy.to_vec();
        skip.extend(shares.iter().map(|share| share.sink));
        match store.sinks_with_held(&skip).await {
            Ok(held) => {
                for sink in held.into_iter().take(room - shares.len()) {
                    shares.push(SinkShare { sink, due: Vec::new(), claimed_at });
                }
            }
            Err(e) => tracing::warn!(error = %e, "outbox: sinks with held rows were not looked up; next claim"),
        }
    }
    Ok(Claim { claimed, shares })
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
    use crate::domain::sinks::{Severity, SinkEvent};

    fn row(sink: Option<SinkId>) -> OutboxRow {
        OutboxRow {
            id: uuid::Uuid::new_v4(),
            sink_id: sink,
            event: SinkEvent::DeadLettered,
            todo_id: None,
            endpoint_id: None,
            facts: serde_json::json!({}),
            severity: Severity::High,
            include_excerpt: false,
            count: 1,
            attempts: 1,
            last_error: None,
            created_at: chrono::Utc::now(),
        }
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
