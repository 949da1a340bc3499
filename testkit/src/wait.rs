//! Waiting for something to happen, never for a fixed time: a look is repeated at a
//! short interval until it reports what was waited for, and a wait that runs out fails
//! saying what it waited for and what it last saw.

use std::fmt::Display;
use std::time::{Duration, Instant};

/// How long a wait for something that should happen soon lasts unless said otherwise.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// How often a wait looks again unless said otherwise.
pub const POLL: Duration = Duration::from_millis(20);

/// Looks with `look` every [`POLL`] until it answers `Ok`, and answers that; panics
/// after `deadline` with `what` and the last `Err` (what the look saw instead).
pub async fn wait_until<T>(what: impl Display, deadline: Duration, look: impl AsyncFnMut() -> Result<T, String>) -> T {
    wait_until_every(what, deadline, POLL, look).await
}

/// [`wait_until`], looking every `every`.
pub async fn wait_until_every<T>(
    what: impl Display,
    deadline: Duration,
    every: Duration,
    look: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    match try_wait_until(deadline, every, look).await {
        Ok(found) => found,
        Err(last) => panic!("waited {deadline:?} for {what}; last saw: {last}"),
    }
}

/// [`wait_until_every`] that answers the last `Err` instead of panicking once
/// `deadline` has passed (for callers that report failures as errors).
pub async fn try_wait_until<T>(
    deadline: Duration,
    every: Duration,
    mut look: impl AsyncFnMut() -> Result<T, String>,
) -> Result<T, String> {
    let started = Instant::now();
    loop {
        match look().await {
            Ok(found) => return Ok(found),
            Err(seen) if started.elapsed() >= deadline => return Err(seen),
            Err(_) => tokio::time::sleep(every).await,
        }
    }
}

/// Waits until `count` reaches `n`, or until it has not moved for `idle`: its value
/// then. For a stream of arrivals of unknown length (how many of `n` ever come), where
/// a quiet spell means nothing more is coming.
pub async fn settle(count: impl Fn() -> u64, n: u64, idle: Duration) -> u64 {
    let (mut last, mut since) = (count(), Instant::now());
    loop {
        let have = count();
        if have >= n {
            return have;
        }
        if have != last {
            (last, since) = (have, Instant::now());
        } else if since.elapsed() >= idle {
            return have;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_wait_answers_what_the_look_found_once_it_finds_it() {
        let looks = Cell::new(0);
        let found = wait_until("three looks", DEADLINE, async || {
            looks.set(looks.get() + 1);
            if looks.get() == 3 { Ok("found") } else { Err(format!("look {}", looks.get())) }
        })
        .await;
        assert_eq!((found, looks.get()), ("found", 3));
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    async fn a_wait_that_runs_out_answers_the_last_thing_seen() {
        let looks = Cell::new(0);
        let last = try_wait_until(Duration::from_millis(100), POLL, async || {
            looks.set(looks.get() + 1);
            Err::<(), _>(format!("look {}", looks.get()))
        })
        .await;
        assert_eq!(last, Err(format!("look {}", looks.get())));
        assert!(looks.get() >= 5, "{} looks in 100 ms at every 20 ms", looks.get());
    }

    #[tokio::test(flavor = "current_thread", start_paused = true)]
    #[should_panic(expected = "waited 100ms for nothing; last saw: still nothing")]
    async fn a_wait_that_runs_out_says_what_it_waited_for_and_what_it_saw() {
        wait_until("nothing", Duration::from_millis(100), async || Err::<(), _>("still nothing".into())).await;
    }
}
