//! The upgrade's application part on a timer: binds connections and keys fingerprints an
//! earlier release wrote (`Store::bind_earlier_connections`). Start-up runs it once before
//! serving; this actor runs it again every few minutes, for the rows instances of the
//! previous release still write during a rolling upgrade. A pass that finds nothing reads
//! `connections` and `webhooks` once each (no index serves its condition; both are small,
//! owner-configured tables, and it runs every five minutes).

use std::time::Duration;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};

use crate::store::Store;
use crate::vault::Vault;

/// How often the pass runs after start-up.
pub const INTERVAL: Duration = Duration::from_secs(300);

/// Runs the binding pass every [`INTERVAL`]; never two at once.
pub struct ConnectionBinder {
    store: Store,
    vault: Vault,
    running: bool,
}

impl ConnectionBinder {
    /// A binder over `store`, opening secrets with `vault`.
    pub fn new(store: Store, vault: Vault) -> Self {
        ConnectionBinder { store, vault, running: false }
    }
}

impl Actor for ConnectionBinder {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        ctx.run_interval(INTERVAL, |act, ctx| {
            if act.running {
                return;
            }
            act.running = true;
            let (store, vault) = (act.store.clone(), act.vault.clone());
            let pass = async move { store.bind_earlier_connections(&vault).await };
            ctx.spawn(pass.into_actor(act).map(|outcome, act, _| {
                act.running = false;
                log_pass(outcome);
            }));
        });
    }
}

/// Logs what a pass did (nothing when it found nothing).
pub fn log_pass(outcome: crate::error::Result<crate::sinks::statements::BindingReport>) {
    match outcome {
        Ok(report) if report.changed() == 0 => {}
        Ok(report) => tracing::info!(
            bound = report.bound,
            unbound = report.unbound,
            fingerprints = report.fingerprints,
            "earlier release's connections bound and fingerprints keyed"
        ),
        Err(e) => tracing::warn!(error = %e, "binding earlier connections failed; will retry"),
    }
}
