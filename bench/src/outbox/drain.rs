//! Outbox throughput: a backlog of dead-letter rows for one Gotify sink, queued while
//! no server runs (real `Store::fail` transactions: the trigger writes the rows), then
//! two servers started together on the database, and the time from the receiver's
//! first message to the moment it holds one message for every row. Every expected
//! todo must arrive exactly once, and the sink's rows must all end `sent` (none held
//! or coalesced: the budget was lifted). Also here: the delivery of the rows the cost
//! windows queued (outbox/cost.rs), checked the same way.

use std::time::{Duration, Instant};

use switchboard::store::Store;
use testkit::receiver::{GOTIFY_KIND, Tally};

use super::rig::{BUDGET_PER_HOUR, Gotify, Line};
use crate::database::BenchDb;
use crate::instances::{self, Instances};
use crate::machine::CpuSpent;
use crate::server::Server;
use crate::waits::{SessionSampler, SessionTally};
use crate::{Args, BenchResult, progress, scrape};

/// How long the receiver may go without a new message before a drain is given up.
const IDLE: Duration = Duration::from_secs(30);

/// One drain of a backlog by the servers.
#[derive(Debug, Clone, Default)]
pub struct Drain {
    /// Rows in the backlog.
    pub rows: u64,
    /// Receiver's first message → it holds one for every row.
    pub first_to_last: Duration,
    /// Servers spawned → the receiver holds one message for every row.
    pub spawn_to_last: Duration,
    /// CPU from (about) the first message to the last.
    pub cpu: CpuSpent,
    /// Messages each server counted `sent` (its `/metrics`).
    pub sent_by: Vec<f64>,
    /// Outcomes other than `sent` the servers counted (held, coalesced, retried,
    /// partial, undeliverable), summed.
    pub other_outcomes: f64,
    /// How the backlog's messages fared at the receiver.
    pub tally: Tally,
    /// What the database sessions were doing during the drain.
    pub sessions: SessionTally,
}

impl Drain {
    /// Messages per second from the first message to the last.
    pub fn rate(&self) -> f64 {
        let s = self.first_to_last.as_secs_f64();
        if s > 0.0 { self.rows.saturating_sub(1) as f64 / s } else { 0.0 }
    }
}

/// The sink's rows by status (`sent` 40 000, …).
pub async fn statuses(db: &BenchDb, sinks: &[String]) -> BenchResult<Vec<(String, i64)>> {
    let rows = db
        .client()
        .query(
            "SELECT status, count(*) FROM outbox WHERE sink_id = ANY($1::text[]::uuid[]) GROUP BY 1 ORDER BY 2 DESC",
            &[&sinks],
        )
        .await
        .map_err(|e| format!("counting outbox rows by status: {e}"))?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Waits until every sink's bucket holds `need` tokens (what it refilled since it was
/// last counted, at its lifted rate), so the budget holds no row of the backlog.
async fn await_tokens(db: &BenchDb, sinks: &[String], need: u64) -> BenchResult<()> {
    let row = db
        .client()
        .query_one(
            "SELECT min(LEAST(burst::float8, \
               tokens + EXTRACT(EPOCH FROM now() - tokens_at)::float8 * budget_per_hour::float8 / 3600.0)) \
             FROM sinks WHERE id = ANY($1::text[]::uuid[])",
            &[&sinks],
        )
        .await
        .map_err(|e| format!("reading the sinks' buckets: {e:?}"))?;
    let have: f64 = row.get(0);
    let short = need as f64 - have;
    if short > 0.0 {
        let wait = Duration::from_secs_f64(short * 3600.0 / f64::from(BUDGET_PER_HOUR) + 1.0);
        progress(&format!("outbox: waiting {:.0} s for the sinks' buckets to refill", wait.as_secs_f64()));
        tokio::time::sleep(wait).await;
    }
    Ok(())
}

/// Sum of a counter over servers' `/metrics`, per server.
async fn sink_counts(servers: &[Server], outcome: &str) -> BenchResult<Vec<f64>> {
    let mut counts = Vec::new();
    for server in servers {
        let text = scrape::metrics_text(server).await?;
        let label = format!("outcome=\"{outcome}\"");
        counts.push(scrape::series_sum(&text, "switchboard_sink_deliveries_total", &[&label]));
    }
    Ok(counts)
}

/// What a drain works with.
pub struct DrainRig<'a> {
    /// The bench's settings.
    pub args: &'a Args,
    /// The benchmark database.
    pub db: &'a BenchDb,
    /// The bench's store (its pool fails the backlog's todos).
    pub store: &'a Store,
    /// How servers are started.
    pub instances: &'a Instances,
    /// The owner and endpoint whose dead letters make the backlog.
    pub line: &'a Line,
    /// The owner's one sink.
    pub sink: &'a str,
    /// Where the sink posts.
    pub receiver: &'a Gotify,
}

/// One drain: `args.outbox_backlog` dead letters on the rig's line (servers down), then
/// two servers started together; stopped again once the receiver holds every message.
pub async fn drain(rig: &DrainRig<'_>, round: u32) -> BenchResult<Drain> {
    let DrainRig { args, db, store, instances, line, sink, receiver } = *rig;
    receiver.rx.forget();
    let n = args.outbox_backlog;
    let ids = super::rig::claimed_todos(db, line, n, &format!("backlog-{round}")).await?;
    let expected: Vec<String> = ids.iter().map(ToString::to_string).collect();
    super::rig::fail_all(store, line, ids, args.outbox_fail_tasks).await?;
    // Each dead letter is recorded once for the outbox; the servers fan the records out
    // to the sink's rows as part of the drain.
    let recorded: i64 = db
        .client()
        .query_one(
            "SELECT count(*) FROM outbox_events WHERE scope_id = $1::text::uuid",
            &[&line.owner.scope.0.to_string()],
        )
        .await
        .map(|row| row.get(0))
        .map_err(|e| format!("counting the backlog: {e}"))?;
    if recorded as u64 != n {
        return Err(format!("the backlog holds {recorded} dead letters recorded for the outbox, expected {n}"));
    }
    await_tokens(db, &[sink.to_owned()], n).await?;
    for sql in [
        "VACUUM (ANALYZE) outbox",
        "VACUUM (ANALYZE) outbox_events",
        "VACUUM (ANALYZE) todos",
        "VACUUM (ANALYZE) todo_attempts",
        "CHECKPOINT",
    ] {
        db.client().batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }
    let sampler = SessionSampler::start(&db.url).await?;
    let spawned = Instant::now();
    let mut servers = instances.spawn(2).await?;
    let outcome = timed(n, db, &mut servers, receiver).await;
    let sessions = sampler.finish().await;
    let counted = match &outcome {
        Ok(_) => count_outcomes(&servers).await,
        Err(e) => Err(e.clone()),
    };
    let stopped = instances::stop(servers).await;
    let (cpu, held_all) = outcome?;
    let (sent_by, other_outcomes) = counted?;
    stopped?;
    let tally = receiver.rx.tally(GOTIFY_KIND, &expected, 1);
    let (Some(first), Some(last)) = (tally.first, tally.last) else {
        return Err("no message of the backlog arrived".into());
    };
    if !held_all {
        return Err(format!(
            "the receiver held {} of {n} messages when they stopped coming (lost {}, duplicates {})",
            tally.arrived, tally.lost, tally.duplicates
        ));
    }
    let drain = Drain {
        rows: n,
        first_to_last: last - first,
        spawn_to_last: last.saturating_duration_since(spawned),
        cpu,
        sent_by,
        other_outcomes,
        tally,
        sessions: sessions?,
    };
    progress(&format!(
        "outbox: drained {n} rows with 2 servers: {:.0} messages/s ({:.1} s first to last, {:.1} s from spawn); \
         lost {}, duplicates {}",
        drain.rate(),
        drain.first_to_last.as_secs_f64(),
        drain.spawn_to_last.as_secs_f64(),
        drain.tally.lost,
        drain.tally.duplicates
    ));
    Ok(drain)
}

/// Waits for the servers and the drain; CPU from the first message to the last, and
/// whether the receiver came to hold `n` todos' messages.
async fn timed(n: u64, db: &BenchDb, servers: &mut [Server], receiver: &Gotify) -> BenchResult<(CpuSpent, bool)> {
    receiver.rx.wait_distinct(1, IDLE).await;
    let from = instances::sample(servers, db.name());
    let have = receiver.rx.wait_distinct(n as usize, IDLE).await;
    let to = instances::sample(servers, db.name());
    instances::ready(servers).await?;
    Ok((CpuSpent::between(from, to), have as u64 >= n))
}

/// Per server, its `sent` count; and every other outcome summed over servers.
async fn count_outcomes(servers: &[Server]) -> BenchResult<(Vec<f64>, f64)> {
    let sent = sink_counts(servers, "sent").await?;
    let mut other = 0.0;
    for outcome in ["held", "coalesced", "retried", "partial", "undeliverable"] {
        other += sink_counts(servers, outcome).await?.iter().sum::<f64>();
    }
    Ok((sent, other))
}

/// How the cost windows' rows reached their sinks.
#[derive(Debug, Clone, Default)]
pub struct CostDelivery {
    /// Messages due: dead letters × sinks, over the owners with sinks.
    pub due: u64,
    /// The one-sink owner's dead letters (one message each).
    pub one: Tally,
    /// The five-sink owner's dead letters (five messages each).
    pub five: Tally,
    /// Servers spawned → the last message.
    pub seconds: f64,
    /// The sinks' rows by status afterwards.
    pub statuses: Vec<(String, i64)>,
}

/// Starts two servers and waits until the receiver holds every message the cost
/// windows queued (`lines`: the owners with one and five sinks; `sinks`: all of their
/// sinks), then stops them.
pub async fn deliver_cost_rows(
    db: &BenchDb,
    instances: &Instances,
    receiver: &Gotify,
    one: &Line,
    five: &Line,
    sinks: &[String],
) -> BenchResult<CostDelivery> {
    receiver.rx.forget();
    let dead = |line: &Line| {
        let endpoint = line.endpoint.0.to_string();
        async move {
            let rows = db
                .client()
                .query(
                    "SELECT id::text FROM todos WHERE endpoint_id = $1::text::uuid AND dead_letter_count > 0",
                    &[&endpoint],
                )
                .await
                .map_err(|e| format!("listing dead letters: {e}"))?;
            let ids: BenchResult<Vec<String>> = rows
                .iter()
                .map(|r| {
                    r.get::<_, String>(0)
                        .parse::<uuid::Uuid>()
                        .map(|u| switchboard::domain::ids::TodoId(u).to_string())
                        .map_err(|e| e.to_string())
                })
                .collect();
            ids
        }
    };
    let (one_ids, five_ids) = (dead(one).await?, dead(five).await?);
    let due = one_ids.len() as u64 + 5 * five_ids.len() as u64;
    await_tokens(db, sinks, five_ids.len().max(one_ids.len()) as u64).await?;
    let spawned = Instant::now();
    let mut servers = instances.spawn(2).await?;
    let have = receiver.rx.wait_tracked(due, IDLE).await;
    let seconds = spawned.elapsed().as_secs_f64();
    let ready = instances::ready(&mut servers).await;
    let stopped = instances::stop(servers).await;
    ready?;
    stopped?;
    let delivery = CostDelivery {
        due,
        one: receiver.rx.tally(GOTIFY_KIND, &one_ids, 1),
        five: receiver.rx.tally(GOTIFY_KIND, &five_ids, 5),
        seconds,
        statuses: statuses(db, sinks).await?,
    };
    progress(&format!(
        "outbox: the cost windows' {due} messages: {have} arrived in {seconds:.1} s (lost {}, duplicates {})",
        delivery.one.lost + delivery.five.lost,
        delivery.one.duplicates + delivery.five.duplicates
    ));
    receiver.rx.forget();
    Ok(delivery)
}
