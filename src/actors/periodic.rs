//! A thin actix actor that runs one store sweep on an interval. It never overlaps
//! itself: a tick that finds the previous run still going is skipped.

use std::marker::PhantomData;
use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use futures_util::future::BoxFuture;

use crate::error::Result;
use crate::store::Store;

/// One kind of sweep: a name for logs and the store call it makes.
pub trait Sweep: 'static {
    /// Name in logs.
    const NAME: &'static str;
    /// Runs the sweep once; returns how many rows it moved.
    fn run(store: Store) -> BoxFuture<'static, Result<usize>>;
}

/// Runs `S` every `interval`.
pub struct Periodic<S: Sweep> {
    store: Store,
    interval: Duration,
    running: bool,
    _sweep: PhantomData<fn() -> S>,
}

impl<S: Sweep> Periodic<S> {
    /// An actor that sweeps `store` every `interval` once started.
    pub fn new(store: Store, interval: Duration) -> Self {
        Periodic { store, interval, running: false, _sweep: PhantomData }
    }
}

impl<S: Sweep> Actor for Periodic<S> {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        tracing::info!(sweep = S::NAME, interval_ms = self.interval.as_millis() as u64, "sweep started");
        ctx.run_interval(self.interval, |act, ctx| {
            if act.running {
                return;
            }
            act.running = true;
            let fut = S::run(act.store.clone());
            ctx.spawn(fut.into_actor(act).map(|outcome, act, _| {
                act.running = false;
                match outcome {
                    Ok(0) => {}
                    Ok(moved) => tracing::info!(sweep = S::NAME, moved, "sweep moved rows"),
                    Err(e) => tracing::warn!(sweep = S::NAME, error = %e, "sweep failed; will retry next tick"),
                }
            }));
        });
    }
}
