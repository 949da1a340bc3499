//! What the channel's actors share, and the announcement they pass along.

use std::num::NonZeroU32;

use actix_web::web::Bytes;

use crate::hooks::cache::HookCache;
use crate::hooks::rules::body::HookEvent;
use crate::metrics::{InFlight, Metrics};
use crate::outbound::Guard;
use crate::store::Store;
use crate::vault::Vault;

/// The dependencies of the dispatcher and every supervisor. Cheap to clone.
#[derive(Clone)]
pub struct HookChannel {
    /// Reads hooks and records their health (never emits signals).
    pub store: Store,
    /// Opens the hooks' sealed secrets.
    pub vault: Vault,
    /// Builds the guarded outbound client (SSRF checks at dial time).
    pub guard: Guard,
    /// Counts rings, attempts and disables.
    pub metrics: Metrics,
    /// Rings per hook per minute (and burst).
    pub rate_per_minute: NonZeroU32,
    /// Which hooks an endpoint's queue has, kept coherent by the listener session.
    pub cache: HookCache,
}

/// One announcement, encoded once and rung at every matching hook.
#[derive(Debug, Clone)]
pub struct Announcement {
    /// `todo.ready` or `todo.dead_lettered`.
    pub kind: HookEvent,
    /// The todo it is about (a delivered `todo.ready` is recorded as its doorbell ring).
    pub todo: crate::domain::ids::TodoId,
    /// The todo's queue (each attempt re-checks the hook's filter against it).
    pub queue: String,
    /// The signed body (at most 4 KiB).
    pub body: Bytes,
    /// Counts this announcement (and each hook's copy) as under way until dropped.
    pub in_flight: InFlight,
}
