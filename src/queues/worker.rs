//! The census actor: takes the Queues overview's census (see [`crate::queues`]) every
//! `SWITCHBOARD_QUEUE_CENSUS_INTERVAL_MS`, through the generic [`Periodic`] shell (a
//! tick that finds the previous census still running is skipped; an instance that finds
//! another one taking it skips too).

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use crate::actors::periodic::{Periodic, Sweep};
use crate::error::Result;
use crate::store::Store;

/// The census as a periodic sweep.
pub struct Census;

impl Sweep for Census {
    const NAME: &'static str = "queue census";

    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move {
            if let Some(taken) = store.take_queue_census().await? {
                tracing::debug!(queues = taken.queues, "queue census taken");
            }
            // Nothing to report at info level: a census every few seconds is routine.
            Ok(0)
        }
        .boxed()
    }
}

/// The census actor.
pub type CensusTaker = Periodic<Census>;
