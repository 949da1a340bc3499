//! The wake-up notices instances send one another when work becomes claimable on an
//! endpoint's queue (channel `switchboard_claims`, read by every instance's one claim
//! listener): what a notice says, and how arrivals are summed into as few notices as
//! PostgreSQL's payload limit allows.
//!
//! A notice is lines of `<endpoint id> <count> <queue>`, where the count is how many
//! todos became claimable, or `*` when any number may have (an admission budget
//! loosened): every waiter of that queue looks. Queue names hold no spaces (see
//! [`crate::domain::text::valid_queue_name`]), so a line splits unambiguously.

use std::collections::HashMap;

use super::ids::EndpointId;
use super::text::{QUARANTINE_QUEUE, valid_queue_name};

/// Longest payload one notice carries (PostgreSQL refuses 8 000 bytes and more).
pub const PAYLOAD_MAX_BYTES: usize = 7_900;

/// How much work arrived on a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrived {
    /// This many todos became claimable (each wakes one waiter).
    Todos(u32),
    /// Any number may have: every waiter of the queue looks once.
    Any,
}

impl Arrived {
    /// Both arrivals together.
    pub fn and(self, other: Arrived) -> Arrived {
        match (self, other) {
            (Arrived::Todos(a), Arrived::Todos(b)) => Arrived::Todos(a.saturating_add(b)),
            _ => Arrived::Any,
        }
    }
}

/// Work that arrived on one endpoint's queue, as a notice says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arrival {
    /// The endpoint.
    pub endpoint: EndpointId,
    /// The queue.
    pub queue: String,
    /// How much.
    pub todos: Arrived,
}

/// Arrivals not sent yet, summed per (endpoint, queue): a burst of a thousand todos on
/// one queue is one line.
#[derive(Debug, Default)]
pub struct PendingArrivals {
    sums: HashMap<(EndpointId, String), Arrived>,
}

impl PendingArrivals {
    /// Adds an arrival. The reserved quarantine queue is never claimable and is left out.
    pub fn add(&mut self, endpoint: EndpointId, queue: &str, todos: Arrived) {
        if queue == QUARANTINE_QUEUE || todos == Arrived::Todos(0) {
            return;
        }
        self.sums.entry((endpoint, queue.to_owned())).and_modify(|sum| *sum = sum.and(todos)).or_insert(todos);
    }

    /// Whether nothing waits to be sent.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }

    /// Everything pending as notice payloads (each at most [`PAYLOAD_MAX_BYTES`]), and
    /// forgets it.
    pub fn take_payloads(&mut self) -> Vec<String> {
        let mut payloads = Vec::new();
        let mut current = String::new();
        for ((endpoint, queue), todos) in self.sums.drain() {
            let count = match todos {
                Arrived::Todos(n) => n.to_string(),
                Arrived::Any => "*".to_owned(),
            };
            let line = format!("{endpoint} {count} {queue}");
            if !current.is_empty() && current.len() + 1 + line.len() > PAYLOAD_MAX_BYTES {
                payloads.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push('\n');
            }
            current.push_str(&line);
        }
        if !current.is_empty() {
            payloads.push(current);
        }
        payloads
    }

    /// Puts back payloads that could not be sent (they are sent with the next ones).
    pub fn restore(&mut self, payloads: &[String]) {
        for arrival in payloads.iter().flat_map(|p| parse(p)) {
            self.add(arrival.endpoint, &arrival.queue, arrival.todos);
        }
    }
}

/// The arrivals a notice names. Lines that do not parse are skipped: a notice is a hint
/// (the queue holds the work), never a reason to fail.
pub fn parse(payload: &str) -> Vec<Arrival> {
    payload.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Arrival> {
    let mut parts = line.splitn(3, ' ');
    let endpoint = parts.next()?.parse::<EndpointId>().ok()?;
    let todos = match parts.next()? {
        "*" => Arrived::Any,
        n => Arrived::Todos(n.parse().ok()?),
    };
    let queue = parts.next()?;
    if !valid_queue_name(queue) || queue == QUARANTINE_QUEUE {
        return None;
    }
    Some(Arrival { endpoint, queue: queue.to_owned(), todos })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut a: Vec<Arrival>) -> Vec<Arrival> {
        a.sort_by(|x, y| (x.endpoint, &x.queue).cmp(&(y.endpoint, &y.queue)));
        a
    }

    #[test]
    fn arrivals_on_one_queue_are_summed_into_one_line_and_read_back() {
        let (a, b) = (EndpointId::new(), EndpointId::new());
        let mut pending = PendingArrivals::default();
        for _ in 0..3 {
            pending.add(a, "inbox", Arrived::Todos(1));
        }
        pending.add(a, "builds", Arrived::Todos(2));
        pending.add(b, "inbox", Arrived::Todos(1));
        pending.add(b, "inbox", Arrived::Any);
        let payloads = pending.take_payloads();
        assert!(pending.is_empty());
        assert_eq!(payloads.len(), 1);
        assert_eq!(payloads[0].lines().count(), 3);
        let read = sorted(payloads.iter().flat_map(|p| parse(p)).collect());
        let want = sorted(vec![
            Arrival { endpoint: a, queue: "inbox".into(), todos: Arrived::Todos(3) },
            Arrival { endpoint: a, queue: "builds".into(), todos: Arrived::Todos(2) },
            Arrival { endpoint: b, queue: "inbox".into(), todos: Arrived::Any },
        ]);
        assert_eq!(read, want);
    }

    #[test]
    fn many_queues_split_into_payloads_under_the_limit_and_none_is_lost() {
        let mut pending = PendingArrivals::default();
        let endpoints: Vec<EndpointId> = (0..200).map(|_| EndpointId::new()).collect();
        let long_queue = "q".repeat(64);
        for e in &endpoints {
            pending.add(*e, &long_queue, Arrived::Todos(u32::MAX));
        }
        let payloads = pending.take_payloads();
        assert!(payloads.len() > 1, "200 lines of over 100 bytes need several notices");
        assert!(payloads.iter().all(|p| p.len() <= PAYLOAD_MAX_BYTES));
        let read: Vec<Arrival> = payloads.iter().flat_map(|p| parse(p)).collect();
        assert_eq!(read.len(), 200);
        assert!(read.iter().all(|r| r.todos == Arrived::Todos(u32::MAX) && r.queue == long_queue));
    }

    #[test]
    fn counts_saturate_and_any_absorbs_counts() {
        assert_eq!(Arrived::Todos(u32::MAX).and(Arrived::Todos(5)), Arrived::Todos(u32::MAX));
        assert_eq!(Arrived::Todos(1).and(Arrived::Any), Arrived::Any);
        assert_eq!(Arrived::Any.and(Arrived::Todos(1)), Arrived::Any);
    }

    #[test]
    fn quarantine_and_nothing_are_never_sent_and_bad_lines_are_skipped() {
        let e = EndpointId::new();
        let mut pending = PendingArrivals::default();
        pending.add(e, QUARANTINE_QUEUE, Arrived::Todos(1));
        pending.add(e, "inbox", Arrived::Todos(0));
        assert!(pending.is_empty());
        let good = format!("{e} 2 inbox");
        let payload = [
            "garbage",
            &format!("{e} x inbox"),
            &format!("{e} 1 Not-A-Queue"),
            &format!("{e} 1 quarantine"),
            &format!("{e} 1"),
            "td_0190b7c4e1a87d2f9c3b5a6e4d2c1b0a 1 inbox",
            &good,
        ]
        .join("\n");
        assert_eq!(parse(&payload), vec![Arrival { endpoint: e, queue: "inbox".into(), todos: Arrived::Todos(2) }]);
    }

    #[test]
    fn payloads_that_could_not_be_sent_are_put_back_whole() {
        let e = EndpointId::new();
        let mut pending = PendingArrivals::default();
        pending.add(e, "inbox", Arrived::Todos(2));
        let failed = pending.take_payloads();
        pending.add(e, "inbox", Arrived::Todos(1));
        pending.restore(&failed);
        let read: Vec<Arrival> = pending.take_payloads().iter().flat_map(|p| parse(p)).collect();
        assert_eq!(read, vec![Arrival { endpoint: e, queue: "inbox".into(), todos: Arrived::Todos(3) }]);
    }
}
