//! One scheduler tick: decide the doorbell rings whose window has passed (heard or
//! unheard, see `store::doorbells`), finish stuck Cairn publications, then decide each due send time
//! (send it, skip it as quiet, or record it skipped for being an hour late; see
//! `digest::firing`), committing the decision, the record and the sinks' outbox rows
//! in one transaction. A Cairn digest is published after that commit and its sinks
//! are told once Cairn has answered.

use chrono::{DateTime, Utc};

use super::DigestDeps;
use crate::digests::clients::publish::publish;
use crate::digests::rules::firing::plan;
use crate::digests::rules::render;
use crate::digests::rules::schedule::Schedule;
use crate::digests::service::compose::{compose, message};
use crate::digests::statements::{Committed, DigestRow, Evaluated, Publication, RunOutcome, SendTime};
use crate::error::Result;
use crate::metrics::DigestRun;

/// Digests one tick decides at most (the next tick takes the rest).
const DUE_PER_TICK: i64 = 50;

/// Stuck publications one tick takes over at most.
const STUCK_PER_TICK: i64 = 10;

/// Doorbell rings one batch decides; a tick decides at most [`RING_BATCHES`] batches.
const RING_BATCH: i64 = 1_000;
/// Batches of rings one tick decides at most (the next tick goes on).
const RING_BATCHES: usize = 20;

/// Runs one tick; answers how many send times this instance decided.
pub async fn run(deps: &DigestDeps, client: &awc::Client) -> Result<usize> {
    // Rings past their window first, so that the digests below read decided rings;
    // a failure here only leaves rings for the next tick (the digest's query checks
    // undecided ones itself), so it never holds the digests up.
    for _ in 0..RING_BATCHES {
        match deps.store.decide_doorbells(deps.settings.doorbell_ack_seconds, RING_BATCH).await {
            Ok(decided) if decided < RING_BATCH as usize => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "doorbell rings not decided this tick");
                break;
            }
        }
    }
    for p in deps.store.claim_stuck_publications(STUCK_PER_TICK).await? {
        finish_publication(deps, client, p).await?;
    }
    let mut decided = 0;
    for d in deps.store.due_digests(DUE_PER_TICK).await? {
        // The clock is read per digest, after everything before it (the rings, earlier
        // digests, a slow Cairn) and never before the send time the database found
        // due: a send time that came during the tick is evaluated, never skipped over
        // as if it lay in the future (and so lost).
        let now = Utc::now().max(d.next_send_at);
        match decide(deps, client, &d, now).await {
            Ok(true) => decided += 1,
            Ok(false) => {}
            Err(e) => {
                deps.metrics.digest_runs(DigestRun::Failed, 1);
                tracing::warn!(digest = %d.id, error = %e, "digest send time not decided; next tick");
            }
        }
    }
    Ok(decided)
}

/// Decides `d`'s due send time; false when another instance decided it first.
async fn decide(deps: &DigestDeps, client: &awc::Client, d: &DigestRow, now: DateTime<Utc>) -> Result<bool> {
    let schedule = match Schedule::parse(&d.schedule) {
        Ok(s) => s,
        Err(e) => {
            // Stored schedules were parsed on save; one this release cannot read (a zone
            // the embedded database dropped) waits a day rather than spinning.
            tracing::warn!(digest = %d.id, error = %e, "stored digest schedule does not parse; retrying in a day");
            let send = SendTime {
                digest: d.id,
                due: d.next_send_at,
                next: now + chrono::Duration::days(1),
                skipped_late: Vec::new(),
                evaluated: None,
            };
            let decided = deps.store.commit_digest_send(send).await? != Committed::Lost;
            // Put off for a day, not sent: a failed run, counted once by its decider.
            if decided {
                deps.metrics.digest_runs(DigestRun::Failed, 1);
            }
            return Ok(decided);
        }
    };
    let p = plan(d.next_send_at, &schedule.between(d.next_send_at, now), now);
    let evaluated = match p.evaluate {
        None => None,
        Some(at) => {
            let c = compose(&deps.store, d, &deps.settings, at).await?;
            let outcome = if c.quiet && d.skip_when_quiet {
                RunOutcome::SkippedQuiet
            } else if d.cairn_connection_id.is_some() {
                RunOutcome::Publishing
            } else {
                RunOutcome::Sent
            };
            let message =
                (outcome == RunOutcome::Sent).then(|| message(&c.title, c.body.clone(), &deps.settings.base_url));
            let unavailable = i32::try_from(c.report.unavailable().len()).unwrap_or(i32::MAX);
            Some(Evaluated { send_at: at, outcome, quiet: c.quiet, unavailable, title: c.title, body: c.body, message })
        }
    };
    let publishing = evaluated.as_ref().filter(|e| e.outcome == RunOutcome::Publishing).cloned();
    // What to count once the commit says this instance decided it (a publication counts
    // when it is finished).
    let ran = evaluated.as_ref().and_then(|e| match e.outcome {
        RunOutcome::Sent => Some(DigestRun::Sent),
        RunOutcome::SkippedQuiet => Some(DigestRun::SkippedQuiet),
        RunOutcome::SkippedLate => Some(DigestRun::SkippedLate),
        RunOutcome::Publishing => None,
    });
    let skipped_late = u64::try_from(p.skipped_late.len()).unwrap_or(u64::MAX);
    let send = SendTime {
        digest: d.id,
        due: d.next_send_at,
        next: schedule.next_after(now),
        skipped_late: p.skipped_late,
        evaluated,
    };
    let run = match deps.store.commit_digest_send(send).await? {
        Committed::Lost => return Ok(false),
        Committed::Decided(run) => run,
    };
    if let Some(outcome) = ran {
        deps.metrics.digest_runs(outcome, 1);
    }
    if skipped_late > 0 {
        deps.metrics.digest_runs(DigestRun::SkippedLate, skipped_late);
    }
    if let (Some(run), Some(ev)) = (run, publishing) {
        let p = Publication {
            run,
            digest: d.id,
            scope: d.scope_id,
            connection: d.cairn_connection_id,
            ttl_seconds: d.cairn_ttl_seconds,
            title: ev.title,
            body: ev.body,
            send_at: ev.send_at,
        };
        finish_publication(deps, client, p).await?;
    }
    Ok(true)
}

/// Publishes a run's digest to Cairn and tells the sinks: a short message linking the
/// artifact, or the full text with the failure noted (and recorded).
async fn finish_publication(deps: &DigestDeps, client: &awc::Client, p: Publication) -> Result<()> {
    let outcome = match p.connection {
        None => Err("the cairn connection was deleted".to_owned()),
        Some(id) => {
            // The token goes only to the destination its connection is bound to.
            match deps.store.bound_credential(&deps.vault, p.scope, id).await {
                Ok(Some(c)) => publish(client, &c.destination, &c.secret, &p.title, &p.body, p.ttl_seconds).await,
                Ok(None) => Err("the cairn connection is not bound to a destination".to_owned()),
                Err(e) => Err(format!("the cairn connection could not be read ({})", e.code())),
            }
        }
    };
    let base = &deps.settings.base_url;
    match outcome {
        Ok(artifact) => {
            let m = message(&p.title, render::short(&artifact.url), base);
            if deps.store.finish_publication(p.run, Some(&artifact.url), None, &m).await? {
                deps.metrics.digest_runs(DigestRun::Published, 1);
            }
        }
        Err(why) => {
            tracing::warn!(digest = %p.digest, reason = %why, "digest not published to cairn; sinks get the full text");
            let m = message(&p.title, render::after_failed_publication(&p.body, &why), base);
            if deps.store.finish_publication(p.run, None, Some(&why), &m).await? {
                deps.metrics.digest_runs(DigestRun::PublishFailed, 1);
            }
        }
    }
    Ok(())
}
