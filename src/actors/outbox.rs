//! The `OutboxWorker`: drains the sink outbox on this instance. Woken at once by the
//! NOTIFY every outbox insert makes (a listener connection of its own), and by a poll
//! every `SWITCHBOARD_OUTBOX_POLL_MS` as the fallback (retries come due, a lapsed claim
//! of a dead worker, held rows whose token returned). Several instances drain one
//! outbox: claims are `SKIP LOCKED` and committed before any call, so each row is sent
//! by one worker.
//!
//! A pass: claim due rows; per sink, let its budget decide (in the sink's row lock)
//! what goes out alone, what goes out as one coalesced message and what is held; send
//! through the guarded client; record the answer (sent, a retry after the doubling
//! wait, or undeliverable after the last attempt).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use actix::{Actor, ActorFutureExt, Addr, AsyncContext, Context, Handler, Message as ActixMessage, WrapFuture};
use futures_util::{StreamExt, stream};

use crate::db::listen::{Follower, follow};
use crate::domain::ids::SinkId;
use crate::domain::sinks::{OutboxStatus, SinkEvent};
use crate::error::{Error, Result};
use crate::metrics::{Metrics, SinkOutcome};
use crate::notify::sinks::content::{self, AgentNotifyFacts, EndpointRevokedFacts, Message, RuleNotifyFacts};
use crate::notify::sinks::outcome::{Answer, ErrorClass, RetryPolicy, Step, after_attempt};
use crate::outbound::Guard;
use crate::service::sink_post::{SinkTarget, post};
use crate::store::Store;
use crate::store::outbox::{OutboxRow, SinkDial};
use crate::vault::Vault;

/// The channel outbox inserts notify (migration `outbox`).
pub const OUTBOX_CHANNEL: &str = "switchboard_outbox";

/// The listener's session name.
pub const OUTBOX_LISTENER_NAME: &str = "switchboard outbox listener";

/// Rows one sink's pass has on the wire at once (each also holds a pooled connection
/// while its message is read and its answer recorded). More than one, so that a
/// backlog does not wait on one round trip and one commit per row in turn, and a slow
/// sink's rows do not each wait out the one before; few enough to leave most of the
/// default pool of 16 to requests.
pub const MAX_DELIVERIES_IN_FLIGHT: usize = 8;

/// What a worker needs.
#[derive(Clone)]
pub struct OutboxDeps {
    /// The store.
    pub store: Store,
    /// Opens connection secrets.
    pub vault: Vault,
    /// Builds the guarded client.
    pub guard: Guard,
    /// Board links.
    pub base_url: String,
    /// The retry schedule.
    pub retry: RetryPolicy,
    /// The database the listener connects to.
    pub database_url: String,
    /// The fallback poll.
    pub poll: Duration,
    /// Counts every attempt's outcome.
    pub metrics: Metrics,
}

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct PassReport {
    /// Rows claimed.
    pub claimed: usize,
    /// Messages sent (a coalesced one counts once).
    pub sent: usize,
    /// Rows held by a budget.
    pub held: usize,
}

/// Wakes the worker for a pass.
#[derive(ActixMessage)]
#[rtype(result = "()")]
pub struct Wake;

/// Drains the outbox.
pub struct OutboxWorker {
    deps: OutboxDeps,
    client: Option<awc::Client>,
    running: bool,
    again: bool,
}

impl OutboxWorker {
    /// A worker over `deps`.
    pub fn new(deps: OutboxDeps) -> Self {
        OutboxWorker { deps, client: None, running: false, again: false }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.running {
            // A wake-up during a pass: look again right after it.
            self.again = true;
            return;
        }
        self.running = true;
        self.again = false;
        let client = self.client.get_or_insert_with(|| self.deps.guard.client()).clone();
        let deps = self.deps.clone();
        let pass = async move { run_pass(&deps, &client).await };
        ctx.spawn(pass.into_actor(self).map(|outcome, act, ctx| {
            act.running = false;
            match outcome {
                Ok(report) => {
                    if report.claimed > 0 || report.sent > 0 {
                        tracing::debug!(
                            claimed = report.claimed,
                            sent = report.sent,
                            held = report.held,
                            "outbox pass"
                        );
                    }
                    // Pass after pass until one claims nothing: rows queued meanwhile
                    // may not have notified (migration `outbox_wake_when_idle` notifies
                    // only an idle outbox), so the worker itself looks again.
                    if act.again || report.claimed > 0 {
                        act.tick(ctx);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "outbox pass failed; will retry next tick"),
            }
        }));
    }
}

impl Actor for OutboxWorker {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(poll_ms = self.deps.poll.as_millis() as u64, "outbox worker started");
        ctx.run_interval(self.deps.poll, |act, ctx| act.tick(ctx));
        let wake = Waker(ctx.address());
        let url = self.deps.database_url.clone();
        ctx.spawn(async move { follow(&url, OUTBOX_LISTENER_NAME, OUTBOX_CHANNEL, &wake).await }.into_actor(self));
        ctx.notify(Wake);
    }
}

impl Handler<Wake> for OutboxWorker {
    type Result = ();

    fn handle(&mut self, _: Wake, ctx: &mut Self::Context) {
        self.tick(ctx);
    }
}

/// Turns outbox notifications into wake-ups.
struct Waker(Addr<OutboxWorker>);

impl Follower for Waker {
    fn set_current(&self, current: bool) {
        // Listening again: whatever was queued meanwhile is looked at now.
        if current {
            self.0.do_send(Wake);
        }
    }

    fn changed(&self, _payload: &str) {
        self.0.do_send(Wake);
    }
}

/// One pass over the outbox.
pub async fn run_pass(deps: &OutboxDeps, client: &awc::Client) -> Result<PassReport> {
    let claimed = deps.store.claim_outbox().await?;
    let mut report = PassReport { claimed: claimed.len(), ..PassReport::default() };
    let mut by_sink: BTreeMap<SinkId, Vec<OutboxRow>> = BTreeMap::new();
    for row in claimed {
        match row.sink_id {
            Some(sink) => by_sink.entry(sink).or_default().push(row),
            None => deps.store.record_outbox(row.id, OutboxStatus::Undeliverable, None, Some("sink_gone")).await?,
        }
    }
    let mut sinks: BTreeSet<SinkId> = by_sink.keys().copied().collect();
    sinks.extend(deps.store.sinks_with_held().await?);
    for sink in sinks {
        let due = by_sink.remove(&sink).unwrap_or_default();
        let outcome = drain_sink(deps, client, sink, due, &mut report).await;
        if let Err(e) = outcome {
            tracing::warn!(sink = %sink, error = %e, "outbox: a sink's rows were not sent; they are retried");
        }
    }
    Ok(report)
}

async fn drain_sink(
    deps: &OutboxDeps,
    client: &awc::Client,
    sink: SinkId,
    due: Vec<OutboxRow>,
    report: &mut PassReport,
) -> Result<()> {
    let store = &deps.store;
    let dial = match store.sink_dial(sink).await? {
        Some(dial) if dial.enabled => dial,
        found => {
            let why = if found.is_some() { "sink_disabled" } else { "sink_gone" };
            for row in due {
                store.record_outbox(row.id, OutboxStatus::Undeliverable, None, Some(why)).await?;
            }
            return Ok(());
        }
    };
    let plan = store.plan_sink(sink, due).await?;
    report.held += plan.held;
    for event in &plan.held_now {
        deps.metrics.sink_delivery(*event, SinkOutcome::Held);
    }
    if plan.individual.is_empty() && plan.coalesced.is_empty() {
        return Ok(());
    }
    let secret = match store.connection_secret(&deps.vault, dial.scope_id, dial.connection_id).await {
        Ok(secret) => secret,
        Err(Error::EncryptionRequired | Error::NotFound) => {
            for row in plan.individual.iter().chain(&plan.coalesced) {
                store.record_outbox(row.id, OutboxStatus::Undeliverable, None, Some("no_credential")).await?;
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let target = target(&dial, &secret);
    // Up to MAX_DELIVERIES_IN_FLIGHT rows at once, each recorded right after its own
    // answer. Every row runs to its end even when another fails, so no row is left
    // sent but unrecorded (which its lapsed claim would send again).
    let outcomes: Vec<Result<bool>> = stream::iter(plan.individual)
        .map(|row| deliver(deps, client, &target, row))
        .buffer_unordered(MAX_DELIVERIES_IN_FLIGHT)
        .collect()
        .await;
    let mut failed = None;
    for outcome in outcomes {
        match outcome {
            Ok(sent) => report.sent += usize::from(sent),
            Err(e) => failed = failed.or(Some(e)),
        }
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if !plan.coalesced.is_empty() {
        let ids: Vec<uuid::Uuid> = plan.coalesced.iter().map(|r| r.id).collect();
        let message = coalesced(&plan.coalesced, &deps.base_url);
        match post(client, &target, &message).await {
            Answer::Sent => {
                report.sent += 1;
                store.finish_coalesced(&ids, OutboxStatus::Coalesced, None).await?;
                for row in &plan.coalesced {
                    deps.metrics.sink_delivery(row.event, SinkOutcome::Coalesced);
                }
            }
            Answer::Permanent(class) => {
                store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some(class.as_str())).await?;
            }
            Answer::ConfigurationError => {
                store.finish_coalesced(&ids, OutboxStatus::Undeliverable, Some("configuration")).await?;
            }
            // The sink may take it later: the rows wait for the next token.
            Answer::Retryable(_) | Answer::Partial => store.unclaim_held_outbox(&ids).await?,
        }
    }
    Ok(())
}

/// Sends one row alone and records what the sink answered; whether it was sent.
async fn deliver(deps: &OutboxDeps, client: &awc::Client, target: &SinkTarget<'_>, row: OutboxRow) -> Result<bool> {
    let store = &deps.store;
    let Some(message) = render(deps, &row).await? else {
        store.record_outbox(row.id, OutboxStatus::Undeliverable, None, Some("subject_gone")).await?;
        return Ok(false);
    };
    let answer = post(client, target, &message).await;
    let sent = answer == Answer::Sent;
    let previous = row.last_error.as_deref().and_then(|e| e.parse::<ErrorClass>().ok());
    let attempts = u32::try_from(row.attempts).unwrap_or(u32::MAX);
    match after_attempt(answer, attempts, previous, &deps.retry) {
        Step::Done(status, class) => {
            store.record_outbox(row.id, status, None, class.map(ErrorClass::as_str)).await?;
            let outcome = match status {
                OutboxStatus::Sent => SinkOutcome::Sent,
                OutboxStatus::Partial => SinkOutcome::Partial,
                _ => SinkOutcome::Undeliverable,
            };
            deps.metrics.sink_delivery(row.event, outcome);
        }
        Step::RetryAfter(wait, class) => {
            store.record_outbox(row.id, OutboxStatus::Pending, Some(wait), Some(class.as_str())).await?;
            deps.metrics.sink_delivery(row.event, SinkOutcome::Retried);
        }
    }
    Ok(sent)
}

fn target<'a>(dial: &'a SinkDial, secret: &'a str) -> SinkTarget<'a> {
    SinkTarget { kind: dial.kind, base_url: &dial.base_url, secret, apprise_mode: dial.apprise_mode }
}

/// The message a row says (none: what it is about is gone).
async fn render(deps: &OutboxDeps, row: &OutboxRow) -> Result<Option<Message>> {
    let message = match (row.event, row.todo_id, row.endpoint_id) {
        (SinkEvent::DeadLettered | SinkEvent::RelayExhausted, Some(todo), _) => {
            let Some(facts) = deps.store.dead_letter_facts(todo, row.include_excerpt).await? else { return Ok(None) };
            if row.event == SinkEvent::RelayExhausted {
                content::relay_exhausted(&facts, &deps.base_url)
            } else {
                content::dead_letter(&facts, &deps.base_url)
            }
        }
        (SinkEvent::DeadLettered, None, Some(endpoint)) => {
            let facts = EndpointRevokedFacts {
                endpoint_slug: row.facts["slug"].as_str().unwrap_or_default().to_owned(),
                endpoint_id: endpoint.to_string(),
                dead_lettered: row.facts["dead_lettered"].as_i64().unwrap_or_default(),
                reason: row.facts["reason"].as_str().unwrap_or("endpoint_revoked").to_owned(),
            };
            content::endpoint_revoked(&facts, &deps.base_url)
        }
        (SinkEvent::RuleNotify, todo, _) => {
            let title = match todo {
                Some(todo) => deps.store.todo_title(todo).await?.unwrap_or_default(),
                None => String::new(),
            };
            let facts = RuleNotifyFacts {
                rule_id: row.facts["rule_id"].as_str().unwrap_or_default().to_owned(),
                webhook_id: row.facts["webhook_id"].as_str().unwrap_or_default().to_owned(),
                queue: row.facts["queue"].as_str().map(str::to_owned),
                todo_title: title,
                todo_id: todo.map(|t| t.to_string()),
                severity: row.severity,
                excerpt: None,
            };
            content::rule_notify(&facts, &deps.base_url)
        }
        (SinkEvent::AgentNotify, todo, Some(endpoint)) => {
            let text = |key: &str| row.facts[key].as_str().map(str::to_owned);
            let facts = AgentNotifyFacts {
                endpoint_slug: text("slug").unwrap_or_default(),
                endpoint_id: endpoint.to_string(),
                text: text("title").unwrap_or_default(),
                todo_id: todo.map(|t| t.to_string()),
                queue: text("queue"),
                severity: row.severity,
            };
            content::agent_notify(&facts, &deps.base_url)
        }
        (SinkEvent::Quarantined, Some(todo), _) => {
            let Some(facts) = deps.store.quarantine_facts(todo, row.include_excerpt).await? else { return Ok(None) };
            content::quarantined(&facts, &deps.base_url)
        }
        // A digest's message is rendered when its send time is decided (the sections
        // are measured then, not when the sink is dialled) and carried in the row.
        (SinkEvent::Digest, _, _) => match serde_json::from_value::<Message>(row.facts["message"].clone()) {
            Ok(message) => message,
            Err(_) => return Ok(None),
        },
        _ => return Ok(None),
    };
    let more = u32::try_from(row.count.saturating_sub(1)).unwrap_or(0);
    Ok(Some(if more > 0 { content::folded(message, more) } else { message }))
}

/// One message for every row the budget held: how many of each event, since when.
fn coalesced(rows: &[OutboxRow], base_url: &str) -> Message {
    let mut counts: BTreeMap<&'static str, (SinkEvent, u32)> = BTreeMap::new();
    for row in rows {
        let entry = counts.entry(row.event.as_str()).or_insert((row.event, 0));
        entry.1 += u32::try_from(row.count).unwrap_or(1);
    }
    let counts: Vec<(SinkEvent, u32)> = counts.into_values().collect();
    let since = rows.iter().map(|r| r.created_at).min().unwrap_or_else(chrono::Utc::now);
    // A row may be louder than its event's default (a rule's or an agent's `high`).
    let loudest = rows.iter().map(|r| r.severity).max().unwrap_or(crate::domain::sinks::Severity::Low);
    content::coalesced(&counts, since, base_url).at_least(loudest)
}
