//! Notify-hook throughput, and the ceilings of both hook figures.
//!
//! **Throughput** is the channel's own: the real notify channel, built from the library
//! inside the bench process (hooks/channel.rs), fed `TodoReady` signals directly, as the store
//! hands them over after a commit. Intake is left out on purpose: making a todo through
//! intake costs the server several times the CPU that announcing it costs, so a
//! throughput fed through intake (four hooks' deliveries per request) measured intake,
//! not the channel.
//!
//! On each line (an endpoint with H hooks) F feeders each own one real todo, made once
//! through the server's intake (so its facts, hooks and sender gate are real). A
//! feeder's cycle emits that todo's `TodoReady` and waits until all H hooks' verified
//! `todo.ready` POSTs are held by the receiver. So at most lines × F × H deliveries are
//! in flight, kept under the per-endpoint cap (`MAX_RINGS_IN_FLIGHT`) so that the
//! figure is what the channel delivers, not what it sheds; the channel's metrics are
//! read around the windows to show that nothing was dropped. Spreading the load over
//! several endpoints is what lets it go past one endpoint's cap.
//!
//! **Ceilings**: the same number of concurrent tasks, each with its own `awc` client
//! (keep-alive), posting a body of the same size (a real notification body the
//! receiver held), signed the same way, to the same receiver, which verifies it the
//! same way: what the receiver and the loopback can take.

use std::cell::Cell;
use std::time::Duration;

use actix_web::web::Bytes;
use switchboard::domain::ids::TodoId;
use switchboard::domain::todo_state::ReadyReason;
use switchboard::hooks::worker::MAX_RINGS_IN_FLIGHT;
use switchboard::store::Store;
use switchboard::store::signals::{Emitter, Signal, TodoFacts, TodoReady};
use switchboard::store::todos::Caller;
use testkit::receiver::Receiver;
use testkit::signature::Key;

use super::channel::BenchChannel;
use crate::database::BenchDb;
use crate::hooks::{self, ARRIVAL_TIMEOUT, DEAD, HooksResult, READY, Rig, Throughput, hook_path};
use crate::load::{self, Agent, Work};
use crate::machine::Probe;
use crate::server::Server;
use crate::waits::SessionSampler;
use crate::{Args, BenchResult};

/// A feeder of one todo's `TodoReady` into the in-process channel; its cycle ends
/// when every hook of the todo's endpoint holds the notification verified.
pub struct Feeder {
    feed: Emitter,
    ready: TodoReady,
    todo: String,
    hooks: usize,
    receiver: Receiver,
}

impl Feeder {
    fn new(channel: &BenchChannel, ready: &TodoReady, hooks: usize, receiver: &Receiver) -> Feeder {
        let todo = ready.todo.id.to_string();
        Feeder { feed: channel.feed(), ready: ready.clone(), todo, hooks, receiver: receiver.clone() }
    }

    /// One signal and its H verified announcements.
    pub async fn feed(&self) -> BenchResult<()> {
        self.feed.emit(vec![Signal::Ready(self.ready.clone())]);
        match tokio::time::timeout(ARRIVAL_TIMEOUT, self.receiver.take(READY, &self.todo, self.hooks)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(format!(
                "a todo.ready did not reach all {} hooks within {} s",
                self.hooks,
                ARRIVAL_TIMEOUT.as_secs()
            )),
        }
    }
}

/// The feeders' todos: `per_line` real todos on each line, each made through the
/// server's intake (whose own `todo.ready` POSTs are awaited, so none is left over to
/// count later), read back through the store.
async fn feeder_todos(rig: &Rig, store: &Store, per_line: usize) -> BenchResult<Vec<(TodoReady, usize)>> {
    let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
    let mut todos = Vec::new();
    for line in &rig.lines {
        for n in 0..per_line {
            let id = hooks::deliver(&client, line, n as u64).await?;
            let arrived = tokio::time::timeout(ARRIVAL_TIMEOUT, rig.receiver.take(READY, &id, line.hooks)).await;
            if !matches!(arrived, Ok(Ok(_))) {
                return Err(format!(
                    "the server's todo.ready for feeder todo {id} did not reach all {} hooks",
                    line.hooks
                ));
            }
            let todo_id: TodoId = id.parse().map_err(|e| format!("todo id {id}: {e}"))?;
            let row = store
                .get_todo(&Caller::Endpoint(line.endpoint), todo_id)
                .await
                .map_err(|e| format!("reading todo {id}: {e}"))?
                .todo;
            // Made on a token-trust webhook: the gate the store answers in SQL passes.
            let facts = TodoFacts::from_row(&row, line.slug.clone(), true);
            todos.push((TodoReady { todo: facts, reason: ReadyReason::Created }, line.hooks));
        }
    }
    Ok(todos)
}

/// Plain signed POSTs of one body to the receiver, each with a fresh message id.
pub struct Poster {
    client: awc::Client,
    url: String,
    key: Key,
    body: Bytes,
    sent: Cell<u64>,
}

impl Poster {
    fn new(url: &str, key: &Key, body: &Bytes) -> Poster {
        let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
        Poster { client, url: url.to_owned(), key: key.clone(), body: body.clone(), sent: Cell::new(0) }
    }

    /// One POST; anything but 204 (verified) is an error.
    pub async fn post(&self) -> BenchResult<()> {
        let n = self.sent.get();
        self.sent.set(n + 1);
        let id = format!("msg_bench{n:017}{:08x}", rand::random::<u32>());
        let ts = chrono::Utc::now().timestamp();
        let mut resp = self
            .client
            .post(&self.url)
            .insert_header(("content-type", "application/json"))
            .insert_header(("user-agent", "switchboard-bench"))
            .insert_header(("webhook-id", id.as_str()))
            .insert_header(("webhook-timestamp", ts.to_string()))
            .insert_header(("webhook-signature", self.key.sign(&id, ts, &self.body)))
            .send_body(self.body.clone())
            .await
            .map_err(|e| format!("plain POST: {e}"))?;
        // Read the answer to the end so the connection can be reused.
        let _ = resp.body().await.map_err(|e| format!("plain POST answer: {e}"))?;
        if resp.status().as_u16() != 204 {
            return Err(format!("the receiver answered a plain POST with {}", resp.status()));
        }
        Ok(())
    }
}

/// `n` posters of `body` on a receiver path of their own.
fn posters(receiver: &Receiver, name: &str, body: &Bytes, n: usize) -> BenchResult<Vec<Agent>> {
    let (key, secret) = Key::random()?;
    receiver.admit_signed(&hook_path(name), &secret, None)?;
    Ok((0..n).map(|_| Agent::Work(Box::new(Poster::new(&receiver.url_of(&hook_path(name)), &key, body)))).collect())
}

/// What the throughput half needs beside the rig: `hooks::measure` runs it, as its
/// [`Throughput`], once the latency is measured.
pub struct ChannelLoad<'a> {
    /// The bench's settings.
    pub args: &'a Args,
    /// The benchmark database (the in-process channel's store opens on it).
    pub db: &'a BenchDb,
    /// The release server.
    pub server: &'a Server,
    /// The bench's own store, to read the feeders' todos back.
    pub store: &'a Store,
    /// What CPU is counted, and whose.
    pub probe: &'a Probe,
}

impl Throughput for ChannelLoad<'_> {
    async fn measure(&self, rig: &Rig, result: &mut HooksResult) -> BenchResult<()> {
        measure(self.args, self.db, self.server, self.store, self.probe, rig, result).await
    }
}

/// The latency ceiling, then throughput (through the in-process channel) and its
/// ceiling in alternating rounds.
async fn measure(
    args: &Args,
    db: &BenchDb,
    server: &Server,
    store: &Store,
    probe: &Probe,
    rig: &Rig,
    result: &mut HooksResult,
) -> BenchResult<()> {
    let dead_body = rig.receiver.sample(DEAD).ok_or("no dead-letter body arrived to size the ceiling's")?;
    let agents = posters(&rig.receiver, "ceiling-rtt", &dead_body, args.dead_letter_agents)?;
    result.rtt = load::measure(agents, u64::MAX, args.warmup(), args.window(), probe).await;
    result.rtt.check()?;
    crate::progress(&format!(
        "hooks: plain POST round trip at {} concurrent: p50 {:.2} ms, p99 {:.2} ms",
        args.dead_letter_agents,
        result.rtt.latency_ms(0.5),
        result.rtt.latency_ms(0.99)
    ));

    let in_flight = args.feeders_per_endpoint * args.hooks_per_endpoint;
    if in_flight > MAX_RINGS_IN_FLIGHT {
        crate::progress(&format!(
            "hooks: {in_flight} deliveries per endpoint may be in flight, over the channel's cap of \
             {MAX_RINGS_IN_FLIGHT}: expect drops"
        ));
    }
    // The feeders' todos, made through the server: their POSTs fill the ready sample.
    let todos = feeder_todos(rig, store, args.feeders_per_endpoint).await?;
    let ready_body = rig.receiver.sample(READY).ok_or("no ready body arrived to size the ceiling's")?;
    result.ready_body_bytes = ready_body.len();
    rig.receiver.forget_unclaimed();

    let channel = BenchChannel::start(db, server, args.pool_size)?;
    let probe = Probe { threads: channel.threads(), ..probe.clone() };
    result.channel_threads = probe.threads.len();
    // One notification per feeder first: the channel's secrets open and its POSTs verify.
    for (ready, hooks) in &todos {
        if let Err(e) = Feeder::new(&channel, ready, *hooks, &rig.receiver).feed().await {
            let counts = channel.counts()?;
            return Err(format!(
                "warming the in-process channel: {e} (channel counters: {} delivered, {} failed, {} dropped)",
                counts.delivered, counts.failed, counts.dropped
            ));
        }
    }
    for round in 0..args.rounds {
        for hooks_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            if hooks_turn {
                let feeders = todos
                    .iter()
                    .map(|(r, h)| Agent::Work(Box::new(Feeder::new(&channel, r, *h, &rig.receiver))))
                    .collect();
                hooks::settle().await;
                let before = channel.counts()?;
                let verified = rig.receiver.count() as u64;
                let sampler = SessionSampler::start(&db.url).await?;
                let w = load::measure(feeders, u64::MAX, args.warmup(), args.window(), &probe).await;
                result.sessions.add(&sampler.finish().await?);
                hooks::settle().await;
                result.load_counts.add(&channel.counts()?.since(&before));
                result.load_verified += rig.receiver.count() as u64 - verified;
                rig.receiver.forget_unclaimed();
                result.notifications.merge(w);
            } else {
                let agents = posters(&rig.receiver, "ceiling", &ready_body, result.concurrency())?;
                let w = load::measure(agents, u64::MAX, args.warmup(), args.window(), &probe).await;
                w.check()?;
                result.ceiling.merge(w);
            }
        }
    }
    drop(channel);
    crate::progress(&format!(
        "hooks: in-process channel {:.0} deliveries/s to {} hooks ({} in flight at most), plain POSTs {:.0}/s \
         ({:.1} %); dropped {}, lost {}",
        result.deliveries_rate(),
        result.endpoints * result.hooks_per_endpoint,
        result.concurrency(),
        result.ceiling.rate(),
        result.ratio() * 100.0,
        result.load_counts.dropped,
        result.notifications.errors
    ));
    Ok(())
}

impl Work for Feeder {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.feed())
    }
}

impl Work for Poster {
    fn once(&self) -> std::pin::Pin<Box<dyn std::future::Future<Output = BenchResult<()>> + '_>> {
        Box::pin(self.post())
    }
}
