//! Long-poll `claim-next` (`wait_seconds`, SPEC section 13): when nothing is claimable,
//! the request is held until work arrives on a queue it may claim or its time is up,
//! and then answers exactly what an empty claim answers (`{"empty": true}`, or the
//! deferred form when an admission budget held the work back).
//!
//! How a waiting request learns of work, without asking the database while it waits:
//! - the store rings the claim bell after every commit that may make work claimable
//!   (every `todo.ready`: creation by intake, fan-out or an agent, a release, a lapsed
//!   lease or interrupt requeued, a retry come due; and retry now, bulk retry, a changed
//!   admission budget), and the bell sends the arrivals, summed, as a NOTIFY
//!   ([`bell`]);
//! - the instance's one listener session hears every instance's notices and wakes the
//!   longest-waiting requests that may claim the work, one per todo ([`listener`],
//!   [`crate::domain::waiters`]); a woken request that finds nothing (another agent was
//!   first) waits again in its place, with what is left of its time;
//! - a listener that lost its connection connects again and then wakes every waiter to
//!   claim once (notices were missed meanwhile).
//!
//! A request whose claim a budget deferred is woken by a change of the budget; a spent
//! hourly window claims again at the next hour, a full in-flight cap every
//! [`IN_FLIGHT_RECHECK`] (see there why). At most
//! `SWITCHBOARD_LONG_POLL_MAX_WAITERS` requests wait per instance, and the endpoints of
//! one owner scope hold at most their fair share of those places (all but
//! `SWITCHBOARD_LONG_POLL_RESERVE_PERCENT`, [`crate::domain::fair_share`]); past either a
//! request claims once and answers at once. When the server stops, waiting requests answer at
//! once. A client that hangs up frees its place (the request's future is dropped).
//!
//! [`IN_FLIGHT_RECHECK`]: crate::domain::waiters::IN_FLIGHT_RECHECK

pub mod bell;
pub mod listener;
pub mod waiters;

use std::future::Future;
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

use super::Services;
use super::agent::Claim;
use super::agent_batch::{self, ClaimNextOutcome};
use crate::domain::admission::Deferral;
use crate::domain::ids::{EndpointId, ScopeId};
use crate::domain::waiters::{WaitRefused, recheck_after, wait_for};
use crate::error::{Error, Result};
use crate::metrics::{EmptyWait, PlaceKind, PlaceRefusal};
use crate::store::endpoints::AgentPrincipal;
use crate::store::todos::ClaimOutcome;

pub use bell::Bell;
pub use listener::{ClaimWakeups, subscription};
pub use waiters::Waiters;

/// What a claim came to, as far as waiting goes. A claim of one todo answers it; a
/// claim of a batch would too.
pub trait Looked {
    /// Whether it claimed something (then the request answers at once).
    fn claimed(&self) -> bool;
    /// Why a budget held work back, when it did.
    fn deferred(&self) -> Option<Deferral>;
}

impl Looked for ClaimOutcome {
    fn claimed(&self) -> bool {
        matches!(self, ClaimOutcome::Claimed(_))
    }

    fn deferred(&self) -> Option<Deferral> {
        match self {
            ClaimOutcome::Deferred(why) => Some(*why),
            ClaimOutcome::Claimed(_) | ClaimOutcome::Empty => None,
        }
    }
}

impl Looked for ClaimNextOutcome {
    fn claimed(&self) -> bool {
        match self {
            ClaimNextOutcome::One(one) => one.claimed(),
            ClaimNextOutcome::Batch(batch) => !batch.claims.is_empty(),
        }
    }

    fn deferred(&self) -> Option<Deferral> {
        match self {
            ClaimNextOutcome::One(one) => Looked::deferred(one),
            ClaimNextOutcome::Batch(batch) => batch.deferred,
        }
    }
}

/// Claims as [`agent_batch::claim_next`] does (the oldest claimable todo, or up to
/// `limit` of them); with `wait_seconds` of 1–30 and nothing to claim, waits for work
/// first (see the module's documentation). Absent or 0 is exactly
/// [`agent_batch::claim_next`]; out of range is refused (422) before anything happens.
pub async fn claim_next(
    s: &Services,
    me: &AgentPrincipal,
    claim: Claim,
    limit: Option<i32>,
    wait_seconds: Option<i32>,
) -> Result<ClaimNextOutcome> {
    let Some(wait) = wait_for(wait_seconds)? else {
        return agent_batch::claim_next(s, me, claim, limit).await;
    };
    let queue = claim.queue.clone();
    hold(s, me.scope_id, me.endpoint_id, queue, wait, || agent_batch::claim_next(s, me, claim.clone(), limit)).await
}

/// Refuses `wait_seconds` where it means nothing (a claim by id waits for no one).
pub fn refuse_wait(wait_seconds: Option<i32>) -> Result<()> {
    match wait_seconds {
        None => Ok(()),
        Some(_) => Err(Error::invalid("wait_seconds", "not accepted when claiming by id")),
    }
}

/// What ended a wait.
enum Woke {
    /// A notice (or the listener's reconnection, or the server stopping).
    Bell,
    /// The request's own timer (a deferred claim's re-check).
    Timer,
    /// Its time is up.
    Deadline,
}

/// Claims with `claim` until it claims something or `wait` has passed, waiting in
/// `endpoint`'s line (of owner `scope`; for `queue`, or any) between claims. The last claim's outcome is
/// the answer. A database error ends the wait with that error (503 for a lost
/// connection), and the place in line is given up with it.
pub async fn hold<T, F, Fut>(
    s: &Services,
    scope: ScopeId,
    endpoint: EndpointId,
    queue: Option<String>,
    wait: Duration,
    mut claim: F,
) -> Result<T>
where
    T: Looked,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let deadline = Instant::now() + wait;
    let waiting = match s.waiters.enter(scope, endpoint, queue) {
        Ok(waiting) => waiting,
        Err(refused) => {
            match refused {
                WaitRefused::Full => s.metrics.place_refused(PlaceKind::LongPoll, PlaceRefusal::InstanceFull),
                WaitRefused::ScopeShare => s.metrics.place_refused(PlaceKind::LongPoll, PlaceRefusal::ScopeShare),
                WaitRefused::Closed => {}
            }
            // No place to wait: claim once, as without `wait_seconds`.
            let outcome = claim().await?;
            if !outcome.claimed() {
                s.metrics.long_poll_empty(match refused {
                    WaitRefused::Full => EmptyWait::Full,
                    WaitRefused::ScopeShare => EmptyWait::ScopeShare,
                    WaitRefused::Closed => EmptyWait::Shutdown,
                });
            }
            return Ok(outcome);
        }
    };
    loop {
        let outcome = claim().await?;
        if outcome.claimed() {
            return Ok(outcome);
        }
        let recheck = outcome.deferred().and_then(|why| recheck_after(why, chrono::Utc::now()));
        waiting.settle();
        let woke = tokio::select! {
            () = waiting.woken() => Woke::Bell,
            () = sleep_until(deadline) => Woke::Deadline,
            () = sleep_until(Instant::now() + recheck.unwrap_or(wait)), if recheck.is_some() => Woke::Timer,
        };
        if waiting.closed() {
            s.metrics.long_poll_empty(EmptyWait::Shutdown);
            return Ok(outcome);
        }
        match woke {
            Woke::Deadline => {
                s.metrics.long_poll_empty(EmptyWait::TimedOut);
                return Ok(outcome);
            }
            Woke::Bell => s.metrics.long_poll_wakeup(),
            Woke::Timer => waiting.check(),
        }
    }
}
