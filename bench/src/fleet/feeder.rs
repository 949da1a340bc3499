//! The work coming in: signed Standard Webhooks deliveries through the balancer at a
//! steady rate, every fifth to the doomed webhook. A delivery that got a 502, a 503 or
//! no answer is sent again with the same delivery id (`webhook-id`), as a provider
//! retries: intake records a delivery id once, so a retry of one that did land creates
//! nothing new and answers `duplicate`.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use actix_web::web::Bytes;

use super::http::Client;
use super::journal::Journal;
use super::setup::Source;

/// How long one delivery is retried before it is given up (and the verdict says so).
const GIVE_UP: Duration = Duration::from_secs(60);
/// The wait between tries.
const BACKOFF: Duration = Duration::from_millis(200);
/// Deliveries in flight at once, at most.
const IN_FLIGHT: usize = 16;

/// Sends deliveries at `per_second` until `stop` is set; waits for those in flight.
pub async fn run(
    base: String,
    work: Source,
    doomed: Source,
    per_second: u32,
    journal: Rc<Journal>,
    stop: Rc<Cell<bool>>,
    run_id: String,
) {
    let clients: Vec<Rc<Client>> = (0..IN_FLIGHT).map(|_| Rc::new(Client::new(&base, None, &journal))).collect();
    let free: Rc<Cell<usize>> = Rc::new(Cell::new(IN_FLIGHT));
    let mut tasks = Vec::new();
    let tick = Duration::from_secs_f64(1.0 / f64::from(per_second.max(1)));
    let started = Instant::now();
    let mut n: u64 = 0;
    while !stop.get() {
        let due = started + tick.mul_f64(n as f64);
        tokio::time::sleep_until(due.into()).await;
        if free.get() == 0 {
            // Everyone is retrying: the rate waits (counted as sent late, not dropped).
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        free.set(free.get() - 1);
        let client = clients[(n as usize) % IN_FLIGHT].clone();
        let source = if n % 5 == 4 { doomed.clone() } else { work.clone() };
        let id = format!("fleet-{run_id}-{n}");
        let (journal, free) = (journal.clone(), free.clone());
        tasks.push(actix_rt::spawn(async move {
            deliver(&client, &source, &id, n, &journal).await;
            free.set(free.get() + 1);
        }));
        n += 1;
    }
    for t in tasks {
        let _ = t.await;
    }
}

/// One delivery, tried until accepted, refused for good, or given up.
async fn deliver(client: &Client, source: &Source, id: &str, seq: u64, journal: &Journal) {
    let body =
        Bytes::from(serde_json::to_vec(&serde_json::json!({ "seq": seq, "source": "fleet" })).unwrap_or_default());
    let until = Instant::now() + GIVE_UP;
    loop {
        let ts = chrono::Utc::now().timestamp();
        let headers = [
            ("content-type", "application/json".to_owned()),
            ("webhook-id", id.to_owned()),
            ("webhook-timestamp", ts.to_string()),
            ("webhook-signature", source.key.sign(id, ts, &body)),
        ];
        let reply = client.send("delivery", "POST", &source.path, &headers, body.clone()).await;
        if reply.ok() {
            let answer = reply.json();
            let todos: Vec<String> = answer["todos"]
                .as_array()
                .map(|a| a.iter().filter_map(|t| t.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            journal.delivery(id, true, &todos, answer["duplicate"].as_bool().unwrap_or(false));
            return;
        }
        if !reply.retryable() || Instant::now() > until {
            journal.delivery(id, false, &[], false);
            return;
        }
        journal.count(|c| c.retries += 1);
        tokio::time::sleep(BACKOFF).await;
    }
}
