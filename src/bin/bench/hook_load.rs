//! Notify-hook throughput, and the ceilings of both hook figures.
//!
//! **Throughput**: on each line (an endpoint with H hooks), F feeders each post a
//! generic delivery and wait until all H hooks' `todo.ready` POSTs are held verified
//! by the receiver, then post the next. So at most lines × F × H deliveries are in
//! flight, kept under the server's per-endpoint cap (`MAX_DELIVERIES_IN_FLIGHT`) so
//! that the figure is what the channel delivers, not what it sheds; the server's
//! `/metrics` is read around the windows to show that nothing was dropped. Spreading
//! the load over several endpoints is what lets it go past one endpoint's cap.
//!
//! **Ceilings**: the same number of concurrent tasks, each with its own `awc` client
//! (keep-alive), posting a body of the same size (a real notification body the
//! receiver held), signed the same way, to the same receiver, which verifies it the
//! same way: what the receiver and the loopback can take.

use std::cell::Cell;
use std::time::Duration;

use actix_web::web::Bytes;
use switchboard::actors::notify::MAX_DELIVERIES_IN_FLIGHT;

use crate::database::BenchDb;
use crate::hooks::{self, ARRIVAL_TIMEOUT, DEAD, HooksResult, Line, READY, Rig};
use crate::load::{self, Agent};
use crate::machine::Probe;
use crate::receiver::Receiver;
use crate::scrape;
use crate::server::Server;
use crate::signature::Key;
use crate::waits::SessionSampler;
use crate::{Args, BenchResult};

/// A sender of generic deliveries on one line; its cycle ends when every hook of the
/// line holds the delivery's `todo.ready`.
pub struct Feeder {
    client: awc::Client,
    line: Line,
    receiver: Receiver,
    sent: Cell<u64>,
}

impl Feeder {
    fn new(line: &Line, receiver: &Receiver) -> Feeder {
        let client = awc::Client::builder().timeout(Duration::from_secs(30)).finish();
        Feeder { client, line: line.clone(), receiver: receiver.clone(), sent: Cell::new(0) }
    }

    /// One delivery and its H verified announcements.
    pub async fn feed(&self) -> BenchResult<()> {
        let n = self.sent.get();
        self.sent.set(n + 1);
        let todo = hooks::deliver(&self.client, &self.line, n).await?;
        match tokio::time::timeout(ARRIVAL_TIMEOUT, self.receiver.expect(READY, &todo, self.line.hooks)).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(format!(
                "a todo.ready did not reach all {} hooks within {} s",
                self.line.hooks,
                ARRIVAL_TIMEOUT.as_secs()
            )),
        }
    }
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
    receiver.route(name, &secret, false)?;
    Ok((0..n).map(|_| Agent::Poster(Poster::new(&receiver.url(name), &key, body))).collect())
}

/// The latency ceiling, then throughput and its ceiling in alternating rounds.
pub async fn measure(
    args: &Args,
    db: &BenchDb,
    server: &Server,
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
    if in_flight > MAX_DELIVERIES_IN_FLIGHT {
        crate::progress(&format!(
            "hooks: {in_flight} deliveries per endpoint may be in flight, over the server's cap of \
             {MAX_DELIVERIES_IN_FLIGHT}: expect drops"
        ));
    }
    // One notification per line first: it fills the receiver's sample of a ready body.
    for line in &rig.lines {
        Feeder::new(line, &rig.receiver).feed().await.map_err(|e| format!("warming the ready lines: {e}"))?;
    }
    let ready_body = rig.receiver.sample(READY).ok_or("no ready body arrived to size the ceiling's")?;
    result.ready_body_bytes = ready_body.len();
    for round in 0..args.rounds {
        for hooks_turn in if round % 2 == 0 { [true, false] } else { [false, true] } {
            if hooks_turn {
                let feeders = rig
                    .lines
                    .iter()
                    .flat_map(|l| (0..args.feeders_per_endpoint).map(|_| Agent::Feeder(Feeder::new(l, &rig.receiver))))
                    .collect();
                hooks::settle().await;
                let before = scrape::notify_counts(server).await?;
                let verified = rig.receiver.verified();
                let sampler = SessionSampler::start(&db.url).await?;
                let w = load::measure(feeders, u64::MAX, args.warmup(), args.window(), probe).await;
                result.sessions.add(&sampler.finish().await?);
                hooks::settle().await;
                result.load_counts.add(&scrape::notify_counts(server).await?.since(&before));
                result.load_verified += rig.receiver.verified() - verified;
                rig.receiver.forget_unclaimed();
                result.notifications.merge(w);
            } else {
                let agents = posters(&rig.receiver, "ceiling", &ready_body, result.concurrency())?;
                let w = load::measure(agents, u64::MAX, args.warmup(), args.window(), probe).await;
                w.check()?;
                result.ceiling.merge(w);
            }
        }
    }
    crate::progress(&format!(
        "hooks: {:.0} deliveries/s to {} hooks ({} in flight at most), plain POSTs {:.0}/s ({:.1} %); \
         dropped {}, lost {}",
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
