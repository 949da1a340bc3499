//! An agent as a real one copes with a fleet's bad day: it claims through the balancer
//! (long-polling a second when there is nothing), completes what it claimed on the work
//! queue and fails what it claimed on the doomed queue, with the lease token, and asks
//! again after a 502, a 503 or a dropped connection. A claim whose answer was lost
//! leaves a short lease behind, which lapses and is claimed again by someone; a finish
//! whose answer was lost is sent again until it lands or the lease is found gone (409).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::http::Client;
use super::journal::Journal;
use super::setup::DOOMED_QUEUE;

/// The claims' lease: short, so that a claim whose answer was lost is claimed again
/// within seconds (the replicas' lease reaper runs every half second).
pub const LEASE_SECONDS: u64 = 4;

/// The wait between asks after a 502, a 503 or a dropped connection.
const BACKOFF: Duration = Duration::from_millis(150);

/// Long-poll seconds of each claim.
const WAIT_SECONDS: u64 = 1;

/// One claim in this many is dropped on the floor, as by an agent that crashed
/// mid-work: its lease lapses and the todo is claimed again (on the doomed queue, whose
/// todos have one attempt, it dies `lease_expired`).
pub const ABANDON_EVERY: u64 = 40;

/// One agent.
pub struct Agent {
    client: Client,
    journal: Rc<Journal>,
    stop: Rc<Cell<bool>>,
    name: String,
}

/// A claim that took a todo.
struct Claimed {
    id: String,
    queue: String,
    lease_token: String,
    at: Instant,
}

impl Agent {
    /// Agent `n` with its own keep-alive connection to the balancer at `base`.
    pub fn new(n: usize, base: &str, token: &str, journal: &Rc<Journal>, stop: &Rc<Cell<bool>>) -> Agent {
        Agent {
            client: Client::new(base, Some(token), journal),
            journal: journal.clone(),
            stop: stop.clone(),
            name: format!("fleet/agent-{n}"),
        }
    }

    /// Cycles until told to stop (after its current todo).
    pub async fn run(self) {
        let mut claims: u64 = 0;
        while !self.stop.get() {
            let Some(claimed) = self.claim().await else { continue };
            claims += 1;
            if claims.is_multiple_of(ABANDON_EVERY) {
                self.journal.count(|c| c.abandoned += 1);
                continue;
            }
            self.finish(claimed).await;
        }
    }

    /// One claim-next; the todo it took, if any (after a failed ask, once the back-off
    /// is waited out).
    async fn claim(&self) -> Option<Claimed> {
        let body = serde_json::json!({ "lease_ttl_seconds": LEASE_SECONDS, "wait_seconds": WAIT_SECONDS,
                                       "claimant": self.name });
        let reply = self.client.post("claim-next", "/api/v1/agent/todos/claim-next", &body).await;
        if !reply.ok() {
            self.journal.count(|c| c.retries += 1);
            tokio::time::sleep(BACKOFF).await;
            return None;
        }
        let answer = reply.json();
        let todo = &answer["todo"];
        match (todo["id"].as_str(), todo["queue"].as_str(), answer["lease_token"].as_str()) {
            (Some(id), Some(queue), Some(lease)) => {
                self.journal.count(|c| c.claims += 1);
                Some(Claimed {
                    id: id.to_owned(),
                    queue: queue.to_owned(),
                    lease_token: lease.to_owned(),
                    at: Instant::now(),
                })
            }
            _ => {
                self.journal.count(|c| c.empty += 1);
                None
            }
        }
    }

    /// Completes (work queue) or fails (doomed queue) `claimed`, asking again after a
    /// 502, a 503 or a dropped connection while the lease may still hold.
    async fn finish(&self, claimed: Claimed) {
        let doomed = claimed.queue == DOOMED_QUEUE;
        let verb = if doomed { "fail" } else { "complete" };
        let path = format!("/api/v1/agent/todos/{}/{verb}", claimed.id);
        let summary = if doomed { "the fleet's doomed work fails on purpose" } else { "done by the fleet" };
        let body = serde_json::json!({ "lease_token": claimed.lease_token, "summary": summary });
        // Past the lease (and the reaper's half second) the todo is someone else's: a
        // later answer would be a 409 anyway.
        let give_up = claimed.at + Duration::from_secs(LEASE_SECONDS) + Duration::from_secs(2);
        loop {
            let reply = self.client.post(verb, &path, &body).await;
            if reply.ok() {
                self.journal.told(&claimed.id, |t| {
                    if doomed {
                        t.failed += 1;
                    } else {
                        t.completed += 1;
                    }
                    t.finished_at = Some(Instant::now());
                });
                return;
            }
            if reply.status == Some(409) {
                self.journal.told(&claimed.id, |t| t.conflicts += 1);
                return;
            }
            if !reply.retryable() || Instant::now() > give_up {
                return;
            }
            self.journal.count(|c| c.retries += 1);
            tokio::time::sleep(BACKOFF).await;
        }
    }
}
