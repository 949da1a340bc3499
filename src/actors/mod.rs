//! Thin actix actors on timers or mailboxes; each wraps plain store functions that
//! tests call directly.

pub mod periodic;
pub mod restarting;
pub mod retention;
pub mod sweeps;

pub use retention::Retention;
pub use sweeps::{
    BoardSessionExpirer, EndpointExpirer, InterruptReaper, LeaseReaper, PreviousSecretExpirer, QuarantineExpirer,
    RetryScheduler,
};
