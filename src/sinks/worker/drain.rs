//! One sink's share of a claim: its budget decides what goes out alone, what goes out as
//! one coalesced message and what is held; the messages are rendered from facts read
//! for all its rows at once; up to [`MAX_SENDS_IN_FLIGHT`] are on the wire at a
//! time; and a recorder beside the senders writes the answers in batches (what has come
//! back within [`RECORD_LINGER`] of the first unrecorded answer, or [`RECORD_BATCH`]
//! answers, or the last of the share), so a backlog costs one commit per batch instead
//! of one per message, while no answer waits long unrecorded.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures_util::{StreamExt, stream};
use tokio::sync::{mpsc, oneshot};

use super::render::{coalesced, render};
use super::tally::Tally;
use super::{DrainReport, MAX_SENDS_IN_FLIGHT, OutboxDeps};
use crate::domain::ids::{SinkId, TodoId};
use crate::error::{Error, Result};
use crate::metrics::SinkOutcome;
use crate::sinks::clients::post::{SinkTarget, post, scheme_refusal};
use crate::sinks::rules::claim_window::ClaimWindow;
use crate::sinks::rules::content::{DeadLetterFacts, Message};
use crate::sinks::rules::outcome::{ErrorClass, SinkAnswer, Step, after_attempt};
use crate::sinks::rules::vocabulary::OutboxStatus;
use crate::sinks::statements::Credential;
use crate::sinks::statements::outbox::{OutboxRow, Record, SendOutcome, SinkDial, SubjectFacts};
use crate::store::Store;

/// Answers one recorder write takes at most.
const RECORD_BATCH: usize = 256;

/// How long the recorder waits for more answers after the first one it has not written
/// yet. Why: with 8 messages in flight a receiver on the same network answers one every
/// few hundred microseconds, so writing whatever had come back since the last write made
/// batches of about ten, each a statement and a commit (its WAL flush) of its own; the
/// statement's cost barely grows with its rows. An answer lost to a crash in this window
/// is sent again once its claim lapses, as one lost in the write itself would be; the
/// share's last answers are written as soon as its last send ends.
const RECORD_LINGER: std::time::Duration = std::time::Duration::from_millis(20);

/// What a sink's drain needs besides the worker's dependencies.
pub struct SinkShare {
    /// The sink.
    pub sink: SinkId,
    /// Its rows this claim took (none: only its held rows are looked at).
    pub due: Vec<OutboxRow>,
    /// When the claim was taken (no later than the database's claim time).
    pub claimed_at: Instant,
    /// The claim's dead-letter records and the rows they are still owed.
    pub tally: Tally,
    /// What the claim read of its dead letters' messages (shared by its shares).
    pub known: Arc<HashMap<(TodoId, bool), DeadLetterFacts>>,
}

/// Sends one sink's share and records every answer; then deletes the dead-letter
/// records every sink's row of which is written.
pub async fn drain_sink(deps: &OutboxDeps, client: &awc::Client, share: SinkShare) -> Result<DrainReport> {
    let (sent, _) = oneshot::channel();
    drain_sink_telling(deps, client, share, sent).await
}

/// [`drain_sink`], telling `sent` as soon as nothing more will be sent for the share
/// (its last answers may still be being written): the worker starts the sink's next
/// share then, instead of leaving the sink silent for the last writes' round trips.
/// `sent` is dropped untold when the share ends otherwise (an error, held rows).
pub async fn drain_sink_telling(
    deps: &OutboxDeps,
    client: &awc::Client,
    share: SinkShare,
    sent: oneshot::Sender<()>,
) -> Result<DrainReport> {
    let tally = share.tally.clone();
    let drained = drain(deps, client, share, sent).await;
    let settled = tally.take_settled();
    if let Err(e) = deps.store.delete_outbox_events(&settled).await {
        // Deleted by a later statement of this claim, or claimed again once their claim
        // lapses (every sink's row is written: such a claim takes nothing but the record).
        tracing::warn!(error = %e, "outbox: settled dead-letter records were not deleted; later");
        tally.restore(settled);
    }
    drained
}

async fn drain(
    deps: &OutboxDeps,
    client: &awc::Client,
    share: SinkShare,
    sent: oneshot::Sender<()>,
) -> Result<DrainReport> {
    let SinkShare { sink, due, claimed_at, tally, known } = share;
    let store = &deps.store;
    let mut report = DrainReport::default();
    let dial = match store.sink_dial(sink).await? {
        Some(dial) if dial.enabled => dial,
        found => {
            let why = if found.is_some() { "sink_disabled" } else { "sink_gone" };
            // Its held rows too: no token will ever send them.
            record_and_settle(store, &tally, &undeliverable(&due, why)).await?;
            store.end_held_outbox(sink, why).await?;
            return Ok(report);
        }
    };
    if !dial.bound {
        // An earlier release's connection the upgrade could not bind: its messages wait,
        // unsent, for an admin to rotate it with a destination.
        let held_now: Vec<_> = due.iter().map(|row| row.event).collect();
        tally.written_refs(store.hold_for_unbound(due).await?);
        for event in held_now {
            deps.metrics.sink_send(event, SinkOutcome::Held);
        }
        return Ok(report);
    }
    let plan = store.plan_sink(sink, due).await?;
    tally.written_refs(plan.written.iter().copied());
    report.held += plan.held;
    for event in &plan.held_now {
        deps.metrics.sink_send(*event, SinkOutcome::Held);
    }
    if plan.individual.is_empty() && plan.coalesced.is_empty() {
        return Ok(report);
    }
    // The secret comes with the one destination it is bound to: the sink's own copy of
    // the URL is never what is dialled.
    let credential = match store.bound_credential(&deps.vault, dial.scope_id, dial.connection_id).await {
        Ok(Some(credential)) => credential,
        // Gone, or (never by this release) unbound since the sink was looked up.
        Ok(None) | Err(Error::EncryptionRequired | Error::NotFound) => {
            record_and_settle(store, &tally, &undeliverable(&plan.individual, "no_credential")).await?;
            let ids: Vec<uuid::Uuid> = plan.coalesced.iter().map(|r| r.id).collect();
            store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some("no_credential")).await?;
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    let target = target(&dial, &credential);
    if let Some(refused) = scheme_refusal(&target, &deps.schemes) {
        // URLs stored under a wider policy: none of these rows will be sent while it
        // stands. The row says which scheme, never the URL (it embeds tokens).
        let why = refused.last_error();
        tracing::warn!(sink = %sink, reason = why, "outbox: the sink's Apprise URLs are outside the scheme policy; its rows are undeliverable");
        record_and_settle(store, &tally, &undeliverable(&plan.individual, why)).await?;
        let ids: Vec<uuid::Uuid> = plan.coalesced.iter().map(|r| r.id).collect();
        store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some(why)).await?;
        for row in plan.individual.iter().chain(&plan.coalesced) {
            deps.metrics.sink_send(row.event, SinkOutcome::Undeliverable);
        }
        return Ok(report);
    }
    let window = ClaimWindow::new(
        claimed_at,
        crate::sinks::statements::outbox::CLAIM,
        crate::sinks::rules::outcome::ATTEMPT_TIMEOUT,
    );
    let rows: Vec<&OutboxRow> = plan.individual.iter().collect();
    let facts = store.subject_facts_beyond(&rows, &known).await?;
    // A coalesced send follows the individual ones: the share is not done sending
    // until it has gone out.
    let tell = plan.coalesced.is_empty().then_some(sent);
    report.sent += send_individually(deps, client, &target, &window, plan.individual, &facts, &tally, tell).await?;
    if !plan.coalesced.is_empty() {
        report.sent += send_coalesced(deps, client, &target, &window, &plan.coalesced).await?;
    }
    Ok(report)
}

/// Sends `rows` one message each, at most [`MAX_SENDS_IN_FLIGHT`] at a time, and
/// records every answer; how many were sent. Every row runs to its end even when a
/// record fails, so none is left sent but unrecorded while others still go out. Tells
/// `done_sending` when the last send has ended.
#[expect(clippy::too_many_arguments, reason = "one share's parts, passed down from its drain")]
async fn send_individually(
    deps: &OutboxDeps,
    client: &awc::Client,
    target: &SinkTarget<'_>,
    window: &ClaimWindow,
    rows: Vec<OutboxRow>,
    facts: &SubjectFacts,
    tally: &Tally,
    done_sending: Option<oneshot::Sender<()>>,
) -> Result<usize> {
    let (answers, mut recorded) = mpsc::unbounded_channel::<(Record, bool)>();
    let sending = async move {
        stream::iter(rows)
            .for_each_concurrent(MAX_SENDS_IN_FLIGHT, |row| {
                let answers = answers.clone();
                async move {
                    let answer = attempt(deps, client, target, window, &row, facts).await;
                    // The recorder outlives every sender (both run to their end).
                    let _ = answers.send(answer);
                }
            })
            .await;
        if let Some(done) = done_sending {
            // The worker may have stopped listening (shutting down): nothing to tell.
            let _ = done.send(());
        }
    };
    let recording = async {
        let mut batch = Vec::with_capacity(RECORD_BATCH);
        let mut sent = 0;
        let mut failed = None;
        while gather(&mut recorded, &mut batch).await > 0 {
            let records: Vec<Record> = batch.iter().map(|(record, _)| *record).collect();
            match record_with_retries(deps, tally, &records).await {
                Ok(n) if n < records.len() => tracing::warn!(
                    recorded = n,
                    answers = records.len(),
                    "outbox: some answers came after their claim lapsed; the rows' newer attempts stand"
                ),
                Ok(_) => {}
                Err(e) => failed = failed.or(Some(e)),
            }
            sent += batch.iter().filter(|(_, was_sent)| *was_sent).count();
            batch.clear();
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(sent),
        }
    };
    let ((), sent) = futures_util::future::join(sending, recording).await;
    sent
}

/// Waits for the next answer, then gathers what else comes back within
/// [`RECORD_LINGER`] (up to [`RECORD_BATCH`], and no longer than the senders run) into
/// `batch`; how many it holds (0: every sender is done and every answer written).
async fn gather<T>(answers: &mut mpsc::UnboundedReceiver<T>, batch: &mut Vec<T>) -> usize {
    if answers.recv_many(batch, RECORD_BATCH).await == 0 {
        return 0;
    }
    let deadline = tokio::time::Instant::now() + RECORD_LINGER;
    while batch.len() < RECORD_BATCH {
        let room = RECORD_BATCH - batch.len();
        match tokio::time::timeout_at(deadline, answers.recv_many(batch, room)).await {
            // Every sender is done: nothing more will come.
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    batch.len()
}

/// Records `records` (deleting in the same transaction the dead-letter records settled
/// so far), trying again twice after a short wait: these messages were sent, and a
/// record that is lost sends them again once their claim lapses.
async fn record_with_retries(deps: &OutboxDeps, tally: &Tally, records: &[Record]) -> Result<usize> {
    let mut wait = std::time::Duration::from_millis(50);
    let mut tries = 1;
    loop {
        let settled = tally.take_settled();
        let recorded = deps.store.record_outbox_settling(records, &settled).await;
        match &recorded {
            Ok(_) => tally.written(records),
            Err(_) => tally.restore(settled),
        }
        match recorded {
            Err(e) if tries < 3 => {
                tracing::warn!(error = %e, tries, "outbox: recording answers failed; trying again");
                actix_rt::time::sleep(wait).await;
                wait *= 4;
                tries += 1;
            }
            done => return done,
        }
    }
}

/// One row's attempt (or why there was none) as the record of its end, and whether it
/// was sent.
async fn attempt(
    deps: &OutboxDeps,
    client: &awc::Client,
    target: &SinkTarget<'_>,
    window: &ClaimWindow,
    row: &OutboxRow,
    facts: &SubjectFacts,
) -> (Record, bool) {
    let end = |outcome| Record::of(row, outcome);
    let Some(message) = render(row, facts, &deps.base_url) else {
        return (end(SendOutcome::Done(OutboxStatus::Undeliverable, Some("subject_gone"))), false);
    };
    if !window.may_start(Instant::now()) {
        return (end(SendOutcome::GivenBack), false);
    }
    let answer = post(client, target, &message).await;
    let sent = answer == SinkAnswer::Sent;
    (end(step(deps, answer, row)), sent)
}

/// What `answer` makes of `row`, counted in the metrics.
fn step(deps: &OutboxDeps, answer: SinkAnswer, row: &OutboxRow) -> SendOutcome {
    let event = row.event;
    let previous = row.last_error.as_deref().and_then(|e| e.parse::<ErrorClass>().ok());
    let attempts = u32::try_from(row.attempts).unwrap_or(u32::MAX);
    match after_attempt(answer, attempts, previous, &deps.retry) {
        Step::Done(status, class) => {
            let outcome = match status {
                OutboxStatus::Sent => SinkOutcome::Sent,
                OutboxStatus::Partial => SinkOutcome::Partial,
                _ => SinkOutcome::Undeliverable,
            };
            deps.metrics.sink_send(event, outcome);
            SendOutcome::Done(status, class.map(ErrorClass::as_str))
        }
        Step::RetryAfter(wait, class) => {
            deps.metrics.sink_send(event, SinkOutcome::Retried);
            SendOutcome::RetryAfter(wait, class.as_str())
        }
    }
}

/// Sends every held row as one message; 1 when it went out.
async fn send_coalesced(
    deps: &OutboxDeps,
    client: &awc::Client,
    target: &SinkTarget<'_>,
    window: &ClaimWindow,
    rows: &[OutboxRow],
) -> Result<usize> {
    let store = &deps.store;
    let ids: Vec<uuid::Uuid> = rows.iter().map(|r| r.id).collect();
    if !window.may_start(Instant::now()) {
        store.unclaim_held_outbox(&ids).await?;
        return Ok(0);
    }
    let message: Message = coalesced(rows, &deps.base_url);
    match post(client, target, &message).await {
        SinkAnswer::Sent => {
            store.finish_coalesced(&ids, OutboxStatus::Coalesced, None).await?;
            for row in rows {
                deps.metrics.sink_send(row.event, SinkOutcome::Coalesced);
            }
            return Ok(1);
        }
        SinkAnswer::Permanent(class) => {
            store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some(class.as_str())).await?
        }
        SinkAnswer::ConfigurationError => {
            store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some("configuration")).await?
        }
        // The sink may take it later: the rows wait for the next token.
        SinkAnswer::Retryable(_) | SinkAnswer::Partial => store.unclaim_held_outbox(&ids).await?,
    }
    Ok(0)
}

/// Records ending every row of `rows` undeliverable for `why`.
pub fn undeliverable(rows: &[OutboxRow], why: &'static str) -> Vec<Record> {
    rows.iter().map(|row| Record::of(row, SendOutcome::Done(OutboxStatus::Undeliverable, Some(why)))).collect()
}

/// Records `records` and deletes the dead-letter records that leaves owed nothing.
pub async fn record_and_settle(store: &Store, tally: &Tally, records: &[Record]) -> Result<usize> {
    let settled = tally.take_settled();
    match store.record_outbox_settling(records, &settled).await {
        Ok(recorded) => {
            tally.written(records);
            let now = tally.take_settled();
            if let Err(e) = store.delete_outbox_events(&now).await {
                tally.restore(now);
                return Err(e);
            }
            Ok(recorded)
        }
        Err(e) => {
            tally.restore(settled);
            Err(e)
        }
    }
}

fn target<'a>(dial: &'a SinkDial, credential: &'a Credential) -> SinkTarget<'a> {
    SinkTarget {
        kind: dial.kind,
        base_url: &credential.destination,
        secret: &credential.secret,
        apprise_mode: dial.apprise_mode,
    }
}
