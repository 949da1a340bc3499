//! What happened during a fault run, with the time of each thing: the faults the run
//! made (a replica killed and started again, the database stopped and started, a
//! replica of the previous release joining and leaving, the balancer reloaded), every
//! answer a client got that was not a 2xx (or no answer at all), and what the agents
//! and the feeder were told about each todo. The verdict reads it afterwards.
//!
//! Everything runs on the bench's one client thread, so the journal is shared by `Rc`
//! and written through `RefCell`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime};

/// A fault the run made, or a step of one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL is about to be sent to the replica listening on this port.
    Killed(u16),
    /// Its process is gone.
    Gone(u16),
    /// The killed replica's process was started again.
    Restarted(u16),
    /// It answered `/readyz` again.
    Ready(u16),
    /// `pg_ctl stop -m fast` was run.
    DatabaseStopping,
    /// `pg_ctl start` returned: the database accepts connections again.
    DatabaseUp,
    /// A replica of the previous release joined the balancer (on this port).
    PreviousJoined(u16),
    /// It was taken out of the balancer (and then stopped).
    PreviousLeft(u16),
    /// The balancer was told to reload its configuration.
    Reloaded,
}

/// One answer that was not a 2xx, or a request that got none.
#[derive(Debug, Clone)]
pub struct Answer {
    /// What was asked (`claim-next`, `complete`, `delivery`, …).
    pub what: &'static str,
    /// When the request was sent.
    pub sent: Instant,
    /// When the answer (or the error) came.
    pub answered: Instant,
    /// The status, or none when the connection failed.
    pub status: Option<u16>,
    /// The upstream(s) the balancer says it tried (`X-Fleet-Upstream`).
    pub upstream: String,
    /// The error, for a request without an answer; the body's start otherwise.
    pub detail: String,
}

/// What a client was told about one todo.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Told {
    /// `complete` answered 2xx.
    pub completed: u32,
    /// `fail` answered 2xx.
    pub failed: u32,
    /// A finish answered 409: the lease was gone (lapsed and taken over, or the finish
    /// had already landed and its answer was lost).
    pub conflicts: u32,
    /// When the last 2xx finish was answered.
    pub finished_at: Option<Instant>,
}

/// The journal.
pub struct Journal {
    /// When the run started (instants are reported relative to it).
    pub started: Instant,
    /// The wall-clock time at `started`, to place the database's timestamps.
    pub started_wall: SystemTime,
    faults: RefCell<Vec<(Instant, Fault)>>,
    answers: RefCell<Vec<Answer>>,
    told: RefCell<BTreeMap<String, Told>>,
    deliveries: RefCell<Deliveries>,
    counts: RefCell<Counts>,
}

/// The feeder's deliveries.
#[derive(Debug, Clone, Default)]
pub struct Deliveries {
    /// Delivery ids sent, and when each was accepted (202), if it was in the end.
    pub sent: BTreeMap<String, Option<Instant>>,
    /// Todo ids the accepted first copies answered.
    pub todos: Vec<String>,
    /// Accepted deliveries answered as duplicates (a retry of one whose first answer
    /// was lost).
    pub duplicates: u64,
}

/// Plain counters.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    /// Claims that took a todo.
    pub claims: u64,
    /// Claims answered empty.
    pub empty: u64,
    /// Requests retried after a 502, a 503 or a dropped connection.
    pub retries: u64,
    /// Claims dropped on purpose (an agent that "crashed" mid-work).
    pub abandoned: u64,
}

impl Journal {
    /// A journal starting now.
    pub fn new() -> Journal {
        Journal {
            started: Instant::now(),
            started_wall: SystemTime::now(),
            faults: RefCell::new(Vec::new()),
            answers: RefCell::new(Vec::new()),
            told: RefCell::new(BTreeMap::new()),
            deliveries: RefCell::new(Deliveries::default()),
            counts: RefCell::new(Counts::default()),
        }
    }

    /// Records a fault now.
    pub fn fault(&self, fault: Fault) {
        self.note(&format!("{fault:?}"));
        self.faults.borrow_mut().push((Instant::now(), fault));
    }

    /// A progress line with the run's clock.
    pub fn note(&self, what: &str) {
        crate::progress(&format!("fleet: {:>6.1} s  {what}", self.seconds(Instant::now())));
    }

    /// Records an answer that was not a 2xx.
    pub fn answer(&self, answer: Answer) {
        self.answers.borrow_mut().push(answer);
    }

    /// Records what a finish was told about `todo`.
    pub fn told(&self, todo: &str, change: impl FnOnce(&mut Told)) {
        change(self.told.borrow_mut().entry(todo.to_owned()).or_default());
    }

    /// Records a delivery sent (accepted or not yet).
    pub fn delivery(&self, id: &str, accepted: bool, todos: &[String], duplicate: bool) {
        let mut d = self.deliveries.borrow_mut();
        d.sent.insert(id.to_owned(), accepted.then(Instant::now));
        d.todos.extend(todos.iter().cloned());
        d.duplicates += u64::from(duplicate);
    }

    /// Changes the counters.
    pub fn count(&self, change: impl FnOnce(&mut Counts)) {
        change(&mut self.counts.borrow_mut());
    }

    /// The faults so far, in order.
    pub fn faults(&self) -> Vec<(Instant, Fault)> {
        self.faults.borrow().clone()
    }

    /// The non-2xx answers so far.
    pub fn answers(&self) -> Vec<Answer> {
        self.answers.borrow().clone()
    }

    /// What clients were told, per todo.
    pub fn told_all(&self) -> BTreeMap<String, Told> {
        self.told.borrow().clone()
    }

    /// The feeder's deliveries.
    pub fn deliveries(&self) -> Deliveries {
        self.deliveries.borrow().clone()
    }

    /// The counters.
    pub fn counts(&self) -> Counts {
        *self.counts.borrow()
    }

    /// Seconds from the start to `at`.
    pub fn seconds(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64()
    }

    /// The instant of a wall-clock time (the database's), on this journal's clock.
    pub fn instant_of(&self, wall: SystemTime) -> Instant {
        match wall.duration_since(self.started_wall) {
            Ok(after) => self.started + after,
            Err(before) => self.started.checked_sub(before.duration()).unwrap_or(self.started),
        }
    }
}

/// A span of time on the journal's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// From.
    pub from: Instant,
    /// To.
    pub to: Instant,
}

impl Span {
    /// Whether `at` lies in the span.
    pub fn holds(&self, at: Instant) -> bool {
        self.from <= at && at <= self.to
    }

    /// The span widened by `before` and `after`.
    pub fn widened(&self, before: Duration, after: Duration) -> Span {
        Span { from: self.from.checked_sub(before).unwrap_or(self.from), to: self.to + after }
    }
}
