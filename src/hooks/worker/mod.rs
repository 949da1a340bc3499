//! The hook channel's actors. The store emits `TodoReady` and `DeadLettered` after
//! commit; the [`Dispatcher`] applies the sender gate, finds the matching hooks and
//! hands each announcement to the [`HookSupervisor`] of the todo's endpoint, which
//! owns that endpoint's per-hook rate state and runs the rings.
//!
//! Both kinds of announcement travel this one path: the same matching, rate limit,
//! signing, SSRF guard and retries. Nothing here is persisted — an announcement is a
//! doorbell; the queue still holds the work — and every mailbox is bounded: a flood is
//! dropped and counted, never buffered without limit.

mod channel;
mod dispatcher;
mod hook_changes;
mod ring;
mod supervisor;

pub use channel::{Announcement, HookChannel};
pub use dispatcher::{CrashForTest, DISPATCH_MAILBOX, Dispatcher, MAX_LOOKUPS_IN_FLIGHT};
pub use hook_changes::{HOOK_CHANGES_CHANNEL, subscription};
pub use supervisor::{HookSupervisor, MAX_RINGS_IN_FLIGHT, Ring, SUPERVISOR_IDLE_STOP, SUPERVISOR_MAILBOX};
