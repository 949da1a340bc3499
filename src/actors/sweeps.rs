//! The sweeps that move todos on their own, each an actor over one store function.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;

use super::periodic::{Periodic, Sweep};
use crate::error::Result;
use crate::store::Store;

/// Marker for the lease reaper's sweep.
pub struct LeaseReap;
/// Marker for the interrupt reaper's sweep.
pub struct InterruptReap;
/// Marker for the retry scheduler's sweep.
pub struct RetryDue;
/// Marker for the endpoint expiry sweep.
pub struct EndpointExpiry;
/// Marker for the quarantine expiry sweep.
pub struct QuarantineExpiry;

impl Sweep for QuarantineExpiry {
    const NAME: &'static str = "quarantine_expiry";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.expire_quarantine().await }.boxed()
    }
}

impl Sweep for LeaseReap {
    const NAME: &'static str = "lease_reaper";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.reap_expired_leases().await.map(|r| r.requeued + r.dead_lettered) }.boxed()
    }
}

impl Sweep for InterruptReap {
    const NAME: &'static str = "interrupt_reaper";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.reap_expired_interrupts().await.map(|r| r.requeued + r.dead_lettered) }.boxed()
    }
}

impl Sweep for RetryDue {
    const NAME: &'static str = "retry_scheduler";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.requeue_due_retries().await.map(|r| r.requeued) }.boxed()
    }
}

impl Sweep for EndpointExpiry {
    const NAME: &'static str = "endpoint_expiry";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.expire_endpoints().await.map(|r| r.len()) }.boxed()
    }
}

/// Forgets hook secrets whose 24 hours after a rotation are over.
pub struct PreviousSecretExpiry;

impl Sweep for PreviousSecretExpiry {
    const NAME: &'static str = "hook_previous_secret_expiry";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.clear_expired_previous_secrets().await }.boxed()
    }
}

/// Deletes expired Board sessions.
pub struct BoardSessionExpiry;

impl Sweep for BoardSessionExpiry {
    const NAME: &'static str = "board_session_expiry";
    fn run(store: Store) -> BoxFuture<'static, Result<usize>> {
        async move { store.sweep_expired_board_sessions().await }.boxed()
    }
}

/// Reaps claimed todos whose lease lapsed (requeue below the cap, dead letter at it).
pub type LeaseReaper = Periodic<LeaseReap>;
/// Reaps interrupted todos whose interrupt lease lapsed.
pub type InterruptReaper = Periodic<InterruptReap>;
/// Moves failed todos whose retry is due back to pending.
pub type RetryScheduler = Periodic<RetryDue>;
/// Revokes endpoints past their expiry (with the silent cascade).
pub type EndpointExpirer = Periodic<EndpointExpiry>;
/// Closes deliveries held in quarantine for more than 30 days.
pub type QuarantineExpirer = Periodic<QuarantineExpiry>;
/// Clears expired previous hook secrets (every 10 minutes).
pub type PreviousSecretExpirer = Periodic<PreviousSecretExpiry>;
/// Deletes expired Board sessions (hourly: a session lasts 12 h and an expired one
/// is refused on use anyway).
pub type BoardSessionExpirer = Periodic<BoardSessionExpiry>;
