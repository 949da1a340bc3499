//! The long-poll waiters of one instance (`claim-next` with `wait_seconds`): who waits
//! on which endpoint's queues, in arrival order, and whom arriving work wakes. Pure
//! bookkeeping over opaque handles; `service::long_poll` keeps it behind a lock and
//! parks the requests.
//!
//! The rules:
//! - **First come, first served per endpoint.** Arriving work wakes the longest-waiting
//!   requests that may claim it, one per todo, never all of them (no thundering herd).
//! - **A woken waiter keeps its place.** When its claim finds nothing (another agent took
//!   the work first), it waits again where it was, with what is left of its time.
//! - **No lost wake-up.** A waiter that is running a claim when work arrives
//!   ("checking") cannot tell whether its claim saw that work: the claim's snapshot may
//!   predate the commit. It is told to look once more ("nudged"), and the arrival still
//!   wakes a waiter that is not checking.
//! - **Bounded, with a fair share per owner scope.** At most `max` waiters; past it a
//!   request is refused (and answers at once). One owner scope holds at most its share of
//!   them ([`crate::domain::fair_share`]): past it its requests are refused too, so
//!   another scope's agents still find a place to wait. A closed queue (the server
//!   stopping) refuses every request.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use super::admission::Deferral;
use super::fair_share::{Admit, Share};
use super::ids::{EndpointId, ScopeId};
use super::transitions::within;
use super::wakeups::Arrived;
use crate::error::{Error, Result};

/// Bounds of `claim-next`'s `wait_seconds` (0: answer at once, as without it).
pub const WAIT_SECONDS_RANGE: (i32, i32) = (0, 30);

/// How often a request whose work a full `max_in_flight` holds back claims again. Room
/// frees whenever a claimed todo of the queue ends, on any instance and by any path
/// (complete, fail, interrupt, a lapsed lease); telling waiters of each would put a
/// notice (and its cluster-wide commit lock) or a budget lookup on every completion of
/// every queue, to serve the few with a budget. A deferred waiter asks this often
/// instead: what a polling agent would cost, and only while its queue is held back.
pub const IN_FLIGHT_RECHECK: Duration = Duration::from_secs(2);

/// The wait a `claim-next` asks for: none (answer at once, as without `wait_seconds`) or
/// a duration of 1–30 s; out of range is refused (422) before anything happens.
pub fn wait_for(wait_seconds: Option<i32>) -> Result<Option<Duration>> {
    match wait_seconds {
        None | Some(0) => Ok(None),
        Some(n) if within(n, WAIT_SECONDS_RANGE) => Ok(Some(Duration::from_secs(n.unsigned_abs().into()))),
        Some(_) => Err(Error::invalid("wait_seconds", "must be between 0 and 30")),
    }
}

/// When a waiter whose claim a budget deferred should claim again by itself, if ever: a
/// paused queue only by an operator's change (which wakes it), a spent hourly window at
/// the next clock hour (UTC, as the budget counts it), a full in-flight cap after
/// [`IN_FLIGHT_RECHECK`].
pub fn recheck_after(why: Deferral, now: DateTime<Utc>) -> Option<Duration> {
    match why {
        Deferral::Paused => None,
        Deferral::InFlightFull => Some(IN_FLIGHT_RECHECK),
        Deferral::WindowExhausted => {
            let hour = now.duration_trunc(TimeDelta::hours(1)).ok()?;
            // A moment past the hour: the database's clock may trail this one a little.
            let next = hour + TimeDelta::hours(1) + TimeDelta::milliseconds(500);
            (next - now).to_std().ok()
        }
    }
}

/// A waiter's place in line: its endpoint and its arrival number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ticket {
    endpoint: EndpointId,
    seq: u64,
}

/// Why a request may not wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitRefused {
    /// The instance already holds its most waiters.
    Full,
    /// The request's owner scope holds its share of the waiters.
    ScopeShare,
    /// The server is stopping.
    Closed,
}

/// What a waiter is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Running a claim (its first, or after a wake-up).
    Checking,
    /// Parked until woken or its time is up.
    Waiting,
}

#[derive(Debug)]
struct Entry<H> {
    /// The endpoint's owner scope, whose share the place counts in.
    scope: ScopeId,
    /// The one queue it claims from; none: any queue of the endpoint.
    queue: Option<String>,
    state: State,
    /// Whether it has come back empty from its first claim (it is then counted as held).
    held: bool,
    handle: H,
}

impl<H> Entry<H> {
    fn may_claim(&self, queue: &str) -> bool {
        self.queue.as_deref().is_none_or(|q| q == queue)
    }
}

/// Whom an arrival reached.
#[derive(Debug, PartialEq, Eq)]
pub struct Woken<H> {
    /// Waiters woken to claim, longest-waiting first (one per todo).
    pub woken: Vec<H>,
    /// Waiters already running a claim, told to look once more when it comes back empty.
    pub nudged: Vec<H>,
}

/// The waiters of one instance.
#[derive(Debug)]
pub struct WaiterQueue<H> {
    /// Per endpoint, in arrival order (the arrival number is the key).
    lines: HashMap<EndpointId, BTreeMap<u64, Entry<H>>>,
    next_seq: u64,
    len: usize,
    held: usize,
    /// Places in line per owner scope (scopes holding none are left out).
    by_scope: HashMap<ScopeId, usize>,
    share: Share,
    closed: bool,
}

impl<H: Clone> WaiterQueue<H> {
    /// An empty queue holding at most `max` waiters, `reserve_percent` of them kept for
    /// scopes other than any one ([`Share`]).
    pub fn new(max: usize, reserve_percent: u8) -> Self {
        WaiterQueue {
            lines: HashMap::new(),
            next_seq: 0,
            len: 0,
            held: 0,
            by_scope: HashMap::new(),
            share: Share::new(max, reserve_percent),
            closed: false,
        }
    }

    /// Joins the line of `endpoint` (of owner `scope`; for one `queue`, or any), as
    /// checking: the request runs its first claim next. Refused past the bound, past the
    /// scope's share, or once closed.
    pub fn enter(
        &mut self,
        scope: ScopeId,
        endpoint: EndpointId,
        queue: Option<String>,
        handle: H,
    ) -> Result<Ticket, WaitRefused> {
        if self.closed {
            return Err(WaitRefused::Closed);
        }
        let mine = self.by_scope.get(&scope).copied().unwrap_or(0);
        match self.share.admit(self.len, mine) {
            Admit::Take => {}
            Admit::Full => return Err(WaitRefused::Full),
            Admit::ScopeShare => return Err(WaitRefused::ScopeShare),
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.lines
            .entry(endpoint)
            .or_default()
            .insert(seq, Entry { scope, queue, state: State::Checking, held: false, handle });
        self.len += 1;
        *self.by_scope.entry(scope).or_default() += 1;
        Ok(Ticket { endpoint, seq })
    }

    /// Leaves the line (answered, failed or gone). Leaving twice is harmless.
    pub fn leave(&mut self, ticket: &Ticket) {
        let Some(line) = self.lines.get_mut(&ticket.endpoint) else { return };
        if let Some(entry) = line.remove(&ticket.seq) {
            self.len -= 1;
            if entry.held {
                self.held -= 1;
            }
            if let Some(n) = self.by_scope.get_mut(&entry.scope) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.by_scope.remove(&entry.scope);
                }
            }
        }
        if line.is_empty() {
            self.lines.remove(&ticket.endpoint);
        }
    }

    /// The waiter's claim came back empty: it waits, in its place.
    pub fn settle(&mut self, ticket: &Ticket) {
        if let Some(entry) = self.entry(ticket) {
            entry.state = State::Waiting;
            if !entry.held {
                entry.held = true;
                self.held += 1;
            }
        }
    }

    /// The waiter looks again on its own (its timer): it counts as checking meanwhile.
    pub fn check(&mut self, ticket: &Ticket) {
        if let Some(entry) = self.entry(ticket) {
            entry.state = State::Checking;
        }
    }

    /// Work arrived on `endpoint`'s `queue`: wakes that many waiting requests that may
    /// claim it, longest-waiting first (every one of them for [`Arrived::Any`]), and
    /// nudges those already checking.
    pub fn arrived(&mut self, endpoint: EndpointId, queue: &str, todos: Arrived) -> Woken<H> {
        let mut out = Woken { woken: Vec::new(), nudged: Vec::new() };
        let Some(line) = self.lines.get_mut(&endpoint) else { return out };
        let mut left = match todos {
            Arrived::Todos(n) => n,
            Arrived::Any => u32::MAX,
        };
        for entry in line.values_mut().filter(|e| e.may_claim(queue)) {
            match entry.state {
                State::Checking => out.nudged.push(entry.handle.clone()),
                State::Waiting if left > 0 => {
                    entry.state = State::Checking;
                    out.woken.push(entry.handle.clone());
                    left -= 1;
                }
                State::Waiting => {}
            }
        }
        out
    }

    /// Every waiter looks once (notices may have been missed: the listener reconnected).
    pub fn wake_all(&mut self) -> Vec<H> {
        let mut all = Vec::with_capacity(self.len);
        for entry in self.lines.values_mut().flat_map(|line| line.values_mut()) {
            entry.state = State::Checking;
            all.push(entry.handle.clone());
        }
        all
    }

    /// Refuses every new request from now on; returns every waiter, to be answered at once.
    pub fn close(&mut self) -> Vec<H> {
        self.closed = true;
        self.lines.values().flat_map(|line| line.values()).map(|e| e.handle.clone()).collect()
    }

    /// Whether the queue is closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Requests in line (checking or waiting).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nobody is in line.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Requests held past their first empty claim: what the waiters gauge shows.
    pub fn held(&self) -> usize {
        self.held
    }

    fn entry(&mut self, ticket: &Ticket) -> Option<&mut Entry<H>> {
        self.lines.get_mut(&ticket.endpoint)?.get_mut(&ticket.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one owner scope of the tests that are not about shares.
    const S: ScopeId = ScopeId(uuid::Uuid::from_u128(1));

    fn waiting(q: &mut WaiterQueue<&'static str>, e: EndpointId, queue: Option<&str>, name: &'static str) -> Ticket {
        let t = q.enter(S, e, queue.map(str::to_owned), name).unwrap();
        q.settle(&t);
        t
    }

    #[test]
    fn one_todo_wakes_the_longest_waiting_request_only() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(10, 0);
        waiting(&mut q, e, None, "first");
        waiting(&mut q, e, None, "second");
        waiting(&mut q, e, None, "third");
        let w = q.arrived(e, "inbox", Arrived::Todos(1));
        assert_eq!(w, Woken { woken: vec!["first"], nudged: vec![] });
        // The next todo goes to the next in line; the first is busy claiming (nudged).
        let w = q.arrived(e, "inbox", Arrived::Todos(1));
        assert_eq!(w, Woken { woken: vec!["second"], nudged: vec!["first"] });
    }

    #[test]
    fn a_woken_waiter_that_found_nothing_keeps_its_place() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(10, 0);
        let first = waiting(&mut q, e, None, "first");
        waiting(&mut q, e, None, "second");
        assert_eq!(q.arrived(e, "inbox", Arrived::Todos(1)).woken, vec!["first"]);
        // Another agent took the todo: the first waits again, still ahead of the second.
        q.settle(&first);
        assert_eq!(q.arrived(e, "inbox", Arrived::Todos(1)).woken, vec!["first"]);
    }

    #[test]
    fn several_todos_wake_as_many_waiters_in_order_and_any_wakes_all() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(10, 0);
        let tickets: Vec<Ticket> = ["a", "b", "c", "d"].into_iter().map(|n| waiting(&mut q, e, None, n)).collect();
        assert_eq!(q.arrived(e, "inbox", Arrived::Todos(3)).woken, vec!["a", "b", "c"]);
        for t in &tickets {
            q.settle(t);
        }
        assert_eq!(q.arrived(e, "inbox", Arrived::Any).woken, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn only_waiters_that_may_claim_the_queue_are_woken() {
        let (e, other) = (EndpointId::new(), EndpointId::new());
        let mut q = WaiterQueue::new(10, 0);
        waiting(&mut q, e, Some("builds"), "builds only");
        waiting(&mut q, other, None, "other endpoint");
        waiting(&mut q, e, None, "any queue");
        waiting(&mut q, e, Some("inbox"), "inbox only");
        assert_eq!(q.arrived(e, "inbox", Arrived::Todos(5)).woken, vec!["any queue", "inbox only"]);
        assert_eq!(q.arrived(e, "builds", Arrived::Todos(5)).woken, vec!["builds only"]);
        assert_eq!(q.arrived(EndpointId::new(), "inbox", Arrived::Any), Woken { woken: vec![], nudged: vec![] });
    }

    #[test]
    fn a_request_still_on_its_first_claim_is_nudged_and_does_not_take_the_todo_from_a_waiter() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(10, 0);
        let early = q.enter(S, e, None, "on its first claim").unwrap();
        waiting(&mut q, e, None, "waiting");
        let w = q.arrived(e, "inbox", Arrived::Todos(1));
        assert_eq!(w, Woken { woken: vec!["waiting"], nudged: vec!["on its first claim"] });
        // Alone and checking, it is still told: nobody else would take the todo.
        q.leave(&early);
        let lone = q.enter(S, e, None, "lone").unwrap();
        assert_eq!(q.arrived(e, "inbox", Arrived::Todos(1)).nudged, vec!["waiting", "lone"]);
        q.leave(&lone);
    }

    #[test]
    fn past_the_bound_and_once_closed_requests_are_refused() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(2, 0);
        let a = q.enter(S, e, None, "a").unwrap();
        q.enter(S, e, None, "b").unwrap();
        assert_eq!(q.enter(S, e, None, "c"), Err(WaitRefused::Full));
        q.leave(&a);
        assert!(q.enter(S, e, None, "c").is_ok());
        assert_eq!(q.close().len(), 2);
        q.leave(&a);
        assert_eq!(q.enter(S, e, None, "d"), Err(WaitRefused::Closed));
        assert!(q.is_closed());
    }

    #[test]
    fn a_scope_waits_on_at_most_its_share_over_all_its_endpoints_and_another_scope_still_waits() {
        let (greedy, other) = (ScopeId(uuid::Uuid::from_u128(7)), ScopeId(uuid::Uuid::from_u128(8)));
        let mut q = WaiterQueue::new(8, 25);
        // Six of eight, over three endpoints of the one scope; the seventh is refused.
        let endpoints = [EndpointId::new(), EndpointId::new(), EndpointId::new()];
        let tickets: Vec<Ticket> = (0..6).map(|i| q.enter(greedy, endpoints[i % 3], None, "greedy").unwrap()).collect();
        assert_eq!(q.enter(greedy, EndpointId::new(), None, "greedy"), Err(WaitRefused::ScopeShare));
        // Another scope takes the two places kept for it; then the instance is full.
        let theirs = EndpointId::new();
        let kept = q.enter(other, theirs, None, "other").unwrap();
        q.enter(other, theirs, None, "other").unwrap();
        assert_eq!(q.enter(other, theirs, None, "other"), Err(WaitRefused::Full));
        assert_eq!(q.enter(greedy, endpoints[0], None, "greedy"), Err(WaitRefused::Full));
        // A place given back is the scope's to take again, within its share.
        q.leave(&kept);
        q.leave(&tickets[0]);
        q.leave(&tickets[0]);
        assert!(q.enter(greedy, endpoints[0], None, "greedy").is_ok());
        assert_eq!(q.enter(greedy, endpoints[0], None, "greedy"), Err(WaitRefused::ScopeShare));
        assert!(q.enter(other, theirs, None, "other").is_ok());
        assert_eq!(q.len(), 8);
    }

    #[test]
    fn held_counts_waiters_past_their_first_claim_and_leaving_frees_the_slot() {
        let e = EndpointId::new();
        let mut q = WaiterQueue::new(10, 0);
        let a = q.enter(S, e, None, "a").unwrap();
        assert_eq!((q.len(), q.held()), (1, 0));
        q.settle(&a);
        q.check(&a);
        q.settle(&a);
        assert_eq!((q.len(), q.held()), (1, 1));
        q.leave(&a);
        q.leave(&a);
        assert_eq!((q.len(), q.held()), (0, 0));
        assert!(q.is_empty());
        assert_eq!(q.arrived(e, "inbox", Arrived::Any), Woken { woken: vec![], nudged: vec![] });
    }

    #[test]
    fn wait_seconds_of_zero_or_none_wait_not_and_out_of_range_is_refused_naming_the_field() {
        assert_eq!(wait_for(None).unwrap(), None);
        assert_eq!(wait_for(Some(0)).unwrap(), None);
        assert_eq!(wait_for(Some(1)).unwrap(), Some(Duration::from_secs(1)));
        assert_eq!(wait_for(Some(30)).unwrap(), Some(Duration::from_secs(30)));
        for bad in [-1, 31, i32::MIN, i32::MAX] {
            let why = wait_for(Some(bad)).unwrap_err().to_string();
            assert!(why.starts_with("wait_seconds"), "{why}");
        }
    }

    #[test]
    fn a_deferred_waiter_looks_again_by_itself_only_when_no_change_would_wake_it() {
        let now = DateTime::parse_from_rfc3339("2026-12-01T10:59:30Z").unwrap().with_timezone(&Utc);
        assert_eq!(recheck_after(Deferral::Paused, now), None);
        assert_eq!(recheck_after(Deferral::InFlightFull, now), Some(IN_FLIGHT_RECHECK));
        assert_eq!(recheck_after(Deferral::WindowExhausted, now), Some(Duration::from_millis(30_500)));
    }

    #[test]
    fn wake_all_reaches_every_waiter_of_every_endpoint() {
        let mut q = WaiterQueue::new(10, 0);
        let (e, f) = (EndpointId::new(), EndpointId::new());
        waiting(&mut q, e, Some("a"), "e/a");
        waiting(&mut q, f, None, "f");
        let mut all = q.wake_all();
        all.sort_unstable();
        assert_eq!(all, vec!["e/a", "f"]);
        // They are checking now: an arrival nudges rather than wakes them.
        assert_eq!(q.arrived(f, "x", Arrived::Todos(1)), Woken { woken: vec![], nudged: vec!["f"] });
    }
}
