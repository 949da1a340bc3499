//! The `Retention` actor: runs [`Store::prune_expired`] on an interval. Like the other
//! sweeps it never overlaps itself (a tick that finds the last pass still going is
//! skipped), but its first pass comes within a minute of start-up rather than one
//! whole interval later (see [`first_run_after`]).

use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};

use crate::domain::retention::first_run_after;
use crate::store::Store;

/// Prunes history past `max_age` every `interval`.
pub struct Retention {
    store: Store,
    interval: Duration,
    max_age: Duration,
    running: bool,
}

impl Retention {
    /// An actor that prunes rows older than `max_age` from `store` every `interval`
    /// once started.
    pub fn new(store: Store, interval: Duration, max_age: Duration) -> Self {
        Retention { store, interval, max_age, running: false }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.running {
            return;
        }
        self.running = true;
        let (store, max_age) = (self.store.clone(), self.max_age);
        let pass = async move { store.prune_expired(max_age).await };
        ctx.spawn(pass.into_actor(self).map(|outcome, act, _| {
            act.running = false;
            match outcome {
                Ok(r) if r.total() == 0 => {}
                Ok(r) => {
                    tracing::info!(
                        sweep = "retention",
                        todos = r.todos,
                        events = r.events,
                        outbox = r.outbox,
                        records = r.records,
                        "pruned history"
                    )
                }
                Err(e) => tracing::warn!(sweep = "retention", error = %e, "retention failed; will retry next tick"),
            }
        }));
    }
}

impl Actor for Retention {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(
            sweep = "retention",
            interval_ms = self.interval.as_millis() as u64,
            max_age_days = self.max_age.as_secs() / 86_400,
            "sweep started"
        );
        ctx.run_later(first_run_after(self.interval), |act, ctx| act.tick(ctx));
        ctx.run_interval(self.interval, |act, ctx| act.tick(ctx));
    }
}
