//! What must hold after a fault run, read from the database, the receivers' records and
//! the journal:
//!
//! - every delivery the feeder sent was accepted, and made exactly one todo;
//! - every todo ended, exactly once: done (one `done` attempt, no dead letter) or dead
//!   (one `dead_lettered` attempt, counted once), never both, none left open; no client
//!   was told "completed" or "failed" twice, or something the database does not hold;
//! - every dead letter's sink message arrived at least once; copies beyond one only for
//!   dead letters sent just before a crash (a killed replica, the database going down)
//!   that could not record the send;
//! - every dead letter's hook announcement arrived, or it was lost in flight: made just
//!   before a replica was killed or left, or while the database was down (hooks are
//!   doorbells, kept in memory only);
//! - the outbox drained: nothing pending, held or undeliverable, no record left;
//! - no client saw a 500, ever; a 503 only while the database was down and for 10 s
//!   after; a 502 only for a request in flight at the killed replica; no dropped
//!   connection except around a reload of the balancer; no other refusal but a 409 to a
//!   finish whose lease was gone.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::time::{Duration, Instant, UNIX_EPOCH};

use testkit::receiver::{GOTIFY_KIND, Receiver};
use tokio_postgres::Client as Db;

use super::journal::{Answer, Fault, Journal, Span};

/// 503s are allowed for this long after the database is back.
pub const AFTER_DATABASE: Duration = Duration::from_secs(10);
/// A 502's request may have been sent this long after the kill and still count as in
/// flight (the balancer learns of the closed connections a moment later).
const KILL_SLACK: Duration = Duration::from_millis(250);
/// How long before a crash a sink message may have been sent without being recorded.
const SEND_BEFORE_CRASH: Duration = Duration::from_secs(5);
/// How long before a crash a hook announcement may still have been in a replica's
/// memory.
const HOOK_BEFORE_CRASH: Duration = Duration::from_secs(3);
/// Dropped connections are allowed this long after the balancer reloads.
const AFTER_RELOAD: Duration = Duration::from_secs(2);

/// One todo as the database holds it.
#[derive(Debug, Clone)]
pub struct TodoRow {
    /// `td_…`.
    pub id: String,
    /// Its queue.
    pub queue: String,
    /// Its state.
    pub state: String,
    /// Whether a retry is scheduled.
    pub retry_scheduled: bool,
    /// Why it died, if it did.
    pub dead_reason: Option<String>,
    /// Dead letters counted on it.
    pub dead_letter_count: i32,
    /// When it died.
    pub dead_at: Option<Instant>,
    /// History rows that ended it done.
    pub done_attempts: i64,
    /// History rows that ended it dead.
    pub dead_attempts: i64,
    /// Claims made of it.
    pub attempts_total: i32,
    /// The delivery id it came from.
    pub delivery: Option<String>,
}

impl TodoRow {
    fn is_dead(&self) -> bool {
        self.state == "failed" && !self.retry_scheduled && self.dead_reason.is_some()
    }

    /// Exactly one terminal transition, consistent with the row.
    fn ended_once(&self) -> bool {
        match self.state.as_str() {
            "done" => self.done_attempts == 1 && self.dead_attempts == 0 && self.dead_letter_count == 0,
            "failed" => {
                self.is_dead() && self.dead_attempts == 1 && self.done_attempts == 0 && self.dead_letter_count == 1
            }
            _ => false,
        }
    }
}

/// Reads the fleet endpoint's todos with their terminal history rows.
pub async fn todos(db: &Db, endpoint: uuid::Uuid, journal: &Journal) -> Result<Vec<TodoRow>, String> {
    let rows = db
        .query(
            "SELECT t.id::text, t.queue, t.state, t.next_retry_at IS NOT NULL, t.dead_reason, t.dead_letter_count, \
               extract(epoch FROM t.dead_lettered_at)::float8, \
               (SELECT count(*) FROM todo_attempt_history h WHERE h.todo_id = t.id AND h.disposition = 'done'), \
               (SELECT count(*) FROM todo_attempt_history h WHERE h.todo_id = t.id AND h.disposition = 'dead_lettered'), \
               t.attempts_total, e.external_id \
             FROM todos t LEFT JOIN events e ON e.id = t.event_id WHERE t.endpoint_id = $1::text::uuid",
            &[&endpoint.to_string()],
        )
        .await
        .map_err(|e| format!("reading the fleet's todos: {e}"))?;
    Ok(rows
        .iter()
        .map(|r| {
            let id: String = r.get(0);
            let dead_at: Option<f64> = r.get(6);
            TodoRow {
                id: format!("td_{}", id.replace('-', "")),
                queue: r.get(1),
                state: r.get(2),
                retry_scheduled: r.get(3),
                dead_reason: r.get(4),
                dead_letter_count: r.get(5),
                dead_at: dead_at.map(|s| journal.instant_of(UNIX_EPOCH + Duration::from_secs_f64(s.max(0.0)))),
                done_attempts: r.get(7),
                dead_attempts: r.get(8),
                attempts_total: r.get(9),
                delivery: r.get(10),
            }
        })
        .collect())
}

/// The outbox's rows by status, and records not yet owed nothing.
pub async fn outbox(db: &Db) -> Result<(BTreeMap<String, i64>, i64), String> {
    let rows = db
        .query("SELECT status, count(*) FROM outbox GROUP BY status", &[])
        .await
        .map_err(|e| format!("reading the outbox: {e}"))?;
    let by_status = rows.iter().map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1))).collect();
    let records = db
        .query_one("SELECT count(*) FROM outbox_events", &[])
        .await
        .map_err(|e| format!("reading the outbox's records: {e}"))?
        .get::<_, i64>(0);
    Ok((by_status, records))
}

/// Whether the outbox has nothing left to do.
pub fn drained(by_status: &BTreeMap<String, i64>, records: i64) -> bool {
    records == 0 && ["pending", "held", "partial"].iter().all(|s| by_status.get(*s).copied().unwrap_or(0) == 0)
}

/// The spans the faults make, read from the journal.
#[derive(Debug, Clone, Default)]
pub struct Windows {
    /// Kills: (port, signal sent, process gone).
    pub kills: Vec<(u16, Instant, Instant)>,
    /// Restarts of killed replicas: (port, started again, ready again).
    pub restarts: Vec<(u16, Instant, Option<Instant>)>,
    /// The database down: stop asked → back up.
    pub database: Vec<Span>,
    /// Replicas of the previous release leaving: (port, instant).
    pub departures: Vec<(u16, Instant)>,
    /// Reloads of the balancer.
    pub reloads: Vec<Instant>,
}

impl Windows {
    /// Reads the faults.
    pub fn of(faults: &[(Instant, Fault)]) -> Windows {
        let mut w = Windows::default();
        let mut stopping = None;
        for (at, f) in faults {
            match f {
                Fault::Killed(p) => w.kills.push((*p, *at, *at)),
                Fault::Gone(p) => {
                    if let Some(k) = w.kills.iter_mut().rev().find(|k| k.0 == *p) {
                        k.2 = *at;
                    }
                }
                Fault::Restarted(p) => w.restarts.push((*p, *at, None)),
                Fault::Ready(p) => {
                    if let Some(r) = w.restarts.iter_mut().rev().find(|r| r.0 == *p && r.2.is_none()) {
                        r.2 = Some(*at);
                    }
                }
                Fault::DatabaseStopping => stopping = Some(*at),
                Fault::DatabaseUp => {
                    if let Some(from) = stopping.take() {
                        w.database.push(Span { from, to: *at });
                    }
                }
                Fault::PreviousLeft(p) => w.departures.push((*p, *at)),
                Fault::Reloaded => w.reloads.push(*at),
                Fault::PreviousJoined(_) => {}
            }
        }
        if let Some(from) = stopping {
            // Stopped and never back: down until the end.
            w.database.push(Span { from, to: from + Duration::from_secs(3600) });
        }
        w
    }

    /// Spans in which a crash may have lost what a replica held or was writing.
    fn crashes(&self, before: Duration) -> Vec<Span> {
        let mut spans: Vec<Span> = self
            .kills
            .iter()
            .map(|(_, from, to)| Span { from: *from, to: *to })
            .chain(self.departures.iter().map(|(_, at)| Span { from: *at, to: *at }))
            .map(|s| s.widened(before, Duration::from_millis(500)))
            .collect();
        spans.extend(self.database.iter().map(|s| s.widened(before, AFTER_DATABASE)));
        spans
    }

    /// Why a non-2xx answer is allowed, or none when it is not.
    pub fn excuse(&self, a: &Answer) -> Option<&'static str> {
        match a.status {
            Some(409) if matches!(a.what, "complete" | "fail") => Some("409: the lease was gone"),
            Some(503) => self
                .database
                .iter()
                .any(|s| s.widened(Duration::ZERO, AFTER_DATABASE).holds(a.answered))
                .then_some("503 while the database was down or within 10 s after"),
            Some(502) => self
                .kills
                .iter()
                .any(|(port, signalled, gone)| {
                    a.upstream.contains(&format!(":{port}")) && a.sent <= *gone + KILL_SLACK && a.answered >= *signalled
                })
                .then_some("502 in flight at the killed replica"),
            None => self
                .reloads
                .iter()
                .any(|r| Span { from: *r, to: *r + AFTER_RELOAD }.holds(a.answered))
                .then_some("dropped around a reload of the balancer"),
            _ => None,
        }
    }
}

/// The verdict's findings.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Rules broken, one line each (several of a kind are summed up).
    pub violations: Vec<String>,
    /// The summary lines.
    pub summary: Vec<String>,
    /// Figures for the report.
    pub figures: Figures,
}

/// The run's figures.
#[derive(Debug, Default, Clone)]
pub struct Figures {
    /// Todos created (deliveries accepted).
    pub todos: u64,
    /// Done.
    pub done: u64,
    /// Dead letters, by reason.
    pub dead: BTreeMap<String, u64>,
    /// Todos claimed more than once (a lapsed lease claimed again).
    pub reclaimed: u64,
    /// Non-2xx answers by (status, excuse or "VIOLATION").
    pub answers: BTreeMap<String, u64>,
    /// Sink messages: dead letters with a message, copies beyond one, lost.
    pub sink: (u64, u64, u64),
    /// Dead letter → first sink message, seconds: median and longest.
    pub sink_latency: (f64, f64),
    /// Hook announcements of dead letters: delivered, lost in flight, lost outside.
    pub hooks: (u64, u64, u64),
    /// Deliveries answered as duplicates (retries of landed ones).
    pub duplicate_deliveries: u64,
}

impl Verdict {
    fn violate(&mut self, line: String) {
        self.violations.push(line);
    }

    /// Whether every rule held.
    pub fn passed(&self) -> bool {
        self.violations.is_empty()
    }

    /// The whole report.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for line in &self.summary {
            let _ = writeln!(out, "  {line}");
        }
        if self.passed() {
            let _ = writeln!(out, "PASS: every rule held");
        } else {
            let _ = writeln!(out, "FAIL: {} rule(s) broken:", self.violations.len());
            for v in &self.violations {
                let _ = writeln!(out, "  - {v}");
            }
        }
        out
    }
}

/// Ids of at most a few of `items`, for a violation line.
fn some(items: &[String]) -> String {
    let shown: Vec<&str> = items.iter().take(5).map(String::as_str).collect();
    if items.len() > shown.len() { format!("{} …", shown.join(", ")) } else { shown.join(", ") }
}

/// Everything the verdict reads.
pub struct Evidence<'a> {
    /// The journal.
    pub journal: &'a Journal,
    /// The fleet's todos.
    pub todos: &'a [TodoRow],
    /// The outbox by status, and records left.
    pub outbox: (BTreeMap<String, i64>, i64),
    /// Dead letters without an outbox row sent to the sink.
    pub unsent: i64,
    /// The hook receiver.
    pub hooks: &'a Receiver,
    /// The Gotify receiver.
    pub gotify: &'a Receiver,
}

/// Judges the run.
pub fn judge(e: &Evidence<'_>) -> Verdict {
    let mut v = Verdict::default();
    let windows = Windows::of(&e.journal.faults());
    deliveries_and_endings(e, &mut v);
    answers(e, &windows, &mut v);
    sink_and_hooks(e, &windows, &mut v);
    let (by_status, records) = &e.outbox;
    if !drained(by_status, *records) {
        v.violate(format!("the outbox did not drain: {by_status:?}, {records} record(s) left"));
    }
    if let Some(n) = by_status.get("undeliverable").filter(|n| **n > 0) {
        v.violate(format!("{n} outbox row(s) ended undeliverable"));
    }
    if e.unsent > 0 {
        v.violate(format!("{} dead letter(s) have no outbox row sent to the sink", e.unsent));
    }
    v.summary.push(format!("outbox rows by status: {by_status:?}; records left: {records}"));
    timeline(e.journal, &mut v);
    v
}

fn deliveries_and_endings(e: &Evidence<'_>, v: &mut Verdict) {
    let d = e.journal.deliveries();
    let given_up: Vec<String> = d.sent.iter().filter(|(_, at)| at.is_none()).map(|(id, _)| id.clone()).collect();
    if !given_up.is_empty() {
        v.violate(format!("{} delivery(ies) were never accepted: {}", given_up.len(), some(&given_up)));
    }
    let mut per_delivery: HashMap<&str, u32> = HashMap::new();
    let mut strays = Vec::new();
    for t in e.todos {
        match t.delivery.as_deref().filter(|id| d.sent.contains_key(*id)) {
            Some(id) => *per_delivery.entry(id).or_default() += 1,
            None => strays.push(t.id.clone()),
        }
    }
    if !strays.is_empty() {
        v.violate(format!("{} todo(s) came from no delivery the feeder sent: {}", strays.len(), some(&strays)));
    }
    let doubled: Vec<String> = per_delivery.iter().filter(|(_, n)| **n > 1).map(|(id, _)| (*id).to_owned()).collect();
    if !doubled.is_empty() {
        v.violate(format!("{} delivery(ies) made more than one todo: {}", doubled.len(), some(&doubled)));
    }
    let accepted: Vec<String> = d.sent.iter().filter(|(_, at)| at.is_some()).map(|(id, _)| id.clone()).collect();
    let missing: Vec<String> = d
        .sent
        .iter()
        .filter_map(|(id, at)| at.filter(|_| !per_delivery.contains_key(id.as_str())).map(|at| (id, at)))
        .map(|(id, at)| format!("{id} (answered 202 at {:.2} s)", e.journal.seconds(at)))
        .collect();
    if !missing.is_empty() {
        v.violate(format!("{} accepted delivery(ies) have no todo: {}", missing.len(), some(&missing)));
    }

    let open: Vec<String> =
        e.todos.iter().filter(|t| !t.ended_once()).map(|t| format!("{} ({})", t.id, t.state)).collect();
    if !open.is_empty() {
        v.violate(format!("{} todo(s) did not end exactly once: {}", open.len(), some(&open)));
    }
    let wrong_queue: Vec<String> = e
        .todos
        .iter()
        .filter(|t| (t.queue == super::setup::DOOMED_QUEUE) != t.is_dead() && t.ended_once())
        .map(|t| format!("{} ({} on {})", t.id, t.state, t.queue))
        .collect();
    if !wrong_queue.is_empty() {
        v.violate(format!(
            "{} todo(s) ended otherwise than their queue says: {}",
            wrong_queue.len(),
            some(&wrong_queue)
        ));
    }

    let rows: HashMap<&str, &TodoRow> = e.todos.iter().map(|t| (t.id.as_str(), t)).collect();
    let mut twice = Vec::new();
    let mut contradicted = Vec::new();
    for (id, told) in e.journal.told_all() {
        if told.completed + told.failed > 1 {
            twice.push(format!("{id} (completed {}×, failed {}×)", told.completed, told.failed));
        }
        let held = rows.get(id.as_str());
        let consistent = match held {
            Some(t) => (told.completed == 0 || t.state == "done") && (told.failed == 0 || t.is_dead()),
            None => false,
        };
        if !consistent {
            let state = held.map_or("absent", |t| t.state.as_str());
            let at = told.finished_at.map_or(0.0, |at| e.journal.seconds(at));
            contradicted.push(format!("{id} (told at {at:.2} s, held {state})"));
        }
    }
    if !twice.is_empty() {
        v.violate(format!("{} todo(s) were finished more than once for a client: {}", twice.len(), some(&twice)));
    }
    if !contradicted.is_empty() {
        v.violate(format!(
            "{} todo(s) were told finished one way and are held another: {}",
            contradicted.len(),
            some(&contradicted)
        ));
    }

    let f = &mut v.figures;
    f.todos = e.todos.len() as u64;
    f.done = e.todos.iter().filter(|t| t.state == "done").count() as u64;
    for t in e.todos.iter().filter(|t| t.is_dead()) {
        *f.dead.entry(t.dead_reason.clone().unwrap_or_default()).or_default() += 1;
    }
    f.reclaimed = e.todos.iter().filter(|t| t.attempts_total > 1).count() as u64;
    f.duplicate_deliveries = d.duplicates;
    let counts = e.journal.counts();
    v.summary.push(format!(
        "{} deliveries accepted ({} answered as duplicates of one that had landed); {} todos: {} done, dead {:?}; \
         {} claimed more than once (a lease lapsed)",
        accepted.len(),
        d.duplicates,
        f.todos,
        f.done,
        f.dead,
        f.reclaimed
    ));
    v.summary.push(format!(
        "agents: {} claims ({} dropped on purpose, as by an agent that crashed), {} empty long-polls, {} requests \
         asked again after a 502, a 503 or a dropped connection",
        counts.claims, counts.abandoned, counts.empty, counts.retries
    ));
}

fn answers(e: &Evidence<'_>, w: &Windows, v: &mut Verdict) {
    let mut bad = Vec::new();
    for a in e.journal.answers() {
        let status = a.status.map_or("no answer".to_owned(), |s| s.to_string());
        let key = match w.excuse(&a) {
            Some(why) => format!("{status} ({why})"),
            None => {
                let startup = a.status == Some(503)
                    && w.restarts.iter().any(|(p, from, to)| {
                        a.upstream.contains(&format!(":{p}"))
                            && a.answered >= *from
                            && to.is_none_or(|to| a.answered <= to)
                    });
                bad.push(format!(
                    "{} {status} at {:.2} s (sent {:.2} s) via {}{}: {}",
                    a.what,
                    e.journal.seconds(a.answered),
                    e.journal.seconds(a.sent),
                    if a.upstream.is_empty() { "-" } else { &a.upstream },
                    if startup { " (a replica starting up)" } else { "" },
                    a.detail.chars().take(120).collect::<String>()
                ));
                format!("{status} (VIOLATION)")
            }
        };
        *v.figures.answers.entry(key).or_default() += 1;
    }
    if !bad.is_empty() {
        let shown: Vec<String> = bad.iter().take(10).cloned().collect();
        v.violate(format!("{} answer(s) broke the rules on statuses: {}", bad.len(), shown.join("; ")));
    }
    v.summary.push(format!("non-2xx answers and dropped requests: {:?}", v.figures.answers));
}

fn sink_and_hooks(e: &Evidence<'_>, w: &Windows, v: &mut Verdict) {
    let dead: Vec<&TodoRow> = e.todos.iter().filter(|t| t.is_dead()).collect();
    let dead_ids: Vec<String> = dead.iter().map(|t| t.id.clone()).collect();
    let sends = w.crashes(SEND_BEFORE_CRASH);
    let tally = e.gotify.tally(GOTIFY_KIND, &dead_ids, 1);
    let mut lost = Vec::new();
    let mut odd_copies = Vec::new();
    let mut copies = 0;
    let mut latencies = Vec::new();
    for t in &dead {
        match e.gotify.arrivals(GOTIFY_KIND, &t.id) {
            arrivals if arrivals.is_empty() => lost.push(t.id.clone()),
            arrivals => {
                if let Some(dead_at) = t.dead_at {
                    latencies.push(arrivals[0].saturating_duration_since(dead_at).as_secs_f64());
                }
                let extra = arrivals.len() as u64 - 1;
                copies += extra;
                if extra > 0 && !sends.iter().any(|s| s.holds(arrivals[0])) {
                    odd_copies.push(format!("{} ×{}", t.id, arrivals.len()));
                }
            }
        }
    }
    if !lost.is_empty() {
        v.violate(format!("{} dead letter(s) never reached the sink: {}", lost.len(), some(&lost)));
    }
    if !odd_copies.is_empty() {
        v.violate(format!(
            "{} dead letter(s) reached the sink more than once outside a crash window: {}",
            odd_copies.len(),
            some(&odd_copies)
        ));
    }
    if tally.unexpected > 0 {
        v.violate(format!("{} sink message(s) about todos that are not dead letters", tally.unexpected));
    }
    v.figures.sink = (dead.len() as u64 - lost.len() as u64, copies, lost.len() as u64);
    latencies.sort_by(f64::total_cmp);
    let median = latencies.get(latencies.len() / 2).copied().unwrap_or(0.0);
    v.figures.sink_latency = (median, latencies.last().copied().unwrap_or(0.0));

    let in_flight = w.crashes(HOOK_BEFORE_CRASH);
    let (mut heard, mut excused, mut unheard) = (0, 0, Vec::new());
    for t in &dead {
        if !e.hooks.arrivals("todo.dead_lettered", &t.id).is_empty() {
            heard += 1;
        } else if t.dead_at.is_some_and(|at| in_flight.iter().any(|s| s.holds(at))) {
            excused += 1;
        } else {
            unheard.push(t.id.clone());
        }
    }
    let stray_hooks = e.hooks.tally("todo.dead_lettered", &dead_ids, 1).unexpected;
    if !unheard.is_empty() {
        v.violate(format!(
            "{} dead letter(s) were never announced on the hook, outside any fault: {}",
            unheard.len(),
            some(&unheard)
        ));
    }
    if stray_hooks > 0 {
        v.violate(format!("{stray_hooks} hook announcement(s) of dead letters that are not dead"));
    }
    v.figures.hooks = (heard, excused, unheard.len() as u64);
    v.summary.push(format!(
        "sink: {} of {} dead letters delivered ({copies} extra copies from crash windows), {} lost; dead letter → \
         message median {:.2} s, longest {:.1} s (a crashed replica's claim lapses after 60 s)",
        v.figures.sink.0,
        dead.len(),
        lost.len(),
        v.figures.sink_latency.0,
        v.figures.sink_latency.1
    ));
    v.summary.push(format!(
        "hooks: {heard} dead letters announced, {excused} lost in flight (made just before a crash or while the \
         database was down), {} lost otherwise",
        unheard.len()
    ));
}

fn timeline(journal: &Journal, v: &mut Verdict) {
    let line: Vec<String> =
        journal.faults().iter().map(|(at, f)| format!("{:.1} s {f:?}", journal.seconds(*at))).collect();
    v.summary.push(format!("faults: {}", line.join(", ")));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(what: &'static str, status: Option<u16>, upstream: &str, sent: Instant, answered: Instant) -> Answer {
        Answer { what, sent, answered, status, upstream: upstream.into(), detail: String::new() }
    }

    fn timeline() -> (Instant, Windows) {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let faults = vec![
            (at(10.0), Fault::Killed(7002)),
            (at(10.1), Fault::Gone(7002)),
            (at(11.0), Fault::Restarted(7002)),
            (at(11.5), Fault::Ready(7002)),
            (at(30.0), Fault::DatabaseStopping),
            (at(33.0), Fault::DatabaseUp),
            (at(50.0), Fault::Reloaded),
        ];
        (t0, Windows::of(&faults))
    }

    #[test]
    fn a_503_is_excused_while_the_database_is_down_and_for_ten_seconds_after_only() {
        let (t0, w) = timeline();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(w.excuse(&answer("claim-next", Some(503), ":7001", at(31.0), at(31.1))).is_some());
        assert!(w.excuse(&answer("claim-next", Some(503), ":7001", at(42.5), at(42.9))).is_some());
        assert!(w.excuse(&answer("claim-next", Some(503), ":7001", at(43.0), at(43.2))).is_none());
        assert!(w.excuse(&answer("claim-next", Some(503), ":7001", at(29.0), at(29.9))).is_none());
        assert!(w.excuse(&answer("claim-next", Some(503), ":7002", at(11.2), at(11.3))).is_none());
    }

    #[test]
    fn a_502_is_excused_only_for_a_request_in_flight_at_the_killed_replica() {
        let (t0, w) = timeline();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(w.excuse(&answer("claim-next", Some(502), "127.0.0.1:7002", at(9.5), at(10.05))).is_some());
        assert!(w.excuse(&answer("complete", Some(502), "127.0.0.1:7002", at(10.2), at(10.2))).is_some());
        // Sent well after the process was gone, or answered before the kill.
        assert!(w.excuse(&answer("complete", Some(502), "127.0.0.1:7002", at(10.5), at(10.5))).is_none());
        assert!(w.excuse(&answer("complete", Some(502), "127.0.0.1:7002", at(9.0), at(9.9))).is_none());
        // Another replica's 502 at the same moment.
        assert!(w.excuse(&answer("complete", Some(502), "127.0.0.1:7001", at(9.5), at(10.05))).is_none());
    }

    #[test]
    fn a_500_is_never_excused_and_a_409_only_on_a_finish() {
        let (t0, w) = timeline();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(w.excuse(&answer("claim-next", Some(500), ":7001", at(31.0), at(31.1))).is_none());
        assert!(w.excuse(&answer("complete", Some(409), ":7001", at(5.0), at(5.1))).is_some());
        assert!(w.excuse(&answer("fail", Some(409), ":7001", at(5.0), at(5.1))).is_some());
        assert!(w.excuse(&answer("delivery", Some(409), ":7001", at(5.0), at(5.1))).is_none());
    }

    #[test]
    fn a_dropped_connection_is_excused_only_around_a_reload() {
        let (t0, w) = timeline();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        assert!(w.excuse(&answer("claim-next", None, "", at(50.0), at(51.0))).is_some());
        assert!(w.excuse(&answer("claim-next", None, "", at(20.0), at(20.1))).is_none());
    }

    fn row(state: &str, done: i64, dead: i64, count: i32) -> TodoRow {
        TodoRow {
            id: "td_1".into(),
            queue: "work".into(),
            state: state.into(),
            retry_scheduled: false,
            dead_reason: (state == "failed").then(|| "attempts_exhausted".into()),
            dead_letter_count: count,
            dead_at: None,
            done_attempts: done,
            dead_attempts: dead,
            attempts_total: 1,
            delivery: None,
        }
    }

    #[test]
    fn a_todo_ends_once_done_or_once_dead_never_both_never_twice_never_open() {
        assert!(row("done", 1, 0, 0).ended_once());
        assert!(row("failed", 0, 1, 1).ended_once());
        assert!(!row("done", 2, 0, 0).ended_once());
        assert!(!row("done", 1, 1, 0).ended_once());
        assert!(!row("failed", 0, 1, 2).ended_once());
        assert!(!row("claimed", 0, 0, 0).ended_once());
        assert!(!row("pending", 0, 0, 0).ended_once());
    }
}
