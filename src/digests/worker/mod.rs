//! The `DigestScheduler`: every `SWITCHBOARD_DIGEST_INTERVAL_MS` it finishes Cairn
//! publications an instance left half-done, then decides every digest send time that
//! has come (see [`tick`]). Any number of instances run one; each send time is
//! committed by exactly one of them (`store::digests::runs`). A tick never overlaps the
//! previous one.

pub mod tick;

use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};

use crate::digests::service::compose::DigestSettings;
use crate::metrics::{DigestRun, Metrics};
use crate::outbound::Guard;
use crate::store::Store;
use crate::vault::Vault;

/// What the scheduler needs.
#[derive(Clone)]
pub struct DigestDeps {
    /// The store.
    pub store: Store,
    /// Opens the Cairn connection's token.
    pub vault: Vault,
    /// Builds the guarded client for Cairn.
    pub guard: Guard,
    /// Links, the doorbell window and section timeouts.
    pub settings: DigestSettings,
    /// How often it looks.
    pub interval: Duration,
    /// Counts its finished ticks and its runs.
    pub metrics: Metrics,
}

/// Sends digests when they are due.
pub struct DigestScheduler {
    deps: DigestDeps,
    client: Option<awc::Client>,
    running: bool,
}

impl DigestScheduler {
    /// A scheduler over `deps`.
    pub fn new(deps: DigestDeps) -> Self {
        DigestScheduler { deps, client: None, running: false }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        if self.running {
            return;
        }
        self.running = true;
        let client = self.client.get_or_insert_with(|| self.deps.guard.client()).clone();
        let deps = self.deps.clone();
        ctx.spawn(async move { tick::run(&deps, &client).await }.into_actor(self).map(|outcome, act, _| {
            act.running = false;
            // Counted once everything the tick decided is committed: a tick finished
            // after a send time was decided is proof no earlier tick is still deciding it.
            act.deps.metrics.digest_tick();
            match outcome {
                Ok(0) => {}
                Ok(n) => tracing::info!(send_times = n, "digest send times decided"),
                Err(e) => {
                    // Nothing due could be read or finished this tick: a failed run too.
                    act.deps.metrics.digest_runs(DigestRun::Failed, 1);
                    tracing::warn!(error = %e, "digest tick failed; will retry next tick")
                }
            }
        }));
    }
}

impl Actor for DigestScheduler {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(interval_ms = self.deps.interval.as_millis() as u64, "digest scheduler started");
        // A send time missed while this instance was down is decided at start-up.
        self.tick(ctx);
        ctx.run_interval(self.deps.interval, |act, ctx| act.tick(ctx));
    }
}
